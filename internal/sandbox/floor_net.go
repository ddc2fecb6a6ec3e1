package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Where the session has no network namespace (the kernel refuses one, or
// the person's [sandbox] namespaces = "off"), the floor keeps commands to
// the session's proxy with Landlock's TCP rules (ABI 4, Linux 6.7): a
// command may connect over TCP only to the ports given (the proxy's, which
// then listens on 127.0.0.1 in nodwyn's own namespace, and the person's
// [sandbox] allow_ports, for servers the commands start themselves).
// Landlock judges the port alone, not the address: a program that ignores
// the proxy settings still reaches any host on one of those ports. UDP
// (and with it DNS), unix sockets and binding are not restricted.

// landlockRuleNetPort is LANDLOCK_RULE_NET_PORT (x/sys has no constant).
const landlockRuleNetPort = 2

// landlockNetPortAttr is struct landlock_net_port_attr.
type landlockNetPortAttr struct {
	allowedAccess uint64
	port          uint64
}

// NetABI is the first Landlock ABI with TCP rules (Linux 6.7).
const NetABI = 4

// connectRules are the ports commands may connect to (ConfineConnect).
type connectRules struct {
	on    bool
	ports []int
}

// ConfineConnect lets commands connect over TCP only to ports (1–65535;
// for the session's proxy, and the person's allow_ports), from the next
// command on. It says why not, and changes nothing, where the kernel's
// Landlock has no TCP rules.
func (f *Floor) ConfineConnect(ports []int) error {
	if f.abi < NetABI {
		return fmt.Errorf("this kernel's Landlock (ABI %d) has no TCP rules, which came with ABI %d (Linux 6.7)", f.abi, NetABI)
	}
	var ps []int
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("%d is not a TCP port (1–65535)", p)
		}
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	// A trial, on a thread of its own, so that a kernel that takes the
	// ABI but refuses the rules (no IPv4/IPv6 built in) says so here, not
	// at every command.
	rs, err := newNetRuleset(0, ps)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		f.onLockedThread(rs, nil, nil, errc)
	}()
	err = <-errc
	rs.close()
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connect = connectRules{on: true, ports: ps}
	f.last.close()
	f.last = nil
	return nil
}

// ConnectPorts are the ports commands may connect to, and whether
// connections are confined at all.
func (f *Floor) ConnectPorts() ([]int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.connect.ports), f.connect.on
}

// newNetRuleset is a ruleset that handles the file rights fs (granting
// them all on /) and TCP connect, granting it on ports.
func newNetRuleset(fs uint64, ports []int) (*ruleset, error) {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: fs, Handled_access_net: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), 16, 0)
	if e != 0 {
		return nil, fmt.Errorf("making a Landlock ruleset with TCP rules: %v", e)
	}
	rs := &ruleset{fd: int(fd)}
	if err := rs.addPorts(ports); err != nil {
		rs.close()
		return nil, err
	}
	return rs, nil
}

// handledNet is what a ruleset handles of the network. f.mu is held.
func (f *Floor) handledNet() uint64 {
	if f.connect.on {
		return unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	return 0
}

// addConnect adds the connect rules to a ruleset built with handledNet.
// f.mu is held.
func (f *Floor) addConnect(rs *ruleset) error {
	if !f.connect.on {
		return nil
	}
	return rs.addPorts(f.connect.ports)
}

// addPorts grants TCP connect on each port.
func (r *ruleset) addPorts(ports []int) error {
	for _, p := range ports {
		attr := landlockNetPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(p)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(r.fd), landlockRuleNetPort, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
		if e != 0 {
			return fmt.Errorf("a Landlock rule for TCP port %d: %w", p, e)
		}
	}
	return nil
}

// connectLine says where a command under the floor may connect, for the
// note after a refused command ("" when connections are not confined).
// f.mu is held.
func (f *Floor) connectLine() string {
	if !f.connect.on {
		return ""
	}
	ps := make([]string, len(f.connect.ports))
	for i, p := range f.connect.ports {
		ps[i] = strconv.Itoa(p)
	}
	word := "port "
	if len(ps) > 1 {
		word = "ports "
	}
	return "a TCP connection may go only to " + word + strings.Join(ps, ", ") +
		" (nodwyn's proxy, which $HTTPS_PROXY and $HTTP_PROXY name, and [sandbox] allow_ports in your config.toml)"
}
