package session

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// Egress (issue 28): outside sandbox mode commands reach other hosts only
// through the session's proxy, held there by the kernel: where the session
// has a network namespace (sandbox.SessionNS) it holds only loopback and
// the proxy listens inside it; elsewhere (no namespaces here, or the
// person's [sandbox] namespaces = "off") the floor's Landlock TCP rules
// let commands connect only to the proxy's port on 127.0.0.1 and the
// person's [sandbox] allow_ports (sandbox/floor_net.go). The proxy allows
// the hosts the person allows ([sandbox] allow_hosts in their own
// config.toml) and the defaults (egress.Defaults: the registries of the
// ecosystems the folder uses and its git remotes' hosts); any other host
// is a security confirm (egress_confirm.go), and refused with a 403 that
// says how the person allows it when it is declined. Every connection is
// a net.conn event.

// egressStart is the session's proxy, started: the environment that points
// commands at it, its rules, and notes for the person.
type egressStart struct {
	proxy *egress.Proxy
	env   []string
	rules []egress.Rule
	notes []string
	open  string // with no proxy: why the network stays open
}

// startEgress starts the session's proxy for opts: listening in ns's
// network namespace, or with ns nil on 127.0.0.1 in nodwyn's own, floor
// letting commands connect only to its port and [sandbox] allow_ports. It
// runs while the init chain loads (the folder's git remotes are asked
// for). Where floor's Landlock has no TCP rules it starts nothing and says
// why in open: the network stays open.
func (s *Session) startEgress(ctx context.Context, opts Options, ns *sandbox.SessionNS, floor *sandbox.Floor) (*egressStart, error) {
	for _, p := range opts.ConfigSeam.AllowPorts {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("[sandbox] allow_ports in your config.toml: %d is not a TCP port (1–65535)", p)
		}
	}
	if ns == nil && floor.ABI() < sandbox.NetABI {
		return &egressStart{open: fmt.Sprintf("this kernel's Landlock (ABI %d) has no TCP rules, which came with ABI %d (Linux 6.7)", floor.ABI(), sandbox.NetABI)}, nil
	}
	allow := &egress.Allowlist{}
	defaults, noted := egress.Defaults(ctx, opts.Folder, os.Environ(), mcpUses(opts.MCP)...)
	if err := allow.Add(defaults...); err != nil {
		return nil, err
	}
	from := opts.ConfigSeamAllowFrom
	if from == "" {
		from = "your config.toml"
	}
	for _, h := range opts.ConfigSeam.AllowHosts {
		if err := egress.CheckPattern(h); err != nil {
			return nil, fmt.Errorf("%s: [sandbox] allow_hosts: %v", from, err)
		}
		if err := allow.Add(egress.Rule{Pattern: h, Source: from, Person: true}); err != nil {
			return nil, err
		}
	}
	es := &egressStart{rules: allow.Rules()}
	for _, n := range noted {
		es.notes = append(es.notes, fmt.Sprintf("%s names %s, which commands may not reach through the proxy: only your own config.toml's [sandbox] allow_hosts adds a host", n.Source, n.Pattern))
	}
	asking := &egress.Asking{List: allow, Ask: s.askNet} // egress_confirm.go
	p := &egress.Proxy{Decide: asking.Decide, OnConn: s.netConn}
	if err := p.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	if ns == nil {
		// No namespace: commands reach the proxy on 127.0.0.1, and Landlock
		// keeps them from connecting anywhere else.
		_, port, _ := net.SplitHostPort(p.Addr())
		pn, _ := strconv.Atoi(port)
		if err := floor.ConfineConnect(append([]int{pn}, opts.ConfigSeam.AllowPorts...)); err != nil {
			p.Close()
			return &egressStart{open: err.Error()}, nil
		}
		es.proxy, es.env = p, egress.Env(p.Addr())
		es.notes = append(es.notes, localUnreached(opts.ConfigSeam.AllowHosts, opts.ConfigSeam.AllowPorts, from)...) // egress_local.go
		return es, nil
	}
	ln := ns.Listener() // made in the namespace by its init
	if ln == nil {
		p.Close()
		return nil, fmt.Errorf("no listener in the session's network namespace")
	}
	if err := p.Serve(ln); err != nil {
		p.Close()
		return nil, err
	}
	// The person's local services named with their ports, forwarded from
	// listeners on the same addresses inside (egress_local.go).
	notes, err := forwardLocal(p, ns, opts.ConfigSeam.AllowHosts, from)
	if err != nil {
		p.Close()
		return nil, err
	}
	es.notes = append(es.notes, notes...)
	es.proxy, es.env = p, egress.Env(ln.Addr().String())
	return es, nil
}

// netConn logs one connection through the proxy.
func (s *Session) netConn(c egress.Conn) {
	s.emit(event.NetConn{Host: c.Host, Port: c.Port, Method: c.Method, Allowed: c.Allowed, Rule: c.Rule,
		Sent: c.Sent, Received: c.Received, MS: c.End.Sub(c.Start).Milliseconds(), Error: c.Err})
}

// networkLine says where commands may connect, in a line for a person.
func (s *Session) networkLine() string {
	switch {
	case s.opts.Sandbox:
		return "open (sandbox mode: the task installs packages)"
	case s.egress != nil:
		var hosts []string
		for _, r := range s.egressRules {
			hosts = append(hosts, r.String())
		}
		shown := hosts
		if len(shown) > 6 {
			shown = append(shown[:6:6], fmt.Sprintf("%d more", len(hosts)-6))
		}
		how := "a network namespace holds only loopback"
		if !s.ns.Network() {
			ports, _ := s.floor.ConnectPorts()
			how = landlockNetLine(ports, s.nsWhy)
		}
		others := "any other host is a security confirm"
		if _, decided := guard.AutoAllow(netDecision("", 0), s.confirmMode()); decided || s.opts.ConfirmNote == nil && s.opts.Confirm == nil {
			others = "any other host is refused (nobody is asked in this run)"
		}
		if len(hosts) == 0 {
			return "only through nodwyn's proxy, which allows no host yet ([sandbox] allow_hosts in your config.toml adds one); " + others + "; " + how
		}
		return "only through nodwyn's proxy to " + strings.Join(shown, ", ") + "; " + others + "; " + how
	case s.netWhy != "":
		return "open (" + s.netWhy + ")"
	}
	return "open"
}

// processesLine says what the session's commands see of other processes
// and what outlives the session.
func (s *Session) processesLine() string {
	if s.opts.Sandbox {
		return "what commands leave running outlives the session (sandbox mode)"
	}
	how := ""
	if s.tools != nil {
		how = s.tools.Confinement()
	}
	if c, ok := strings.CutPrefix(how, "cgroup "); ok && c != "" {
		how = "a cgroup per session" // its path differs from run to run
	}
	if s.ns != nil {
		return "a PID namespace of the session's own: commands see no other process, and all they start ends with the session (" + how + ")"
	}
	line := "all commands start ends with the session (" + how + ")"
	if s.nsWhy != "" {
		line += "; other processes are visible (" + s.nsWhy + ")"
	}
	return line
}

// confinement is what the run's first lines and run.start say is confined,
// one line each: reads, writes, processes, network.
func (s *Session) confinement() event.Confinement {
	reads, writes := "open: the kernel floor is "+s.floorLine, "open: the kernel floor is "+s.floorLine
	if s.floor != nil {
		reads = "nodwyn's credential catalogue is denied to every command (Landlock)"
		if s.opts.Sandbox && s.ns != nil {
			reads = "nodwyn's credential catalogue is hidden from every command: empty and read-only in a mount namespace of the session's, which Landlock keeps them from undoing"
		}
		if s.writesLine != "" {
			writes = s.writesLine + " (Landlock); changes to .git/config, .git/hooks and .nodwyn/ are undone after each command"
		} else {
			writes = "open (sandbox mode)"
		}
	}
	return event.Confinement{Reads: reads, Writes: writes, Processes: s.processesLine(), Network: s.networkLine()}
}

// mcpUses are the registries the run's stdio MCP servers fetch from, by
// the program each starts (mcpEcosystems): an npx server's first start
// downloads it from npm's registry.
func mcpUses(servers []MCPServer) []egress.Use {
	names := map[string]string{"npm": "npm", "go": "Go", "cargo": "Rust", "pip": "Python", "maven": "Maven"}
	var uses []egress.Use
	for _, s := range servers {
		for _, e := range mcpEcosystems([]MCPServer{s}) {
			from := s.Origin
			if from == "" {
				from = "[mcp.servers." + s.Name + "]"
			}
			uses = append(uses, egress.Use{Ecosystem: names[e], Source: from + ": the MCP server " + s.Name + " (" + filepath.Base(s.Command) + ")"})
		}
	}
	return uses
}
