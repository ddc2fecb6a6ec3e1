package session

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// The session's network namespace and this machine's loopback (issue 28):
// 127.0.0.1 inside is the session's own, so a service of the person's (a
// Gitea on localhost:3000, the database the tests use on 127.0.0.1:5432)
// is reached only where the person names its address and port in
// [sandbox] allow_hosts; the namespace then has a listener on that address
// and port inside, and nodwyn forwards each connection to the same port
// of its own loopback (a net.conn event, by the allow_hosts rule). A
// connection a command makes any other way (a socket of its own to
// another host, a loopback port nothing listens on) fails with only the
// system's error; the namespace's counters show it, and the command's
// result gets a note that says where commands may connect and how the
// person allows more.

// localService is an allow_hosts entry that names a local service.
type localService struct {
	entry  string   // as the person wrote it
	target string   // host:port as nodwyn dials it
	inside []string // the loopback ip:port listened on in the namespace
}

// localServices are the allow_hosts entries of opts that name a local
// service by its port (egress.LocalPort); localhost's stand for both
// 127.0.0.1 and ::1.
func localServices(hosts []string) []localService {
	var out []localService
	for _, h := range hosts {
		host, port, ok := egress.LocalPort(h)
		if !ok {
			continue
		}
		p := strconv.Itoa(port)
		ls := localService{entry: h, target: net.JoinHostPort(host, p)}
		if host == "localhost" {
			ls.inside = []string{net.JoinHostPort("127.0.0.1", p), net.JoinHostPort("::1", p)}
		} else {
			ls.inside = []string{net.JoinHostPort(host, p)}
		}
		out = append(out, ls)
	}
	return out
}

// localAddrs are the addresses the session's namespace listens on for the
// person's local services ([sandbox] allow_hosts), each once.
func localAddrs(hosts []string) []string {
	var addrs []string
	for _, ls := range localServices(hosts) {
		for _, a := range ls.inside {
			if !slices.Contains(addrs, a) {
				addrs = append(addrs, a)
			}
		}
	}
	return addrs
}

// forwardLocal serves the namespace's listeners for the person's local
// services through p (each connection a net.conn event), and says what it
// could not listen on.
func forwardLocal(p *egress.Proxy, ns *sandbox.SessionNS, hosts []string, from string) (notes []string, err error) {
	lns := ns.LocalListeners()
	for _, ls := range localServices(hosts) {
		rule := fmt.Sprintf("%q from %s ([sandbox] %s, forwarded from the session's loopback)", ls.entry, from, egress.AllowHostsKey)
		var why []string
		served := 0
		for _, a := range ls.inside {
			i := slices.IndexFunc(lns, func(l sandbox.LocalListener) bool { return l.Addr == a })
			if i < 0 {
				continue // served already, for an entry before this one
			}
			l := lns[i]
			lns = slices.Delete(lns, i, i+1)
			if l.Err != nil {
				why = append(why, l.Err.Error())
				continue
			}
			if err := p.Forward(l.Listener, ls.target, rule); err != nil {
				return notes, err
			}
			served++
		}
		if served == 0 && len(why) > 0 {
			notes = append(notes, fmt.Sprintf("%s: [sandbox] %s %q: the session's network namespace could not listen there (%s), so commands do not reach it",
				from, egress.AllowHostsKey, ls.entry, strings.Join(why, "; ")))
		}
	}
	return notes, nil
}

// localUnreached are notes for the Landlock fallback: without a namespace
// a command reaches this machine's loopback itself, on the ports Landlock
// lets it connect to.
func localUnreached(hosts []string, ports []int, from string) []string {
	var notes []string
	for _, ls := range localServices(hosts) {
		_, p, _ := net.SplitHostPort(ls.target)
		n, _ := strconv.Atoi(p)
		if !slices.Contains(ports, n) {
			notes = append(notes, fmt.Sprintf("%s: [sandbox] %s %q: without a network namespace commands connect to this machine's loopback themselves, and Landlock lets them connect only to the proxy's port and [sandbox] allow_ports: add %d there to reach it (Landlock judges the port alone, on any host)",
				from, egress.AllowHostsKey, ls.entry, n))
		}
	}
	return notes
}

// directNote wraps the session's AfterCommand (after, which may be nil)
// with a note for a command that connected other than through the proxy:
// where the network namespace's counters (sandbox.NetCounts) grew since
// the last command ended. It is after itself where the counters cannot be
// read.
func directNote(ns *sandbox.SessionNS, after func() string) func() string {
	last, err := ns.NetCounts()
	if err != nil {
		return after
	}
	var mu sync.Mutex
	return func() string {
		var note string
		if after != nil {
			note = after()
		}
		mu.Lock()
		now, err := ns.NetCounts()
		grew := now.Sub(last)
		if err == nil {
			last = now
		}
		mu.Unlock()
		if err != nil || grew.Zero() {
			return note
		}
		return strings.TrimSpace(note + "\n" + directLine(grew))
	}
}

// directLine is the note for what grew.
func directLine(c sandbox.NetCounts) string {
	var seen []string
	if c.NoRoutes > 0 {
		seen = append(seen, fmt.Sprintf("%d packet(s) to a host with no route here (Network is unreachable)", c.NoRoutes))
	}
	if c.ConnectFails > 0 {
		seen = append(seen, fmt.Sprintf("%d TCP connect(s) refused on the session's loopback (Connection refused)", c.ConnectFails))
	}
	if c.UDPNoPorts > 0 {
		seen = append(seen, fmt.Sprintf("%d UDP datagram(s) to a loopback port nothing listens on", c.UDPNoPorts))
	}
	return "[nodwyn: this command tried to connect directly: " + strings.Join(seen, ", ") +
		". Commands reach other hosts only through nodwyn's proxy (HTTPS_PROXY and HTTP_PROXY, which curl, pip, npm, go and git follow; it resolves names itself), " +
		"and 127.0.0.1 here is the session's own loopback, not this machine's: a server a command starts there is reached, the person's are not. " +
		"The person allows a host with [sandbox] allow_hosts = [\"example.com\"] in their own config.toml, and a service on this machine by its address and port (\"127.0.0.1:5432\")]"
}
