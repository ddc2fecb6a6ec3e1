;;; prompts/tools.scm — what the model reads about each tool.
;;;
;;; (lean-tool-description name) is short; (full-tool-description name) says
;;; more. A project redefines either, or the profile's tool-description.
;;;
;;; Every tool of prim's table (internal/prim, one descriptor per tool: its
;;; parameters' names, types and roles) has an entry in both lists, and each
;;; of its parameters the model fills a one-line description in
;;; tool-parameter-descriptions, which the schema the model sees carries
;;; (checked by TestEveryToolHasALeanAndAFullDescription in
;;; internal/session).
;;;
;;; A tool an init.scm defines with define-tool describes itself: its
;;; description (one for both styles, or ((lean . "…") (full . "…"))) and
;;; its parameters' (in the schema), unless these lists name it.

(define lean-tool-descriptions
  '(("shell-exec" . "Run a bash command in the folder; returns its output and exit status.")
    ("shell-start" . "Start a long-running command in the background; returns an id.")
    ("shell-read" . "Read the output so far of a command started with shell-start.")
    ("shell-stop" . "Stop a command started with shell-start.")
    ("fs-read" . "Read a file (numbered lines) or list a directory.")
    ("fs-write" . "Create or overwrite a file.")
    ("fs-edit" . "Replace old with new in a file; old must match exactly once.")
    ("fs-find" . "Find files by glob, e.g. **/*.go.")
    ("index-grep" . "Search file contents by regular expression.")
    ("self-check" . "Run the project's declared check in a fresh copy of the folder.")
    ("run-tests" . "Run a test command in a fresh copy of the folder.")
    ("git-status" . "Show git status.")
    ("git-diff" . "Show git diff.")))

(define full-tool-descriptions
  '(("shell-exec" . "Run a command with bash in the folder and return its output (stdout and stderr together) and exit status. It has a time limit (timeout, in seconds). Commands run with a scrubbed environment and TMPDIR set to the scratch directory.")
    ("shell-start" . "Start a long-running command (a server, a watcher) in the background. Its output goes to a file in the scratch directory; returns an id for shell-read and shell-stop. It is stopped when the session ends.")
    ("shell-read" . "Read the output so far of a command started with shell-start, and whether it is still running.")
    ("shell-stop" . "Stop a command started with shell-start.")
    ("fs-read" . "Read a text file as numbered lines (offset is the first line, limit the number of lines), or list a directory.")
    ("fs-write" . "Create a file, or overwrite one, with content. Parent directories are made. The previous content is kept in nodwyn's version store.")
    ("fs-edit" . "Replace the exact text old with new in a file. old must match exactly once: include enough surrounding lines to make it unique. If it does not match, the nearest lines are shown.")
    ("fs-find" . "Find files whose path matches a glob (** matches any number of directories), honouring .gitignore.")
    ("index-grep" . "Search file contents with a regular expression (Go syntax), honouring .gitignore; returns path:line: text.")
    ("self-check" . "Run the project's own check (the first check its contract declares) in a fresh copy of the folder, and return its output and exit status. Use it to see whether your change passes the way the project checks it. What it writes is discarded; each run is recorded as evidence.")
    ("run-tests" . "Run a test command of your choice (command) in a fresh copy of the folder, and return its output and exit status. What it writes is discarded; each run is recorded as evidence.")
    ("git-status" . "Show which files changed in the git work tree.")
    ("git-diff" . "Show the git diff of the work tree, or of one path.")))

;; What the schema says of each parameter of nodwyn's own tools: (tool
;; (parameter . "one short line") …). A parameter not named here has no
;; description in the schema.
(define tool-parameter-descriptions
  '(("shell-exec" ("command" . "bash command") ("timeout" . "in seconds"))
    ("shell-start" ("command" . "bash command"))
    ("shell-read" ("id" . "shell-start's id") ("tail" . "last n lines only"))
    ("shell-stop" ("id" . "shell-start's id"))
    ("fs-read" ("path" . "file or directory") ("offset" . "first line, from 1") ("limit" . "lines to read"))
    ("fs-write" ("path" . "file to write") ("content" . "whole file content"))
    ("fs-edit" ("path" . "file to edit") ("old" . "exact text to replace") ("new" . "replacement text"))
    ("fs-find" ("pattern" . "glob, e.g. **/*.go") ("path" . "directory to search"))
    ("index-grep" ("pattern" . "Go regexp") ("path" . "where to search") ("glob" . "glob filter on paths") ("ignore_case" . "case-insensitive"))
    ("self-check" ("timeout" . "in seconds"))
    ("run-tests" ("command" . "test command") ("timeout" . "in seconds"))
    ("git-diff" ("path" . "only this path") ("staged" . "staged changes"))))

(define (lean-tool-description name)
  (described-tool lean-tool-descriptions 'lean name))

(define (full-tool-description name)
  (let ((base (described-tool full-tool-descriptions 'full name)))
    (cond
     ((not (string=? name "shell-exec")) base)
     ((sandbox?) (string-append base " Whatever the program starts in the background keeps running after it ends."))
     (else (string-append base " Whatever the program starts in the background is stopped when it ends: start servers with shell-start.")))))

;; The description of name in descriptions, else define-tool's in that
;; style, else the name.
(define (described-tool descriptions style name)
  (cond ((assoc name descriptions) => cdr)
        ((defined-tool name) => (lambda (t) (alist-ref t style name)))
        (else name)))
