; call/cc (escape-only), dynamic-wind, exceptions.
(assert-equal 42 (call/cc (lambda (k) (+ 1 (k 42)))))
(assert-equal 3 (call-with-current-continuation (lambda (k) 3)))
(assert-equal 2 (call-with-escape-continuation (lambda (k) (for-each (lambda (x) (when (even? x) (k x))) '(1 2 3)) 'none)))
(define (find-first pred l)
  (call/cc (lambda (return) (for-each (lambda (x) (if (pred x) (return x))) l) #f)))
(assert-equal 3 (find-first (lambda (x) (> x 2)) '(1 2 3 4)))
(assert-equal '(1 2) (call-with-values (lambda () (call/cc (lambda (k) (k 1 2)))) list))
(define saved #f)
(assert-equal 1 (call/cc (lambda (k) (set! saved k) 1)))
(saved 2) ; ### "continuation called after its extent ended"
---
(define trail '())
(define (note x) (set! trail (cons x trail)))
(call/cc (lambda (k)
  (dynamic-wind
    (lambda () (note 'before))
    (lambda () (k 'escaped) (note 'not-reached))
    (lambda () (note 'after)))))
(assert-equal '(after before) trail)
(set! trail '())
(guard (e (#t (note (list 'caught e))))
  (dynamic-wind
    (lambda () (note 'in))
    (lambda () (raise 'oops))
    (lambda () (note 'out))))
(assert-equal '((caught oops) out in) trail)
(set! trail '())
(assert-equal 'v (dynamic-wind (lambda () (note 1)) (lambda () 'v) (lambda () (note 2))))
(assert-equal '(2 1) trail)
; nested winds unwind innermost first
(set! trail '())
(call/cc (lambda (k)
  (dynamic-wind (lambda () (note 'a-in))
    (lambda () (dynamic-wind (lambda () (note 'b-in)) (lambda () (k 0)) (lambda () (note 'b-out))))
    (lambda () (note 'a-out)))))
(assert-equal '(a-out b-out b-in a-in) trail)
---
; guard
(assert-equal 'caught (guard (e (#t 'caught)) (raise 'x)))
(assert-equal 42 (guard (e ((number? e) e)) (raise 42)))
(assert-equal "boom" (guard (e ((error-object? e) (error-object-message e))) (error "boom" 1 2)))
(assert-equal '(1 2) (guard (e ((error-object? e) (error-object-irritants e))) (error "boom" 1 2)))
(assert-equal 'str (guard (e ((symbol? e) 'sym) ((string? e) 'str)) (raise "x")))
(assert-equal 5 (guard (e ((assq 'a e) => cdr) ((assq 'b e))) (raise (list (cons 'a 5)))))
(assert-equal 'else (guard (e (else 'else)) (car '())))
(assert-equal 'outer (guard (e ((eq? e 'inner) 'wrong) (#t 'outer)) (guard (e ((eq? e 'nope) 'no)) (raise 'x))))
(assert-equal "car: not a pair: 5" (guard (e (#t (error-object-message e))) (car 5)))
(assert-true (guard (e (#t (error-object? e))) (vector-ref (vector) 1)))
(guard (e ((string? e) 'no)) (raise 'unhandled)) ; ### "uncaught exception: unhandled"
(error "something failed:" 'x 42) ; ### "something failed: x 42"
(raise 'plain) ; ### "uncaught exception: plain"
---
; with-exception-handler, raise-continuable
(assert-equal 11 (with-exception-handler (lambda (e) 10) (lambda () (+ 1 (raise-continuable 'c)))))
(assert-equal '(handled oops)
  (call/cc (lambda (k)
    (with-exception-handler (lambda (e) (k (list 'handled e)))
      (lambda () (raise 'oops))))))
(assert-equal 'from-handler
  (call/cc (lambda (k)
    (with-exception-handler (lambda (e) (k 'from-handler))
      (lambda () (car 1))))))
; the handler runs with the outer handler installed
(assert-equal '(outer inner)
  (call/cc (lambda (k)
    (with-exception-handler (lambda (e) (k (list 'outer e)))
      (lambda ()
        (with-exception-handler (lambda (e) (raise 'inner))
          (lambda () (raise 'first))))))))
(with-exception-handler (lambda (e) 'ignored) (lambda () (raise 'again))) ; ### "handler returned from non-continuable raise"
(assert-equal 'g (guard (e (#t 'g)) (with-exception-handler (lambda (e) (raise 'h)) (lambda () (raise 'x)))))
; a guard with no matching clause re-raises to the outer handler (continuably)
(assert-equal 'h-val (with-exception-handler (lambda (e) 'h-val) (lambda () (guard (e (#f 1)) (raise 'x)))))
(assert-equal '(seen x)
  (call/cc (lambda (k)
    (with-exception-handler (lambda (e) (k (list 'seen e)))
      (lambda () (guard (e ((string? e) 'no)) (raise 'x)))))))
---
; error object predicates
(assert-true (guard (e (#t (file-error? e))) (load "/nonexistent/file.scm")))
(assert-true (guard (e (#t (read-error? e))) (read (open-input-string "(1 2"))))
(assert-false (guard (e (#t (read-error? e))) (error "x")))
(assert-false (error-object? 5))
(assert (= 1 1))
(assert (= 1 2)) ; ### "assertion failed: \(= 1 2\)"
---
; values, eval, apply, procedure?
(assert-equal 6 (apply + 1 2 '(3)))
(assert-equal '() (apply list '()))
(apply + 1 2) ; ### "apply: not a list: 2"
(assert-equal 3 (eval '(+ 1 2) (interaction-environment)))
(assert-equal 9 (eval (list '* 3 3)))
(eval '(define evald 5))
(assert-equal 5 evald)
(assert-true (procedure? car))
(assert-true (procedure? (lambda () 1)))
(assert-true (procedure? (call/cc (lambda (k) k))))
(assert-false (procedure? 'car))
(assert-equal 5 (values 5))
(5 1) ; ### "not a procedure: 5"
((lambda (x) x)) ; ### "wrong number of arguments: got 0, want 1"
(car 1 2) ; ### "car: wrong number of arguments: got 2, want 1"
---
; equality
(assert-true (eq? 'a 'a))
(assert-true (eq? '() '()))
(assert-false (eq? (list 1) (list 1)))
(assert-true (eqv? 1.5 1.5))
(assert-true (eqv? 100000000000000000000 100000000000000000000))
(assert-false (eqv? 1 1.0))
(assert-true (eqv? #\a #\a))
(assert-false (eqv? "a" "a"))
(assert-true (equal? "a" "a"))
(assert-true (equal? '(1 #(2 "x") . 3) '(1 #(2 "x") . 3)))
(assert-false (equal? '(1 2) '(1 2 3)))
(let ((p (cons 1 2))) (assert-true (eq? p p)))
---
; unwinding through dynamic-wind and guard
; an after thunk that raises and catches its own error while an escape unwinds
(assert-equal 'escaped
  (call/cc (lambda (k)
    (dynamic-wind (lambda () #f)
                  (lambda () (k 'escaped))
                  (lambda () (guard (e (#t 'inner-caught)) (raise 'in-after)))))))
; the same while a raise unwinds to a guard
(assert-equal 'outer
  (guard (e ((eq? e 'first) 'outer))
    (dynamic-wind (lambda () #f)
                  (lambda () (raise 'first))
                  (lambda () (guard (e (#t #f)) (raise 'second))))))
; an escape passes through guards that do not catch it
(assert-equal 'k (call/cc (lambda (k) (guard (e (#t 'wrong)) (guard (e (#t 'wrong2)) (k 'k))))))
; an escape to an outer continuation passes an inner call/cc
(assert-equal 'outer-k (call/cc (lambda (outer) (call/cc (lambda (inner) (outer 'outer-k))) 'not-here)))
; an error inside an after thunk replaces the escape
(assert-equal 'after-error
  (guard (e ((eq? e 'from-after) 'after-error))
    (call/cc (lambda (k)
      (dynamic-wind (lambda () #f) (lambda () (k 1)) (lambda () (raise 'from-after)))))))
; deep recursion through guards and winds, failing at the bottom
(define (g n) (if (= n 0) (car '()) (+ 1 (guard (e ((string? e) 1)) (dynamic-wind (lambda () 1) (lambda () (g (- n 1))) (lambda () 2))))))
(assert-equal "car: not a pair: ()" (guard (e (#t (error-object-message e))) (g 5000)))
