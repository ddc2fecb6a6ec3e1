;;; runtime/fold.scm — folding long tool results.
;;;
;;; (fold-result name text) returns what the model reads of a result: the text
;;; itself when it is short; otherwise its head and tail, with the whole text
;;; saved in the scratch directory and its path given to the model.

(define fold-head-chars 3000)
(define fold-tail-chars 3000)

(define (fold-result name text)
  (let ((limit (profile-ref 'fold-limit 8000))
        (len (string-length text)))
    (if (<= len limit)
        text
        (let ((path (scratch-save name text)))
          (string-append
           (substring text 0 fold-head-chars)
           (format #f "\n[... ~a characters folded; the whole result is in ~a ...]\n"
                   (- len fold-head-chars fold-tail-chars) path)
           (substring text (- len fold-tail-chars) len))))))
