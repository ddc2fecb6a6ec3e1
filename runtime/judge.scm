;;; runtime/judge.scm — what the judge sees (nodwyn run --judge).
;;;
;;; nodwyn calls (judge-request call) for each ordinary confirm of a run
;;; with --judge; call is an alist: (tool . name) (arguments . json)
;;; (checker . c) (reason . r). It returns ((system . text) (prompt . text)):
;;; nodwyn sends that to the judge model as one request with no tools, reads
;;; the first word of the answer (yes or no; anything else declines) and
;;; keeps the reason in the log (the judge event). judge-request may read
;;; the conversation ((messages)) but not call a tool or the model.
;;; A project redefines judge-request, judge-recent-messages or
;;; judge-message-chars in .nodwyn/init.scm, or the words in prompts/judge.scm.

;; How many of the last messages the judge sees, and how much of each.
(define judge-recent-messages 6)
(define judge-message-chars 1200)

(define (judge-clip text n)
  (if (> (string-length text) n)
      (string-append (substring text 0 n) " […]")
      text))

;; The task: the first user message of the conversation.
(define (judge-task msgs)
  (cond ((null? msgs) "(none)")
        ((eq? (alist-ref (car msgs) 'role) 'user) (judge-clip (alist-ref (car msgs) 'text "") 4000))
        (else (judge-task (cdr msgs)))))

(define (judge-last lst n)
  (if (> (length lst) n) (list-tail lst (- (length lst) n)) lst))

;; One message as a line or two of text.
(define (judge-message-text m)
  (message-transcript m (lambda (text) (judge-clip text judge-message-chars))))

(define (judge-turns msgs)
  (let loop ((ms (judge-last (if (null? msgs) '() (cdr msgs)) judge-recent-messages)) (acc ""))
    (if (null? ms)
        acc
        (loop (cdr ms) (string-append acc (if (string=? acc "") "" "\n") (judge-message-text (car ms)))))))

(define (judge-request call)
  (let ((msgs (messages)))
    (list (cons 'system judge-system-prompt)
          (cons 'prompt (judge-prompt (judge-task msgs) (judge-turns msgs) call)))))
