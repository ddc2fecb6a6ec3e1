;;; runtime/profiles.scm — loop profiles.
;;;
;;; A profile is an alist of settings that the standard loop consults:
;;;   system-prompt     a procedure of no arguments returning the system prompt
;;;   tool-description  a procedure (name) -> the description the model reads
;;;   run               a procedure (instruction) that runs the session
;;;                     (default: standard-run in runtime/loop.scm)
;;;   turn-end          a procedure (reply) -> a message to send, or #f to end
;;;                     the turn (after the finish check has had its say)
;;;   fold-limit        longest tool result, in characters, the model reads whole
;;;   leave-running     #t: a command still running at its time limit is left
;;;                     running in the background (and stopped when the session
;;;                     ends) instead of stopped; the lean profile's choice.
;;;                     Go reads it once, after the init chain has loaded.
;;;   sandbox           the execution seam's [sandbox] settings for this
;;;                     profile: a mode ("working_copy" or "no_sandbox") or an
;;;                     alist ((mode . "working_copy") (checkout . ".")),
;;;                     between config.toml and the contract; it may choose
;;;                     a working copy, never undo one. Read once, like
;;;                     leave-running. Not sandbox mode: see (sandbox?).
;;;   finish-self-check #t: the first time the model says it is done in a
;;;                     working-copy run, the contract's check runs (when it
;;;                     is the person's: (contract-trusted?)) and a failure
;;;                     goes back to the model (runtime/finish.scm);
;;;                     the full profile's choice.
;;;
;;; (define-profile 'name settings) registers one; the run picks one by
;;; --profile, NODWYN_PROFILE, [loop] profile in config.toml, or else
;;; (default-profile-name), which a project may redefine.

(define profiles (make-hash-table))

(define (define-profile name settings)
  (hash-table-set! profiles (if (symbol? name) name (string->symbol name)) settings)
  name)

(define (profile-named name)
  (let ((p (hash-table-ref/default profiles (if (symbol? name) name (string->symbol name)) #f)))
    (or p (error "no such profile; define it with define-profile, or choose one of"
                 name (hash-table-keys profiles)))))

;; The profile of this run, named by Go from the flag, environment or config,
;; or by (default-profile-name).
(define (default-profile-name)
  (if (unattended?) 'lean 'full))

(define (current-profile-name)
  (let ((chosen (profile-name)))
    (if (string=? chosen "") (default-profile-name) (string->symbol chosen))))

(define (current-profile) (profile-named (current-profile-name)))

(define (profile-ref key . default)
  (let ((hit (assq key (current-profile))))
    (if hit (cdr hit) (if (null? default) #f (car default)))))
