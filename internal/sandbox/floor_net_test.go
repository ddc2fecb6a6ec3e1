package sandbox

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// listener accepts on 127.0.0.1 (or ::1) and counts what it accepted.
type countingListener struct {
	ln   net.Listener
	mu   sync.Mutex
	n    int
	port int
}

func listen(t *testing.T, addr string) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	l := &countingListener{ln: ln, port: ln.Addr().(*net.TCPAddr).Port}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.n++
			l.mu.Unlock()
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return l
}

func (l *countingListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func needNetFloor(t *testing.T) {
	t.Helper()
	needFloor(t)
	if abi, _ := LandlockABI(); abi < NetABI {
		t.Skipf("this kernel's Landlock ABI %d has no TCP rules", abi)
	}
}

// The ways a program reaches a TCP port without the proxy: bash's
// /dev/tcp, python's socket.connect, and a TCP Fast Open sendto (a
// connect that is not a connect(2) call); each prints CONNECTED only when
// it got through.
func reachLines(py, host string, port int) map[string]string {
	p := strconv.Itoa(port)
	return map[string]string{
		"bash /dev/tcp": fmt.Sprintf(`exec 3<>/dev/tcp/%s/%s && read -r l <&3 && echo CONNECTED $l`, host, p),
		"python connect": fmt.Sprintf(`%s -c 'import socket,sys
s=socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.connect((sys.argv[1], int(sys.argv[2]))); print("CONNECTED", s.recv(9))' %s %s`, py, host, p),
		"python fast open": fmt.Sprintf(`%s -c 'import socket,sys
s=socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.sendto(b"x", socket.MSG_FASTOPEN, (sys.argv[1], int(sys.argv[2]))); print("CONNECTED", s.recv(9))' %s %s`, py, host, p),
	}
}

// With the floor's TCP rules a command connects only to the ports given
// (the proxy's, the person's allow_ports): to any other port on loopback
// the kernel refuses it, however the program connects, over IPv4 and IPv6;
// a server the command starts on an allowed port is reachable, and binding
// any port still works. Without the rules everything goes through.
func TestConfineConnect(t *testing.T) {
	t.Parallel() // slow and independent: it runs beside the serial tests
	needNetFloor(t)
	py := python(t)
	h, f, _, _ := confinedHome(t, true)
	proxy, allowed, other := listen(t, "127.0.0.1:0"), listen(t, "127.0.0.1:0"), listen(t, "127.0.0.1:0")
	other6 := listen(t, "[::1]:0")

	// Without the rules: every port is reached.
	for name, line := range reachLines(py, "127.0.0.1", other.port) {
		if out, ok := runUnder(t, f, h.folder, line); !ok || !strings.Contains(out, "CONNECTED") {
			t.Errorf("without TCP rules, %s did not reach the port: %s", name, out)
		}
	}
	reached := other.count()

	if err := f.ConfineConnect([]int{proxy.port, allowed.port, allowed.port}); err != nil {
		t.Fatal(err)
	}
	if ps, on := f.ConnectPorts(); !on || len(ps) != 2 {
		t.Fatalf("ConnectPorts %v %v", ps, on)
	}
	for _, l := range []*countingListener{proxy, allowed} {
		for name, line := range reachLines(py, "127.0.0.1", l.port) {
			if out, ok := runUnder(t, f, h.folder, line); !ok || !strings.Contains(out, "CONNECTED") {
				t.Errorf("%s to the allowed port %d was refused: %s", name, l.port, out)
			}
		}
	}
	for _, target := range []struct {
		host string
		l    *countingListener
	}{{"127.0.0.1", other}, {"::1", other6}} {
		for name, line := range reachLines(py, target.host, target.l.port) {
			out, ok := runUnder(t, f, h.folder, line)
			if ok || strings.Contains(out, "CONNECTED") || !strings.Contains(out, "ermission denied") {
				t.Errorf("%s reached %s:%d under the TCP rules (ok=%v): %s", name, target.host, target.l.port, ok, out)
			}
		}
	}
	if other.count() != reached || other6.count() != 0 {
		t.Errorf("the refused ports accepted %d and %d connections", other.count()-reached, other6.count())
	}

	// A server the command starts itself: on an allowed port it is
	// reachable; on another it listens, and cannot be reached.
	allowed.ln.Close()
	serve := func(port int) string {
		return fmt.Sprintf(`%s -c 'import socket,threading
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", %d)); s.listen(1)
threading.Thread(target=lambda: s.accept()[0].sendall(b"served"), daemon=True).start()
c=socket.create_connection(("127.0.0.1", %d)); print("CONNECTED", c.recv(9))'`, py, port, port)
	}
	if out, ok := runUnder(t, f, h.folder, serve(allowed.port)); !ok || !strings.Contains(out, "CONNECTED b'served'") {
		t.Errorf("a server on an allowed port was not reachable: %s", out)
	}
	free := listen(t, "127.0.0.1:0")
	free.ln.Close()
	if out, ok := runUnder(t, f, h.folder, serve(free.port)); ok || !strings.Contains(out, "PermissionError") {
		t.Errorf("a server on another port was reachable (ok=%v): %s", ok, out)
	}

	// A refused command's note says where it may connect.
	fs := f.startInfo(nil)
	note := floorNote(fs, nil, "bash: connect: Permission denied")
	if !strings.Contains(note, "a TCP connection may go only to ports ") || !strings.Contains(note, strconv.Itoa(proxy.port)) ||
		!strings.Contains(note, strconv.Itoa(allowed.port)) || !strings.Contains(note, "allow_ports") {
		t.Errorf("note %q", note)
	}
}

// Where Landlock has no TCP rules, ConfineConnect says so and changes
// nothing; a port out of range is refused.
func TestConfineConnectNeedsABI4(t *testing.T) {
	needFloor(t)
	f, err := NewFloor(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.ConfineConnect([]int{0}); err == nil && f.abi >= NetABI {
		t.Error("port 0 was taken")
	}
	f.abi = 3
	err = f.ConfineConnect([]int{8080})
	if err == nil || !strings.Contains(err.Error(), "no TCP rules") {
		t.Errorf("ABI 3: %v", err)
	}
	if _, on := f.ConnectPorts(); on {
		t.Error("confined on ABI 3")
	}
}

// python is python3's own program (not a version manager's shim, which
// takes a second to start), or skips.
func python(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	return strings.TrimSpace(string(out))
}
