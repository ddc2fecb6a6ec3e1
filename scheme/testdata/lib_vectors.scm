; Vectors, bytevectors, booleans, misc.

(define v (make-vector 3 0))
(vector-set! v 0 'a)
(assert-equal #(a 0 0) v)
(assert-equal 3 (vector-length v))
(assert-equal 'a (vector-ref v 0))
(vector-fill! v 7 1)
(assert-equal #(a 7 7) v)
(assert-equal '(7 7) (vector->list v 1))
(assert-equal #(1 2) (list->vector '(1 2)))
(define w (vector 1 2 3 4 5))
(define c (vector-copy w 1 3))
(vector-set! c 0 'changed)
(assert-equal 2 (vector-ref w 1))
(vector-copy! w 0 #(x y))
(assert-equal #(x y 3 4 5) w)
(assert-equal #(1 2 3) (vector-append #(1) #(2 3)))
(assert-equal #(2 4 6) (vector-map (lambda (x) (* 2 x)) #(1 2 3)))
(define sum 0)
(vector-for-each (lambda (x y) (set! sum (+ sum (* x y)))) #(1 2 3) #(10 10))
(assert-equal 30 sum)
(assert-equal 5 (vector-length (vector-grow #(1 2) 5)))
(assert-equal #(1 2 3) (sort #(3 1 2) <))
(define sv (vector 3 1 2))
(vector-sort! sv <)
(assert-equal #(1 2 3) sv)
(assert-equal "ab" (vector->string #(#\a #\b)))
(assert-equal #(#\x #\y) (string->vector "xy"))
(assert-true (vector? #()))
(assert-false (vector? '()))
; bytevectors
(define b (make-bytevector 3 0))
(bytevector-u8-set! b 1 255)
(assert-equal #u8(0 255 0) b)
(assert-equal 255 (bytevector-u8-ref b 1))
(assert-equal 3 (bytevector-length b))
(assert-equal #u8(1 2 3 4) (bytevector-append (bytevector 1 2) (bytevector 3 4)))
(assert-equal #u8(2 3) (bytevector-copy #u8(1 2 3) 1))
(define b2 (bytevector 0 0 0 0))
(bytevector-copy! b2 1 #u8(9 8))
(assert-equal #u8(0 9 8 0) b2)
(assert-equal "héllo" (utf8->string (string->utf8 "héllo")))
(assert-equal #u8(104 105) (string->utf8 "hi"))
(assert-true (bytevector? #u8()))
; booleans
(assert-true (not #f))
(assert-false (not '()))
(assert-true (boolean? #f))
(assert-false (boolean? 0))
(assert-true (boolean=? #f #f #f))
(assert-true (procedure? car))
(assert-true (procedure? (lambda () 1)))
(assert-false (procedure? 'car))
---
(vector-ref #(1 2) 2) ; ### "vector-ref: index out of range: 2 \(length 2\)"
---
(vector-ref #(1 2) -1) ; ### "vector-ref: index out of range: -1"
---
(vector-set! '(1) 0 1) ; ### "vector-set!: not a vector: \(1\)"
---
(make-vector 'a) ; ### "make-vector: not a non-negative exact integer: a"
---
(vector-copy! (vector 1) 0 #(1 2)) ; ### "vector-copy!: 2 elements do not fit"
---
(vector-map (lambda (x) (car x)) #(1)) ; ### "car: not a pair: 1"
---
(bytevector-u8-set! (bytevector 1) 0 300) ; ### "bytevector-u8-set!: not a byte \(an exact integer 0-255\): 300"
---
(bytevector-u8-ref #u8(1) 1) ; ### "bytevector-u8-ref: index out of range: 1"
---
(utf8->string "x") ; ### "utf8->string: not a bytevector: \"x\""
