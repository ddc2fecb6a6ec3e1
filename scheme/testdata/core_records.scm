; define-record-type
(define-record-type <point>
  (make-point x y)
  point?
  (x point-x set-point-x!)
  (y point-y))
(define p (make-point 1 2))
(assert-true (point? p))
(assert-false (point? 5))
(assert-false (point? (vector 1 2)))
(assert-equal 1 (point-x p))
(assert-equal 2 (point-y p))
(set-point-x! p 10)
(assert-equal 10 (point-x p))
(point-x 5) ; ### "point-x: not a point record: 5"
(make-point 1) ; ### "make-point: wrong number of arguments"
(define-record-type node (make-node value) node? (value node-value) (next node-next set-node-next!))
(define n (make-node 1))
(assert-equal #f (node-next n))
(set-node-next! n 'end)
(assert-equal 'end (node-next n))
(point-x n) ; ### "point-x: not a point record"
(define (local-records)
  (define-record-type thing (make-thing a) thing? (a thing-a))
  (thing-a (make-thing 'inside)))
(assert-equal 'inside (local-records))
(assert-equal "#<point x=10 y=2>" (let ((o (open-output-string))) (write p o) (get-output-string o)))
