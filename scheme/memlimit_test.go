package scheme_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/scheme"
)

// A loop that keeps what it allocates is stopped by the memory bound, and
// guard cannot catch the stop.
func TestMemoryLimitStopsARetainingLoop(t *testing.T) {
	in := scheme.New()
	in.SetMemoryLimit(32 << 20)
	_, err := in.Eval(context.Background(), `
(define kept '())
(let loop () (guard (e (#t (loop))) (set! kept (cons (list 1 2 3 4 5 6 7 8) kept)) (loop)))`, "grow.scm")
	if !errors.Is(err, scheme.ErrMemoryLimit) {
		t.Fatalf("err = %v, want ErrMemoryLimit", err)
	}
	if !strings.Contains(err.Error(), "memory limit exceeded") || !strings.Contains(err.Error(), "grow.scm") {
		t.Errorf("the message says neither the bound nor where: %v", err)
	}
	// the bound is per evaluation: what was kept is dropped, then work goes on
	eval(t, in, "(set! kept '())")
	if v := eval(t, in, "(length (make-list 1000 0))"); v != 1000 {
		t.Errorf("got %v", v)
	}
}

// Large objects made by single primitive calls are counted before they are
// made: a few hundred calls (too few for the evaluator's poll) that keep a
// megabyte each are stopped.
func TestMemoryLimitCountsLargeObjects(t *testing.T) {
	for _, mk := range []string{`(make-string 1000000 #\a)`, `(make-vector 70000 0)`, `(string-append big big)`, `(make-list 25000 0)`} {
		in := scheme.New()
		in.SetMemoryLimit(16 << 20)
		eval(t, in, `(define big (make-string 500000 #\b))`)
		_, err := in.Eval(context.Background(), `
(let loop ((kept '()) (i 0))
  (if (< i 150) (loop (cons `+mk+` kept) (+ i 1)) (length kept)))`, "big.scm")
		if !errors.Is(err, scheme.ErrMemoryLimit) {
			t.Errorf("%s: err = %v, want ErrMemoryLimit", mk, err)
		}
	}
}

// Garbage does not count: a loop that allocates and drops far more than the
// bound finishes.
func TestMemoryLimitIgnoresGarbage(t *testing.T) {
	in := scheme.New()
	in.SetMemoryLimit(16 << 20)
	v, err := in.Eval(context.Background(), `
(let loop ((i 0) (n 0))
  (if (< i 20000) (loop (+ i 1) (+ n (vector-length (make-vector 1000 i)))) n))`, "garbage.scm")
	if err != nil || v != 20000000 {
		t.Fatalf("got %v, %v", v, err)
	}
	in.SetMemoryLimit(0)
	if v := eval(t, in, "(vector-length (make-vector 2000000 0))"); v != 2000000 {
		t.Errorf("got %v", v)
	}
}
