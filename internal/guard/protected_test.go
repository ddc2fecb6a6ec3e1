package guard

import (
	"strings"
	"testing"
)

func TestProtectedPathsNeedAPerson(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	for _, p := range []string{".git/config", ".github/workflows/ci.yml", ".gitea/workflows/x.yml", "Makefile", "scripts/build.sh"} {
		for _, tool := range []string{"fs-write", "fs-edit"} {
			d := g.Check(bg, file(tool, p))
			if d.Verdict != SecurityConfirm || d.Checker != "ProtectedPaths" {
				t.Errorf("%s %s: %v by %s (%s)", tool, p, d.Verdict, d.Checker, d.Reason)
			}
		}
		if d := g.Check(bg, file("fs-read", p)); d.Verdict != Allow {
			t.Errorf("fs-read %s: %v (%s)", p, d.Verdict, d.Reason)
		}
	}
	for _, line := range []string{"echo x >> .github/workflows/ci.yml", "cp /dev/null Makefile", "sed -i s/a/b/ scripts/x.sh", "tee .git/hooks/pre-commit < hook"} {
		if d := g.Check(bg, shell(line)); d.Verdict != SecurityConfirm {
			t.Errorf("%q: %v (%s)", line, d.Verdict, d.Reason)
		}
	}
	for _, p := range []string{"src/Makefile.go", "docs/scripts.md", "internal/x.go"} {
		if d := g.Check(bg, file("fs-write", p)); d.Verdict != Allow {
			t.Errorf("fs-write %s: %v (%s)", p, d.Verdict, d.Reason)
		}
	}
}

func TestNodwynsOwnFolderAlwaysNeedsAPerson(t *testing.T) {
	e := newTestEnv(t)
	attended := e.guard(false)
	o := e.opts(false)
	o.Unattended = true
	unattended := New(o)
	sandbox := e.guard(true)
	for _, p := range []string{".nodwyn/init.scm", ".nibb/init.scm"} {
		if d := attended.Check(bg, file("fs-write", p)); d.Verdict != SecurityConfirm {
			t.Errorf("attended %s: %v", p, d.Verdict)
		}
		for name, g := range map[string]*Guard{"unattended": unattended, "sandbox": sandbox} {
			d := g.Check(bg, file("fs-write", p))
			if d.Verdict != Refuse || !strings.Contains(d.Reason, "nodwyn's own folder") {
				t.Errorf("%s %s: %v (%s)", name, p, d.Verdict, d.Reason)
			}
		}
	}
	if d := sandbox.Check(bg, shell("echo '(define x 1)' > .nodwyn/init.scm")); d.Verdict != Refuse {
		t.Errorf("sandbox shell write to .nodwyn: %v (%s)", d.Verdict, d.Reason)
	}
	if d := sandbox.Check(bg, file("fs-read", ".nodwyn/init.scm")); d.Verdict != Allow {
		t.Errorf("reading .nodwyn: %v", d.Verdict)
	}
}

func TestSandboxProtectedPathsAreTheTasks(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(true)
	for _, p := range []string{".git/config", ".github/workflows/ci.yml", ".gitea/x", "Makefile", "scripts/build.sh"} {
		if d := g.Check(bg, file("fs-write", p)); d.Verdict != Allow {
			t.Errorf("sandbox fs-write %s: %v (%s)", p, d.Verdict, d.Reason)
		}
	}
	if d := g.Check(bg, shell("echo all: > Makefile")); d.Verdict != Allow {
		t.Errorf("sandbox shell write Makefile: %v (%s)", d.Verdict, d.Reason)
	}
}

func TestNodwynsOwnFolderIsRefusedHoweverALineWritesIt(t *testing.T) {
	e := newTestEnv(t)
	for _, sandbox := range []bool{false, true} {
		o := e.opts(sandbox)
		o.Unattended = true
		g := New(o)
		for _, line := range []string{
			"tar -xf x.tar -C .nodwyn", "unzip -o x.zip -d .nodwyn", "git checkout HEAD -- .nodwyn/init.scm", "git restore .nodwyn",
			"python3 -c \"open('.nodwyn/init.scm','w').write('x')\"", "perl -i -pe 's/a/b/' .nodwyn/init.scm",
			"echo x > .NODWYN/init.scm", "vim -c 'wq' .nodwyn/init.scm",
		} {
			if d := g.Check(bg, shell(line)); d.Verdict != Refuse {
				t.Errorf("sandbox=%v %q: %v (%s)", sandbox, line, d.Verdict, d.Reason)
			}
		}
		if d := g.Check(bg, file("fs-write", ".NODWYN/init.scm")); d.Verdict != Refuse {
			t.Errorf("sandbox=%v fs-write .NODWYN/init.scm: %v (%s)", sandbox, d.Verdict, d.Reason)
		}
		for _, line := range []string{"cat .nodwyn/init.scm", "git diff .nodwyn", "grep -rn define .nodwyn"} {
			if d := g.Check(bg, shell(line)); d.Verdict != Allow {
				t.Errorf("sandbox=%v reading %q: %v (%s)", sandbox, line, d.Verdict, d.Reason)
			}
		}
	}
	// make reads GNUmakefile and makefile before Makefile.
	for _, name := range []string{"GNUmakefile", "makefile"} {
		if d := e.guard(false).Check(bg, file("fs-write", name)); d.Verdict != SecurityConfirm {
			t.Errorf("fs-write %s: %v (%s)", name, d.Verdict, d.Reason)
		}
	}
}
