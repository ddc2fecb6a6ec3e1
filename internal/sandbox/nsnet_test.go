package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
)

// hostListener is a service on the person's loopback that answers word.
func hostListener(t *testing.T, network, addr, word string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s listener here: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	go serveWord(ln, word)
	return ln.Addr().String()
}

func serveWord(ln net.Listener, word string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte(word + "\n"))
		c.Close()
	}
}

func pyConnect(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`python3 -c "
import socket
s = socket.create_connection(('%s', %s), timeout=10)
print(s.recv(100).decode().strip())"`, host, port)
}

// The init listens inside the namespace on the local services' addresses
// it is given, on their own ports; what nodwyn serves on those listeners a
// command reaches at the same address. A port not given stays the
// session's own: the person's service there is not reached, and a
// command's own server on it is.
func TestSessionNSLocalListeners(t *testing.T) {
	t.Parallel() // slow and independent: it runs beside the serial tests
	needFloor(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	named := hostListener(t, "tcp", "127.0.0.1:0", "host-named")
	other := hostListener(t, "tcp", "127.0.0.1:0", "host-other")
	_, port, _ := net.SplitHostPort(named)
	if ns, err := NewSessionNS(true); err != nil {
		t.Skipf("no session namespaces here: %v", err)
	} else {
		ns.Close()
	}
	ns, err := NewSessionNS(true, named, "[::1]:"+port)
	if err != nil {
		t.Fatalf("the session's namespaces with local services' listeners: %v", err)
	}
	t.Cleanup(ns.Close)
	f, err := NewFloor(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.SetNamespaces(ns)

	local := ns.LocalListeners()
	if len(local) != 2 || local[0].Addr != named || local[0].Listener == nil {
		t.Fatalf("local listeners %+v", local)
	}
	go serveWord(local[0].Listener, "forwarded")
	if local[1].Listener != nil {
		go serveWord(local[1].Listener, "forwarded6")
	} else {
		t.Logf("no [::1] in the namespace here: %v", local[1].Err)
	}
	if out, ok := runUnder(t, f, "/", pyConnect(named)); !ok || !strings.Contains(out, "forwarded") {
		t.Errorf("a command did not reach the listener on %s:\n%s", named, out)
	}
	if local[1].Listener != nil {
		if out, ok := runUnder(t, f, "/", pyConnect("[::1]:"+port)); !ok || !strings.Contains(out, "forwarded6") {
			t.Errorf("a command did not reach the listener on [::1]:%s:\n%s", port, out)
		}
	}
	if out, ok := runUnder(t, f, "/", pyConnect(other)); ok || strings.Contains(out, "host-other") {
		t.Errorf("a command reached the person's %s, which was not named:\n%s", other, out)
	}
	// A command's own server on the other port, reached by the next.
	_, otherPort, _ := net.SplitHostPort(other)
	cmd := exec.Command("python3", "-c", `
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen()
print('up', flush=True)
while True:
    c, _ = s.accept(); c.send(b'own-server\n'); c.close()`, otherPort)
	stdout, _ := cmd.StdoutPipe()
	if err := StartFloored(f, cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(line) != "up" {
		t.Fatalf("the command's server did not start: %q", line)
	}
	if out, ok := runUnder(t, f, "/", pyConnect(other)); !ok || !strings.Contains(out, "own-server") {
		t.Errorf("a command did not reach its own server on %s:\n%s", other, out)
	}
}

// What is not a loopback address and port is refused before any
// namespace is made.
func TestSessionNSLocalChecked(t *testing.T) {
	for _, a := range []string{"10.0.0.1:80", "127.0.0.1", "localhost:80", "127.0.0.1:0", "[fe80::1%lo]:80"} {
		if ns, err := NewSessionNS(true, a); err == nil {
			ns.Close()
			t.Errorf("%q was taken", a)
		} else if !strings.Contains(err.Error(), "not a loopback address and port") {
			t.Errorf("%q: %v", a, err)
		}
	}
}

// The namespace's counters grow for a connection that goes neither to a
// listener inside nor anywhere it could: another host (no route), a
// loopback port nothing listens on (TCP refused), UDP to one; they do not
// for a command that talks only to its own server, or uses no network.
func TestSessionNSNetCounts(t *testing.T) {
	t.Parallel() // slow and independent: it runs beside the serial tests
	f, ns := nsFloor(t, true)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	const ownServer = `python3 -c "
import socket, threading
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
def serve():
    c, _ = s.accept(); c.sendall(c.recv(10)); c.close()
threading.Thread(target=serve).start()
c = socket.create_connection(s.getsockname()); c.sendall(b'ping'); print(c.recv(10).decode()); c.close()"`
	for _, c := range []struct {
		name, line string
		want       func(NetCounts) bool
	}{
		{"another host", pyConnect("10.1.2.3:80"), func(d NetCounts) bool { return d.NoRoutes > 0 }},
		{"another host, IPv6", pyConnect("[2001:db8::1]:80"), func(d NetCounts) bool { return d.NoRoutes > 0 }},
		{"bash /dev/tcp", `exec 3<>/dev/tcp/192.0.2.1/443`, func(d NetCounts) bool { return d.NoRoutes > 0 }},
		{"an unlisted loopback port", pyConnect("127.0.0.1:9"), func(d NetCounts) bool { return d.ConnectFails > 0 }},
		{"UDP to loopback", `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 9))"`,
			func(d NetCounts) bool { return d.UDPNoPorts > 0 }},
		{"UDP to another host", `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('10.1.2.3', 53))"`,
			func(d NetCounts) bool { return d.NoRoutes > 0 }},
		{"its own server", ownServer, NetCounts.Zero},
		{"no network", `echo hello > /dev/null; ls / > /dev/null`, NetCounts.Zero},
	} {
		before, err := ns.NetCounts()
		if err != nil {
			t.Fatal(err)
		}
		out, _ := runUnder(t, f, "/", c.line)
		after, err := ns.NetCounts()
		if err != nil {
			t.Fatal(err)
		}
		if d := after.Sub(before); !c.want(d) {
			t.Errorf("%s: the counters grew by %+v:\n%s", c.name, d, out)
		}
	}
}

func TestSNMPFields(t *testing.T) {
	snmp := []byte("Ip: Forwarding DefaultTTL OutNoRoutes\nIp: 2 64 7\nIcmp: InMsgs\nIcmp: 3\nTcp: ActiveOpens AttemptFails\nTcp: 5 11\nUdp: InDatagrams NoPorts\nUdp: 1 13\nUdpLite: InDatagrams NoPorts\nUdpLite: 0 99\n")
	if got := snmpField(snmp, "Ip:", "OutNoRoutes"); got != 7 {
		t.Errorf("OutNoRoutes %d", got)
	}
	if got := snmpField(snmp, "Tcp:", "AttemptFails"); got != 11 {
		t.Errorf("AttemptFails %d", got)
	}
	if got := snmpField(snmp, "Udp:", "NoPorts"); got != 13 {
		t.Errorf("NoPorts %d", got)
	}
	six := []byte("Ip6InReceives                   \t4\nIp6OutNoRoutes                  \t17\nUdp6NoPorts                     \t19\nUdpLite6NoPorts                 \t99\n")
	if got := snmp6Field(six, "Ip6OutNoRoutes"); got != 17 {
		t.Errorf("Ip6OutNoRoutes %d", got)
	}
	if got := snmp6Field(six, "Udp6NoPorts"); got != 19 {
		t.Errorf("Udp6NoPorts %d", got)
	}
}

// The cost of reading the counters after a command (the note for a direct
// connection): go test -run '^$' -bench NetCounts ./internal/sandbox/
func BenchmarkNetCounts(b *testing.B) {
	if _, err := LandlockABI(); err != nil {
		b.Skip("no kernel floor here")
	}
	ns, err := NewSessionNS(true)
	if err != nil {
		b.Skipf("no session namespaces here: %v", err)
	}
	defer ns.Close()
	for b.Loop() {
		if _, err := ns.NetCounts(); err != nil {
			b.Fatal(err)
		}
	}
}
