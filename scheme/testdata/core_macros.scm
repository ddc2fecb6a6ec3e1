; syntax-rules and hygiene.
(define-syntax swap!
  (syntax-rules ()
    ((_ a b) (let ((tmp a)) (set! a b) (set! b tmp)))))
; the classic capture case: the user's variable is called tmp
(define tmp 1)
(define other 2)
(swap! tmp other)
(assert-equal '(2 1) (list tmp other))
(let ((tmp 'a) (y 'b))
  (swap! tmp y)
  (assert-equal '(b a) (list tmp y)))
---
(define-syntax my-or
  (syntax-rules ()
    ((_) #f)
    ((_ e) e)
    ((_ e r ...) (let ((t e)) (if t t (my-or r ...))))))
(define t 5)
(assert-equal 5 (my-or #f t))
(assert-equal 7 (let ((t 7)) (my-or #f t)))
; a user binding of if or list must not break a macro that uses them
(assert-equal 3 (let ((if list)) (my-or #f 3)))
(define-syntax make-pair-list
  (syntax-rules () ((_ a b) (list a b))))
(assert-equal '(1 2) (let ((list vector)) (make-pair-list 1 2)))
(assert-equal '(1 2) (let ((if (lambda args 'broken))) (make-pair-list 1 2)))
---
; literals, nested ellipsis, after-tail patterns, dotted patterns, vectors
(define-syntax my-cond
  (syntax-rules (else)
    ((_ (else e ...)) (begin e ...))
    ((_ (c e ...) clause ...) (if c (begin e ...) (my-cond clause ...)))))
(assert-equal 'b (my-cond (#f 'a) (else 'b)))
(assert-equal 'a (my-cond (#t 'a) (else 'b)))
(define-syntax my-let*
  (syntax-rules ()
    ((_ () body ...) (let () body ...))
    ((_ ((x v) rest ...) body ...) (let ((x v)) (my-let* (rest ...) body ...)))))
(assert-equal 3 (my-let* ((a 1) (b (+ a 1))) (+ a b)))
(define-syntax flatten
  (syntax-rules ()
    ((_ (a b ...) ...) '(a ... (b ... ...)))))
(assert-equal '(1 4 (2 3 5 6)) (flatten (1 2 3) (4 5 6)))
(define-syntax last-of
  (syntax-rules ()
    ((_ a ... z) 'z)))
(assert-equal 'c (last-of a b c))
(define-syntax middle
  (syntax-rules ()
    ((_ first mid ... end1 end2) '(mid ...))))
(assert-equal '(b c) (middle a b c d e))
(define-syntax dotted
  (syntax-rules ()
    ((_ a . rest) '(a rest))))
(assert-equal '(1 (2 3)) (dotted 1 2 3))
(define-syntax vec-pat
  (syntax-rules ()
    ((_ #(a ...)) (+ a ...))))
(assert-equal 6 (vec-pat #(1 2 3)))
(define-syntax vec-tmpl
  (syntax-rules ()
    ((_ a ...) #(a ... end))))
(assert-equal #(1 2 end) (vec-tmpl 1 2))
(define-syntax ignore-first
  (syntax-rules ()
    ((_ _ b) b)))
(assert-equal 2 (ignore-first 1 2))
---
; custom ellipsis and escaped ellipsis
(define-syntax my-list
  (syntax-rules ::: ()
    ((_ x :::) (list x :::))))
(assert-equal '(1 2 3) (my-list 1 2 3))
(define-syntax be-like-begin
  (syntax-rules ()
    ((be-like-begin name)
     (define-syntax name
       (syntax-rules ()
         ((name expr (... ...))
          (begin expr (... ...))))))))
(be-like-begin sequence)
(assert-equal 4 (sequence 1 2 3 4))
---
; macros defining macros, local macros, recursion
(define-syntax while
  (syntax-rules ()
    ((_ cond body ...) (let lp () (when cond body ... (lp))))))
(define i 0)
(while (< i 10) (set! i (+ i 1)))
(assert-equal 10 i)
(assert-equal 6
  (let-syntax ((double (syntax-rules () ((_ x) (* 2 x)))))
    (double 3)))
(assert-equal 120
  (letrec-syntax ((fact (syntax-rules ()
                          ((_ 0) 1)
                          ((_ n) (* n 1)))))
    (* (fact 5) (fact 4) (fact 3) 2)))
(define (uses-local-macro x)
  (define-syntax add-x (syntax-rules () ((_ y) (+ x y))))
  (add-x 10))
(assert-equal 15 (uses-local-macro 5))
; a macro template referring to a local variable of its definition site
(define (counter)
  (let ((n 0))
    (let-syntax ((bump! (syntax-rules () ((_) (begin (set! n (+ n 1)) n)))))
      (let ((n 100)) ; the user's n does not capture the macro's n
        (bump!)
        (bump!)))))
(assert-equal 2 (counter))
; define inside a template makes a global with the written name
(define-syntax def-getter
  (syntax-rules () ((_ name val) (define (name) val))))
(def-getter get-five 5)
(assert-equal 5 (get-five))
---
(define-syntax only-two (syntax-rules () ((_ a b) 'ok)))
(only-two 1) ; ### "only-two: no syntax-rules pattern matches"
(define-syntax loop-forever (syntax-rules () ((_) (loop-forever))))
(loop-forever) ; ### "macro expansion limit exceeded"
(if) ; ### "if: bad syntax"
(lambda) ; ### "lambda: bad syntax"
(define-syntax bad (syntax-rules () ((_ a) (a ...))))
(bad 1) ; ### "no pattern variable under the ellipsis"
