package session

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// Egress (issue 28): outside sandbox mode, where the session has a network
// namespace (sandbox.SessionNS), commands reach other hosts only through
// the session's proxy. It allows the hosts the person allows ([sandbox]
// allow_hosts in their own config.toml) and the defaults
// (egress.Defaults: the registries of the ecosystems the folder uses and
// its git remotes' hosts); any other host is refused with a 403 that says
// how the person allows it. Every connection is a net.conn event.

// egressStart is the session's proxy, started: the environment that points
// commands at it, its rules, and notes for the person.
type egressStart struct {
	proxy *egress.Proxy
	env   []string
	rules []egress.Rule
	notes []string
}

// startEgress starts the session's proxy for opts, listening in ns's network
// namespace; onConn gets each connection's record. It runs while the init
// chain loads (the folder's git remotes are asked for).
func startEgress(ctx context.Context, opts Options, ns *sandbox.SessionNS, onConn func(egress.Conn)) (*egressStart, error) {
	allow := &egress.Allowlist{}
	defaults, noted := egress.Defaults(ctx, opts.Folder, os.Environ())
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
	p := &egress.Proxy{Decide: allow.Decide, OnConn: onConn}
	if err := p.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
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
	es.proxy, es.env = p, egress.Env(ln.Addr().String())
	return es, nil
}

// netConn logs one connection through the proxy.
func (s *Session) netConn(c egress.Conn) {
	d := map[string]any{"host": c.Host, "port": c.Port, "method": c.Method, "allowed": c.Allowed, "rule": c.Rule,
		"sent": c.Sent, "received": c.Received, "ms": c.End.Sub(c.Start).Milliseconds()}
	if c.Err != "" {
		d["error"] = c.Err
	}
	s.emit("net.conn", d)
}

// networkLine says where commands may connect, in a line for a person.
func (s *Session) networkLine() string {
	switch {
	case s.opts.Sandbox:
		return "open (sandbox mode: the task installs packages)"
	case s.egress != nil:
		var hosts []string
		for _, r := range s.egressRules {
			hosts = append(hosts, r.Pattern)
		}
		shown := hosts
		if len(shown) > 6 {
			shown = append(shown[:6:6], fmt.Sprintf("%d more", len(hosts)-6))
		}
		if len(hosts) == 0 {
			return "only through nodwyn's proxy, which allows no host yet ([sandbox] allow_hosts in your config.toml adds one); a network namespace holds only loopback"
		}
		return "only through nodwyn's proxy to " + strings.Join(shown, ", ") + "; a network namespace holds only loopback"
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
func (s *Session) confinement() map[string]any {
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
	return map[string]any{"reads": reads, "writes": writes, "processes": s.processesLine(), "network": s.networkLine()}
}
