package guard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wcEnv is a working-copy layout: the data directory under the home, the
// session's scratch directory in it, the checkout and the folder (a
// subdirectory of it) elsewhere, and the copy's stand-in path under the
// scratch directory, as the session passes it.
type wcEnv struct {
	root, home, data, scratch string
	checkout, folder, runDir  string
}

func newWCEnv(t *testing.T) *wcEnv {
	t.Helper()
	root := t.TempDir()
	e := &wcEnv{root: root, home: filepath.Join(root, "home")}
	e.data = filepath.Join(e.home, ".local", "share", "nodwyn")
	e.scratch = filepath.Join(e.data, "scratch", "s1")
	e.checkout = filepath.Join(root, "e2e", "w")
	e.folder = filepath.Join(e.checkout, "proj")
	e.runDir = filepath.Join(e.scratch, "nodwyn-wc-copy", "proj")
	for p, c := range map[string]string{
		filepath.Join(e.home, ".ssh", "id_rsa"):     "key\n",
		filepath.Join(e.data, "journal", "key"):     "key\n",
		filepath.Join(e.scratch, "notes.txt"):       "scratch\n",
		filepath.Join(e.checkout, "README"):         "# w\n",
		filepath.Join(e.folder, "src", "main.go"):   "package main\n",
		filepath.Join(e.folder, "build.sh"):         "go build ./...\n",
		filepath.Join(e.checkout, ".git", "HEAD"):   "ref: refs/heads/main\n",
		filepath.Join(e.folder, "docs", "guide.md"): "# guide\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A link in the checkout whose target climbs: from the checkout it
	// leads next to the test's directory, from the copy into the data
	// directory (links are copied with their targets as written).
	if err := os.Symlink("../../../journal", filepath.Join(e.checkout, "keys")); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *wcEnv) opts(sandbox, runDirs bool) Options {
	o := Options{
		Folder: e.folder, Scratch: e.scratch, Home: e.home,
		ConfigDir: filepath.Join(e.home, ".config", "nodwyn"), DataDir: e.data,
		Sandbox: sandbox, Unattended: sandbox, Lean: sandbox,
	}
	if runDirs {
		o.RunDirs, o.Checkout = []string{e.runDir}, e.checkout
	}
	return o
}

// ups is the "../" climb from the run directory up to dir.
func ups(t *testing.T, from, dir string) string {
	t.Helper()
	rel, err := filepath.Rel(dir, from)
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("%s is not below %s", from, dir)
	}
	return strings.Repeat("../", len(strings.Split(rel, "/")))
}

// TestRunDirClimbOutOfTheCopyIsRefused: a relative path that is harmless
// from the folder but climbs out of the working copy into the data
// directory or the home directory's ~/.ssh is refused once the guard knows
// where commands run; without RunDirs it is not (the bug).
func TestRunDirClimbOutOfTheCopyIsRefused(t *testing.T) {
	e := newWCEnv(t)
	toData, toHome := ups(t, e.runDir, e.data), ups(t, e.runDir, e.home)
	if toData != "../../../../" || toHome != "../../../../../../../" {
		t.Fatalf("layout: %q %q", toData, toHome)
	}
	lines := []string{
		"cat " + toData + "journal/key",
		"cat " + toHome + ".ssh/id_rsa",
		"wc -c < " + toData + "journal/key",
		"cd " + toData + "; cat journal/key",
		"cd .. && cd ../../.. && cat journal/key",
		"cp " + toData + "journal/key out.txt",
		"echo x > " + toData + "journal/key",
		"cat " + toData + "journal/$NOT_SET",
		"cat " + toHome + ".s*/id_rsa",
		"ls " + toHome + ".ssh",
		"cat ../keys/key",
		"cat ../k*/key",
		"tar czf out.tgz ..",
		"bash -c 'cat " + toData + "journal/key'",
		"cat $PWD/" + toData + "journal/key",
	}
	for _, sandbox := range []bool{false, true} {
		plain, wc := New(e.opts(sandbox, false)), New(e.opts(sandbox, true))
		for _, line := range lines {
			if d := plain.Check(bg, shell(line)); d.Verdict == Refuse {
				t.Errorf("sandbox=%v %q: refused from the folder alone (%s), so the test shows nothing", sandbox, line, d.Reason)
			}
			d := wc.Check(bg, shell(line))
			if d.Verdict != Refuse {
				t.Errorf("sandbox=%v %q with RunDirs: got %v (%s: %s), want refuse", sandbox, line, d.Verdict, d.Checker, d.Reason)
				continue
			}
			if !strings.Contains(d.Reason, "working copy") {
				t.Errorf("sandbox=%v %q: the reason does not say it was judged from the working copy: %s", sandbox, line, d.Reason)
			}
		}
	}
}

// TestRunDirOrdinaryWorkIsJudgedAsBefore: paths that stay inside the copy
// (or, like ls .., reach its root) are judged as the folder's reading
// judges them, writes included.
func TestRunDirOrdinaryWorkIsJudgedAsBefore(t *testing.T) {
	e := newWCEnv(t)
	lines := []string{
		"cat src/main.go",
		"echo x > out.txt",
		"ls ..",
		"ls -la ../",
		"cat ../README",
		"cd src && cat main.go",
		"cd ..; ls proj",
		"grep -rn main .",
		"cat $PWD/src/main.go",
		"bash build.sh",
		"cat docs/*.md",
		"tar czf out.tgz src",
		"echo x > Makefile",
		"echo x > .git/config",
		"echo x > .nodwyn/profile.scm",
		"cat ../../outside.txt",
		"cat ~/.bashrc",
		"git status",
		"git log -p",
	}
	for _, sandbox := range []bool{false, true} {
		plain, wc := New(e.opts(sandbox, false)), New(e.opts(sandbox, true))
		for _, line := range lines {
			want, got := plain.Check(bg, shell(line)), wc.Check(bg, shell(line))
			if got.Verdict != want.Verdict || got.Reason != want.Reason {
				t.Errorf("sandbox=%v %q: with RunDirs %v (%s: %s), without %v (%s: %s)", sandbox, line, got.Verdict, got.Checker, got.Reason, want.Verdict, want.Checker, want.Reason)
			}
		}
		if got := wc.argv.analyze("echo x > out.txt").writes; !slices.Equal(got, []string{filepath.Join(e.folder, "out.txt")}) {
			t.Errorf("sandbox=%v: writes %v, want the folder's out.txt only", sandbox, got)
		}
	}
	// The file tools work in the folder itself.
	wc := New(e.opts(false, true))
	for _, p := range []string{"src/main.go", "../README"} {
		want := New(e.opts(false, false)).Check(bg, file("fs-read", p))
		if got := wc.Check(bg, file("fs-read", p)); got != want {
			t.Errorf("fs-read %s: with RunDirs %+v, without %+v", p, got, want)
		}
	}
}

// TestRunDirCheckoutIsTheFolder: with the checkout the folder itself the
// run directory is the copy's root.
func TestRunDirCheckoutIsTheFolder(t *testing.T) {
	e := newWCEnv(t)
	o := e.opts(true, true)
	o.Folder, o.Checkout = e.checkout, e.checkout
	o.RunDirs = []string{filepath.Join(e.scratch, "nodwyn-wc-copy")}
	g := New(o)
	for line, want := range map[string]Verdict{
		"cat keys/key":             Refuse,
		"cat k*/key":               Refuse,
		"grep -r BEGIN .":          Refuse,
		"cat ../../../journal/key": Refuse,
		"cat proj/src/main.go":     Allow,
		"ls ..":                    Allow,
	} {
		if d := g.Check(bg, shell(line)); d.Verdict != want {
			t.Errorf("%q: got %v (%s: %s), want %v", line, d.Verdict, d.Checker, d.Reason, want)
		}
	}
}

// TestSuitesWithRunDirs: exfil.txt is refused and legit.txt judged exactly
// as without RunDirs when commands run in a working copy.
func TestSuitesWithRunDirs(t *testing.T) {
	e := newTestEnv(t)
	for _, sandbox := range []bool{false, true} {
		plain := e.guard(sandbox)
		o := e.opts(sandbox)
		o.Checkout = filepath.Dir(e.Folder)
		o.RunDirs = []string{filepath.Join(e.Scratch, "nodwyn-wc-copy", filepath.Base(e.Folder))}
		wc := New(o)
		for _, l := range readSuite(t, "exfil.txt") {
			d := wc.Check(bg, shell(e.expand(l.Line)))
			ok := d.Verdict == Refuse || (l.Tag == "sc" && !sandbox && d.Verdict >= SecurityConfirm)
			if !ok {
				t.Errorf("sandbox=%v exfil.txt:%d %q with RunDirs: got %v (%s: %s)", sandbox, l.No, l.Line, d.Verdict, d.Checker, d.Reason)
			}
		}
		for _, l := range readSuite(t, "legit.txt") {
			line := e.expand(l.Line)
			want, got := plain.Check(bg, shell(line)), wc.Check(bg, shell(line))
			if got.Verdict != want.Verdict {
				t.Errorf("sandbox=%v legit.txt:%d %q: %v with RunDirs (%s: %s), %v without", sandbox, l.No, l.Line, got.Verdict, got.Checker, got.Reason, want.Verdict)
			}
		}
	}
}

// TestGlobInsideScratchInsideTheDataDir: the session's scratch directory
// is inside nodwyn's data directory; a pattern below it is not refused for
// reaching the data directory, one above it still is.
func TestGlobInsideScratchInsideTheDataDir(t *testing.T) {
	e := newWCEnv(t)
	for _, sandbox := range []bool{false, true} {
		g := New(e.opts(sandbox, false))
		for line, want := range map[string]Verdict{
			"cat " + e.scratch + "/*.txt":           Allow,
			"cat $TMPDIR/*.txt":                     Allow,
			"cat " + e.scratch + "/../*":            Refuse,
			"cat " + filepath.Dir(e.scratch) + "/*": Refuse,
			"cat " + e.data + "/*/key":              Refuse,
		} {
			if d := g.Check(bg, shell(line)); d.Verdict != want {
				t.Errorf("sandbox=%v %q: got %v (%s: %s), want %v", sandbox, line, d.Verdict, d.Checker, d.Reason, want)
			}
		}
	}
}

// TestRunDirGitFindsTheHomeRepository: a working copy has no .git, so git
// run in it reads the repository of a directory that holds it; with the
// home directory kept in git that repository holds ~/.ssh.
func TestRunDirGitFindsTheHomeRepository(t *testing.T) {
	e := newWCEnv(t)
	if err := os.MkdirAll(filepath.Join(e.home, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, sandbox := range []bool{false, true} {
		plain, wc := New(e.opts(sandbox, false)), New(e.opts(sandbox, true))
		for _, line := range []string{"git log -p", "git show HEAD:.ssh/id_rsa", "git grep BEGIN"} {
			if d := plain.Check(bg, shell(line)); d.Verdict == Refuse {
				t.Errorf("sandbox=%v %q: refused from the folder, whose repository is the checkout's (%s)", sandbox, line, d.Reason)
			}
			if d := wc.Check(bg, shell(line)); d.Verdict != Refuse {
				t.Errorf("sandbox=%v %q with RunDirs: got %v (%s: %s), want refuse", sandbox, line, d.Verdict, d.Checker, d.Reason)
			}
		}
	}
}
