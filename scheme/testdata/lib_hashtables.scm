; Hash tables: SRFI-69 names, insertion order, equal? keys.

(define h (make-hash-table))
(hash-table-set! h "b" 1)
(hash-table-set! h 'a 2)
(hash-table-set! h 3 'three)
(hash-table-set! h '(1 2) 'list)
(assert-true (= (hash-table-ref h "b") 1))
(assert-true (= (hash-table-ref/default h 'a 0) 2))
(assert-true (eq? (hash-table-ref h (list 1 2)) 'list))
(assert-true (eq? (hash-table-ref h 'missing (lambda () 'dflt)) 'dflt))
(assert-true (= (hash-table-ref h "b" (lambda () 0) (lambda (v) (* v 100))) 100))
(assert-true (hash-table-contains? h 3))
(assert-true (hash-table-exists? h (string #\b)))
(assert-true (not (hash-table-contains? h 3.0)))
(assert-equal '("b" a 3 (1 2)) (hash-table-keys h))
(assert-equal '(1 2 three list) (hash-table-values h))
(hash-table-set! h "b" 10) ; keeps its place
(assert-equal '(("b" . 10) (a . 2) (3 . three) ((1 2) . list)) (hash-table->alist h))
(hash-table-delete! h 'a)
(hash-table-set! h 'a 'again) ; moves to the end
(assert-equal '("b" 3 (1 2) a) (hash-table-keys h))
(assert-true (= (hash-table-count h) 4))
(assert-true (= (hash-table-size h) 4))
(hash-table-update! h "b" (lambda (v) (+ v 1)))
(assert-true (= (hash-table-ref h "b") 11))
(hash-table-update! h "new" (lambda (v) (cons 'x v)) (lambda () '()))
(assert-equal '(x) (hash-table-ref h "new"))
(hash-table-update!/default h 'counter (lambda (n) (+ n 1)) 0)
(hash-table-update!/default h 'counter (lambda (n) (+ n 1)) 0)
(assert-true (= (hash-table-ref h 'counter) 2))
(define seen '())
(hash-table-walk h (lambda (k v) (set! seen (cons k seen))))
(assert-equal (hash-table-keys h) (reverse seen))
(assert-true (= (hash-table-fold h (lambda (k v acc) (+ acc 1)) 0) 6))
(assert-true (= (hash-table-count (lambda (k v) (symbol? k)) h) 2))
(define c (hash-table-copy h))
(hash-table-clear! h)
(assert-true (= (hash-table-count h) 0))
(assert-true (= (hash-table-count c) 6))
(define a (alist->hash-table '((x . 1) (y . 2) (x . 3))))
(assert-true (= (hash-table-ref a 'x) 1))
(assert-true (hash-table? a))
(assert-true (not (hash-table? '())))
; eq? tables compare strings by identity
(define e (make-hash-table eq?))
(define key (string #\k))
(hash-table-set! e key 1)
(assert-true (hash-table-contains? e key))
(assert-true (not (hash-table-contains? e (string #\k))))
; deleting during a walk is safe
(define w (alist->hash-table '((a . 1) (b . 2) (c . 3))))
(define visited '())
(hash-table-walk w (lambda (k v) (set! visited (cons k visited)) (hash-table-delete! w 'b)))
(assert-equal '(a c) (reverse visited))
---
(hash-table-ref (make-hash-table) "nope") ; ### "hash-table-ref: no such key: \"nope\""
---
(hash-table-update! (make-hash-table) 'k (lambda (v) v)) ; ### "hash-table-update!: no such key: k"
---
(hash-table-set! '() 1 2) ; ### "hash-table-set!: not a hash table: \(\)"
---
(hash-table-walk (alist->hash-table '((a . 1))) (lambda (k v) (error "walk failed" k))) ; ### "walk failed a"
---
(make-hash-table (lambda (a b) #t)) ; ### "make-hash-table: not one of the equivalence procedures"
---
(alist->hash-table '(1 2)) ; ### "alist->hash-table: not an association list"
