package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nsFloor is a floor with the session's namespaces (withNet: a network
// namespace too), or skips where they cannot be had.
func nsFloor(t *testing.T, withNet bool) (*Floor, *SessionNS) {
	t.Helper()
	needFloor(t)
	ns, err := NewSessionNS(withNet)
	if err != nil {
		t.Skipf("no session namespaces here: %v", err)
	}
	t.Cleanup(ns.Close)
	f, err := NewFloor(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.SetNamespaces(ns)
	return f, ns
}

// A stand-in for the person's shell that started nodwyn with a key in its
// environment: a process outside the session holding a canary there.
func environHolder(t *testing.T, canary string) {
	t.Helper()
	cmd := exec.Command("sleep", "3600")
	cmd.Env = []string{"OPENAI_API_KEY=" + canary}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}

const environScan = `for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' 2>/dev/null < $f; done 2>/dev/null | grep -c CANARY-ns-EN[V]; ls -d /proc/[0-9]* | wc -l`

// In the session's namespaces a command sees no process but the session's:
// another process's environment (where a key given to the shell that
// started nodwyn stays) is not there to read. Without them it is (the
// test can fail).
func TestSessionNSHidesOtherProcesses(t *testing.T) {
	t.Parallel() // slow and independent: it runs beside the serial tests
	f, ns := nsFloor(t, false)
	environHolder(t, "CANARY-ns-ENV")
	out, _ := runUnder(t, f, "/", environScan)
	lines := strings.Fields(out)
	if len(lines) != 2 || lines[0] != "0" {
		t.Errorf("in the session's namespaces the scan found the canary:\n%s", out)
	}
	if n := lines[len(lines)-1]; n == "" || len(n) > 2 {
		t.Errorf("a command in the namespace sees %s processes", n)
	}
	plain, err := NewFloor(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	out, _ = runUnder(t, plain, "/", environScan)
	switch {
	case !plain.OthersEnvironReadable():
		// Landlock's ptrace scoping refuses it here (an unprivileged
		// process: only root's reads went through on Linux 6.18).
		t.Logf("without the namespaces the floor alone hides other processes' environ here")
	case strings.Fields(out)[0] == "0":
		t.Errorf("without the namespaces the canary was not found either (the test cannot fail):\n%s", out)
	}
	if ns.Holder() == 0 {
		t.Error("no holder")
	}
}

// pidsWith are the pids (in this process's /proc) whose command line holds
// word.
func pidsWith(word string) []string {
	var pids []string
	ents, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, e := range ents {
		b, _ := os.ReadFile(e)
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), word) {
			pids = append(pids, filepath.Base(filepath.Dir(e)))
		}
	}
	return pids
}

// What a command left running, however it hid (env -i setsid nohup, a
// double fork with every descriptor closed), ends when the session's
// namespaces are closed; ordinary background work lasts until then.
func TestSessionNSEndsWhatTheSessionStarted(t *testing.T) {
	f, ns := nsFloor(t, false)
	word := fmt.Sprintf("%d.%d", os.Getpid(), time.Now().UnixNano()%100000)
	runUnder(t, f, "/", "env -i setsid nohup sh -c 'while :; do sleep 1; done # "+word+"' >/dev/null 2>&1 < /dev/null &")
	runUnder(t, f, "/", "(setsid sh -c 'exec 0<&- 1>&- 2>&-; while :; do sleep 1; done # "+word+"' &); exit 0")
	deadline := time.Now().Add(time.Minute)
	for len(pidsWith("# "+word)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the background loop never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ns.Close()
	for len(pidsWith("# "+word)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still running after the session's namespaces closed: %v", pidsWith("# "+word))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The network namespace holds only loopback: a server on the person's
// 127.0.0.1 and any other host are out of reach, a server a command starts
// on 127.0.0.1 is reached by the next command, and a listener nodwyn makes
// in the namespace (the proxy's) is reached from it.
func TestSessionNSNetwork(t *testing.T) {
	t.Parallel() // slow and independent: it runs beside the serial tests
	f, ns := nsFloor(t, true)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	outside, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	go func() {
		for {
			c, err := outside.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("outside\n"))
			c.Close()
		}
	}()
	connect := func(addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		return fmt.Sprintf(`python3 -c "
import socket
s = socket.create_connection(('%s', %s), timeout=10)
print(s.recv(100).decode().strip())"`, host, port)
	}
	if out, ok := runUnder(t, f, "/", connect(outside.Addr().String())); ok || strings.Contains(out, "outside") {
		t.Errorf("a command in the network namespace reached the person's 127.0.0.1:\n%s", out)
	}
	if out, ok := runUnder(t, f, "/", connect("192.0.2.1:80")); ok {
		t.Errorf("a command reached another host:\n%s", out)
	}
	// Without the namespace the same command reaches it (the test can fail).
	plain, _ := NewFloor(nil, nil)
	defer plain.Close()
	if out, ok := runUnder(t, plain, "/", connect(outside.Addr().String())); !ok || !strings.Contains(out, "outside") {
		t.Errorf("without the namespace the command did not reach it either:\n%s", out)
	}

	// The listener the namespace's init made there, served by nodwyn.
	inside := ns.Listener()
	if inside == nil {
		t.Fatal("no listener in the network namespace")
	}
	go func() {
		c, err := inside.Accept()
		if err == nil {
			c.Write([]byte("proxy\n"))
			c.Close()
		}
	}()
	if out, ok := runUnder(t, f, "/", connect(inside.Addr().String())); !ok || !strings.Contains(out, "proxy") {
		t.Errorf("a command did not reach nodwyn's listener in the namespace:\n%s", out)
	}

	// A server one command starts, the next reaches.
	dir := t.TempDir()
	cmd := exec.Command("python3", "-c", `
import socket
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.send(b'local\n'); c.close()`)
	cmd.Dir = dir
	stdout, _ := cmd.StdoutPipe()
	if err := StartFloored(f, cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	port, _ := bufio.NewReader(stdout).ReadString('\n')
	port = strings.TrimSpace(port)
	if out, ok := runUnder(t, f, "/", connect("127.0.0.1:"+port)); !ok || !strings.Contains(out, "local") {
		t.Errorf("the next command did not reach a server the session started:\n%s", out)
	}
	// From nodwyn's own namespace the session's server is not there: the
	// port is the namespace's loopback, not the host's (something else of
	// the host's may hold the same port; it would not answer "local").
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second); err == nil {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		if strings.Contains(string(b), "local") {
			t.Error("the host reached a server in the session's network namespace")
		}
	}
}

// The same tests as an unprivileged person runs them: the test binary again,
// as nobody, where each command joins the session's namespaces through
// nsenter. Root only (it must become another user); skipped where nsenter
// or unprivileged user namespaces are missing, saying so.
//
// It runs those tests a second time, as another user: make test-slow
// (NODWYN_SLOW_TESTS=1, in .ci/run) runs it. Not parallel: it writes the
// binary it runs, and a fork of a test beside it would hold the file open
// (exec: text file busy).
func TestSessionNSUnprivileged(t *testing.T) {
	slowTest(t)
	if os.Getenv("NODWYN_TEST_UNPRIVILEGED") == "1" || os.Geteuid() != 0 {
		t.Skip("runs the namespace tests as nobody; needs root to become nobody")
	}
	needFloor(t)
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("no nsenter (util-linux) here")
	}
	dir, err := os.MkdirTemp("", "nodwyn-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	exe, _ := os.Executable()
	bin := filepath.Join(dir, "sandbox.test")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(dst, src)
	src.Close()
	dst.Close()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	os.Chown(tmp, 65534, 65534)
	cmd := exec.Command(bin, "-test.run=^TestSessionNS(HidesOtherProcesses|EndsWhatTheSessionStarted|Network|LocalListeners|NetCounts)$", "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = []string{"NODWYN_TEST_UNPRIVILEGED=1", "TMPDIR=" + tmp, "HOME=" + tmp, "PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "no session namespaces here") {
		t.Skipf("no session namespaces for an unprivileged process here:\n%s", text)
	}
	if err != nil || strings.Count(text, "--- PASS") != 5 {
		t.Fatalf("as nobody (%v):\n%s", err, text)
	}
}
