; Pairs, lists, SRFI-1 and the higher-order list procedures.

(assert-equal '(1 2) (cons 1 '(2)))
(define p (cons 1 2))
(set-car! p 10)
(set-cdr! p 20)
(assert-equal '(10 . 20) p)
(assert-equal '(1 4 9) (map (lambda (x) (* x x)) '(1 2 3)))
(assert-equal '(111 222) (map + '(1 2 3) '(10 20 30) '(100 200)))
(define acc '())
(for-each (lambda (x y) (set! acc (cons (list x y) acc))) '(a b) '(1 2))
(assert-equal '((b 2) (a 1)) acc)
(assert-equal '(1 2 5 8) (sort '(5 2 8 1) <))
(assert-equal '("apple" "fig" "pear") (sort '("pear" "apple" "fig") string<?))
(assert-equal '(3 2 1) (list-sort (lambda (a b) (> a b)) '(1 3 2)))
; stable: equal keys keep their order
(assert-equal '((0 . b) (0 . d) (1 . a) (1 . c)) (sort '((1 . a) (0 . b) (1 . c) (0 . d)) (lambda (x y) (< (car x) (car y)))))
(assert-equal '(2 3) (member 2.0 '(1 2 3) =))
(assert-equal '(2 . b) (assoc 2.0 '((1 . a) (2 . b)) =))
(assert-equal '((1) (2)) (member '(1) '((0) (1) (2))))
(assert-equal '("b" . 2) (assoc "b" '(("a" . 1) ("b" . 2))))
(assert-true (eq? (assq 'c '((a . 1))) #f))
(assert-true (= (length '()) 0))
(assert-equal '(1 2 . 3) (list-copy '(1 2 . 3)))
(assert-equal '(1 2 . 3) (append '(1) '(2) 3))
(assert-equal '() (reverse '()))
(assert-equal '() (list-tail '(1 2 3) 3))
(define l (list 1 2 3))
(list-set! l 1 'x)
(assert-equal '(1 x 3) l)
---
; SRFI-1
(assert-equal '(0 2 4 6 8) (filter even? (iota 10)))
(assert-equal '(1 3) (remove even? (iota 5)))
(let-values (((odds evens) (partition odd? '(1 2 3 4 5))))
  (assert-equal '(1 3 5) odds)
  (assert-equal '(2 4) evens))
(assert-true (= (reduce max 0 '(3 9 2)) 9))
(assert-equal '(3 (2 1)) (reduce list 'none '(1 2 3)))
(assert-equal '(3 2 1) (fold (lambda (x acc) (cons x acc)) '() '(1 2 3)))
(assert-equal '(2 4 6) (fold-right (lambda (x acc) (cons (* 2 x) acc)) '() '(1 2 3)))
(assert-equal '(1 a (2 b end)) (fold-right list 'end '(1 2) '(a b)))
(assert-equal '("b") (delete "a" '("a" "b" "a")))
(assert-equal '(1 2) (delete 3 '(1 5 2 7) <))
(assert-equal '(a b c) (delete-duplicates '(a b a c b)))
(assert-equal '((a . 1) (b . 2)) (delete-duplicates '((a . 1) (b . 2) (a . 3)) (lambda (x y) (eq? (car x) (car y)))))
(assert-equal 30 (any (lambda (x) (and (> x 2) (* x 10))) '(1 2 3 4)))
(assert-equal 3 (every (lambda (x) (and (> x 0) x)) '(1 2 3)))
(assert-equal #t (any < '(5 1) '(2 3)))
(assert-equal '(10 8 6 4) (iota 4 10 -2))
(assert-true (= (last '(1 2 3)) 3))
(assert-true (= (list-index (lambda (x) (> x 1)) '(0 1 2 3)) 2))
(assert-equal '(1 1 2 2) (append-map (lambda (x) (list x x)) '(1 2)))
(assert-equal '(1 9) (filter-map (lambda (x) (and (odd? x) (* x x))) '(1 2 3)))
(assert-true (= (count even? '(1 2 4)) 2))
(assert-equal '(1 2 3) (list (first '(1 2 3)) (second '(1 2 3)) (third '(1 2 3))))
(assert-equal '(1 2) (take '(1 2 3 4) 2))
(assert-equal '(3 4) (drop '(1 2 3 4) 2))
(assert-equal '(1 2 3) (append! (list 1) '() (list 2 3)))
(assert-equal '(3 2 1) (reverse! (list 1 2 3)))
(assert-equal 3 (find (lambda (x) (> x 2)) '(1 2 3 4)))
(assert-equal '(0 1 4 9) (list-tabulate 4 (lambda (i) (* i i))))
---
(car '()) ; ### "car: not a pair: \(\)"
---
(cdr 5) ; ### "cdr: not a pair: 5"
---
(length '(1 2 . 3)) ; ### "length: not a proper list"
---
(list-ref '(1 2) 5) ; ### "list-ref: index out of range: 5"
---
(map (lambda (x) (car x)) '((1) 2)) ; ### "car: not a pair: 2"
---
(sort '(1 2 3) (lambda (a b) (error "boom" a))) ; ### "boom"
---
(filter 5 '(1)) ; ### "filter: not a procedure: 5"
---
(fold + 0 'x) ; ### "fold: not a list: x"
---
(reduce + 0 '(1 "a")) ; ### "\+: not a number: \"a\""
---
; an escape from inside map leaves map cleanly
(assert-equal 'escaped (call/cc (lambda (k) (map (lambda (x) (if (= x 2) (k 'escaped) x)) '(1 2 3)))))
(assert-equal 2 (call/cc (lambda (k) (for-each (lambda (x) (if (= x 2) (k x))) '(1 2 3)) 'none)))
(assert-equal "stop at"
              (guard (e (#t (error-object-message e)))
                  (for-each (lambda (x) (if (= x 2) (error "stop at" x))) '(1 2 3))))
---
; association lists
(define al '((a . 1) (b . 2) (a . 3)))
(assert-equal '((b . 2)) (alist-delete 'a al))
(assert-equal '((a . 1) (a . 3)) (alist-delete 'b al eq?))
(define cp (alist-copy al))
(set-cdr! (car cp) 100)
(assert-equal 1 (cdar al))
(assert-equal '(x "y" 3) (string->datum "(x \"y\" 3)"))
(assert-equal "(x \"y\" #\\z)" (datum->string '(x "y" #\z)))
(assert-true (symbol? (generate-symbol)))
---
(string->datum "1 2") ; ### "string->datum: want exactly one datum, found 2"
---
(string->datum "(1") ; ### "."
