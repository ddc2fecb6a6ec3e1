;;; runtime/profiles/lean.scm — the lean profile: a short prompt, short tool
;;; descriptions, few reminders. The default for unattended runs.

(define-profile 'lean
  (list (cons 'system-prompt (lambda () (lean-system-prompt)))
        (cons 'tool-description (lambda (name) (lean-tool-description name)))
        (cons 'fold-limit 8000)
        (cons 'leave-running #t)))
