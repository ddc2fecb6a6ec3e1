; Smoke test of the harness itself: assertions, expected errors, output.
(assert-equal 3 (+ 1 2))
(assert-true (pair? '(1)))
(assert-false (null? '(1)))
(car 5) ; ### "car: not a pair: 5"
(assert-error "not a pair" (lambda () (cdr 7)))
(display "after the error, the next form still runs")
(assert-equal "after the error, the next form still runs" (test-output))
---
; The innermost frame in this file names the line: f is called in non-tail
; position from g.
(define (f x) (car x))
(define (g y) (list (f y)))
(g 5) ; ### "car: not a pair"
