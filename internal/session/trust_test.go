package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The session loads a project's Scheme only from what it was given (what
// trust read and judged): an init.scm on disk that was not given does not
// run, and (load …) of a .nodwyn file that was not given is an error, even
// when the given init.scm is trusted.
func TestAProjectInitRunsOnlyAsTrustGaveIt(t *testing.T) {
	opts := baseOpts(t)
	dir := filepath.Join(opts.Folder, ".nodwyn")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "init.scm"), []byte(`(log-note "disk init ran")`), 0o644)
	os.WriteFile(filepath.Join(dir, "extra.scm"), []byte(`(log-note "extra ran")`), 0o644)
	os.WriteFile(filepath.Join(dir, "lib.scm"), []byte(`(log-note "disk lib ran")`), 0o644)

	r := runSession(t, opts, "> reply\ndone\n")
	if n := r.notes("disk init ran"); len(n) != 0 {
		t.Fatalf("an init.scm that was not given ran: %q", n)
	}

	opts = baseOpts(t)
	dir = filepath.Join(opts.Folder, ".nodwyn")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "extra.scm"), []byte(`(log-note "extra ran")`), 0o644)
	os.WriteFile(filepath.Join(dir, "lib.scm"), []byte(`(log-note "disk lib ran")`), 0o644)
	opts.ProjectScheme = map[string][]byte{
		"init.scm": []byte(`(log-note "given init ran")
(load "lib.scm")
(log-note (guard (e (#t (error-object-message e))) (load "extra.scm") "extra loaded"))`),
		"lib.scm": []byte(`(log-note "given lib ran")`),
	}
	r = runSession(t, opts, "> reply\ndone\n")
	if len(r.notes("given init ran")) != 1 || len(r.notes("given lib ran")) != 1 {
		t.Fatalf("the given files did not run: %q", r.notes(""))
	}
	if len(r.notes("disk lib ran")) != 0 || len(r.notes("extra ran")) != 0 {
		t.Fatalf("a file from disk ran instead of the given one: %q", r.notes(""))
	}
	if n := r.notes("load:"); len(n) != 1 || !strings.Contains(n[0], "not among the project files trusted") || !strings.Contains(n[0], "nodwyn trust -C") {
		t.Fatalf("loading an untrusted file: %q", r.notes(""))
	}
}
