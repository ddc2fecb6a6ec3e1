package scheme

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// A name referred to before its definition is resolved once the definition
// has run; a misspelt one, a set! of a name never defined and a name in a
// branch that never runs are reported, each at its first reference.
func TestUnresolvedNamesTheUndefined(t *testing.T) {
	in := New()
	src := `(define (f) (g 1))
(define (g x) (* x 2))
(define (h) (when #f (lo-note "x") (lo-note "y")))
(define (k) (set! counter 1))
(define (uses-std) (list (car '(1)) (string-append "a" "b")))`
	if _, err := in.Eval(context.Background(), src, "init.scm"); err != nil {
		t.Fatal(err)
	}
	got := in.Unresolved()
	if len(got) != 2 || got[0].Name != "lo-note" || got[0].Pos.String() != "init.scm:3:22" ||
		got[1].Name != "counter" || got[1].Pos.String() != "init.scm:4:13" {
		t.Fatalf("Unresolved() = %+v; want lo-note at init.scm:3:22 and counter at init.scm:4:13", got)
	}
	err := UnresolvedError(got)
	if err == nil || !strings.HasPrefix(err.Error(), "init.scm:3:22: unbound variables: 2 names") ||
		!strings.Contains(err.Error(), "init.scm:4:13: counter") {
		t.Errorf("UnresolvedError: %v", err)
	}
	// Defining them resolves them.
	if _, err := in.Eval(context.Background(), `(define (lo-note x) x) (define counter 0)`, "later.scm"); err != nil {
		t.Fatal(err)
	}
	if got := in.Unresolved(); len(got) != 0 {
		t.Errorf("after the definitions: %+v", got)
	}
	if UnresolvedError(nil) != nil {
		t.Error("UnresolvedError(nil) is not nil")
	}
}

// The memory of unbound references is bounded.
func TestUnresolvedIsBounded(t *testing.T) {
	in := New()
	var b strings.Builder
	for i := range maxForward + 100 {
		b.WriteString("(define (f" + strconv.Itoa(i) + ") (missing" + strconv.Itoa(i) + "))\n")
	}
	if _, err := in.Eval(context.Background(), b.String(), "many.scm"); err != nil {
		t.Fatal(err)
	}
	if n := len(in.Unresolved()); n != maxForward {
		t.Errorf("%d remembered, want the bound %d", n, maxForward)
	}
}

type wireError struct{ status int }

func (e *wireError) Error() string { return "status " + strconv.Itoa(e.status) }

// A primitive's error that wraps a Go error (Errorf with %w) is still a
// Scheme error with that message, and errors.As on what the evaluation
// returns reaches the Go error: the host can tell a provider's 429 from a
// typo.
func TestARaisedErrorKeepsItsGoCause(t *testing.T) {
	in := New()
	in.Register(NewPrimitive("fetch", 0, 0, "(fetch)", func(*Interp, []Value) (Value, error) {
		return nil, Errorf("fetch: %w", &wireError{429})
	}))
	_, err := in.Eval(context.Background(), "(fetch)", "t.scm")
	var we *wireError
	if !errors.As(err, &we) || we.status != 429 || !strings.Contains(err.Error(), "t.scm:1:1: fetch: status 429") {
		t.Fatalf("errors.As: %v (%T)", err, err)
	}
	v, err := in.Eval(context.Background(), `(guard (e (#t (error-object-message e))) (fetch))`, "t.scm")
	if err != nil || WriteString(v) != `"fetch: status 429"` {
		t.Errorf("caught in Scheme: %s %v", WriteString(v), err)
	}
	// An abort's cause is still reached too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := in.Eval(ctx, "(fetch)", "t.scm"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
