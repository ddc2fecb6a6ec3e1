;;; prompts/mcp.scm — what the model reads about MCP tools (runtime/mcp.scm).
;;;
;;; By default (mcp-schemas 'catalogue) the MCP tools are listed by name and
;;; one-line summary in tool-schema's description, and a tool joins the
;;; tool list, whole, once the model has asked for it; with 'on-demand each
;;; is offered with its summary and no schema. tool-schema gives a tool's
;;; whole description and its arguments' JSON schema, and a failed first
;;; call gets them too.

(define tool-schema-description
  "Give the description and the arguments (a JSON schema) of an MCP tool: the tools named server__tool are listed with a one-line summary only. Call it with a tool's name before that tool's first call.")

;; tool-schema's description under 'catalogue: what it does, then each
;; offered tool's name and summary, one a line (tools: as (mcp-tools)
;; lists them).
(define (tool-schema-catalogue tools)
  (string-append
   "Load an MCP tool: give its name and get its description and arguments (a JSON schema); from then on the tool is in your tool list and you call it by its name. Load a tool before its first use. The MCP tools:\n"
   (string-join (map (lambda (t) (string-append (alist-ref t 'name) ": " (alist-ref t 'summary ""))) tools) "\n")))

(define tool-schema-name-description "the MCP tool's name, as listed (server__tool)")

;; The answer of tool-schema for the tool t, an alist as (mcp-tool name)
;; gives it.
(define (tool-schema-text t)
  (string-append
   (alist-ref t 'name) " (a tool of the MCP server " (alist-ref t 'server) ")\n"
   (let ((d (alist-ref t 'description ""))) (if (string=? d "") "" (string-append d "\n")))
   "Arguments (JSON schema): " (alist-ref t 'schema "{}")))

;; tool-schema asked about a name that is no MCP tool offered here.
(define (no-such-mcp-tool-message name names)
  (string-append "there is no MCP tool " name " here; the MCP tools are: "
                 (if (null? names) "(none)" (string-join names ", "))))

;; What follows the error result of an MCP tool's call when the model had
;; not been given its schema.
(define (mcp-schema-after-error t)
  (string-append "\n\n[you had not asked for this tool's schema: here it is]\n" (tool-schema-text t)))
