package scheme_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/scheme"
)

// boundedInterp has (bounded proc steps mem), a primitive that calls proc
// with CallBounded, as a host calls a procedure it was given (the
// session's Scheme tools); each error it got is appended to *errs and
// returned unchanged.
func boundedInterp(errs *[]error) *scheme.Interp {
	in := scheme.New()
	in.SetMaxDepth(2000)
	in.Register(scheme.NewPrimitive("bounded", 3, 3, "(bounded proc steps mem)", func(in *scheme.Interp, a []scheme.Value) (scheme.Value, error) {
		b := scheme.Bounds{Steps: int64(a[1].(int)), Memory: int64(a[2].(int))}
		v, err := in.CallBounded(in.Context(), b, a[0])
		if err != nil {
			*errs = append(*errs, err)
		}
		return v, err
	}))
	return in
}

// A nested call that runs out of its own step budget ends with
// ErrStepLimit, named where it was; guard inside it cannot keep it going,
// while the evaluation that called it catches the error and goes on. A
// call within its budget is unaffected, and the bound ends with its call.
func TestCallBoundedStepsEndTheNestedCallOnly(t *testing.T) {
	var errs []error
	in := boundedInterp(&errs)
	v, err := in.Eval(context.Background(), `
(define (spin) (let loop () (guard (e (#t (loop))) (loop))))
(define caught
  (guard (e (#t (error-object-message e)))
    (bounded spin 100000 0)))
(list caught
      (bounded (lambda () (let loop ((i 0)) (if (< i 50000) (loop (+ i 1)) i))) 100000 0)
      (let loop ((i 0)) (if (< i 500000) (loop (+ i 1)) i)))`, "outer.scm")
	if err != nil {
		t.Fatalf("the outer evaluation stopped: %v", err)
	}
	if got := scheme.WriteString(v); got != `("step limit of 100000 procedure calls exceeded" 50000 500000)` {
		t.Errorf("got %s", got)
	}
	if len(errs) != 1 || !errors.Is(errs[0], scheme.ErrStepLimit) || !strings.Contains(errs[0].Error(), "outer.scm:2:") {
		t.Errorf("the nested call's error: %v", errs)
	}

	// At the top (no evaluation running) it bounds the call as well, and
	// leaves nothing behind.
	spin, _ := in.Lookup("spin")
	if _, err := in.CallBounded(context.Background(), scheme.Bounds{Steps: 100000}, spin); !errors.Is(err, scheme.ErrStepLimit) {
		t.Errorf("top-level CallBounded: %v", err)
	}
	if v := eval(t, in, "(let loop ((i 0)) (if (< i 500000) (loop (+ i 1)) i))"); v != 500000 {
		t.Errorf("got %v", v)
	}
}

// The outer evaluation's own budget still counts what nested calls use:
// two calls that each stay within their own budget exhaust the outer one,
// and that abort passes through the nested call (its error has no Value:
// returned unchanged, it ends the outer evaluation; guard cannot catch it).
func TestCallBoundedCountsAgainstTheOuterBudget(t *testing.T) {
	var errs []error
	in := boundedInterp(&errs)
	in.SetStepLimit(300000)
	_, err := in.Eval(context.Background(), `
(define (count) (let loop ((i 0)) (if (< i 200000) (loop (+ i 1)) i)))
(guard (e (#t 'caught))
  (bounded count 10000000 0)
  (bounded count 10000000 0))`, "outer.scm")
	if !errors.Is(err, scheme.ErrStepLimit) || !strings.Contains(err.Error(), "step limit of 300000") {
		t.Fatalf("err = %v, want the outer step limit", err)
	}
	var e *scheme.Error
	if len(errs) != 1 || !errors.As(errs[0], &e) || e.Value != nil {
		t.Errorf("the nested call's error is not the outer abort: %v", errs)
	}
}

// Nested bounds nest: an outer CallBounded's budget that runs out inside
// an inner one (whose own is larger) ends the outer call, not the inner
// one alone; the evaluation around both goes on.
func TestCallBoundedNestedBoundsTheOutermostWins(t *testing.T) {
	var errs []error
	in := boundedInterp(&errs)
	v, err := in.Eval(context.Background(), `
(define (spin) (let loop () (loop)))
(guard (e (#t (error-object-message e)))
  (bounded (lambda ()
             (guard (e (#t 'inner-caught))
               (bounded spin 50000000 0)))
           200000 0))`, "outer.scm")
	if err != nil {
		t.Fatalf("the outer evaluation stopped: %v", err)
	}
	if v2 := scheme.DisplayString(v); v2 != "step limit of 200000 procedure calls exceeded" {
		t.Errorf("got %s", v2)
	}
	if len(errs) != 2 {
		t.Fatalf("errors: %v", errs)
	}
	var inner, outer *scheme.Error
	if !errors.As(errs[0], &inner) || inner.Value != nil || !errors.As(errs[1], &outer) || outer.Value == nil {
		t.Errorf("the inner call's error should be the outer bound's abort, the outer's its own: %v", errs)
	}
}

// A nested call that keeps what it allocates ends at its own memory
// budget with ErrMemoryLimit, and the evaluation goes on; an outer memory
// budget counts what a nested call keeps.
func TestCallBoundedMemory(t *testing.T) {
	const grow = `(lambda () (let loop ((kept '())) (loop (cons (make-vector 1000 0) kept))))`
	var errs []error
	in := boundedInterp(&errs)
	v, err := in.Eval(context.Background(), `
(guard (e (#t (error-object-message e)))
  (bounded `+grow+` 0 16777216))`, "mem.scm")
	if err != nil || !strings.Contains(scheme.DisplayString(v), "memory limit exceeded") || !strings.Contains(scheme.DisplayString(v), "more than the 16 MB allowed") {
		t.Fatalf("got %v, %v", v, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], scheme.ErrMemoryLimit) {
		t.Errorf("the nested call's error: %v", errs)
	}

	errs = nil
	in.SetMemoryLimit(32 << 20)
	_, err = in.Eval(context.Background(), `(guard (e (#t 'caught)) (bounded `+grow+` 0 1073741824))`, "mem.scm")
	if !errors.Is(err, scheme.ErrMemoryLimit) || !strings.Contains(err.Error(), "32 MB allowed") {
		t.Errorf("the outer memory budget: %v", err)
	}
}

// Cancellation inside a nested call ends the outer evaluation, as in a
// Call.
func TestCallBoundedCancellation(t *testing.T) {
	var errs []error
	in := boundedInterp(&errs)
	ctx, cancel := context.WithCancel(context.Background())
	in.Register(scheme.NewPrimitive("cancel!", 0, 0, "", func(*scheme.Interp, []scheme.Value) (scheme.Value, error) {
		cancel()
		return scheme.Void, nil
	}))
	_, err := in.Eval(ctx, `(guard (e (#t 'caught)) (bounded (lambda () (cancel!) (let loop () (loop))) 50000000 0))`, "c.scm")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want cancellation", err)
	}
}

// The cost of a nested call's bounds, against a plain nested Call: run
// inside one evaluation, as a host's primitive makes them.
func BenchmarkNestedCall(b *testing.B) { benchNested(b, nil) }

func BenchmarkNestedCallBoundedSteps(b *testing.B) {
	benchNested(b, &scheme.Bounds{Steps: 50_000_000})
}

func BenchmarkNestedCallBoundedStepsMemory(b *testing.B) {
	benchNested(b, &scheme.Bounds{Steps: 50_000_000, Memory: 256 << 20})
}

func benchNested(b *testing.B, bounds *scheme.Bounds) {
	in := scheme.New()
	proc, err := in.Eval(context.Background(), `(lambda (args) (string-append "ran " (car args)))`, "bench.scm")
	if err != nil {
		b.Fatal(err)
	}
	arg := scheme.List(scheme.NewString("x"))
	in.Register(scheme.NewPrimitive("bench", 0, 0, "", func(in *scheme.Interp, _ []scheme.Value) (scheme.Value, error) {
		ctx := in.Context()
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if bounds == nil {
				_, err = in.Call(ctx, proc, arg)
			} else {
				_, err = in.CallBounded(ctx, *bounds, proc, arg)
			}
			if err != nil {
				return nil, err
			}
		}
		return scheme.Void, nil
	}))
	if _, err := in.Eval(context.Background(), "(bench)", "bench.scm"); err != nil {
		b.Fatal(err)
	}
}

// What an evaluation stopped by a bound had built is garbage afterwards:
// the interpreter, which lives on (a session's), keeps none of it.
func TestAStoppedEvaluationKeepsNothing(t *testing.T) {
	in := scheme.New()
	in.SetMemoryLimit(48 << 20)
	before := liveHeap()
	_, err := in.Eval(context.Background(), `(let loop ((kept '())) (loop (cons (make-vector 1000 0) kept)))`, "grow.scm")
	if !errors.Is(err, scheme.ErrMemoryLimit) {
		t.Fatalf("err = %v, want ErrMemoryLimit", err)
	}
	if after := liveHeap(); after > before+16<<20 {
		t.Errorf("the live heap grew from %d MB to %d MB: the stopped evaluation's data is kept", before>>20, after>>20)
	}
	runtime.KeepAlive(in)
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
