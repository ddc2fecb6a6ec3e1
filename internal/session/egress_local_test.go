package session

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// needNetNS skips a run whose commands have no network namespace here,
// saying why (its run.start's network line).
func needNetNS(t *testing.T, r *run) {
	t.Helper()
	needProxy(t, r)
	for _, ev := range r.events {
		if ev.Type == "run.start" {
			c, _ := ev.Data["confinement"].(map[string]any)
			if n, _ := c["network"].(string); !strings.Contains(n, "a network namespace holds only loopback") {
				t.Skipf("no network namespace here: %s", n)
			}
		}
	}
}

const pyGet = `python3 -c "import urllib.request, sys; print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())" `

// ownServer is a command that starts a server on the session's loopback
// and talks to it, in one command.
const ownServer = `python3 -c "
import socket, threading
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
def serve():
    c, _ = s.accept(); c.sendall(c.recv(10).upper()); c.close()
threading.Thread(target=serve).start()
c = socket.create_connection(s.getsockname()); c.sendall(b'own-'); print(c.recv(10).decode() + 'SERVER'); c.close()"`

// The person's local service named with its port in allow_hosts is reached
// from the session's network namespace at the same address (curl and
// python, which NO_PROXY sends there directly), each connection a net.conn
// event by the allow_hosts rule; another port of the person's loopback is
// not, and the command's result says why in nodwyn's note; a command's
// own server on the session's loopback works, without a note; a direct
// connection to another host gets the note; a command without network
// gets none, nor does one the proxy refused (its 403 says so).
func TestEgressLocalService(t *testing.T) {
	for _, p := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s", p)
		}
	}
	url, port := hostServer(t)
	other, _ := hostServer(t)
	_, lhPort := hostServer(t) // named as localhost: both of its addresses inside
	opts := baseOpts(t)
	opts.ConfigSeam.AllowHosts = []string{"127.0.0.1:" + port, "localhost:" + lhPort, "example.com"}
	opts.ConfigSeamAllowFrom = "the test's config.toml"
	cmds := scripts(t, opts.Folder,
		"curl -sS "+url+"/x",
		pyGet+url+"/y",
		"curl -sS http://localhost:"+lhPort+"/z",
		pyGet+"http://localhost:"+lhPort+"/z",
		"curl -sS "+other+"/x || echo other-refused",
		ownServer,
		pyConnectLine("10.1.2.3", "80")+" || echo direct-refused",
		"echo no-network-here",
		"curl -sS http://refused.test/x",
	)
	r := runSession(t, opts, modelCalls(cmds...))
	needNetNS(t, r)
	if r.out.Status != "finished" {
		t.Fatalf("status %s: %s", r.out.Status, r.out.Text)
	}
	reqs := r.model.Requests()
	out := func(i int) string { return lastMessage(reqs[i+1]).Content }
	const note = "[nodwyn: this command tried to connect directly"
	for i, c := range []struct {
		want   string
		noted  bool
		unwant string
	}{
		{want: "hello-from-the-host"},
		{want: "hello-from-the-host"},
		{want: "hello-from-the-host"},
		{want: "hello-from-the-host"},
		{want: "other-refused", noted: true, unwant: "hello-from-the-host"},
		{want: "OWN-SERVER"},
		{want: "direct-refused", noted: true},
		{want: "no-network-here"},
		{want: "nodwyn refused the connection to refused.test:80"}, // the proxy's 403 says it already
	} {
		o := out(i)
		if !strings.Contains(o, c.want) || c.unwant != "" && strings.Contains(o, c.unwant) {
			t.Errorf("call %d (%s): %q", i, cmds[i], o)
		}
		if got := strings.Contains(o, note); got != c.noted {
			t.Errorf("call %d (%s): note %v, want %v: %q", i, cmds[i], got, c.noted, o)
		}
		if c.noted && (!strings.Contains(o, "allow_hosts") || !strings.Contains(o, "127.0.0.1:5432")) {
			t.Errorf("call %d: the note does not say how the person allows more: %q", i, o)
		}
	}
	if o := out(4); !strings.Contains(o, "TCP connect(s) refused") {
		t.Errorf("the note for an unlisted loopback port: %q", o)
	}
	if o := out(6); !strings.Contains(o, "no route") {
		t.Errorf("the note for another host: %q", o)
	}
	conns := r.netConns()
	if len(conns) != 5 || conns[4]["host"] != "refused.test" || conns[4]["allowed"] != false {
		t.Fatalf("net.conn events %v", conns)
	}
	conns = conns[:4]
	for i, c := range conns {
		entry := `"127.0.0.1:` + port + `"`
		if i >= 2 {
			entry = `"localhost:` + lhPort + `"`
		}
		rule, _ := c["rule"].(string)
		if c["allowed"] != true || c["method"] != "TCP" || !strings.Contains(rule, entry) || !strings.Contains(rule, "allow_hosts") ||
			c["sent"].(int64) == 0 || c["received"].(int64) == 0 {
			t.Errorf("net.conn %v", c)
		}
	}
}

// Without the entry, the same service is out of reach, with the note.
func TestEgressLocalServiceNotAllowed(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	url, _ := hostServer(t)
	opts := baseOpts(t)
	r := runSession(t, opts, modelCalls(scripts(t, opts.Folder, "curl -sS "+url+"/x || echo refused")...))
	needNetNS(t, r)
	o := lastMessage(r.model.Requests()[1]).Content
	if strings.Contains(o, "hello-from-the-host") || !strings.Contains(o, "refused") || !strings.Contains(o, "[nodwyn: this command tried to connect directly") {
		t.Errorf("%q", o)
	}
	if conns := r.netConns(); len(conns) != 0 {
		t.Errorf("net.conn events %v", conns)
	}
}

func pyConnectLine(host, port string) string {
	return fmt.Sprintf(`python3 -c "import socket; socket.create_connection(('%s', %s), timeout=10)"`, host, port)
}

// What the note for a direct connection costs each command (issue 28: the
// floor's cost per command within 0.5 ms):
// go test -run '^$' -bench DirectNote ./internal/session/
func BenchmarkDirectNote(b *testing.B) {
	ns, err := sandbox.NewSessionNS(true)
	if err != nil {
		b.Skipf("no session namespaces here: %v", err)
	}
	defer ns.Close()
	after := directNote(ns, func() string { return "" })
	for b.Loop() {
		if note := after(); note != "" {
			b.Fatal(note)
		}
	}
}

// The entries with a port are the local services: localhost's listened on
// at both of its addresses, each address once; under Landlock's TCP rules
// the run's notes say a port allow_ports lacks.
func TestLocalServicesEntries(t *testing.T) {
	hosts := []string{"example.com", "127.0.0.1:5432", "LOCALHOST:3000", "[::1]:8080", "127.0.0.1:3000", "10.0.0.1:80"}
	if got, want := strings.Join(localAddrs(hosts), " "), "127.0.0.1:5432 127.0.0.1:3000 [::1]:3000 [::1]:8080"; got != want {
		t.Errorf("addresses %q, want %q", got, want)
	}
	ls := localServices(hosts)
	if len(ls) != 4 || ls[1].target != "localhost:3000" || ls[2].target != "[::1]:8080" {
		t.Errorf("services %+v", ls)
	}
	notes := localUnreached(hosts, []int{3000, 8080}, "cfg.toml")
	if len(notes) != 1 || !strings.Contains(notes[0], `"127.0.0.1:5432"`) || !strings.Contains(notes[0], "add 5432 there") || !strings.HasPrefix(notes[0], "cfg.toml: ") {
		t.Errorf("notes %q", notes)
	}
}
