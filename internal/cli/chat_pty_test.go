//go:build linux

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ptyScreen is what a pseudo-terminal's master has shown, and the keys
// typed at it.
type ptyScreen struct {
	t      *testing.T
	master *os.File
	mu     sync.Mutex
	screen bytes.Buffer
	mark   int // waitFor looks at what came after the last key
}

func newPTYScreen(t *testing.T) (*ptyScreen, *os.File) {
	master, slave := openPTY(t)
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 200}); err != nil {
		t.Skipf("setting the pty's size: %v", err)
	}
	p := &ptyScreen{t: t, master: master}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			p.mu.Lock()
			p.screen.Write(b[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p, slave
}

func (p *ptyScreen) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.screen.String()
}

// send types keys; what waitFor looks for must come after them.
func (p *ptyScreen) send(keys string) {
	p.t.Helper()
	p.mu.Lock()
	p.mark = p.screen.Len()
	p.mu.Unlock()
	if _, err := p.master.WriteString(keys); err != nil {
		p.t.Fatal(err)
	}
}

// waitFor waits until the terminal has shown s since the last key; n
// counts occurrences (a prompt after the n-1 before it).
func (p *ptyScreen) waitFor(s string, n int) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		ok := strings.Count(p.screen.String()[p.mark:], s) >= n
		p.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("the terminal never showed %q:\n%q", s, p.String())
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

// The console at a terminal: the prompt edits lines (what is typed shows,
// backspace takes a key back, the up arrow brings the last line back), a
// line typed while the model works is queued and reaches it at its next
// step, a confirm answered "n" with a note gives the model the note, and
// Ctrl-C twice at the prompt leaves, the session saved.
func TestTheConsoleAtATerminal(t *testing.T) {
	p, slave := newPTYScreen(t)
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	home := filepath.Join(dir, "home")
	script := filepath.Join(dir, "m.script")
	os.WriteFile(script, []byte(`> reply
call shell-exec {"command": "touch started; sleep 2"}
> reply if message contains also mention tea
Noted the tea.
> else
the steering message was missed
> reply
call shell-exec {"command": "rm -rf build"}
> reply if result contains use git clean instead
Declined, and the note came through.
> else
no note
> reply if message contains hello again
Hello again to you.
> else
the edited line was not sent
`), 0o644)
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"chat", "--script", script, "-C", proj}, slave, slave, slave, homeEnv(home))
	}()
	p.waitFor("> ", 1)
	p.send("start the work")
	p.waitFor("start the work", 1) // the editor echoes it
	p.send("\r")
	waitForFile(t, filepath.Join(proj, "started"))
	p.send("also mention tea\r") // while the sleep runs
	p.waitFor("queued for the model's next step: also mention tea", 1)
	p.waitFor("Noted the tea.", 1) // the answer, printed once
	p.waitFor("> ", 1)

	p.send("clean up\r")
	p.waitFor("allow it?", 1)
	p.send("n use git clean instead\r")
	p.waitFor("Declined, and the note came through.", 1)
	p.waitFor("> ", 1)

	p.send("hello agaix\x7fn\r") // a typo taken back with backspace
	p.waitFor("Hello again to you.", 1)
	p.waitFor("> ", 1)

	p.send("\x1b[A") // the up arrow: the last line again
	p.waitFor("hello again", 1)
	p.send("\x03") // drops it; a first Ctrl-C does not leave
	p.waitFor("Ctrl-C again", 1)
	p.waitFor("> ", 1)
	select {
	case code := <-done:
		t.Fatalf("one Ctrl-C left the console (exit %d):\n%q", code, p.String())
	case <-time.After(200 * time.Millisecond):
	}
	p.send("\x03")
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d, want 0 (the last turn finished)\n%q", code, p.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Ctrl-C twice did not leave the console:\n%q", p.String())
	}
	// What the console wrote last may still be on its way through the
	// terminal when it returns: wait for it rather than look once.
	for _, want := range []string{"the session is saved; continue it with: nodwyn chat --resume", "nodwyn: finished after"} {
		p.waitFor(want, 1)
	}
	screen := p.String()
	for _, once := range []string{"Noted the tea.", "Declined, and the note came through.", "Hello again to you."} {
		if n := screenCount(screen, once); n != 1 {
			t.Errorf("%q is shown %d times", once, n)
		}
	}
	for _, bad := range []string{"was missed", "no note", "was not sent", "failed"} {
		if strings.Contains(screen, bad) {
			t.Errorf("the terminal showed %q:\n%q", bad, screen)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "build")); err == nil {
		t.Errorf("the declined call ran")
	}
}

// At a terminal, Ctrl-C (SIGINT) while the model works interrupts its
// turn and the console stays; a second Ctrl-C at the prompt leaves, with
// the interrupted turn's exit code.
func TestTheConsoleInterruptedAtATerminal(t *testing.T) {
	p, slave := newPTYScreen(t)
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	home := filepath.Join(dir, "home")
	script := filepath.Join(dir, "m.script")
	os.WriteFile(script, []byte("> reply\ncall shell-exec {\"command\": \"touch started; sleep 30\"}\n"), 0o644)
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"chat", "--script", script, "-C", proj}, slave, slave, slave, homeEnv(home))
	}()
	p.waitFor("> ", 1)
	p.send("wait a long time\r")
	waitForFile(t, filepath.Join(proj, "started"))
	// The terminal is not this process's controlling terminal, so the
	// kernel would not send it the SIGINT its Ctrl-C makes: sent here.
	start := time.Now()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	p.waitFor("interrupted; the model is told so", 1)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the interruption took %s", d)
	}
	p.waitFor("> ", 1)
	p.send("\x03")
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("exit %d, want %d (the last turn was interrupted)\n%q", code, ExitInterrupted, p.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Ctrl-C at the prompt after an interruption did not leave:\n%q", p.String())
	}
}

// nodwyn with no command at a terminal is the console; Ctrl-D on an empty
// line leaves it, and a console given no message saves no session.
func TestNodwynAloneAtATerminalIsTheConsole(t *testing.T) {
	p, slave := newPTYScreen(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	script := filepath.Join(dir, "m.script")
	os.WriteFile(script, []byte("> reply\nDone.\n"), 0o644)
	cfg := filepath.Join(home, ".config", "nodwyn")
	os.MkdirAll(cfg, 0o755)
	os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[provider]\nname = \"script\"\nscript = \""+script+"\"\n"), 0o644)
	t.Chdir(proj)
	done := make(chan int, 1)
	go func() { done <- Main(nil, slave, slave, slave, homeEnv(home)) }()
	p.waitFor("nodwyn chat: type a task", 1)
	p.waitFor("> ", 1)
	p.send("\x04")
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d\n%q", code, p.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Ctrl-D did not leave the console:\n%q", p.String())
	}
	if strings.Contains(p.String(), "finished after") {
		t.Errorf("a console with no message said how it finished:\n%q", p.String())
	}
	if ents, _ := filepath.Glob(filepath.Join(home, ".local", "share", "nodwyn", "sessions", "*", "state.json")); len(ents) > 0 {
		t.Errorf("a console with no message saved a session: %v", ents)
	}
}

// The answers are printed once each: the console's line, not also the
// display's (issue 29, item 10).
func screenCount(screen, s string) int { return strings.Count(screen, s) }
