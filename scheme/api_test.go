package scheme_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/nodwyn/nodwyn/scheme"
)

func eval(t *testing.T, in *scheme.Interp, src string) scheme.Value {
	t.Helper()
	v, err := in.Eval(context.Background(), src, "test.scm")
	if err != nil {
		t.Fatalf("eval %q: %v", src, err)
	}
	return v
}

func TestDefineLookupRegister(t *testing.T) {
	in := scheme.New()
	in.Define("answer", 42)
	if v := eval(t, in, "(+ answer 1)"); v != 43 {
		t.Errorf("got %v, want 43", v)
	}
	in.Register(scheme.NewPrimitive("greet", 1, 1, "(greet name)", func(in *scheme.Interp, args []scheme.Value) (scheme.Value, error) {
		s, ok := args[0].(*scheme.String)
		if !ok {
			return nil, scheme.WrongType("greet", "a string", args[0])
		}
		return scheme.NewString("hello " + s.S), nil
	}))
	if v := eval(t, in, `(greet "bob")`); scheme.DisplayString(v) != "hello bob" {
		t.Errorf("got %v", scheme.WriteString(v))
	}
	eval(t, in, "(define from-scheme '(1 2))")
	v, ok := in.Lookup("from-scheme")
	if !ok || scheme.WriteString(v) != "(1 2)" {
		t.Errorf("Lookup = %v, %v", v, ok)
	}
	if _, ok := in.Lookup("never-defined"); ok {
		t.Error("Lookup of an unbound name succeeded")
	}
	_, err := in.Eval(context.Background(), "(greet 5)", "x.scm")
	if err == nil || err.Error() != "x.scm:1:1: greet: not a string: 5" {
		t.Errorf("err = %v", err)
	}
	_, err = in.Eval(context.Background(), "(greet)", "x.scm")
	if err == nil || !strings.Contains(err.Error(), "greet: wrong number of arguments: got 0, want 1") {
		t.Errorf("err = %v", err)
	}
}

func TestErrorType(t *testing.T) {
	in := scheme.New()
	src := "(define (f x)\n  (car x))\n(define (g x) (list (f x)))\n(g 5)\n"
	_, err := in.Eval(context.Background(), src, "init.scm")
	var se *scheme.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %T %v, want *scheme.Error", err, err)
	}
	if got := se.Error(); got != "init.scm:2:3: car: not a pair: 5" {
		t.Errorf("Error() = %q", got)
	}
	if se.Pos.File != "init.scm" || se.Pos.Line != 2 || se.Pos.Col != 3 {
		t.Errorf("Pos = %v", se.Pos)
	}
	if _, ok := se.Value.(*scheme.ErrorObject); !ok {
		t.Errorf("Value = %T", se.Value)
	}
	var procs []string
	for _, f := range se.Stack {
		procs = append(procs, fmt.Sprintf("%s@%d", f.Proc, f.Pos.Line))
	}
	if got := strings.Join(procs, " "); got != "car@2 f@3 g@4" {
		t.Errorf("stack = %s\n%s", got, se.Trace())
	}
	// a raised non-error value is kept
	_, err = in.Eval(context.Background(), "(raise 'oops)", "r.scm")
	if !errors.As(err, &se) || se.Value != scheme.Symbol("oops") {
		t.Errorf("raise: %v", err)
	}
	// a read error
	_, err = in.Eval(context.Background(), "(1 2", "bad.scm")
	if !errors.As(err, &se) || !scheme.IsIncomplete(err) || se.Pos.Line != 1 {
		t.Errorf("read error: %v", err)
	}
}

func TestCallAndApply(t *testing.T) {
	in := scheme.New()
	eval(t, in, "(define (add a b) (+ a b)) (define (twice f x) (f (f x)))")
	v, err := in.CallByName(context.Background(), "add", 2, 3)
	if err != nil || v != 5 {
		t.Errorf("CallByName = %v, %v", v, err)
	}
	add, _ := in.Lookup("add")
	v, err = in.Call(context.Background(), add, 10, 20)
	if err != nil || v != 30 {
		t.Errorf("Call = %v, %v", v, err)
	}
	if _, err := in.CallByName(context.Background(), "nope"); err == nil {
		t.Error("CallByName of an unbound name succeeded")
	}
	// Apply is re-entrant from inside a primitive
	in.Register(scheme.NewPrimitive("call-go", 2, 2, "", func(in *scheme.Interp, args []scheme.Value) (scheme.Value, error) {
		return in.Apply(args[0], []scheme.Value{args[1]})
	}))
	if v := eval(t, in, "(call-go (lambda (x) (call-go (lambda (y) (* y 2)) (+ x 1))) 4)"); v != 10 {
		t.Errorf("nested Apply = %v", v)
	}
	// errors raised inside a nested Apply are catchable by Scheme, keep their value
	if v := eval(t, in, "(guard (e ((symbol? e) e)) (call-go (lambda (x) (raise x)) 'inner))"); v != scheme.Symbol("inner") {
		t.Errorf("guard around Apply = %v", scheme.WriteString(v))
	}
	// escapes pass through a primitive that called Apply
	if v := eval(t, in, "(call/cc (lambda (k) (call-go (lambda (x) (k 'escaped)) 1) 'not))"); v != scheme.Symbol("escaped") {
		t.Errorf("escape through Apply = %v", scheme.WriteString(v))
	}
	// Apply outside evaluation
	v, err = in.Apply(add, []scheme.Value{1, 2})
	if err != nil || v != 3 {
		t.Errorf("Apply = %v, %v", v, err)
	}
	if _, err := in.Apply(scheme.Symbol("x"), nil); err == nil || !strings.Contains(err.Error(), "not a procedure") {
		t.Errorf("Apply non-procedure: %v", err)
	}
}

func TestLoad(t *testing.T) {
	in := scheme.New()
	fsys := fstest.MapFS{
		"init.scm":  {Data: []byte("(define loaded 1)\n(load \"other.scm\")\n")},
		"other.scm": {Data: []byte("(define other 2)\n")},
		"bad.scm":   {Data: []byte("\n\n  (car '())\n")},
	}
	if err := in.Load(context.Background(), fsys, "init.scm"); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, in, "(+ loaded other)"); v != 3 {
		t.Errorf("got %v", v)
	}
	err := in.Load(context.Background(), fsys, "bad.scm")
	if err == nil || !strings.HasPrefix(err.Error(), "bad.scm:3:3: car:") {
		t.Errorf("err = %v", err)
	}
	if err := in.Load(context.Background(), fsys, "missing.scm"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "disk.scm")
	if err := os.WriteFile(path, []byte("(define on-disk 'yes)"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := in.LoadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, in, "on-disk"); v != scheme.Symbol("yes") {
		t.Errorf("got %v", v)
	}
}

func TestCancellation(t *testing.T) {
	in := scheme.New()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancelled from inside the guard, as the loop starts: guard and
	// with-exception-handler must not be able to catch it.
	in.Register(scheme.NewPrimitive("cancel!", 0, 0, "", func(*scheme.Interp, []scheme.Value) (scheme.Value, error) {
		cancel()
		return true, nil
	}))
	errc := make(chan error, 1)
	go func() {
		_, err := in.Eval(ctx, `
(define (spin) (guard (e (#t (spin))) (cancel!) (let loop () (loop))))
(with-exception-handler (lambda (e) (spin)) spin)`, "spin.scm")
		errc <- err
	}()
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("still running after its context was cancelled: the cancellation was caught")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// the interpreter is usable afterwards
	if v := eval(t, in, "(+ 1 1)"); v != 2 {
		t.Errorf("after cancel: %v", v)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	_, err = in.Eval(ctx2, "(let loop ((i 0)) (loop (+ i 1)))", "t.scm")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
	// a cause set with WithCancelCause is in the message
	ctx3, cancel3 := context.WithCancelCause(context.Background())
	cancel3(errors.New("budget exhausted"))
	_, err = in.Eval(ctx3, "1", "t.scm")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "budget exhausted") {
		t.Errorf("err = %v", err)
	}
	// dynamic-wind after thunks do not run on cancellation, parameterize
	// is restored
	eval(t, in, "(define p (make-parameter 1))")
	ctx4, cancel4 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel4()
	_, err = in.Eval(ctx4, "(parameterize ((p 2)) (let loop () (loop)))", "t.scm")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	if v := eval(t, in, "(p)"); v != 1 {
		t.Errorf("parameter after cancel = %v", v)
	}
}

func TestStepLimit(t *testing.T) {
	in := scheme.New()
	in.SetStepLimit(100000)
	in.SetMaxDepth(2000) // unwinding a Go panic costs time in proportion to the depth
	_, err := in.Eval(context.Background(), "(let loop () (guard (e (#t (loop))) (loop)))", "t.scm")
	if !errors.Is(err, scheme.ErrStepLimit) {
		t.Fatalf("err = %v, want ErrStepLimit", err)
	}
	// ordinary work within the budget is not blocked, and the budget is per Eval
	for i := 0; i < 3; i++ {
		if v := eval(t, in, "(let loop ((i 0)) (if (< i 50000) (loop (+ i 1)) i))"); v != 50000 {
			t.Errorf("got %v", v)
		}
	}
	in.SetStepLimit(0)
	if v := eval(t, in, "(let loop ((i 0)) (if (< i 500000) (loop (+ i 1)) i))"); v != 500000 {
		t.Errorf("got %v", v)
	}
}

func TestDepthLimit(t *testing.T) {
	in := scheme.New()
	in.SetMaxDepth(1000)
	_, err := in.Eval(context.Background(), "(define (d n) (if (= n 0) 0 (+ 1 (d (- n 1))))) (d 5000)", "t.scm")
	if err == nil || !strings.Contains(err.Error(), "call depth exceeded 1000") {
		t.Errorf("err = %v", err)
	}
	if v := eval(t, in, "(d 500)"); v != 500 {
		t.Errorf("got %v", v)
	}
	// deep nesting in data and code is refused, not a crash
	deep := strings.Repeat("(", 100000) + strings.Repeat(")", 100000)
	if _, err := in.Eval(context.Background(), deep, "deep.scm"); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Errorf("deep read: %v", err)
	}
}

func TestNoPanicFromPrimitive(t *testing.T) {
	in := scheme.New()
	in.Register(scheme.NewPrimitive("boom", 0, 0, "", func(in *scheme.Interp, args []scheme.Value) (scheme.Value, error) {
		var s []int
		return s[len(args)+3], nil // index out of range: panics
	}))
	_, err := in.Eval(context.Background(), "(+ 1\n   (boom))", "t.scm")
	// the error names the procedure and the call's position, without a Go
	// stack dump in the message
	if err == nil || err.Error() != "t.scm:2:4: boom: internal error: runtime error: index out of range [3] with length 0" {
		t.Errorf("err = %v", err)
	}
	// and a script can catch it
	if v := eval(t, in, `(guard (e ((error-object? e) 'caught)) (boom))`); v != scheme.Symbol("caught") {
		t.Errorf("guard: %v", v)
	}
	// an unhashable host value as a hash-table key
	in.Register(scheme.NewPrimitive("opaque", 0, 0, "", func(in *scheme.Interp, args []scheme.Value) (scheme.Value, error) {
		return struct{ A []int }{}, nil
	}))
	_, err = in.Eval(context.Background(), "(hash-table-set! (make-hash-table) (opaque) 1)", "t.scm")
	if err == nil || !strings.HasPrefix(err.Error(), "t.scm:1:1: hash-table-set!: internal error: ") {
		t.Errorf("err = %v", err)
	}
	if v := eval(t, in, "(+ 2 2)"); v != 4 {
		t.Errorf("after panic: %v", v)
	}
}

func TestExit(t *testing.T) {
	in := scheme.New()
	_, err := in.Eval(context.Background(), "(guard (e (#t 'caught)) (exit 3))", "t.scm")
	var ee *scheme.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Errorf("err = %v", err)
	}
}

func TestIndependentInterpreters(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			in := scheme.New()
			in.Define("id", i)
			v, err := in.Eval(context.Background(), "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (+ (fib 15) id)", "t.scm")
			if err != nil || v != 610+i {
				t.Errorf("interp %d: %v %v", i, v, err)
			}
		}(i)
	}
	wg.Wait()
	a, b := scheme.New(), scheme.New()
	eval(t, a, "(define only-in-a 1) (define-syntax m (syntax-rules () ((_) 1)))")
	if _, ok := b.Lookup("only-in-a"); ok {
		t.Error("a definition leaked between interpreters")
	}
	if _, err := b.Eval(context.Background(), "(m)", "t.scm"); err == nil {
		t.Error("a macro leaked between interpreters")
	}
}

func TestParameterFromGo(t *testing.T) {
	in := scheme.New()
	p := scheme.NewParameter(scheme.NewString("a"), nil)
	in.Define("p", p)
	eval(t, in, `(define seen (parameterize ((p "b")) (p)))`)
	if v, _ := in.Lookup("seen"); scheme.DisplayString(v) != "b" {
		t.Errorf("seen = %v", v)
	}
	if scheme.DisplayString(p.Get(in)) != "a" {
		t.Errorf("Get = %v", p.Get(in))
	}
}

func TestREPL(t *testing.T) {
	in := scheme.New()
	input := "(define x 2)\n(+ x\n   3)\n(car '())\n(display \"hi\")\n(* x 10)\n\"str\"\n"
	var out bytes.Buffer
	if err := in.REPL(context.Background(), strings.NewReader(input), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"> ", "... ", "5\n", "repl:4:1: car: not a pair: ()", "hi", "20\n", "\"str\"\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("REPL output lacks %q:\n%s", want, got)
		}
	}
	// an incomplete expression at the end of input is reported
	out.Reset()
	if err := in.REPL(context.Background(), strings.NewReader("(+ 1"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "unexpected end of input") {
		t.Errorf("REPL output: %s", out.String())
	}
}

func TestReadPositions(t *testing.T) {
	vals, err := scheme.Read("(a\n  (b c))", "f.scm")
	if err != nil {
		t.Fatal(err)
	}
	outer := vals[0].(*scheme.Pair)
	inner := outer.Cdr.(*scheme.Pair)
	if outer.Pos.String() != "f.scm:1:1" || inner.Pos.String() != "f.scm:2:3" {
		t.Errorf("positions %v %v", outer.Pos, inner.Pos)
	}
	vals, err = scheme.Read(`#\x41 #\space "a\x42;\n" |sym bol| 12345678901234567890123 -1.5e3 #t #false #(1 2) #u8(1 255) 'q #;(skipped) #| block |# end`, "")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, v := range vals {
		parts = append(parts, scheme.WriteString(v))
	}
	want := `#\A #\space "aB\n" |sym bol| 12345678901234567890123 -1500.0 #t #f #(1 2) #u8(1 255) 'q end`
	if got := strings.Join(parts, " "); got != want {
		t.Errorf("read\n got %s\nwant %s", got, want)
	}
}

// A primitive that loops over data of unbounded size (here a circular list,
// which memq, assq and last-pair would walk forever) is cancelled too.
func TestCancellationInsidePrimitive(t *testing.T) {
	in := scheme.New()
	for _, src := range []string{
		"(define c (list 1 2)) (set-cdr! (cdr c) c) (memq 3 c)",
		"(define c (list (cons 1 2))) (set-cdr! c c) (assq 3 c)",
		"(define c (list 1 2)) (set-cdr! (cdr c) c) (last-pair c)",
		"(define c (list 1 2)) (set-cdr! (cdr c) c) (list-ref c 1000000000000)",
	} {
		// Uncancelled, it would never return: it must, well before a
		// generous deadline, with the context's error.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		errc := make(chan error, 1)
		go func() { _, err := in.Eval(ctx, src, "t.scm"); errc <- err }()
		select {
		case err := <-errc:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: err = %v, want DeadlineExceeded", src, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still running after its context was cancelled", src)
		}
		cancel()
	}
}

// A deep stack is shown as its innermost and outermost frames with the
// number of frames left out between them; the counts add up.
func TestTraceOfDeepStack(t *testing.T) {
	in := scheme.New()
	_, err := in.Eval(context.Background(), `
(define (f n) (+ 1 (g n)))
(define (g n) (* 1 (f n)))
(f 1)`, "deep.scm")
	var se *scheme.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	total, omitted := 0, 0
	for _, f := range se.Stack {
		if f.Proc == "..." {
			omitted += f.Repeat
			total += f.Repeat
			continue
		}
		total += 1 + f.Repeat
	}
	// the failing call, DefaultMaxDepth frames of f and g, and top-level
	if want := scheme.DefaultMaxDepth + 1; total != want && total != want+1 {
		t.Errorf("frames add up to %d, want about %d", total, want)
	}
	if omitted == 0 || !strings.Contains(se.Trace(), fmt.Sprintf("\n  ... %d more frames\n", omitted)) {
		t.Errorf("trace:\n%s", se.Trace())
	}
}
