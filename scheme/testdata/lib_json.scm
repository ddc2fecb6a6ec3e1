; The JSON bridge: objects <-> alists with symbol keys, arrays <-> vectors.

(define doc (string->json "{\"tool\": \"shell\", \"args\": {\"cmd\": \"ls\", \"timeout\": 30}, \"tags\": [\"a\", \"b\"], \"ok\": true, \"none\": null, \"ratio\": 0.5}"))
(assert-equal "shell" (cdr (assq 'tool doc)))
(assert-equal "ls" (cdr (assq 'cmd (cdr (assq 'args doc)))))
(assert-equal 30 (cdr (assq 'timeout (cdr (assq 'args doc)))))
(assert-equal #("a" "b") (cdr (assq 'tags doc)))
(assert-equal #t (cdr (assq 'ok doc)))
(assert-equal 'null (cdr (assq 'none doc)))
(assert-equal 0.5 (cdr (assq 'ratio doc)))
(assert-equal '(tool args tags ok none ratio) (map car doc))
; output keeps key order and round-trips
(define text (json->string doc))
(assert-equal "{\"tool\":\"shell\",\"args\":{\"cmd\":\"ls\",\"timeout\":30},\"tags\":[\"a\",\"b\"],\"ok\":true,\"none\":null,\"ratio\":0.5}" text)
(assert-equal doc (string->json text))
; string keys, hash tables and plain lists are accepted on output
(assert-equal "{\"k\":[1,2,3]}" (json->string (list (cons "k" (list 1 2 3)))))
(define h (make-hash-table))
(hash-table-set! h "z" 1)
(hash-table-set! h 'a (vector))
(assert-equal "{\"z\":1,\"a\":[]}" (json->string h))
(assert-equal "{}" (json->string '()))
(assert-equal "\"\\u0001\\\"\\n\"" (json->string (string (integer->char 1) #\" #\newline)))
; ports
(define out (open-output-string))
(json-write '((a . 1)) out)
(assert-equal "{\"a\":1}" (get-output-string out))
(define in (open-input-string " {\"a\": [1, 2]} [3] 4 "))
(assert-equal '((a . #(1 2))) (json-read in))
(assert-equal #(3) (json-read in))
(assert-equal 4 (json-read in))
(assert-true (eof-object? (json-read in)))
(assert-equal "[1]" (with-output-to-string (lambda () (json-write #(1)))))
---
(string->json "{\"a\": }") ; ### "string->json: invalid JSON at offset 6: unexpected character '}'"
---
(string->json "[1, 2") ; ### "string->json: invalid JSON at offset 5: unexpected end of input"
---
(string->json "nul") ; ### "string->json: invalid JSON .*unexpected end of input"
---
(string->json "{} x") ; ### "string->json: invalid JSON at offset 3: unexpected data after the value"
---
(json->string (lambda (x) x)) ; ### "json->string: no JSON representation for #<procedure"
---
(json->string (sqrt -0.0)) (json->string (/ 0. 0.)) ; ### "json->string: JSON has no representation for \+nan.0"
---
(json->string (list (cons 1.5 2))) ; ### "."
---
(json-read (open-input-string "[1 2]")) ; ### "json-read: invalid JSON at offset 3: expected ',' or ']', found '2'"
