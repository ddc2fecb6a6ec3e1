;;; runtime/progress.scm — the progress guard.
;;;
;;; Outside sandbox mode a run that makes the same call and gets the same
;;; result progress-stop-after times in a row is stopped. In sandbox mode the
;;; same call repeated is warned about at its 4th, 8th … repetition, with
;;; the count (repeat-warning in prompts/messages.scm), and the turn goes on
;;; (waiting on a job with one command is legitimate there).

(define progress-stop-after 4)
(define progress-warn-every 4)

(define progress-last-call #f)    ; "name arguments" of the last call
(define progress-last-output #f)
(define progress-same-calls 0)    ; the same call, in a row
(define progress-same-results 0)  ; the same call with the same result, in a row

;; (progress-check name arguments output) → (values output stop)
;; output is what the model reads (a warning may be appended); stop is #f or
;; the text the run ends with.
(define (progress-check name arguments output)
  (let ((key (string-append name " " arguments)))
    (if (equal? key progress-last-call)
        (begin
          (set! progress-same-calls (+ progress-same-calls 1))
          (set! progress-same-results
                (if (equal? output progress-last-output) (+ progress-same-results 1) 1)))
        (begin
          (set! progress-last-call key)
          (set! progress-same-calls 1)
          (set! progress-same-results 1)))
    (set! progress-last-output output)
    (cond
     ((sandbox?)
      (if (= 0 (remainder progress-same-calls progress-warn-every))
          (begin
            (log-note (format #f "progress warning: ~a ran ~a times in a row" name progress-same-calls))
            (values (string-append output "\n" (repeat-warning progress-same-calls)) #f))
          (values output #f)))
     ((>= progress-same-results progress-stop-after)
      (log-note (format #f "progress stop: ~a returned the same result ~a times in a row" name progress-same-results))
      (values output (no-progress-message progress-same-results)))
     (else (values output #f)))))
