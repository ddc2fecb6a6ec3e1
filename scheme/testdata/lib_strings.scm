; Characters, strings, symbols.

(assert-true (char=? (string-ref "abc" 1) #\b))
(assert-true (= (string-length "λx") 2))
(define s (make-string 3 #\-))
(string-set! s 1 #\λ)
(assert-true (string=? s "-λ-"))
(string-fill! s #\z)
(assert-equal "zzz" s)
(assert-equal "el" (string-copy "hello" 1 3))
(define t (make-string 5 #\.))
(string-copy! t 1 "ab")
(assert-equal ".ab.." t)
(assert-equal "bbnbnb" (string-map (lambda (c) (if (char=? c #\a) #\b c)) "banana"))
(assert-equal "abb" (string-map (lambda (a b) (if (char<? a b) a b)) "adc" "bbbx"))
(define chars '())
(string-for-each (lambda (c) (set! chars (cons c chars))) "abc")
(assert-equal '(#\c #\b #\a) chars)
(assert-equal 1 (string-index "a=b" #\=))
(assert-equal 3 (string-index "abc1" char-numeric?))
(assert-equal "x" (string-trim "--x--" (lambda (c) (char=? c #\-))))
(assert-equal '("key" "value=x") (string-split "key=value=x" #\= 2))
(assert-equal "a/b/c" (string-join (map symbol->string '(a b c)) "/"))
(assert-equal "007" (string-pad (number->string 7) 3 #\0))
(assert-true (string<? "apple" "banana" "cherry"))
(assert-true (not (string<? "b" "a")))
(assert-true (string-ci=? "HeLLo" "hello"))
(assert-equal '(#\b #\c) (string->list "abc" 1))
(assert-equal "HÉLLO" (string-upcase "héllo"))
(assert-equal "x y" (symbol->string (string->symbol "x y")))
(assert-true (eq? (string->symbol "abc") 'abc))
(assert-true (symbol=? 'a 'a))
(assert-true (symbol? (gensym)))
(assert-true (not (eq? (gensym) (gensym))))
(assert-true (char-alphabetic? #\λ))
(assert-true (char-whitespace? #\tab))
(assert-equal #\Ä (char-upcase #\ä))
(assert-true (= (char->integer (integer->char 128512)) 128512))
(assert-true (char-ci<? #\a #\B))
(assert-true (= (digit-value #\9) 9))
(assert-equal "42" (number->string 42))
(assert-equal 0.5 (string->number "0.5"))
---
(string-ref "abc" 10) ; ### "string-ref: index out of range: 10"
---
(substring "abc" 2 1) ; ### "substring: start 2 is after end 1"
---
(string-append "a" 5) ; ### "string-append: not a string: 5"
---
(string-map (lambda (c) 1) "ab") ; ### "string-map: procedure returned a non-character: 1"
---
(string-index "abc" 5) ; ### "string-index: not a character, string of characters or predicate: 5"
---
(string-split "abc" "") ; ### "string-split: empty delimiter"
---
(char-upcase "a") ; ### "char-upcase: not a character: \"a\""
---
(symbol->string 5) ; ### "symbol->string: not a symbol: 5"
---
(string-pad "x" -1) ; ### "string-pad: not a non-negative exact integer: -1"
