; Error messages carry the position of the failing call.
(define (first-of x)
  (car x))
(define (use-it v)
  (list (first-of v)))
(use-it 5) ; ### "car: not a pair: 5"
(vector-ref (vector 1 2) 5) ; ### "vector-ref"
(+ 1 "a") ; ### "\+: "
(undefined-procedure 1) ; ### "unbound variable: undefined-procedure"
(define (uses-undefined)
  (list 1
        undefined-argument)) ; ### "unbound variable: undefined-argument"
(uses-undefined)
(let ((x 1)) (x)) ; ### "not a procedure: 1"
(error "custom message" '(1 2)) ; ### "custom message \(1 2\)"
(error 'my-proc "went wrong:" 5) ; ### "my-proc: went wrong: 5"
---
; read errors
(display "unclosed ; ### "read: unexpected end of input in string"
