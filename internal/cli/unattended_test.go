package cli

import (
	"bytes"
	"strings"
	"testing"
)

// A run with no terminal on standard input has nobody to ask: it is
// unattended, as the README says, so its profile is lean unless one is
// named, and --yolo answers its ordinary confirms; in process and through
// the daemon alike (issue 29 item 15). At a terminal it stays attended
// and full (TestARunAtATerminalTakesANoteWithADecline).
func TestARunWithNoTerminalIsUnattended(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"rm -rf build\"}\n> reply\nDone.\n> reply\nChecked: done.\n")
	d := startDaemon(t, home)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--script", script, "-C", proj, "clean"},
			[]string{"(profile lean, unattended)", "rm -rf build not run: confirm", "declined (nobody can approve it)"}},
		{[]string{"run", "--daemon", d.sock, "--script", script, "-C", proj, "clean"},
			[]string{"(profile lean, unattended)", "rm -rf build not run: confirm", "declined (nobody can approve it)"}},
		{[]string{"run", "--profile", "full", "--script", script, "-C", proj, "clean"},
			[]string{"(profile full, unattended)"}},
		{[]string{"run", "--yolo", "--script", script, "-C", proj, "clean"},
			[]string{"(profile lean, unattended, yolo)", "shell-exec: rm -rf build → ok"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(c.args, strings.NewReader(""), &stdout, &stderr, homeEnv(home)); code != 0 {
			t.Fatalf("%v: exit %d\n%s", c.args, code, stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("%v does not show %q:\n%s", c.args, w, stderr.String())
			}
		}
	}
}
