package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/trust"
)

func trustEnv(t *testing.T) (config.Dirs, string) {
	t.Helper()
	root := t.TempDir()
	dirs := config.Dirs{Config: filepath.Join(root, "config"), Data: filepath.Join(root, "data")}
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dirs, proj
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// At a terminal the person is asked; yes records the trust and loads the
// files as they were shown, no loads nothing of the project's.
func TestThePersonAtTheTerminalDecidesWhetherTheProjectLoads(t *testing.T) {
	dirs, proj := trustEnv(t)
	writeFile(t, filepath.Join(proj, ".nodwyn", "init.scm"), "(display \"hi\")\n")
	writeFile(t, filepath.Join(proj, ".nodwyn", "config.toml"), "[limits]\nmax_tool_calls = 5\n")

	asked := 0
	no := func(*trust.Store, *trust.Project) bool { asked++; return false }
	pt, err := launch.CheckProjectTrust(dirs, proj, false, false, no)
	if err != nil || asked != 1 {
		t.Fatalf("err %v, asked %d times", err, asked)
	}
	if pt.Config != nil || len(pt.Scheme) != 0 || !strings.Contains(pt.Note, "not loaded") {
		t.Fatalf("declined, yet loaded: %+v", pt)
	}

	yes := func(*trust.Store, *trust.Project) bool { asked++; return true }
	pt, err = launch.CheckProjectTrust(dirs, proj, false, false, yes)
	if err != nil || asked != 2 {
		t.Fatalf("err %v, asked %d times", err, asked)
	}
	if string(pt.Scheme["init.scm"]) != "(display \"hi\")\n" || !strings.Contains(string(pt.Config), "max_tool_calls") {
		t.Fatalf("accepted, yet not loaded: %+v", pt)
	}
	// Now trusted: no question.
	pt, err = launch.CheckProjectTrust(dirs, proj, false, true, yes)
	if err != nil || asked != 2 || pt.Scheme["init.scm"] == nil {
		t.Fatalf("trusted project: err %v, asked %d, %+v", err, asked, pt)
	}
	// Unattended and changed: an error, no question.
	writeFile(t, filepath.Join(proj, ".nodwyn", "init.scm"), "(display \"changed\")\n")
	_, err = launch.CheckProjectTrust(dirs, proj, false, true, yes)
	if err == nil || asked != 2 || !strings.Contains(err.Error(), "init.scm (changed since it was trusted)") {
		t.Fatalf("unattended, changed: err %v, asked %d", err, asked)
	}
}

// The question shows the path, size and what changed, with the file's
// control characters escaped (a file cannot hide lines from the reader),
// and only "y"/"yes" is a yes.
func TestTheTrustQuestionShowsWhatChanged(t *testing.T) {
	dirs, proj := trustEnv(t)
	init := filepath.Join(proj, ".nodwyn", "init.scm")
	writeFile(t, init, "(define a 1)\n(define b 2)\n")
	st, err := trust.Open(launch.TrustRecord(dirs))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := st.Check(proj)
	if err := st.Trust(p); err != nil {
		t.Fatal(err)
	}
	writeFile(t, init, "(define a 1)\n(define b 3) ; \x1b[8mhidden\x1b[0m\n")
	p, _ = st.Check(proj)
	for answer, want := range map[string]bool{"y\n": true, "YES\n": true, "\n": false, "n\n": false, "maybe\n": false, "": false} {
		var out bytes.Buffer
		if got := askTrust(strings.NewReader(answer), &out, st, p); got != want {
			t.Errorf("answer %q: %v, want %v", answer, got, want)
		}
		s := out.String()
		for _, part := range []string{init, "changed since it was trusted", "- (define b 2)", `+ (define b 3) ; \x1b[8mhidden\x1b[0m`, "[y/N]"} {
			if !strings.Contains(s, part) {
				t.Errorf("the question does not show %q:\n%s", part, s)
			}
		}
		if strings.ContainsRune(s, 0x1b) {
			t.Errorf("a raw escape reached the terminal:\n%q", s)
		}
	}
}

// A name a project chose, as a hostile one would: a CSI that moves the
// cursor up and erases what is below (the lines a person reviews before
// answering y), an OSC that sets the window's title, the 8-bit CSI (as a
// character and as a lone byte), a bidi override and a newline.
const (
	hostileName  = "evil\x1b[3A\x1b[J\x1b]0;title\x07\u009b2J\x9b\u202e\nname.scm"
	hostileShown = `evil\x1b[3A\x1b[J\x1b]0;title\a\u009b2J\x9b\u202e\nname.scm`
)

// hostileProject is a project with an ordinary init.scm and a file named
// hostileName beside it.
func hostileProject(t *testing.T, home string) string {
	t.Helper()
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, ".nodwyn", "init.scm"), "(define a 1)\n")
	writeFile(t, filepath.Join(proj, ".nodwyn", hostileName), "(define b 2)\n")
	return proj
}

// noRawControls fails when out holds a character a terminal acts on (other
// than the newlines that end its lines), and checks that the hostile name
// is shown, escaped, on one line with what follows it there.
func noRawControls(t *testing.T, what, out, after string) {
	t.Helper()
	noRawControlsShown(t, what, out, hostileShown, after)
}

func noRawControlsShown(t *testing.T, what, out, shown, after string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\r\u009b\u202e") || strings.Contains(out, "\x9b") {
		t.Errorf("%s: a raw control character reaches the terminal:\n%q", what, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, shown) && strings.Contains(l, after) {
			return
		}
	}
	t.Errorf("%s does not show %s followed by %q on one line:\n%s", what, shown, after, out)
}

// nodwyn trust and nodwyn trust --list show a file's name escaped: it
// cannot erase the lines above it, set the title or start a line of its
// own; the ordinary file is shown as it is.
func TestTheTrustListingsEscapeFileNames(t *testing.T) {
	home := t.TempDir()
	proj := hostileProject(t, home)
	getenv := homeEnv(home)
	code, out, errOut := nodwyn(getenv, "", "trust", "-C", proj)
	if code != 0 {
		t.Fatalf("nodwyn trust: exit %d\n%s%s", code, out, errOut)
	}
	noRawControls(t, "nodwyn trust", out, "bytes  sha256")
	if !strings.Contains(out, filepath.Join(proj, ".nodwyn", "init.scm")+"  13 bytes") || !strings.Contains(out, "trusted: "+proj+" (2 files)") {
		t.Errorf("nodwyn trust does not show the ordinary file and folder as they are:\n%s", out)
	}

	code, out, errOut = nodwyn(getenv, "", "trust", "--list")
	if code != 0 {
		t.Fatalf("nodwyn trust --list: exit %d\n%s%s", code, out, errOut)
	}
	// trust.json is JSON: the name's byte that is not UTF-8 was recorded
	// as U+FFFD.
	noRawControlsShown(t, "nodwyn trust --list", out, strings.Replace(hostileShown, `\x9b`, "\ufffd", 1), "bytes  sha256")
	if !strings.HasPrefix(out, proj+"\n") || !strings.Contains(out, "\n  .nodwyn/init.scm  13 bytes") {
		t.Errorf("nodwyn trust --list does not show the ordinary file as it is:\n%s", out)
	}
}

// The question a run asks shows the untrusted file's name escaped, and so
// do the note a declined run says and the error an unattended run stops
// with.
func TestTheTrustQuestionEscapesFileNames(t *testing.T) {
	home := t.TempDir()
	proj := hostileProject(t, home)
	dirs := config.ResolveDirs(homeEnv(home), home)
	var question bytes.Buffer
	ask := func(st *trust.Store, p *trust.Project) bool {
		return askTrust(strings.NewReader("n\n"), &question, st, p)
	}
	pt, err := launch.CheckProjectTrust(dirs, proj, false, false, ask)
	if err != nil {
		t.Fatal(err)
	}
	noRawControls(t, "the trust question", question.String(), "bytes  sha256")
	if !strings.Contains(question.String(), "+ (define b 2)") || !strings.Contains(question.String(), "[y/N]") {
		t.Errorf("the question does not show what the file holds:\n%s", question.String())
	}
	noRawControls(t, "the declined run's note", pt.Note, "(new")

	_, err = launch.CheckProjectTrust(dirs, proj, false, true, nil)
	if err == nil {
		t.Fatal("an unattended run with untrusted files went on")
	}
	noRawControls(t, "the unattended run's error", err.Error(), "(new")
}
