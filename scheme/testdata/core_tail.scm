; Proper tail calls: all of these run in constant Go stack (the call-depth
; cap of 10000 would stop them otherwise).
(define (count-to n) (let loop ((i 0)) (if (< i n) (loop (+ i 1)) i)))
(assert-equal 10000000 (count-to 10000000))
---
(define (ev? n) (cond ((= n 0) #t) ((- n 1) => od?)))
(define (od? n) (cond ((= n 0) #f) ((- n 1) => ev?)))
(assert-equal #t (ev? 1000000))
---
(define (f n) (if (= n 0) 'done (apply f (list (- n 1)))))
(assert-equal 'done (f 1000000))
---
(define (g n) (and #t (or #f (when #t (unless #f (if (= n 0) 'done (g (- n 1))))))))
(assert-equal 'done (g 1000000))
(define (h n) (case (if (= n 0) 'stop 'go) ((stop) 'done) (else (h (- n 1)))))
(assert-equal 'done (h 1000000))
(define (k n) (let* ((m (- n 1))) (letrec ((x 1)) (begin (if (< m 0) 'done (k m))))))
(assert-equal 'done (k 1000000))
(define (d n) (do ((i 0 (+ i 1))) ((= i 3) (if (= n 0) 'done (d (- n 1))))))
(assert-equal 'done (d 300000))
(define (cv n) (if (= n 0) 'done (call-with-values (lambda () (- n 1)) cv)))
(assert-equal 'done (cv 1000000))
(define (cl n) ((case-lambda ((x) (if (= x 0) 'done (cl (- x 1))))) n))
(assert-equal 'done (cl 1000000))
(define (gd n) (guard (e (#t 'caught)) 1) (if (= n 0) 'done (gd (- n 1))))
(assert-equal 'done (gd 100000))
---
; non-tail recursion deeper than the cap is a clear error, not a crash
(define (deep n) (if (= n 0) 0 (+ 1 (deep (- n 1)))))
(assert-equal 9000 (deep 9000))
(deep 1000000) ; ### "deep: call depth exceeded"
