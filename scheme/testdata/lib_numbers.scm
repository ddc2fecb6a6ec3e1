; Numbers: exact/inexact, bignum promotion, division operators.

(assert-equal 4611686018427387904 (* 2147483648 2147483648))
(assert-equal 9223372036854775808 (+ 9223372036854775807 1))
(assert-equal 9223372036854775807 (- (+ 9223372036854775807 1) 1))
(assert-true (exact-integer? (- (+ 9223372036854775807 1) 1)))
(assert-equal 3628800 (let loop ((i 10) (acc 1)) (if (= i 0) acc (loop (- i 1) (* acc i)))))
(assert-equal 30414093201713378043612608166064768844377641568960512000000000000
              (let loop ((i 50) (acc 1)) (if (= i 0) acc (loop (- i 1) (* acc i)))))
(assert-equal 2.5 (/ 5 2))
(assert-equal 5 (/ 10 2))
(assert-true (inexact? (/ 1 3)))
(assert-equal 7 (+ 3 4))
(assert-equal 3.5 (+ 3 0.5))
(assert-true (= 1 1.0 1))
(assert-true (< 1 2 3.5 4))
(assert-false (< 1 1))
(assert-true (> 100000000000000000000 1))
(assert-false (= +nan.0 +nan.0))
(assert-equal -3 (quotient -7 2))
(assert-equal -1 (remainder -7 2))
(assert-equal 1 (modulo -7 2))
(assert-equal -1 (modulo 7 -2))
(call-with-values (lambda () (floor/ 7 -2))
  (lambda (q r) (assert-equal -4 q) (assert-equal -1 r)))
(call-with-values (lambda () (truncate/ 7 -2))
  (lambda (q r) (assert-equal -3 q) (assert-equal 1 r)))
(call-with-values (lambda () (exact-integer-sqrt 26))
  (lambda (s r) (assert-equal 5 s) (assert-equal 1 r)))
(assert-equal 1 (floor-remainder 10 3))
(assert-equal 3 (truncate-quotient 10 3))
(assert-equal 100000000000000000000 (quotient 200000000000000000000 2))
(assert-equal 0 (remainder 200000000000000000000 2))
(assert-equal 5 (abs -5))
(assert-equal 5.5 (abs -5.5))
(assert-equal 1 (min 3 1 2))
(assert-equal 3.0 (max 1 2 3.0))
(assert-equal 4 (gcd 12 -8))
(assert-equal 24 (lcm 8 -6))
(assert-true (number? 1))
(assert-false (number? "1"))
(assert-true (integer? 1.0))
(assert-false (integer? 1.5))
(assert-true (exact? 100000000000000000000))
(assert-true (inexact? 1.5))
(assert-equal 3 (exact 3.0))
(assert-equal 3.0 (inexact 3))
(assert-equal 0.5 (exact->inexact 0.5))
(assert-true (zero? 0))
(assert-true (positive? 1e-300))
(assert-true (negative? -100000000000000000000))
(assert-true (odd? 100000000000000000001))
(assert-true (even? -2))
(assert-equal -3.0 (floor -2.5))
(assert-equal -2.0 (ceiling -2.5))
(assert-equal -2.0 (round -2.5))
(assert-equal 2.0 (round 1.5))
(assert-equal -2.0 (truncate -2.5))
(assert-equal 3 (round 3))
(assert-equal 12 (sqrt 144))
(assert-equal 1.5 (sqrt 2.25))
(assert-equal 1024 (expt 2 10))
(assert-equal 1.0 (expt 4 0.0))
(assert-equal 2.0 (expt 4 0.5))
(assert-equal 1.0 (exp 0))
(assert-equal 2.0 (log 100 10))
(assert-equal 0.0 (sin 0))
(assert-equal 1.0 (cos 0))
(assert-equal 0.0 (atan 0))
(assert-equal 81 (square 9))
(assert-true (nan? (- +inf.0 +inf.0)))
(assert-equal "-ff" (number->string -255 16))
(assert-equal "1010" (number->string 10 2))
(assert-equal "0.1" (number->string 0.1))
(assert-equal "100000000000000000000" (number->string 100000000000000000000))
(assert-equal -255 (string->number "-ff" 16))
(assert-equal 10 (string->number "#b1010"))
(assert-equal 1.5 (string->number "15e-1"))
(assert-false (string->number "1.2.3"))
(assert-false (string->number ""))
(assert-equal 3.0 (string->number "#i3"))
(assert-equal 3 (string->number "#e3.0"))
---
(+ 1 'a) ; ### "\+: not a number: a"
---
(- "5") ; ### "-: not a number: \"5\""
---
(* 2 #t) ; ### "\*: not a number: #t"
---
(/ 5 0) ; ### "/: division by zero"
---
(modulo 5 0) ; ### "modulo: division by zero"
---
(< 1 "2") ; ### "<: not a number: \"2\""
---
(exact 1.5) ; ### "exact: no exact representation"
---
(exact-integer-sqrt -1) ; ### "exact-integer-sqrt: not a non-negative exact integer: -1"
---
(sqrt 'x) ; ### "sqrt: not a number: x"
---
(string->number 12) ; ### "string->number: not a string: 12"
---
(number->string 1.5 2) ; ### "number->string: inexact numbers can only be written in radix 10"
---
(odd? 1.5) ; ### "odd\?: not an integer: 1.5"
---
(expt 0 -1) ; ### "expt: division by zero"
---
; the reader and string->number accept the same number syntax
(define (agree? s)
  (let ((a (string->number s))
        (b (guard (e (#t 'error)) (read (open-input-string s)))))
    (or (and (number? b) (eqv? a b)) (and (not a) (not (number? b))))))
(for-each (lambda (s) (assert-equal (list s #t) (list s (agree? s))))
  '("1" "-1" "+1" "1." ".5" "1e3" "1e" "1/2" "4/2" "1/0" "#x1/2" "#xff" "#b101"
    "#e1.5" "#i1" "#x-ff" "1e400" "+" "-" "..." "12345678901234567890"
    "#xffffffffffffffffff" "+inf.0" "-nan.0" "1.5/2" "2/1.5" "1/-2"))

