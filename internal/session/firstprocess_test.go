package session

import (
	"os"
	"path/filepath"
	"testing"
)

// The watchdog's hook (BeforeFirstProcess) is called once, with the
// session's mark, before the first program a tool starts, and not at all
// in a run whose tools start none.
func TestBeforeFirstProcessOnceBeforeTheFirstProgram(t *testing.T) {
	opts := baseOpts(t)
	if err := os.WriteFile(filepath.Join(opts.Folder, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var marks []string
	var sawPid bool
	opts.BeforeFirstProcess = func(mark string) {
		marks = append(marks, mark)
		// no program of the run exists yet
		_, err := os.Stat(filepath.Join(opts.Folder, "ran"))
		sawPid = err == nil
	}
	r := runSession(t, opts, `
> reply
call fs-read {"path": "a.txt"}
> reply
Done.
`)
	if r.out.Status != "finished" {
		t.Fatalf("status %q (%s)", r.out.Status, r.out.Text)
	}
	if len(marks) != 0 {
		t.Fatalf("a run that started no program: the hook was called %d times", len(marks))
	}

	opts = baseOpts(t)
	opts.BeforeFirstProcess = func(mark string) {
		marks = append(marks, mark)
		_, err := os.Stat(filepath.Join(opts.Folder, "ran"))
		sawPid = err == nil
	}
	r = runSession(t, opts, `
> reply
call shell-exec {"command": "touch ran"}
> reply
call shell-exec {"command": "echo again"}
> reply
Done.
`)
	if r.out.Status != "finished" {
		t.Fatalf("status %q (%s)", r.out.Status, r.out.Text)
	}
	if len(marks) != 1 {
		t.Fatalf("the hook was called %d times, want once", len(marks))
	}
	if marks[0] == "" || marks[0] != r.s.ProcessMark() {
		t.Errorf("the hook got mark %q, the session's is %q", marks[0], r.s.ProcessMark())
	}
	if sawPid {
		t.Error("the hook was called after the first command had run")
	}
	if _, err := os.Stat(filepath.Join(opts.Folder, "ran")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}
