//go:build linux

package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/session"
)

// egressProject is a project whose model runs net.sh twice, a script that
// asks the session's proxy for a server on the person's 127.0.0.1 (a host
// no rule allows), and ends on "Reached twice." when both calls got the
// server's answer.
func egressProject(t *testing.T) (home, proj, script, addr string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello-from-the-host")
	}))
	t.Cleanup(srv.Close)
	addr = strings.TrimPrefix(srv.URL, "http://")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatal(err)
	}
	home, proj, script = daemonProject(t, `> reply
call shell-exec {"command": "bash net.sh"}
> reply if result contains hello-from-the-host
call shell-exec {"command": "bash net.sh"}
> else
The first call did not reach the host.
> reply if result contains hello-from-the-host
Reached twice.
> else
The second call did not reach the host.
`)
	os.WriteFile(filepath.Join(proj, "net.sh"), []byte(viaProxy(srv.URL+"/x")+"\n"), 0o644)
	return home, proj, script, addr
}

// The question a person at a terminal sees about the proxy's connection.
func netPrompt() string {
	return confirmPrompt(guard.Request{Tool: session.NetTool}, guard.Decision{Verdict: guard.SecurityConfirm, Checker: session.NetChecker})
}

// At a terminal the proxy's question about a host no rule allows is a
// SECURITY confirm that offers "always" (the host, for the rest of the
// session): in nodwyn run, in process and through the daemon. Answered
// "a", the first connection goes through and the second is not asked
// about.
func TestEgressConfirmAtARunsTerminal(t *testing.T) {
	needSessionNS(t)
	home, proj, script, addr := egressProject(t)
	d := startDaemon(t, home)
	if p := netPrompt(); !strings.Contains(p, "[a]lways (this host, for the rest of the session)") || !strings.Contains(p, "[y]es (this connection)") {
		t.Errorf("the prompt %q", p)
	}
	if p := confirmPrompt(guard.Request{Tool: "shell-exec"}, guard.Decision{Verdict: guard.SecurityConfirm, Checker: "secrets"}); strings.Contains(p, "[a]lways") {
		t.Errorf("another security confirm offers always: %q", p)
	}
	for _, how := range [][]string{
		{"run", "--script", script, "-C", proj, "go"},
		{"run", "--daemon", d.sock, "--script", script, "-C", proj, "go"},
	} {
		screen, slave := newPTYScreen(t)
		stderr, stdout := &syncBuffer{}, &syncBuffer{}
		done := make(chan int, 1)
		go func() { done <- Main(how, slave, stdout, stderr, homeEnv(home)) }()
		waitFor(t, func() bool { return strings.Contains(stderr.String(), "allow it?") })
		for _, want := range []string{"SECURITY confirm (egress proxy): a command asks to connect to " + addr, "network " + addr, netPrompt()} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("%v: the question does not show %q:\n%s", how, want, stderr.String())
			}
		}
		screen.send("a\r")
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("%v: exit %d\n%s", how, code, stderr.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%v: the run did not end after the answer:\n%s", how, stderr.String())
		}
		all := stdout.String() + stderr.String()
		if !strings.Contains(all, "Reached twice.") {
			t.Errorf("%v: both connections did not go through:\n%s", how, all)
		}
		if n := strings.Count(stderr.String(), "allow it?"); n != 1 {
			t.Errorf("%v: asked %d times, want once (always covers the host):\n%s", how, n, stderr.String())
		}
	}
}

// The console asks the same question at its prompt, and takes "always".
func TestEgressConfirmInTheConsole(t *testing.T) {
	needSessionNS(t)
	home, proj, script, addr := egressProject(t)
	p, slave := newPTYScreen(t)
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"chat", "--script", script, "-C", proj}, slave, slave, slave, homeEnv(home))
	}()
	p.waitFor("> ", 1)
	p.send("go\r")
	p.waitFor("allow it?", 1)
	for _, want := range []string{"SECURITY confirm (egress proxy): a command asks to connect to " + addr, netPrompt()} {
		p.waitFor(want, 1)
	}
	p.send("a\r")
	p.waitFor("Reached twice.", 1)
	p.waitFor("> ", 1)
	if n := screenCount(p.String(), "allow it?"); n != 1 {
		t.Errorf("asked %d times, want once:\n%q", n, p.String())
	}
	p.send("/exit\r")
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("/exit did not leave the console:\n%q", p.String())
	}
}
