; String ports, output procedures, read, format.

(define out (open-output-string))
(write 'sym out)
(write-char #\space out)
(write "q\"s" out)
(display " " out)
(display "plain" out)
(newline out)
(write-string "abcdef" out 2 4)
(assert-equal "sym \"q\\\"s\" plain\ncd" (get-output-string out))
(assert-equal "a#\\b\n" (with-output-to-string (lambda () (display "a") (write #\b) (newline))))
(assert-equal "42" (call-with-output-string (lambda (port) (display 42 port))))
; nested redirection restores the outer port
(assert-equal "outer inner after"
              (with-output-to-string
                  (lambda ()
                    (display "outer ")
                    (display (with-output-to-string (lambda () (display "inner"))))
                    (display " after"))))
; current-output-port is a parameter
(define port2 (open-output-string))
(parameterize ((current-output-port port2)) (display "via parameterize"))
(assert-equal "via parameterize" (get-output-string port2))
(assert-true (output-port? (current-output-port)))
(assert-true (output-port? (current-error-port)))
(assert-true (input-port? (current-input-port)))
; an escape out of with-output-to-string restores the port
(define keep (open-output-string))
(parameterize ((current-output-port keep))
  (call/cc (lambda (k) (with-output-to-string (lambda () (k 'out)))))
  (display "still here"))
(assert-equal "still here" (get-output-string keep))
(define in (open-input-string "(define x 1) \"str\" #\\a 42 ; comment\n sym"))
(assert-equal '(define x 1) (read in))
(assert-equal "str" (read in))
(assert-equal #\a (read in))
(assert-equal 42 (read in))
(assert-equal 'sym (read in))
(assert-true (eof-object? (read in)))
(define lines (open-input-string "one\r\ntwo\n\nthree"))
(assert-equal "one" (read-line lines))
(assert-equal "two" (read-line lines))
(assert-equal "" (read-line lines))
(assert-equal "three" (read-line lines))
(assert-true (eof-object? (read-line lines)))
(define chars (open-input-string "ab"))
(assert-true (char=? (peek-char chars) #\a))
(assert-true (char=? (read-char chars) #\a))
(assert-equal "b" (read-string 10 chars))
(assert-true (eof-object? (read-string 1 chars)))
(assert-true (eof-object? (peek-char chars)))
(assert-true (char-ready? chars))
(assert-true (eof-object? (eof-object)))
(define closed (open-output-string))
(close-port closed)
(assert-true (not (output-port-open? closed)))
(assert-equal '(7 8) (with-input-from-string "7 8" (lambda () (list (read) (read)))))
; format
(assert-equal "x is \"x\" (10)\n" (format #f "~a is ~s (~d)~%" "x" "x" 10))
(assert-equal "1~" (format "~a~~" 1))
(assert-equal "to stdout" (with-output-to-string (lambda () (format #t "to ~a" 'stdout))))
(define fp (open-output-string))
(format fp "~a-~a" 1 2)
(assert-equal "1-2" (get-output-string fp))
(assert-equal "ff ff" (format #f "~x ~X" 255 255))
(assert-equal "(1 two 3)" (format #f "~a" '(1 "two" #\3)))
(assert-equal "(1 \"two\" #\\3)" (format #f "~s" '(1 "two" #\3)))
---
(format #f "~a ~a" 1) ; ### "format: too few arguments for directive ~a"
---
(format #f "~z" 1) ; ### "format: unknown directive ~z"
---
(read (open-input-string "(1 2")) ; ### "."
---
(write 1 (open-input-string "")) ; ### "write: not an output port"
---
(define p (open-output-string))
(close-port p)
(display "x" p) ; ### "display: port is closed"
---
(read-line 5) ; ### "read-line: not an input port: 5"
---
(with-output-to-string (lambda () (car 1))) ; ### "car: not a pair: 1"
