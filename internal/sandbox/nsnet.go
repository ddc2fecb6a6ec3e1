package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The session's network namespace holds only loopback, and 127.0.0.1 there
// is the session's own: a command's server on it is reached by the
// session's later commands, and none of the person's. Two things bridge
// it, besides the egress proxy's listener:
//
//   - The person's local services. For each loopback address and port the
//     person names in [sandbox] allow_hosts ("127.0.0.1:5432",
//     "localhost:3000", "[::1]:8080"), the init makes a listener on the
//     same address inside, handed to nodwyn like the proxy's, and nodwyn
//     forwards each connection to that port of its own loopback
//     (egress.Proxy.Forward). Only the ports named: a command's own server
//     on any other port works as before.
//   - The namespace's counters (/proc/<init>/net/snmp and snmp6), read from
//     nodwyn after each command: a connection that went neither through
//     the proxy nor to a listener inside shows there as a route that does
//     not exist, a TCP connect refused, or a UDP datagram nobody took
//     (NetCounts), and the session adds a note to the command's result.

// LocalListener is a listener the init made in the session's network
// namespace on Addr, one of the person's local services' addresses, or why
// it could not (Err: the address is not there, or a port the kernel
// refuses); nodwyn serves it.
type LocalListener struct {
	Addr     string
	Listener net.Listener
	Err      error
}

// LocalListeners are the listeners made for NewSessionNS's local, in its
// order.
func (s *SessionNS) LocalListeners() []LocalListener {
	if s == nil {
		return nil
	}
	return s.local
}

// initRefused is what the init said instead of a listener.
type initRefused struct{ msg string }

func (e *initRefused) Error() string { return e.msg }

// checkLocal says what is wrong with an address of NewSessionNS's local.
func checkLocal(local []string) error {
	for _, a := range local {
		ap, err := netip.ParseAddrPort(a)
		if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 || ap.Addr().Zone() != "" {
			return fmt.Errorf("the session's namespaces: %q is not a loopback address and port", a)
		}
	}
	return nil
}

// localAddrs are the local services' addresses in the init's environment.
func localAddrs(env []string) []string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, sessionInitEnv+"_LOCAL="); ok && v != "" {
			return strings.Split(v, "\n")
		}
	}
	return nil
}

// sendLocalListeners, in the init, makes a listener on each address of
// list (one a line) and sends it over the socket fd, or an 'E' and why it
// could not. Only a failure to send is returned.
func sendLocalListeners(fd int, list string) error {
	if list == "" {
		return nil
	}
	for _, a := range strings.Split(list, "\n") {
		ln, err := listenLoopback(a)
		if err != nil {
			if err := unix.Sendmsg(fd, []byte("E"+a+": "+err.Error()), nil, nil, 0); err != nil {
				return err
			}
			continue
		}
		err = unix.Sendmsg(fd, []byte("L"), unix.UnixRights(ln), nil, 0)
		unix.Close(ln)
		if err != nil {
			return err
		}
	}
	return nil
}

// listenLoopback makes a TCP listening socket on a loopback ip:port.
func listenLoopback(a string) (int, error) {
	ap, err := netip.ParseAddrPort(a)
	if err != nil || !ap.Addr().IsLoopback() {
		return -1, fmt.Errorf("not a loopback address and port")
	}
	family, addr := unix.AF_INET, ap.Addr().Unmap()
	var sa unix.Sockaddr
	if addr.Is4() {
		sa = &unix.SockaddrInet4{Addr: addr.As4(), Port: int(ap.Port())}
	} else {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Addr: addr.As16(), Port: int(ap.Port())}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if family == unix.AF_INET6 {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// NetCounts are counters of the session's network namespace that grow
// when a command tries to connect other than through the proxy or to a
// listener inside (IPv4 and IPv6 together).
type NetCounts struct {
	// NoRoutes: packets to an address the namespace has no route to, any
	// host but loopback (Ip OutNoRoutes, Ip6OutNoRoutes): "Network is
	// unreachable".
	NoRoutes uint64
	// ConnectFails: TCP connects that failed, a loopback port nothing
	// listens on among them (Tcp AttemptFails): "Connection refused".
	ConnectFails uint64
	// UDPNoPorts: UDP datagrams to a loopback port nothing listens on, a
	// DNS query to a resolver on 127.0.0.53 among them (Udp NoPorts,
	// Udp6NoPorts).
	UDPNoPorts uint64
}

// Sub is what grew from before to c (a counter that went down counts 0).
func (c NetCounts) Sub(before NetCounts) NetCounts {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return NetCounts{d(c.NoRoutes, before.NoRoutes), d(c.ConnectFails, before.ConnectFails), d(c.UDPNoPorts, before.UDPNoPorts)}
}

// Zero reports whether every counter is 0.
func (c NetCounts) Zero() bool { return c == NetCounts{} }

// netCounters are the namespace's snmp files, kept open (each read makes
// them anew from offset 0).
type netCounters struct {
	mu         sync.Mutex
	snmp, six  *os.File
	buf        []byte
	err        error
	opened     bool
	closedDown bool
}

// NetCounts reads the network namespace's counters from nodwyn's side. It
// fails without a network namespace.
func (s *SessionNS) NetCounts() (NetCounts, error) {
	if !s.Network() {
		return NetCounts{}, fmt.Errorf("the session has no network namespace")
	}
	return s.counters.read(s.holder)
}

func (n *netCounters) read(holder int) (NetCounts, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closedDown {
		return NetCounts{}, fmt.Errorf("the session's namespaces are closed")
	}
	if !n.opened {
		n.opened = true
		n.snmp, n.err = os.Open(fmt.Sprintf("/proc/%d/net/snmp", holder))
		if n.err == nil {
			// Without IPv6 there is no snmp6: IPv4's counters alone.
			n.six, _ = os.Open(fmt.Sprintf("/proc/%d/net/snmp6", holder))
		}
		n.buf = make([]byte, 16<<10)
	}
	if n.err != nil {
		return NetCounts{}, n.err
	}
	var c NetCounts
	b, err := readAt0(n.snmp, n.buf)
	if err != nil {
		return c, err
	}
	c.NoRoutes = snmpField(b, "Ip:", "OutNoRoutes")
	c.ConnectFails = snmpField(b, "Tcp:", "AttemptFails")
	c.UDPNoPorts = snmpField(b, "Udp:", "NoPorts")
	if n.six != nil {
		if b, err := readAt0(n.six, n.buf); err == nil {
			c.NoRoutes += snmp6Field(b, "Ip6OutNoRoutes")
			c.UDPNoPorts += snmp6Field(b, "Udp6NoPorts")
		}
	}
	return c, nil
}

func (n *netCounters) close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closedDown = true
	if n.snmp != nil {
		n.snmp.Close()
	}
	if n.six != nil {
		n.six.Close()
	}
}

// readAt0 reads a /proc file whole from its start into buf.
func readAt0(f *os.File, buf []byte) ([]byte, error) {
	n := 0
	for n < len(buf) {
		m, err := f.ReadAt(buf[n:], int64(n))
		n += m
		if m == 0 || err != nil {
			break
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("reading %s: empty", f.Name())
	}
	return buf[:n], nil
}

// snmpField is a counter of /proc/net/snmp, where each protocol has a line
// of names and a line of values, both starting with prefix.
func snmpField(b []byte, prefix, name string) uint64 {
	if !bytes.HasPrefix(b, []byte(prefix+" ")) {
		i := bytes.Index(b, []byte("\n"+prefix+" "))
		if i < 0 {
			return 0
		}
		b = b[i+1:]
	}
	end := bytes.IndexByte(b, '\n')
	if end < 0 {
		return 0
	}
	names, rest := b[:end], b[end+1:]
	end = bytes.IndexByte(rest, '\n')
	if end < 0 {
		end = len(rest)
	}
	values := rest[:end]
	if !bytes.HasPrefix(values, []byte(prefix+" ")) {
		return 0
	}
	nf, vf := bytes.Fields(names), bytes.Fields(values)
	for k, f := range nf {
		if string(f) == name && k < len(vf) {
			v, _ := strconv.ParseUint(string(vf[k]), 10, 64)
			return v
		}
	}
	return 0
}

// snmp6Field is a counter of /proc/net/snmp6: a name and its value a line.
func snmp6Field(b []byte, name string) uint64 {
	i := bytes.Index(b, []byte(name+" "))
	if i < 0 || (i > 0 && b[i-1] != '\n') {
		return 0
	}
	line := b[i+len(name):]
	if end := bytes.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	v, _ := strconv.ParseUint(string(bytes.TrimSpace(line)), 10, 64)
	return v
}
