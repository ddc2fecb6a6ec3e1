;;; prompts/prompts.scm — the system prompts.
;;;
;;; Redefine any of these in .nodwyn/init.scm to change what the model is told.

;; The first sentences of the lean prompt: where the model works and which
;; paths are its own.
(define (lean-opening)
  (cond
   ((sandbox?)
    (string-append
     "You are a coding agent working in " (folder)
     ", unattended: nobody approves or answers your calls. "
     "This machine is a disposable sandbox: anything on it is yours to read, change, install or run. "
     "Relative paths are relative to " (folder) "; throwaway files go in $TMPDIR or /tmp."))
   ((unattended?)
    (string-append
     "You are a coding agent working in the repository at " (folder)
     ", unattended: nobody approves or answers your calls. "
     "Paths are relative to the repository root. Throwaway files go in your scratch directory "
     (scratch-dir) " (commands run with TMPDIR set to it) or /tmp; don't set TMPDIR or HOME elsewhere."))
   (else
    (string-append
     "You are a coding agent working in the repository at " (folder) ". "
     "Paths are relative to the repository root. Throwaway files go in your scratch directory "
     (scratch-dir) " (commands run with TMPDIR set to it); don't set TMPDIR or HOME elsewhere or use /tmp."))))

(define lean-rules
  "Work until the task is done: look before you change, make the change, then run the checks that show it works. \
Prefer fs-edit for small changes to existing files. Commands run in the folder; write paths relative to it. \
If a call is refused, read the reason and take another way. \
When you are done, reply with a short summary and no tool call.")

;; A project's own rules for the model, which every profile's system prompt
;; ends with (lean and full, and the profiles built on them): set it in
;; .nodwyn/init.scm. Empty, it adds nothing.
(define project-rules "")

;; Project instructions: the person's $XDG_CONFIG_HOME/nodwyn/AGENTS.md, then
;; AGENTS.md (CLAUDE.md where there is none) from the repository root down
;; to the folder, each with its path and its first project-instructions-max
;; bytes. Read once per session through the guard's denylist.
(define project-instructions-max 16384)

(define (project-instruction-text f)
  (string-append
   "## " (alist-ref f 'path) "\n" (alist-ref f 'text)
   (if (alist-ref f 'cut #f)
       (string-append "\n[cut: the file has " (number->string (alist-ref f 'bytes))
                      " bytes; this is its first " (number->string project-instructions-max)
                      ".]")
       "")))

(define (project-instructions)
  (let ((files (instruction-files project-instructions-max)))
    (if (null? files)
        ""
        (string-append
         "# Project instructions\n"
         "The person's and the project's instructions (AGENTS.md), outermost first; where they disagree, the nearer one wins. "
         "Each file is given up to " (number->string project-instructions-max) " bytes.\n\n"
         (let loop ((fs files) (acc ""))
           (if (null? fs)
               acc
               (loop (cdr fs) (string-append acc (if (string=? acc "") "" "\n\n") (project-instruction-text (car fs))))))))))

(define (with-project-rules prompt)
  (let* ((with-rules (if (string=? project-rules "") prompt (string-append prompt "\n\n" project-rules)))
         (instr (project-instructions)))
    (if (string=? instr "") with-rules (string-append with-rules "\n\n" instr))))

;; Said when the execution seam runs each command in a copy of the folder
;; ([sandbox] mode = "working_copy"); "" otherwise.
(define (working-copy-note)
  (if (alist-ref (sandbox-caps) 'copy #f)
      "Commands run in a fresh copy of the folder that is thrown away after each call: what they write is discarded. Change files with fs-write and fs-edit."
      ""))

(define (with-working-copy-note prompt)
  (let ((note (working-copy-note)))
    (if (string=? note "") prompt (string-append prompt "\n\n" note))))

(define (lean-system-prompt)
  (with-project-rules (with-working-copy-note (string-append (lean-opening) "\n\n" lean-rules))))

(define full-rules
  "How to work:
- Understand before changing: read the code around the change and the tests that cover it.
- Make the smallest change that does the task completely; keep the project's style.
- Use fs-read, fs-find and index-grep to look; fs-edit for changes to existing files (the old text must match exactly once); fs-write for new files.
- Run the project's own checks (tests, build, linters) after changing code, and read their output.
- Every call is judged by a guard before it runs. A refused call did not run: read the reason and take another way; don't retry the same call.
- Keep throwaway files (scripts that reproduce a bug, notes) in the scratch directory, never in the repository.
- When the task is done, reply with a short summary of what you changed and how you checked it, and make no tool call.")

(define (full-opening)
  (if (sandbox?)
      (lean-opening)
      (string-append
       "You are a coding agent working in the repository at " (folder) ". "
       "Every path must stay inside the repository; paths are relative to its root. "
       "The one place outside it you may use is your scratch directory " (scratch-dir)
       ": commands run with TMPDIR set to it, so temporary files go there without being told; "
       "don't set TMPDIR or HOME elsewhere, and don't use /tmp.")))

(define (full-system-prompt)
  (with-project-rules
   (with-working-copy-note
    (string-append (full-opening) "\n\n" full-rules
                   (if (git-repo?) "\n- The folder is a git work tree: git-status and git-diff show what changed." "")))))
