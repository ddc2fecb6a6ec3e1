;;; runtime/profiles/full.scm — the full profile: a fuller prompt and tool
;;; descriptions, and a reminder when a turn ends with no file changed in a
;;; git work tree (never in sandbox mode, where the whole machine is the
;;; workspace and a command may change files neither git nor the tools see).

(define full-reminded #f)

(define (full-turn-end reply)
  (cond
   ((and (not (sandbox?)) (git-repo?) (not full-reminded) (null? (changed-files)))
    (set! full-reminded #t)
    (log-note "reminder: no file has changed")
    no-change-reminder)
   (else #f)))

(define-profile 'full
  (list (cons 'system-prompt (lambda () (full-system-prompt)))
        (cons 'tool-description (lambda (name) (full-tool-description name)))
        (cons 'turn-end (lambda (reply) (full-turn-end reply)))
        (cons 'fold-limit 16000)
        (cons 'finish-self-check #t)))
