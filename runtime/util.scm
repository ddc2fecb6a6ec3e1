;;; runtime/util.scm — small helpers the loop uses.

;; (alist-ref alist key [default]) — the value under key (compared with equal?).
(define (alist-ref alist key . default)
  (let ((hit (assoc key alist)))
    (if hit (cdr hit) (if (null? default) #f (car default)))))

;; Accessors for what (model-turn …) returns: an alist
;;   ((text . "…") (tool-calls . (call …)))
;; where each call is ((id . "…") (name . "…") (arguments . "raw JSON")).
(define (reply-text reply) (alist-ref reply 'text ""))
(define (reply-tool-calls reply) (alist-ref reply 'tool-calls '()))
(define (call-id call) (alist-ref call 'id))
(define (call-name call) (alist-ref call 'name))
(define (call-arguments call) (alist-ref call 'arguments "{}"))

;; Accessors for what (call-tool …) returns: an alist
;;   ((output . "…") (error . #f) (decision . "allow") (checker . "") (exit . 0))
(define (result-output r) (alist-ref r 'output ""))
(define (result-error? r) (alist-ref r 'error #f))
(define (result-decision r) (alist-ref r 'decision "allow"))
(define (result-exit r) (alist-ref r 'exit -1))

;; A message of (messages) as text for another model to read (the judge,
;; a compaction's summary): "user: …", "agent: …" with its calls, "result of
;; TOOL: …"; clip is a procedure (text) -> the text shown.
(define (message-transcript m clip)
  (let ((text (clip (alist-ref m 'text ""))))
    (case (alist-ref m 'role)
      ((assistant)
       (string-append
        "agent: " text
        (apply string-append
               (map (lambda (c)
                      (string-append "\n  call " (alist-ref c 'name "?") " " (clip (alist-ref c 'arguments "{}"))))
                    (alist-ref m 'tool-calls '())))))
      ((tool) (string-append "result of " (alist-ref m 'name "?")
                             (if (alist-ref m 'error #f) " (error)" "") ":\n" text))
      (else (string-append "user: " text)))))
