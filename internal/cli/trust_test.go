package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/config"
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
	pt, err := checkProjectTrust(dirs, proj, false, false, no)
	if err != nil || asked != 1 {
		t.Fatalf("err %v, asked %d times", err, asked)
	}
	if pt.config != nil || len(pt.scheme) != 0 || !strings.Contains(pt.note, "not loaded") {
		t.Fatalf("declined, yet loaded: %+v", pt)
	}

	yes := func(*trust.Store, *trust.Project) bool { asked++; return true }
	pt, err = checkProjectTrust(dirs, proj, false, false, yes)
	if err != nil || asked != 2 {
		t.Fatalf("err %v, asked %d times", err, asked)
	}
	if string(pt.scheme["init.scm"]) != "(display \"hi\")\n" || !strings.Contains(string(pt.config), "max_tool_calls") {
		t.Fatalf("accepted, yet not loaded: %+v", pt)
	}
	// Now trusted: no question.
	pt, err = checkProjectTrust(dirs, proj, false, true, yes)
	if err != nil || asked != 2 || pt.scheme["init.scm"] == nil {
		t.Fatalf("trusted project: err %v, asked %d, %+v", err, asked, pt)
	}
	// Unattended and changed: an error, no question.
	writeFile(t, filepath.Join(proj, ".nodwyn", "init.scm"), "(display \"changed\")\n")
	_, err = checkProjectTrust(dirs, proj, false, true, yes)
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
	st, err := trust.Open(trustRecord(dirs))
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
