package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodwyn/nodwyn/internal/provider"
)

// The watchdog's hook (BeforeFirstProcess) is called once, with the
// session's mark, before the first program a tool starts, and not at all
// in a run whose tools start none.
func TestBeforeFirstProcessOnceBeforeTheFirstProgram(t *testing.T) {
	// start runs model with the hook recording each mark it gets and
	// whether the first command had run by then (it makes "ran").
	start := func(model string, git bool) (*run, []string, bool) {
		opts := baseOpts(t)
		if git {
			gitInit(t, opts.Folder)
		}
		if err := os.WriteFile(filepath.Join(opts.Folder, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var marks []string
		var late bool
		opts.BeforeFirstProcess = func(mark string) {
			marks = append(marks, mark)
			_, err := os.Stat(filepath.Join(opts.Folder, "ran"))
			late = late || err == nil
		}
		r := runSession(t, opts, model)
		if r.out.Status != "finished" {
			t.Fatalf("status %q (%s)", r.out.Status, r.out.Text)
		}
		return r, marks, late
	}
	const readOnly = "> reply\ncall fs-read {\"path\": \"a.txt\"}\n> reply\nDone.\n"
	if _, marks, _ := start(readOnly, false); len(marks) != 0 {
		t.Fatalf("a run that started no program: the hook was called %d times", len(marks))
	}
	// In a git work tree the loop asks git status each turn, and a filter
	// driver the model configured may start programs from it: the
	// watchdog comes first there too.
	if _, marks, _ := start(readOnly, true); len(marks) != 1 {
		t.Fatalf("a run in a git work tree: the hook was called %d times, want once (before git status)", len(marks))
	}
	r, marks, late := start("> reply\ncall shell-exec {\"command\": \"touch ran\"}\n> reply\ncall shell-exec {\"command\": \"echo again\"}\n> reply\nDone.\n", false)
	if len(marks) != 1 {
		t.Fatalf("the hook was called %d times, want once", len(marks))
	}
	if marks[0] == "" || marks[0] != r.s.ProcessMark() {
		t.Errorf("the hook got mark %q, the session's is %q", marks[0], r.s.ProcessMark())
	}
	if late {
		t.Error("the hook was called after the first command had run")
	}
	if _, err := os.Stat(filepath.Join(r.s.opts.Folder, "ran")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}

// closingModel is a scripted model that counts how often its kept
// connection was closed.
type closingModel struct {
	provider.Model
	closed int
}

func (m *closingModel) CloseIdleConnections() { m.closed++ }

// The session's end closes the connection its model keeps between requests
// (the daemon makes a model for each session; a connection kept past the
// session would be a descriptor left for each).
func TestCloseClosesTheModelsConnection(t *testing.T) {
	opts := baseOpts(t)
	m := &closingModel{Model: script(t, "> reply\nDone.\n")}
	opts.Model = m
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out := s.Run(context.Background()); out.Status != "finished" {
		t.Fatalf("status %q (%s)", out.Status, out.Text)
	}
	if m.closed != 0 {
		t.Fatal("the connection was closed before the session ended")
	}
	s.Close()
	if m.closed != 1 {
		t.Errorf("the session's end closed the model's connection %d times, want once", m.closed)
	}
}
