//go:build linux

package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair (no cgo, no helper module).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the pty's slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// At a terminal the REPL edits lines and keeps a history (the up arrow
// brings the last line back), Ctrl-C drops the line being typed without
// ending it, a tool call asks before it runs, and Ctrl-D ends it.
func TestTheSchemeREPLAtATerminal(t *testing.T) {
	master, slave := openPTY(t)
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 120}); err != nil {
		t.Skipf("setting the pty's size: %v", err)
	}
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	home := filepath.Join(dir, "home")
	getenv := homeEnv(home)
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	mark := 0 // waitFor looks at what the terminal showed after the last key
	waitFor := func(s string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			ok := strings.Contains(screen.String()[mark:], s)
			mu.Unlock()
			if ok {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the terminal never showed %q:\n%q", s, screen.String())
	}
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"scheme", "-C", proj}, slave, slave, &stderr, getenv)
	}()
	// Each key goes once the prompt is up (the REPL reads in raw mode).
	prompts := 1
	waitPrompt := func() {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := strings.Count(screen.String(), "> ")
			mu.Unlock()
			if n >= prompts {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("prompt %d never came:\n%q", prompts, screen.String())
	}
	type key struct{ send, want string }
	waitPrompt()
	for _, k := range []key{
		{"(* 6 7)\r", "42"},
		{"(+ 1 2", "(+ 1 2"}, // typed (the editor has echoed it), then dropped with Ctrl-C
		{"\x03", "^C"},
		{"\x1b[A\r", "42\r\n"},                   // the up arrow: (* 6 7) again, not the dropped line
		{"(display \"ok-after\")\r", "ok-after"}, // the REPL goes on
		{"(call-tool \"shell-exec\" \"{\\\"command\\\": \\\"touch made\\\"}\")\r", "run it? [y/N]"},
		{"n\r", "declined by a person"},
		{"(call-tool \"shell-exec\" \"{\\\"command\\\": \\\"touch made\\\"}\")\r", "run it? [y/N]"},
		{"y\r", "exit . 0"},
	} {
		mu.Lock()
		mark = screen.Len()
		mu.Unlock()
		if _, err := master.WriteString(k.send); err != nil {
			t.Fatal(err)
		}
		waitFor(k.want)
		if (strings.HasSuffix(k.send, "\r") || k.send == "\x03") && !strings.Contains(k.want, "run it?") {
			prompts++
			waitPrompt()
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "made")); err != nil {
		t.Errorf("the confirmed call did not run: %v", err)
	}
	master.WriteString("\x04") // Ctrl-D on an empty line
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ctrl-D did not end the REPL")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(screen.String(), "(+ 1 2)") || strings.Contains(screen.String(), "incomplete") {
		t.Errorf("the dropped line was evaluated:\n%q", screen.String())
	}
}
