package scheme

import (
	"context"
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
