package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/mcp"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"github.com/nodwyn/nodwyn/scheme"
)

// MCP servers (issue 31 item 2). A session of Options.MCP starts its
// servers at the end of New, in the background: a stdio server through
// the execution seam as a command is started (a NoSandbox of the
// session's own over the session's kernel floor, which carries its
// namespaces and its write confinement; its cgroup or the subreaper; the
// session's mark), with the commands' scrubbed environment plus the
// server's env, in the folder; a URL server directly. The first thing that
// needs them (the run's start, the first model turn, (mcp-servers), a
// call) waits until each is ready or left out (internal/mcp bounds that),
// and says so in one mcp.server event per server. Close stops them all.
//
// Their tools reach the model as server__tool (internal/mcp names them);
// which are offered, and with what, is the loop's (runtime/mcp.scm: the
// profile's mcp-tools setting; a one-line summary each, the schema when
// the model asks with tool-schema). Each call is judged (mcpChecker) and
// runs through callTool, as any tool's: its result is redacted, folded by
// the loop, logged and kept in the conversation.

// MCPServer is one declared MCP server with the person's allowances.
type MCPServer struct {
	mcp.Server          // internal/mcp's declaration (Name, Command, Args, Env, URL, Headers, ...)
	Allow      bool     // all its tools run without a confirm
	AllowTools []string // these remote tool names run without a confirm
	Origin     string   // "<file>:<line>" for messages
	// InitTimeout bounds its start, initialize and tools/list; 0 is
	// internal/mcp's default.
	InitTimeout time.Duration
}

// ProbeMCP starts the servers exactly as a session of opts would (same
// seam: kernel floor, namespaces, scrubbed environment, confinement of its
// mode), waits until each is ready or left out, returns their status and
// tools, and stops them all. doctor and `nodwyn mcp list` call it. The
// session is a dry one (no model, no log); its profile's mcp-tools setting
// does not keep the servers from starting.
func ProbeMCP(ctx context.Context, opts Options) ([]mcp.Status, []mcp.Tool, error) {
	if len(opts.MCP) == 0 {
		return nil, nil, nil
	}
	opts.Dry, opts.Model, opts.ResumeID, opts.Store = true, nil, "", nil
	opts.probe = true
	s, err := New(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	m := s.mcpManager()
	if m == nil {
		return nil, nil, errors.New("the MCP servers were not started")
	}
	return m.Servers(), m.Tools(""), nil
}

// mcpState is a session's MCP servers.
type mcpState struct {
	decls   map[string]MCPServer // by name
	off     string               // why the servers were not started ("" when they were)
	started chan struct{}        // closed once mgr is set (nil: not started)
	mgr     *mcp.Manager
	host    *sandbox.NoSandbox // what starts the stdio servers
	joined  sync.Once          // the mcp.server events said
	checker *mcpChecker

	mu       sync.Mutex
	approved map[string]bool           // tools a person answered "always" for
	schemas  map[string]map[string]any // tools' schemas, decoded once
}

// newMCPState is the state of opts' servers, nil when it declares none.
func newMCPState(opts Options) *mcpState {
	if len(opts.MCP) == 0 {
		return nil
	}
	st := &mcpState{decls: map[string]MCPServer{}, approved: map[string]bool{}, schemas: map[string]map[string]any{}}
	for _, d := range opts.MCP {
		if _, dup := st.decls[d.Name]; !dup {
			st.decls[d.Name] = d
		}
	}
	return st
}

// mcpProfileOff asks the profile's mcp-tools setting (as loadChain asks
// leave-running): 'none starts no server.
func (s *Session) mcpProfileOff(ctx context.Context) {
	if s.mcp == nil || s.opts.probe {
		return
	}
	v, err := s.interp.CallByName(ctx, "profile-ref", scheme.Symbol("mcp-tools"), false)
	if err == nil && v == scheme.Symbol("none") {
		s.mcp.off = "the profile " + s.profile + " offers no MCP tools (its mcp-tools setting is 'none)"
	}
}

// startMCP starts the servers in the background; New calls it once the
// tools (and so the seam, the environment and the mark) are made.
func (s *Session) startMCP(ctx context.Context, beforeFirst func(mark string)) {
	st := s.mcp
	if st == nil || st.off != "" {
		return
	}
	hopts := sandbox.HostOptions{Mark: s.tools.Mark(), Release: s.opts.Sandbox, Floor: s.floor}
	if beforeFirst != nil {
		mark := s.tools.Mark()
		hopts.BeforeFirstStart = func() { beforeFirst(mark) }
	}
	st.host = sandbox.NewHost(hopts)
	servers := make([]mcp.Server, 0, len(s.opts.MCP))
	for _, d := range s.opts.MCP {
		srv := d.Server
		if d.InitTimeout > 0 {
			srv.InitTimeout = d.InitTimeout
		}
		if srv.Command != "" && srv.Dir == "" {
			srv.Dir = s.opts.Folder
		}
		servers = append(servers, srv)
	}
	mopts := mcp.Options{
		Start:         st.host.StartProgram,
		Environ:       s.tools.Env(), // the commands': scrubbed, TMPDIR, the proxy, the mark
		ClientVersion: "nodwyn",
	}
	st.started = make(chan struct{})
	go func() {
		st.mgr = mcp.Start(context.WithoutCancel(ctx), servers, mopts)
		close(st.started)
	}()
}

// mcpManager waits for the servers' start and returns their manager; nil
// when none was started. The first call after the run has begun says each
// server's state (mcp.server events).
func (s *Session) mcpManager() *mcp.Manager {
	st := s.mcp
	if st == nil || st.started == nil {
		return nil
	}
	<-st.started
	return st.mgr
}

// mcpJoin waits for the servers and says their states, once.
func (s *Session) mcpJoin() {
	st := s.mcp
	if st == nil {
		return
	}
	m := s.mcpManager()
	st.joined.Do(func() {
		if m == nil {
			if st.off != "" {
				s.Note("MCP servers not started: " + st.off)
			}
			return
		}
		for _, ss := range m.Servers() {
			d := event.MCPServer{Server: ss.Name, Transport: ss.Transport, State: string(ss.State),
				Tools: ss.Tools, MS: ss.Took.Milliseconds(), Origin: st.decls[ss.Name].Origin, Implementation: ss.Server}
			if ss.Err != nil {
				d.Error = s.redact(ss.Err.Error())
			}
			if ss.Stderr != "" && ss.State != mcp.StateReady {
				d.Stderr = s.redact(ss.Stderr)
			}
			for _, t := range m.Tools(ss.Name) {
				if t.Note != "" {
					d.Names = append(d.Names, t.Note)
				}
			}
			s.emit(d)
		}
	})
}

// closeMCP stops the servers (and whatever they left in their cgroup).
func (s *Session) closeMCP() {
	st := s.mcp
	if st == nil || st.started == nil {
		return
	}
	<-st.started
	st.mgr.Close()
	st.host.Close()
}

// mcpTool is the MCP tool the model calls name, if the session has one.
func (s *Session) mcpTool(name string) (mcp.Tool, bool) {
	if s.mcp == nil || !strings.Contains(name, "__") {
		return mcp.Tool{}, false
	}
	m := s.mcpManager()
	if m == nil {
		return mcp.Tool{}, false
	}
	return m.Tool(name)
}

// mcpSchema is t's input schema as a request's parameters, decoded once.
func (s *Session) mcpSchema(t mcp.Tool) map[string]any {
	st := s.mcp
	st.mu.Lock()
	defer st.mu.Unlock()
	if m, ok := st.schemas[t.Name]; ok {
		return m
	}
	var m map[string]any
	if json.Unmarshal(t.Schema, &m) != nil || m == nil {
		m = map[string]any{"type": "object"}
	}
	st.schemas[t.Name] = m
	return m
}

// mcpLeanSchema is the parameters an MCP tool is offered with until the
// model asks for its schema: any object.
var mcpLeanSchema = map[string]any{"type": "object"}

// runMCPTool runs an allowed call of an MCP tool: its result is the
// server's text (an error result when the server says isError), or, for
// a call that did not complete (the server died, timed out, is gone), an
// error result saying why. It is redacted and logged as a primitive's.
func (s *Session) runMCPTool(ctx context.Context, t mcp.Tool, id string, req guard.Request, d guard.Decision, start time.Time) (scheme.Value, error) {
	raw, err := json.Marshal(req.Args)
	if err != nil {
		raw = []byte(`{}`)
	}
	toolStart := time.Now()
	res, err := s.mcpManager().Call(ctx, t.Name, raw)
	s.toolTime += time.Since(toolStart)
	out, isErr, exit := res.Text, res.IsError, 0
	if err != nil {
		if ctx.Err() != nil {
			s.stopped(ctx, id, t.Name, prim.Result{}, time.Since(toolStart), start)
			return nil, ctx.Err()
		}
		out, isErr, exit = fmt.Sprintf("%s failed: %v", t.Name, errors.Unwrap(err)), true, -1
	}
	out = s.redact(out)
	s.emitResult(id, t.Name, isErr, exit, out, nil, start)
	return resultAlist(out, isErr, d.Verdict.String(), d.Checker, exit), nil
}

// mcpApproveAlways records a person's "always" for an MCP tool's confirm:
// its later calls are not asked about (its arguments are still judged).
func (s *Session) mcpApproveAlways(req guard.Request, d guard.Decision) {
	if s.mcp == nil || d.Checker != mcpCheckerName {
		return
	}
	if _, ok := s.mcpTool(req.Tool); ok {
		s.mcp.mu.Lock()
		s.mcp.approved[req.Tool] = true
		s.mcp.mu.Unlock()
	}
}

const mcpCheckerName = "mcp"

// mcpChecker is the guard's checker of MCP tools' calls, added to the
// session's guard (as a project checker, it can only tighten): a call is
// an ordinary confirm unless the person's config allows the server or the
// tool (or they answered "always"); each argument the tool's schema marks
// as a path is judged by the guard's rules for a path read (a tool the
// server says is read-only) or written (any other), and, where commands
// reach the network through the session's proxy, each URL's host by the
// proxy's allowlist; every string argument is scanned for secrets, since
// the arguments are sent to the server. The strictest verdict stands: a
// refused path is refused even for an allowed tool.
type mcpChecker struct {
	s     *Session
	once  sync.Once
	hosts *egress.Allowlist
}

func (c *mcpChecker) Name() string { return mcpCheckerName }

func (c *mcpChecker) init() {
	if c.s.egress != nil {
		c.hosts = &egress.Allowlist{}
		_ = c.hosts.Add(c.s.egressRules...) // checked when the proxy took them
	}
}

func (c *mcpChecker) Check(ctx context.Context, req guard.Request) guard.Decision {
	t, ok := c.s.mcpTool(req.Tool)
	if !ok {
		return guard.Decision{}
	}
	c.once.Do(c.init)
	st := c.s.mcp
	decl := st.decls[t.Server]
	st.mu.Lock()
	approved := st.approved[t.Name]
	st.mu.Unlock()
	best := guard.Decision{}
	if !decl.Allow && !slices.Contains(decl.AllowTools, t.Remote) && !approved {
		origin := decl.Origin
		if origin == "" {
			origin = "the configuration"
		}
		best = guard.Decision{Verdict: guard.Confirm, Checker: mcpCheckerName, Reason: fmt.Sprintf(
			"%s is the tool %s of the MCP server %s (%s): its calls run when a person confirms them (they may allow it for good with allow_tools = [%q] under [mcp.servers.%s] in their own config.toml); if it is declined, do without it",
			t.Name, t.Remote, t.Server, origin, t.Remote, t.Server)}
	}
	stricter := func(d guard.Decision) {
		if d.Verdict > best.Verdict {
			best = d
		}
	}
	pathRole := roles.PathWrite
	if t.ReadOnly {
		pathRole = roles.PathRead
	}
	for _, role := range t.Roles {
		for _, v := range argStrings(req.Args[role.Name]) {
			switch role.Role {
			case mcp.RolePath:
				stricter(c.judgePath(ctx, t, pathRole, role.Name, v))
			case mcp.RoleURL:
				stricter(c.judgeURL(ctx, t, pathRole, role.Name, v))
			}
		}
	}
	if all := argStrings(req.Args); len(all) > 0 {
		d := c.s.guard.CheckArg(ctx, roles.Content, "arguments", strings.Join(all, "\n"))
		if d.Verdict > guard.Allow {
			d.Reason = strings.Replace(d.Reason, "the arguments to write", "the arguments sent to the MCP server "+t.Server, 1)
		}
		stricter(d)
	}
	return best
}

// judgePath judges one path argument as the path a file tool reads or
// writes: as given (relative to the folder, the server's working
// directory), and with a leading ~ taken as the home (a server may expand
// it, as a shell does).
func (c *mcpChecker) judgePath(ctx context.Context, t mcp.Tool, role roles.Role, arg, p string) guard.Decision {
	cands := []string{p}
	if rest, ok := strings.CutPrefix(p, "~"); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
		cands = append(cands, filepath.Join(c.s.guard.Options().Home, rest))
	}
	best := guard.Decision{}
	for _, cand := range cands {
		d := c.s.guard.CheckArg(ctx, role, "path", cand)
		if d.Verdict > best.Verdict {
			d.Reason = fmt.Sprintf("%s's argument %s names %s: %s", t.Name, arg, p, d.Reason)
			best = d
		}
	}
	return best
}

// judgeURL judges a URL argument: a file: URL as its path; an http(s),
// ws(s) or ftp URL by its host, where commands reach other hosts through
// the session's proxy, by the proxy's allowlist (a host it would refuse a
// command is refused to the tool).
func (c *mcpChecker) judgeURL(ctx context.Context, t mcp.Tool, pathRole roles.Role, arg, v string) guard.Decision {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return guard.Decision{}
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		return c.judgePath(ctx, t, pathRole, arg, u.Path)
	case "http", "https", "ws", "wss", "ftp":
	default:
		return guard.Decision{}
	}
	if c.hosts == nil || u.Hostname() == "" {
		return guard.Decision{}
	}
	if d := c.hosts.Decide(ctx, u.Hostname(), 0); !d.Allow {
		return guard.Decision{Verdict: guard.Refuse, Checker: "egress", Reason: fmt.Sprintf(
			"%s's argument %s names the host %s, which this session's commands may not reach (%s); only the person allows a host, with [sandbox] allow_hosts in their own config.toml",
			t.Name, arg, u.Hostname(), d.Rule)}
	}
	return guard.Decision{}
}

// argStrings are the strings in a decoded JSON value: itself, an array's
// elements, an object's values, at any depth.
func argStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, argStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, argStrings(x[k])...)
		}
		return out
	}
	return nil
}

// bindMCP registers the MCP procedures (bind).
func (s *Session) bindMCP() {
	in := s.interp
	reg := func(name string, min, max int, doc string, fn func(args []scheme.Value) (scheme.Value, error)) {
		in.Register(scheme.NewPrimitive(name, min, max, doc, func(_ *scheme.Interp, args []scheme.Value) (scheme.Value, error) {
			return fn(args)
		}))
	}
	sym := func(s string) scheme.Symbol { return scheme.Symbol(s) }
	str := scheme.NewString
	notYet := func(name string) error {
		if s.mcp != nil && s.mcp.started == nil && s.mcp.off == "" && s.tools == nil {
			return scheme.Errorf("%s: the MCP servers start once the init chain has loaded; ask in a procedure the loop calls", name)
		}
		return nil
	}
	reg("mcp-configured?", 0, 0, "(mcp-configured?) is #t when the run declares MCP servers ([mcp.servers.NAME] in config.toml), started or not.",
		func([]scheme.Value) (scheme.Value, error) { return s.mcp != nil, nil })
	reg("mcp-servers", 0, 0, "(mcp-servers) lists the run's MCP servers, in the order declared: ((name . n) (transport . \"stdio\"|\"http\") (state . \"ready\"|\"failed\"|\"exited\"|\"closed\"|\"off\") (tools . count) (error . text-or-#f) (origin . \"file:line\")). It waits for their start (bounded by their init_timeout).",
		func([]scheme.Value) (scheme.Value, error) {
			if err := notYet("mcp-servers"); err != nil {
				return nil, err
			}
			if s.mcp == nil {
				return scheme.Nil, nil
			}
			s.mcpJoin()
			m := s.mcpManager()
			var out []scheme.Value
			for _, d := range s.opts.MCP {
				row := map[string]scheme.Value{"state": str("off"), "tools": 0, "error": false, "transport": str(d.Transport())}
				if s.mcp.off != "" {
					row["error"] = str(s.mcp.off)
				}
				if m != nil {
					for _, ss := range m.Servers() {
						if ss.Name == d.Name {
							row["state"], row["tools"] = str(string(ss.State)), ss.Tools
							if ss.Err != nil {
								row["error"] = str(s.redact(ss.Err.Error()))
							}
						}
					}
				}
				out = append(out, scheme.List(
					scheme.Cons(sym("name"), str(d.Name)), scheme.Cons(sym("transport"), row["transport"]),
					scheme.Cons(sym("state"), row["state"]), scheme.Cons(sym("tools"), row["tools"]),
					scheme.Cons(sym("error"), row["error"]), scheme.Cons(sym("origin"), str(d.Origin))))
			}
			return scheme.List(out...), nil
		})
	mcpToolValue := func(t mcp.Tool, full bool) scheme.Value {
		items := []scheme.Value{
			scheme.Cons(sym("name"), str(t.Name)), scheme.Cons(sym("server"), str(t.Server)),
			scheme.Cons(sym("remote"), str(t.Remote)), scheme.Cons(sym("summary"), str(t.Summary)),
			scheme.Cons(sym("read-only"), t.ReadOnly),
		}
		if full {
			var roles []scheme.Value
			for _, r := range t.Roles {
				roles = append(roles, scheme.List(str(r.Name), str(string(r.Role))))
			}
			items = append(items, scheme.Cons(sym("description"), str(t.Description)),
				scheme.Cons(sym("schema"), str(string(t.Schema))), scheme.Cons(sym("roles"), scheme.List(roles...)),
				scheme.Cons(sym("note"), str(t.Note)))
		}
		return scheme.List(items...)
	}
	reg("mcp-tools", 0, 1, "(mcp-tools [server]) lists the tools of the run's ready MCP servers (of server only, when given), by name: ((name . \"server__tool\") (server . s) (remote . its own name) (summary . one line) (read-only . #t/#f)). It waits for the servers' start.",
		func(args []scheme.Value) (scheme.Value, error) {
			if err := notYet("mcp-tools"); err != nil {
				return nil, err
			}
			server := ""
			if len(args) > 0 {
				server = scheme.DisplayString(args[0])
			}
			s.mcpJoin()
			m := s.mcpManager()
			if m == nil {
				return scheme.Nil, nil
			}
			var out []scheme.Value
			for _, t := range m.Tools(server) {
				out = append(out, mcpToolValue(t, false))
			}
			return scheme.List(out...), nil
		})
	reg("mcp-tool", 1, 1, "(mcp-tool name) is the MCP tool the model calls name, as mcp-tools lists it plus (description . text) (schema . JSON text) (roles . ((argument \"path\"|\"url\") …)) (note . how its name was made), or #f.",
		func(args []scheme.Value) (scheme.Value, error) {
			if err := notYet("mcp-tool"); err != nil {
				return nil, err
			}
			t, ok := s.mcpTool(scheme.DisplayString(args[0]))
			if !ok {
				return false, nil
			}
			return mcpToolValue(t, true), nil
		})
	reg("mcp-glob-match?", 2, 2, "(mcp-glob-match? pattern name) is #t when name matches the glob pattern (* any run of characters, ? one, [a-z] a class), as the profile's mcp-tools setting matches tools.",
		func(args []scheme.Value) (scheme.Value, error) {
			ok, err := path.Match(scheme.DisplayString(args[0]), scheme.DisplayString(args[1]))
			if err != nil {
				return nil, scheme.Errorf("mcp-glob-match?: the pattern %s: %v", scheme.WriteString(args[0]), err)
			}
			return ok, nil
		})
}
