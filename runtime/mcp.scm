;;; runtime/mcp.scm — MCP tools in the loop.
;;;
;;; The run's MCP servers ([mcp.servers.NAME] in config.toml; Go starts
;;; them, judges and runs each call) offer their tools as server__tool.
;;; Which of them the model is offered is the profile's:
;;;   mcp-tools    'all (the default), 'none (no server is started), or a
;;;                list of names and globs (strings or symbols):
;;;                "github__search_code", "github__*", or a server's name
;;;                alone ("github", all its tools)
;;;   mcp-schemas  'catalogue (the default): the tools are listed by name
;;;                and one-line summary in tool-schema's description, and
;;;                a tool joins the tool list, whole, once the model has
;;;                asked tool-schema for it (50 tools cost about 800
;;;                tokens, not 18,000; as Claude Code defers its MCP
;;;                tools); 'on-demand: each tool in the tool list with its
;;;                summary and no schema, tool-schema gives the schema
;;;                (about 2,600 tokens: a definition's frame costs more
;;;                than its summary); 'full: each with its whole
;;;                description and schema
;;;
;;; Why tool-schema rather than answering a first call with the schema: a
;;; first call made without the schema may do something (a guessed
;;; argument still names a real issue or file) and asks the person to
;;; confirm a guess; asking for the schema does nothing, costs one step,
;;; and the model may ask for several at once. A first call that fails is
;;; answered with the schema besides (mcp-result-text). The schema goes to
;;; the conversation, not to the tool's definition: under 'on-demand the
;;; tool list stays the same from request to request, so the provider's
;;; prompt cache holds; under 'catalogue the list grows by a tool the first
;;; time the model asks for it, which costs the cache once per tool asked
;;; for and saves the frames of all the tools never used.

(define-profile-key! 'mcp-tools "which MCP tools are offered: 'all, 'none, or a list of names and globs")
(define-profile-key! 'mcp-schemas "'catalogue (names and summaries in tool-schema's description; a tool joins the list once asked for), 'on-demand (a summary each, tool-schema gives the schema) or 'full")

;; The tools whose schema the model has been given, by name.
(define mcp-schemas-given (make-hash-table))

(define (mcp-schema-given! name) (hash-table-set! mcp-schemas-given name #t))
(define (mcp-schema-given? name) (hash-table-ref/default mcp-schemas-given name #f))

(define (mcp-name n) (if (symbol? n) (symbol->string n) n))

;; Does the pattern of the profile's mcp-tools match the tool t?
(define (mcp-pattern-matches? pattern t)
  (let ((p (mcp-name pattern)))
    (or (mcp-glob-match? p (alist-ref t 'name))
        (and (not (string-contains p "__")) (string=? p (alist-ref t 'server))))))

;; The MCP tools the profile offers, as (mcp-tools) lists them.
(define (profile-mcp-tools)
  (let ((setting (profile-ref 'mcp-tools 'all)))
    (cond
     ((eq? setting 'all) (mcp-tools))
     ((eq? setting 'none) '())
     ((and (list? setting) (every (lambda (n) (or (string? n) (symbol? n))) setting))
      (filter (lambda (t) (any (lambda (p) (mcp-pattern-matches? p t)) setting)) (mcp-tools)))
     (else
      (error (string-append "profile " (symbol->string (current-profile-name))
                            ": mcp-tools must be 'all, 'none or a list of tool names and globs, as in '(\"github__*\" \"db__run_query\")")
             setting)))))

;; The tool list model-turn gets: base, the profile's own tools as
;; (name . description) pairs, then the MCP tools it offers and, when
;; their schemas are given on demand, tool-schema.
(define (mcp-tool-specs base)
  (let ((base (filter (lambda (spec) (not (equal? (car spec) "tool-schema"))) base))
        (offered (if (mcp-configured?) (profile-mcp-tools) '())))
    (define (whole t)
      (let ((full (mcp-tool (alist-ref t 'name))))
        (mcp-schema-given! (alist-ref t 'name))
        (list (alist-ref t 'name) (alist-ref full 'description) 'full)))
    (case (if (null? offered) 'none (profile-ref 'mcp-schemas 'catalogue))
     ((none) base)
     ((full) (append base (map whole offered)))
     ((on-demand)
      (append base
              (map (lambda (t) (cons (alist-ref t 'name) (alist-ref t 'summary))) offered)
              (list (cons "tool-schema" tool-schema-description))))
     ((catalogue)
      (append base
              (map whole (filter (lambda (t) (mcp-schema-given? (alist-ref t 'name))) offered))
              (list (cons "tool-schema" (tool-schema-catalogue offered)))))
     (else
      (error (string-append "profile " (symbol->string (current-profile-name))
                            ": mcp-schemas must be 'catalogue, 'on-demand or 'full")
             (profile-ref 'mcp-schemas 'catalogue))))))

;; tool-schema's answer for name: the tool's description and schema, or
;; an error result naming the tools there are.
(define (tool-schema name)
  (let ((t (and (string? name) (mcp-tool name))))
    (if t
        (begin (mcp-schema-given! name) (tool-schema-text t))
        (list (cons 'output (no-such-mcp-tool-message
                             (if (string? name) name "(no name given)")
                             (map (lambda (t) (alist-ref t 'name)) (profile-mcp-tools))))
              (cons 'error #t)))))

;; What the model reads of an MCP tool's result before it is folded: an
;; error of a tool whose schema it was not given comes with the schema.
(define (mcp-result-text name output error?)
  (let ((t (and error? (mcp-configured?) (not (mcp-schema-given? name)) (mcp-tool name))))
    (if t
        (begin (mcp-schema-given! name) (string-append output (mcp-schema-after-error t)))
        output)))

;; tool-schema is a tool of this file's, defined where servers are
;; declared (it is offered only beside MCP tools: mcp-tool-specs).
(when (mcp-configured?)
  (define-tool "tool-schema"
    tool-schema-description
    (list (list 'name 'string tool-schema-name-description 'none 'required))
    (lambda (args) (tool-schema (alist-ref args 'name)))))
