;;; runtime/finish.scm — what happens when the model says it is done.
;;;
;;; (finish-check reply) is called when a turn ends on the model's word: a
;;; reply with no tool calls, and no reminder of the profile's due. It returns a message that keeps the turn going,
;;; or #f to let it end. In sandbox mode the first such ending in a session is
;;; answered with sandbox-finish-message (the evidence loop), once. A project
;;; replaces this by defining finish-check again.

(define sandbox-finish-asked #f)

(define (finish-check reply)
  (cond
   ((and (sandbox?) (not sandbox-finish-asked))
    (set! sandbox-finish-asked #t)
    (log-note "sandbox finish check: asked the model to check its result once before finishing")
    sandbox-finish-message)
   (else #f)))
