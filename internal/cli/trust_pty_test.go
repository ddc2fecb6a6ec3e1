//go:build linux

package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// An attended nodwyn run asks about the project's untrusted files at the
// terminal: the question shows the hostile file's name escaped, so it
// cannot erase the lines the person reads before answering; declined, the
// run goes on without them and its note names the file escaped too.
func TestTheRunsTrustQuestionEscapesFileNames(t *testing.T) {
	screen, slave := newPTYScreen(t)
	home := t.TempDir()
	proj := hostileProject(t, home)
	script := filepath.Join(home, "m.script")
	writeFile(t, script, "> reply\nDone.\n> reply\nChecked: done.\n")
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"run", "--script", script, "-C", proj, "look"}, slave, &bytes.Buffer{}, stderr, homeEnv(home))
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "[y/N]: ") })
	question := stderr.String()
	noRawControls(t, "the run's trust question", question, "bytes  sha256")
	if !strings.Contains(question, filepath.Join(proj, ".nodwyn", "init.scm")+"  13 bytes") {
		t.Errorf("the question does not show the ordinary file as it is:\n%s", question)
	}
	screen.send("n\r")
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	noRawControls(t, "the declined run's stderr", stderr.String(), "(new")
	if !strings.Contains(stderr.String(), "not loaded: not trusted") {
		t.Errorf("the run does not say the project's files were not loaded:\n%s", stderr.String())
	}
}
