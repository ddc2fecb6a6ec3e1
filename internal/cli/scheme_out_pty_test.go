//go:build linux

package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// What Scheme displays reaches a terminal escaped (nodwyn scheme's stdout
// at a pty); to a pipe or a file it is the program's output, byte for
// byte.
func TestSchemeDisplayAtATerminalIsEscaped(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "show.scm")
	writeFile(t, file, hostileDisplay)

	screen, slave := newPTYScreen(t)
	var stderr bytes.Buffer
	if code := Main([]string{"scheme", "-C", home, file}, strings.NewReader(""), slave, &stderr, homeEnv(home)); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	screen.waitFor("after", 1)
	if out := screen.String(); strings.ContainsAny(out, "\x1b\x07\u009b\u202e") || !strings.Contains(out, hostileDisplayShown) {
		t.Errorf("at a terminal: %q, want %q and no raw control character", out, hostileDisplayShown)
	}

	var stdout bytes.Buffer
	if code := Main([]string{"scheme", "-C", home, file}, strings.NewReader(""), &stdout, &stderr, homeEnv(home)); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := "before\x1b[2J\x1b]0;title\x07\u009b2J\u202eafter\n"; stdout.String() != want {
		t.Errorf("to a pipe: %q, want it as displayed: %q", stdout.String(), want)
	}
}
