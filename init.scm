;;; init.scm — nodwyn's default init, embedded in the binary.
;;;
;;; Loaded first; then $XDG_CONFIG_HOME/nodwyn/init.scm (the person's own) and
;;; <folder>/.nodwyn/init.scm (the project's). Later definitions win, so a
;;; project redefines any procedure below by defining it again.

(load-embedded "runtime/util.scm")
(load-embedded "runtime/profiles.scm")
(load-embedded "prompts/prompts.scm")
(load-embedded "prompts/tools.scm")
(load-embedded "prompts/messages.scm")
(load-embedded "prompts/judge.scm")
(load-embedded "prompts/compact.scm")
(load-embedded "prompts/mcp.scm")
(load-embedded "runtime/fold.scm")
(load-embedded "runtime/progress.scm")
(load-embedded "runtime/finish.scm")
(load-embedded "runtime/judge.scm")
(load-embedded "runtime/compact.scm")
(load-embedded "runtime/loop.scm")
(load-embedded "runtime/mcp.scm")
(load-embedded "runtime/profiles/lean.scm")
(load-embedded "runtime/profiles/full.scm")
