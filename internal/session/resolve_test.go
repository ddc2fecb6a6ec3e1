package session

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/scheme"
)

// A misspelt name in a branch that has not run yet stops the run before
// any model call, naming the file, line and column; its error is a
// *scheme.Error the CLI can read with errors.As.
func TestAMisspeltNameStopsTheRunBeforeAnyModelCall(t *testing.T) {
	opts := baseOpts(t)
	writeInit(t, &opts, "(define (my-turn-end reply)\n  (if (string=? (reply-text reply) \"\") (lo-note \"empty\") #f))\n")
	err := newFails(t, context.Background(), opts)
	path := filepath.Join(opts.Folder, ".nodwyn", "init.scm")
	wantAll(t, err, path+":2:40:", "unbound variable: lo-note", "before any model call", "correct its spelling")
	var se *scheme.Error
	if !errors.As(err, &se) || se.Pos.Line != 2 {
		t.Errorf("errors.As(*scheme.Error): %v %+v", err, se)
	}
	// The same init with the name defined further on loads.
	opts = baseOpts(t)
	writeInit(t, &opts, "(define (my-turn-end reply)\n  (if (string=? (reply-text reply) \"\") (lo-note \"empty\") #f))\n(define (lo-note s) (log-note s))\n")
	r := runSession(t, opts, "> reply\ndone\n")
	if r.out.Status != "finished" {
		t.Errorf("status %q (%s)", r.out.Status, r.out.Text)
	}
}

// define-profile checks its settings: a typo is an error that names the
// caller's file and line and the known settings; a setting of the
// project's own is declared with define-profile-key!; a value of the wrong
// kind is named.
func TestDefineProfileChecksItsSettings(t *testing.T) {
	cases := []struct{ init, want string }{
		{"(define x 1)\n(define-profile 'careful (list (cons 'fold-limt 100)))\n",
			"init.scm:2:1: define-profile careful: unknown setting fold-limt; the settings are system-prompt, tool-description, run, turn-end, fold-limit,"},
		{"(define-profile 'careful (list (cons 'system-prompt \"not a procedure\")))\n",
			"define-profile careful: system-prompt must be a procedure"},
		{"(define-profile 'careful (list (cons 'fold-limit -3)))\n",
			"define-profile careful: fold-limit must be a positive whole number"},
		{"(define-profile 'careful '(fold-limit 3))\n",
			"each setting must be a (key . value) pair"},
	}
	for _, c := range cases {
		opts := baseOpts(t)
		writeInit(t, &opts, c.init)
		err := newFails(t, context.Background(), opts)
		wantAll(t, err, c.want, "before any model call")
	}
	opts := baseOpts(t)
	writeInit(t, &opts, `(define-profile-key! 'review-every "how many turns between reviews")
(define-profile 'careful (cons (cons 'review-every 3) (profile-named 'lean)))
(define (default-profile-name) 'careful)
(log-note (string-append "review-every " (number->string (profile-ref 'review-every))))
`)
	r := runSession(t, opts, "> reply\ndone\n")
	if r.out.Status != "finished" || len(r.notes("review-every 3")) != 1 {
		t.Errorf("a declared setting: status %q (%s), notes %q", r.out.Status, r.out.Text, r.notes(""))
	}
}

// finish! records only the outcomes the loop may give; the others are the
// runtime's (a profile cannot say a run that failed has "passed").
func TestFinishAcceptsOnlyTheDocumentedOutcomes(t *testing.T) {
	for _, outcome := range []string{"'passed", "'budget", "\"finished\""} {
		opts := baseOpts(t)
		writeInit(t, &opts, `(define-profile 'ending (cons (cons 'run (lambda (instruction) (finish! `+outcome+` "said so"))) (profile-named 'lean)))
(define (default-profile-name) 'ending)`)
		r := runSession(t, opts, "> reply\nnever asked\n")
		if r.out.Status != "failed" || !strings.Contains(r.out.Text, "finish!: the outcome must be 'finished or 'no-progress") {
			t.Errorf("finish! %s: status %q (%s)", outcome, r.out.Status, r.out.Text)
		}
	}
	opts := baseOpts(t)
	writeInit(t, &opts, `(define-profile 'ending (cons (cons 'run (lambda (instruction) (finish! 'no-progress "stuck"))) (profile-named 'lean)))
(define (default-profile-name) 'ending)`)
	if r := runSession(t, opts, "> reply\nnever asked\n"); r.out.Status != "no-progress" {
		t.Errorf("finish! 'no-progress: status %q (%s)", r.out.Status, r.out.Text)
	}
}

type failingModel struct{ err error }

func (m failingModel) Name() string { return "failing" }
func (m failingModel) Stream(context.Context, provider.Request, func(provider.Delta)) (provider.Reply, error) {
	return provider.Reply{}, m.err
}

// A provider's error ends the run failed, and the CLI can still read it
// (errors.As through the Scheme error model-turn raised): a 429 is told
// from a bug in a profile.
func TestAProvidersErrorReachesTheOutcome(t *testing.T) {
	opts := baseOpts(t)
	opts.Model = failingModel{&provider.Error{Provider: "openai", Status: 429, Attempts: 6}}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := s.Run(context.Background())
	s.Close()
	var pe *provider.Error
	if out.Status != "failed" || !errors.As(out.Err, &pe) || pe.Status != 429 || !strings.Contains(out.Text, "model-turn: provider openai") {
		t.Errorf("outcome %q %q, err %v (%T)", out.Status, out.Text, out.Err, out.Err)
	}
}
