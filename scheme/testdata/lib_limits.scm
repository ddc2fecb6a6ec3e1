; Sizes a script asks for are bounded with a clear error, and values shown
; in error messages are cut short (a circular list must not make a message
; of hundreds of megabytes).

(make-list 100000000) ; ### "make-list: too large: 100000000 elements \(the limit is 16777216\)"
(make-vector 1000000000000) ; ### "make-vector: too large"
(make-string 2000000000 #\a) ; ### "make-string: too large"
(make-bytevector 2000000000) ; ### "make-bytevector: too large"
(iota 100000000) ; ### "iota: too large"
(string-pad "x" 100000000) ; ### "string-pad: too large"
(make-vector -1) ; ### "make-vector: not a non-negative exact integer: -1"
(assert-equal 5 (length (make-list 5 'x)))
---
(expt 2 100000000) ; ### "expt: result too large"
(expt 3 10000000) ; ### "expt: result too large"
(let loop ((x 3)) (loop (* x x))) ; ### "\*: result too large"
(assert-equal 1 (expt 1 100000000000000000000))
(assert-equal 1267650600228229401496703205376 (expt 2 100))
(assert-equal 1000 (string-length (number->string (expt 10 999))))
---
(let loop ((s "ab")) (loop (string-append s s))) ; ### "string-append: result too large"
---
(define circ (list 1 2 3))
(set-cdr! (cddr circ) circ)
(length circ) ; ### "^length: not a proper list: \(1 2 3 1 2 3 .{200,300}\.\.\.$"
(apply + circ) ; ### "apply: .*\.\.\.$"
(list-copy circ) ; ### "list-copy: not a list \(it is circular or too long\)"
(reverse circ) ; ### "reverse: not a list \(it is circular or too long\)"
(append circ '(4)) ; ### "append: not a list"
(list->vector circ) ; ### "list->vector"
(vector-ref (vector circ) 5) ; ### "vector-ref: index out of range: 5"
(error "bad" circ) ; ### "^bad \(1 2 3 .*\.\.\.$"
---
; equal? on structures nested deeper than any recursion limit
(define (deep n) (let loop ((i 0) (acc '())) (if (= i n) acc (loop (+ i 1) (list acc (vector i "s"))))))
(assert-true (equal? (deep 300000) (deep 300000)))
(assert-false (equal? (deep 300000) (deep 299999)))
(assert-true (equal? (list 1 (vector 2 "x" #u8(1)) 3 . (4)) (list 1 (vector 2 "x" #u8(1)) 3 4)))
(assert-false (equal? (vector 1 2) (vector 1 3)))
(assert-false (equal? '(1 2 . 3) '(1 2 . 4)))
---
; a cycle is found at once, not after the size bound (which made 16M pairs
; first), whatever its length, and not in a list that ends
(define (cycle n) (let ((l (iota n))) (set-cdr! (last-pair l) l) l))
(reverse (cycle 1)) ; ### "reverse: not a list \(it is circular or too long\)"
(reverse (cycle 7)) ; ### "reverse: not a list"
(list-copy (cycle 2)) ; ### "list-copy: not a list \(it is circular or too long\)"
(define tail-loop (cons 'a (cons 'b (cycle 3))))
(list-copy tail-loop) ; ### "list-copy: not a list"
(assert-equal '(3 2 1) (reverse '(1 2 3)))
(assert-equal '(1 2 . 3) (list-copy '(1 2 . 3)))
(assert-equal '() (reverse '()))
(assert-equal 5 (list-copy 5))
