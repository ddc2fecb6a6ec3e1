//go:build linux

package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
)

// A confirm asked at a terminal offers a decline with a note for the model,
// in the same words in process and through the daemon (as the console's),
// and the note reaches the model; a run at a terminal is attended and full
// (issue 29 items 14 and 15).
func TestARunAtATerminalTakesANoteWithADecline(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"rm -rf build\"}\n> reply\nDone.\n> reply\nChecked: done.\n")
	d := startDaemon(t, home)
	for _, how := range [][]string{
		{"run", "--script", script, "-C", proj, "clean"},
		{"run", "--daemon", d.sock, "--script", script, "-C", proj, "clean"},
	} {
		screen, slave := newPTYScreen(t)
		stderr := &syncBuffer{}
		done := make(chan int, 1)
		go func() { done <- Main(how, slave, &bytes.Buffer{}, stderr, homeEnv(home)) }()
		waitFor(t, func() bool { return strings.Contains(stderr.String(), "allow it?") })
		if want := confirmPrompt(guard.Request{}, guard.Decision{Verdict: guard.Confirm}); !strings.Contains(stderr.String(), want) {
			t.Errorf("%v: the question is not %q:\n%s", how, want, stderr.String())
		}
		if !strings.Contains(stderr.String(), "n and a note for the model") {
			t.Errorf("%v: the question offers no note:\n%s", how, stderr.String())
		}
		screen.send("n Use make clean instead\r")
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("%v: exit %d\n%s", how, code, stderr.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%v: the run did not end after the answer (asked again?):\n%s", how, stderr.String())
		}
		for _, want := range []string{"(profile full)", `declined by a person, who said: "Use make clean instead"`} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("%v does not show %q:\n%s", how, want, stderr.String())
			}
		}
	}
}
