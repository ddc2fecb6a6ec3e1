;;; runtime/compact.scm — keeping the conversation within the context window.
;;;
;;; Before each request, (maybe-compact!) checks (context-tokens) against
;;; the threshold — compact-threshold of the window less compact-reserve,
;;; the room kept for the reply — and when it is passed, (compact-now!)
;;; summarizes the oldest messages: all but the task (the first message) and
;;; the last compact-keep messages, in a structured summary
;;; (prompts/compact.scm) asked of the model with (model-ask …), which
;;; replaces them ((replace-messages! …)). The log keeps the whole history
;;; and a compaction note with the tokens before and after. When the
;;; provider still answers that a request is over its window, Go calls
;;; (compact-on-overflow! error) and sends the request once more.
;;;
;;; A profile changes it with its settings: fold-old (#f: no folding of
;;; older results first), compact (#f: never),
;;; compact-threshold (a fraction: 0.8), compact-keep (messages kept
;;; verbatim: 8); or a project redefines these procedures.

(define compact-threshold 0.8)
(define compact-reserve 8192)
(define compact-keep 8)
;; How much of each message the summary request shows, and of all of them
;; (a fraction of the window, in characters at four a token).
(define compact-message-chars 2000)
(define compact-transcript-share 0.5)

(define (compact-enabled?) (profile-ref 'compact #t))

(define (compact-limit)
  (let ((reserve (min compact-reserve (quotient (context-window) 4))))
    (* (profile-ref 'compact-threshold compact-threshold) (- (context-window) reserve))))

(define (compact-needed?)
  (and (compact-enabled?) (> (context-tokens) (compact-limit))))

;; Older tool results are folded first — their head kept, the rest left in
;; the log — which needs no model call; a summary only when that is not
;; enough. fold-old-keep: the last messages never folded; fold-old-chars:
;; what is kept of an older result. The profile setting fold-old (#f: never).
(define fold-old-keep 12)
(define fold-old-chars 600)

(define (fold-old-results!)
  (let* ((msgs (messages))
         (end (- (length msgs) fold-old-keep)))
    (let loop ((i 1) (ms (if (null? msgs) '() (cdr msgs))) (folded 0))
      (if (or (null? ms) (>= i end))
          (begin
            (if (> folded 0)
                (log-note (string-append "compaction: folded " (number->string folded)
                                         " older tool results to their first " (number->string fold-old-chars) " characters")))
            folded)
          (let* ((m (car ms)) (text (alist-ref m 'text "")))
            (if (and (eq? (alist-ref m 'role) 'tool)
                     (> (string-length text) (* 2 fold-old-chars))
                     (fold-message! i (string-append (substring text 0 fold-old-chars)
                                                     "\n[… older result folded: "
                                                     (number->string (- (string-length text) fold-old-chars))
                                                     " more characters; run the call again if you need them]")))
                (loop (+ i 1) (cdr ms) (+ folded 1))
                (loop (+ i 1) (cdr ms) folded)))))))

(define (maybe-compact!)
  (when (and (compact-needed?) (profile-ref 'fold-old #t))
    (fold-old-results!))
  (if (compact-needed?) (compact-now!) #f))

;; The end of the range to summarize: keep the last compact-keep messages,
;; moved back so the kept part starts with no tool result (a call and its
;; results stay together). #f when there is nothing to summarize.
(define (compact-cut msgs)
  (let loop ((cut (- (length msgs) (profile-ref 'compact-keep compact-keep))))
    (cond ((<= cut 1) #f)
          ((eq? (alist-ref (list-ref msgs cut) 'role) 'tool) (loop (- cut 1)))
          (else cut))))

(define (compact-clip text n)
  (if (> (string-length text) n)
      (string-append (substring text 0 (quotient n 2)) "\n[…]\n"
                     (substring text (- (string-length text) (quotient n 2)) (string-length text)))
      text))

(define (compact-message-text m)
  (message-transcript m (lambda (text) (compact-clip text compact-message-chars))))

;; The transcript of messages [from, to), at most share of the window: when
;; longer, its oldest part is dropped (a summary of an earlier compaction
;; comes first and is kept).
(define (compact-transcript msgs from to)
  (let* ((budget (exact (floor (* compact-transcript-share 4 (context-window)))))
         (parts (let loop ((i from) (acc '()))
                  (if (>= i to) (reverse acc)
                      (loop (+ i 1) (cons (compact-message-text (list-ref msgs i)) acc))))))
    (let loop ((ps (reverse parts)) (acc "") (first (car parts)))
      (cond ((null? ps) acc)
            ((> (+ (string-length acc) (string-length (car ps))) budget)
             (string-append (compact-clip first compact-message-chars) "\n\n[… older steps left out …]\n\n" acc))
            (else (loop (cdr ps) (if (string=? acc "") (car ps) (string-append (car ps) "\n\n" acc)) first))))))

;; Summarize messages [1, cut) into one. Returns #t when it compacted.
(define (compact-now!)
  (let* ((msgs (messages))
         (cut (compact-cut msgs)))
    (if (not cut)
        #f
        (let* ((summary (model-ask compact-system-prompt
                                   (compact-prompt (compact-transcript msgs 1 cut))
                                   (list (cons 'max-tokens 4096)))))
          (replace-messages! 1 cut (compact-summary-message summary))
          #t))))

;; Called by Go when the provider answered that a request is over its
;; window: compact (unless the profile turned it off) and say whether the
;; request should be sent again.
(define (compact-on-overflow! error-text)
  (and (compact-enabled?) (compact-now!)))
