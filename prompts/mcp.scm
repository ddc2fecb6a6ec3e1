;;; prompts/mcp.scm — what the model reads about MCP tools (runtime/mcp.scm).
;;;
;;; An MCP tool is offered with its one-line summary and no schema; the
;;; tool-schema tool gives its whole description and its arguments' JSON
;;; schema when the model asks, and a failed first call gets them too.

(define tool-schema-description
  "Give the description and the arguments (a JSON schema) of an MCP tool: the tools named server__tool are listed with a one-line summary only. Call it with a tool's name before that tool's first call.")

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
