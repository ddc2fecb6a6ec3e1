package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileToolPathsArePinnedToTheFolderAndTheScratchDirectory(t *testing.T) {
	e := newTestEnv(t)
	if err := os.Symlink("/etc", filepath.Join(e.Folder, "etc-link")); err != nil {
		t.Fatal(err)
	}
	g := e.guard(false)
	for path, want := range map[string]Verdict{
		"main.go":                          Allow,
		"internal/x.go":                    Allow,
		"new/dir/file.txt":                 Allow,
		filepath.Join(e.Folder, "main.go"): Allow,
		filepath.Join(e.Scratch, "a.py"):   Allow,
		"../other/x.go":                    Refuse,
		"/etc/hosts":                       Refuse,
		filepath.Join(e.Home, ".bashrc"):   Refuse,
		"etc-link/hosts":                   Refuse, // a link never escapes
		"/tmp/x.txt":                       Refuse, // only a lean unattended session has /tmp
		"~/notes.txt":                      Allow,  // file tools do not expand ~: a name in the folder
	} {
		d := g.Check(bg, file("fs-read", path))
		if d.Verdict != want {
			t.Errorf("fs-read %s: got %v (%s: %s), want %v", path, d.Verdict, d.Checker, d.Reason, want)
		}
	}
	// The scratch directory is reached by absolute paths only.
	rel, _ := filepath.Rel(e.Folder, filepath.Join(e.Scratch, "a.py"))
	if d := g.Check(bg, file("fs-write", rel)); d.Verdict != Refuse {
		t.Errorf("fs-write %s (relative into scratch): %v", rel, d.Verdict)
	}
	if d := g.Check(bg, file("fs-read", "/etc/hosts")); d.Checker != "RepoPin" {
		t.Errorf("checker %q, want RepoPin", d.Checker)
	}
}

func TestALeanUnattendedSessionMayUseTmp(t *testing.T) {
	e := newTestEnv(t)
	o := e.opts(false)
	o.Lean, o.Unattended = true, true
	g := New(o)
	if d := g.Check(bg, file("fs-write", "/tmp/nodwyn-guard-test.txt")); d.Verdict != Allow {
		t.Errorf("fs-write /tmp in a lean unattended session: %v (%s)", d.Verdict, d.Reason)
	}
	if d := g.Check(bg, shell("cat /tmp/nodwyn-guard-test.txt")); d.Verdict != Allow {
		t.Errorf("cat /tmp in a lean unattended session: %v (%s)", d.Verdict, d.Reason)
	}
	o.Lean = false
	if d := New(o).Check(bg, file("fs-write", "/tmp/x.txt")); d.Verdict != Refuse {
		t.Errorf("fs-write /tmp in a full session: %v", d.Verdict)
	}
}

func TestSandboxRepoPinTakesEveryPathButNotTheDenylist(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(true)
	for _, p := range []string{"/etc/nginx/nginx.conf", "/root/.bashrc", "/usr/local/bin/tool", "../x", filepath.Join(e.Home, ".bashrc")} {
		if d := g.Check(bg, file("fs-write", p)); d.Verdict != Allow {
			t.Errorf("sandbox fs-write %s: %v (%s)", p, d.Verdict, d.Reason)
		}
	}
	for _, p := range []string{filepath.Join(e.Home, ".ssh", "id_rsa"), filepath.Join(e.Data, "x"), "/etc/ssl/private/server.key"} {
		if d := g.Check(bg, file("fs-read", p)); d.Verdict != Refuse {
			t.Errorf("sandbox fs-read %s: %v", p, d.Verdict)
		}
	}
}

func TestSearchPatternsStayBelowTheirPath(t *testing.T) {
	e := newTestEnv(t)
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		for _, req := range []Request{
			{Tool: "fs-find", Args: map[string]any{"pattern": "../../.ssh/*"}},
			{Tool: "fs-find", Args: map[string]any{"pattern": "/etc/*.conf"}},
			{Tool: "index-grep", Args: map[string]any{"pattern": "x", "glob": "../**/*"}},
			{Tool: "index-grep", Args: map[string]any{"pattern": "x", "glob": "~/.aws/*"}},
		} {
			if d := g.Check(bg, req); d.Verdict != Refuse || !strings.Contains(d.Reason, "relative to it") {
				t.Errorf("sandbox=%v %v: %v (%s)", sandbox, req.Args, d.Verdict, d.Reason)
			}
		}
		for _, req := range []Request{
			{Tool: "fs-find", Args: map[string]any{"pattern": "**/*.go"}},
			{Tool: "index-grep", Args: map[string]any{"pattern": "\\.\\./x", "glob": "*.go"}},
		} {
			if d := g.Check(bg, req); d.Verdict != Allow {
				t.Errorf("sandbox=%v %v: %v (%s)", sandbox, req.Args, d.Verdict, d.Reason)
			}
		}
	}
}
