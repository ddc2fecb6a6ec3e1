package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/store"
)

// A piped console: a line that is not y or n while a confirm waits (here
// /usage) declines it as not answered and runs after the turn; a confirm
// at the end of the input is declined as "no answer (end of input)", never
// "by a person"; each answer is printed once (issue 29, item 6 and 10).
func TestAPipedConsolesConfirms(t *testing.T) {
	dir := t.TempDir()
	proj, home := filepath.Join(dir, "proj"), filepath.Join(dir, "home")
	os.MkdirAll(proj, 0o755)
	script := filepath.Join(dir, "m.script")
	os.WriteFile(script, []byte(`> reply
call shell-exec {"command": "rm -rf build"}
> reply
The first answer.
> reply
call shell-exec {"command": "rm -rf build2"}
> reply
The second answer.
`), 0o644)
	var out, errOut bytes.Buffer
	in := strings.NewReader("clean up\n/usage\nagain\n")
	Main([]string{"chat", "--script", script, "-C", proj}, in, &out, &errOut, homeEnv(home))
	if n := strings.Count(out.String()+errOut.String(), "The first answer."); n != 1 {
		t.Errorf("the first answer is shown %d times:\n%s\n%s", n, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "tokens:") {
		t.Errorf("/usage did not run after the turn:\n%s", out.String())
	}
	st, _ := store.Open(filepath.Join(home, ".local", "share", "nodwyn"))
	list, _ := st.ListSessions()
	if len(list) != 1 {
		t.Fatalf("sessions: %+v", list)
	}
	evs, _ := store.ReadLog(st.LogPath(list[0].ID))
	var answers []string
	for _, ev := range evs {
		if ev.Type == "tool.decision" {
			answers = append(answers, ev.Data["answer"].(string))
		}
	}
	want := []string{"declined: no answer given (the input is not a terminal, and its next line was not y or n)", "declined: no answer (end of input)"}
	if strings.Join(answers, "|") != strings.Join(want, "|") {
		t.Errorf("the confirms' answers: %q, want %q", answers, want)
	}
}
