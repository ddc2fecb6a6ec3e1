;;; runtime/finish.scm — what happens when the model says it is done.
;;;
;;; (finish-check reply) is called when a turn ends on the model's word: a
;;; reply with no tool calls, and no reminder of the profile's due. It returns
;;; a message that keeps the turn going, or #f to let it end. A project
;;; replaces this by defining finish-check again.
;;;
;;; Two evidence loops, each once per session:
;;; - finish-self-check, for a profile whose finish-self-check setting is #t
;;;   (full): in a working-copy run with a contract check that is the
;;;   person's (contract-trusted?: --contract, or a trusted project's), the
;;;   contract's check runs (self-check: through the guard, in a fresh copy,
;;;   recorded in the signed journal); when it fails the model gets its result
;;;   and the run goes on. A check the guard refused or nobody approved is
;;;   logged and the run ends as it would have. Logged with a note
;;;   "self-check: …".
;;; - in sandbox mode, the first such ending is answered with
;;;   sandbox-finish-message.

(define sandbox-finish-asked #f)
(define finish-self-checked #f)

(define (finish-self-check)
  (and (profile-ref 'finish-self-check #f)
       (not finish-self-checked)
       (check-declared?)
       (contract-trusted?)
       (begin
         (set! finish-self-checked #t)
         (let ((result (self-check)))
           (cond
            ((not result) #f)
            ((or (not (member (result-decision result) '("allow" "confirm" "security-confirm")))
                 (and (result-error? result) (eqv? (result-exit result) -1)
                      (not (equal? (result-decision result) "allow"))))
             ;; Refused, or a confirm declined: the check never ran.
             (log-note (string-append "self-check: not run: " (result-output result)))
             #f)
            ((eqv? (result-exit result) 0)
             (log-note "self-check: the contract's check passed before finishing")
             #f)
            ((eqv? (result-exit result) -1)
             (log-note (string-append "self-check: the contract's check did not run to its end: " (result-output result)))
             (self-check-failed-message (result-output result)))
            (else
             (log-note (format #f "self-check: the contract's check failed (exit ~a); the model is given its result" (result-exit result)))
             (self-check-failed-message (result-output result))))))))

(define (finish-check reply)
  (cond
   ((finish-self-check))
   ((and (sandbox?) (not sandbox-finish-asked))
    (set! sandbox-finish-asked #t)
    (log-note "sandbox finish check: asked the model to check its result once before finishing")
    sandbox-finish-message)
   (else #f)))
