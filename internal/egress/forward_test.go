package egress

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
)

// Forward relays each connection on its listener to the target, both
// ways, and reports it with its rule and bytes; a target that does not
// answer ends the connection with a record that says why; Close ends the
// listener.
func TestForward(t *testing.T) {
	e := newEcho(t)
	l := newLab(t, nil, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const rule = `"127.0.0.1:5432" from config.toml ([sandbox] allow_hosts, forwarded from the session's loopback)`
	if err := l.p.Forward(ln, "127.0.0.1:"+e.port(), rule); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "hello\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "HELLO\n" {
		t.Fatalf("through the forward: %q %v", line, err)
	}
	c.Close()
	rec := l.next(t)
	if rec.Method != "TCP" || !rec.Allowed || rec.Rule != rule || rec.Host != "127.0.0.1" || rec.Addr != "127.0.0.1:"+e.port() ||
		rec.Sent != 6 || rec.Received != 6 || rec.Err != "" {
		t.Errorf("record %+v", rec)
	}

	// Nothing listens at the target: the connection ends, the record says why.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	if err := l.p.Forward(ln2, deadAddr, rule); err != nil {
		t.Fatal(err)
	}
	c, err = net.Dial("tcp", ln2.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if n, _ := c.Read(buf); n != 0 {
		t.Errorf("read %q from a dead target", buf[:n])
	}
	c.Close()
	if rec := l.next(t); !strings.Contains(rec.Err, "refused") {
		t.Errorf("record %+v", rec)
	}

	l.p.Close()
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the forward's listener outlives the proxy")
	}
	ln3, _ := net.Listen("tcp", "127.0.0.1:0")
	if err := l.p.Forward(ln3, "127.0.0.1:1", rule); err == nil {
		t.Error("Forward on a closed proxy")
	}
}
