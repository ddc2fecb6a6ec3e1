// Package mcp is nodwyn's client of MCP servers (the Model Context
// Protocol), built on github.com/modelcontextprotocol/go-sdk: it starts the
// servers a configuration declares, lists their tools under the names the
// model sees, and calls them.
//
// What it leaves to its caller: a stdio server is started through
// Options.Start, so the caller decides what confines it (nodwyn starts it
// through the execution seam, under the floor and in the session's
// cgroup); which tools are offered, with what description, and whether a
// call may run (the guard, helped by Tool.Roles).
//
// What it promises: Start returns within the servers' bounds
// (Server.InitTimeout, else Options.InitTimeout), whatever the servers
// do; a server that does not answer its initialize in time is
// reported in Status, left out and stopped in the background. A call ends
// when its context does, at its timeout, or when its server dies or
// cannot be reached, with a *CallError, never a hang. Close stops every
// server and returns once no process of a stdio server's process group is
// left (nodwyn's cgroup or subreaper is the backstop for one that left its
// group).
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is one declared server: [mcp.servers.NAME] in a config.toml.
// Exactly one of Command (stdio) and URL (streamable HTTP) is set.
type Server struct {
	Name string // NAME: the first half of its tools' names

	Command string            // the program, found on PATH as exec.Command does
	Args    []string          // its arguments
	Env     map[string]string // added to Options.Environ
	Dir     string            // its working directory; "" for the caller's

	URL     string            // the streamable HTTP endpoint
	Headers map[string]string // sent with every request (Authorization, …)

	// CallTimeout bounds each call to this server's tools in place of
	// Options.CallTimeout, when positive.
	CallTimeout time.Duration
	// InitTimeout bounds this server's start, initialize and tools/list in
	// place of Options.InitTimeout, when positive.
	InitTimeout time.Duration
}

// Transport names how a server is reached: "stdio" or "http".
func (s Server) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// Validate says what is wrong with s's declaration, naming the keys.
func (s Server) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("mcp server: no name")
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("mcp server %q: set command (a stdio server) or url (streamable HTTP)", s.Name)
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("mcp server %q: set command or url, not both", s.Name)
	case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0):
		return fmt.Errorf("mcp server %q: args and env are for a stdio server (command), not a url", s.Name)
	case s.Command != "" && len(s.Headers) > 0:
		return fmt.Errorf("mcp server %q: headers are for a url, not a stdio server (command)", s.Name)
	case s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		return fmt.Errorf("mcp server %q: url %q is not http:// or https://", s.Name, s.URL)
	}
	return nil
}

// Options are the manager's, shared by its servers.
type Options struct {
	// Start starts a stdio server's command, which has its pipes, Env, Dir
	// and SysProcAttr (Setpgid) set; it may add to SysProcAttr (a cgroup)
	// but must keep the pipes. nil is cmd.Start. nodwyn passes the
	// execution seam's StartProgram.
	Start func(cmd *exec.Cmd) error
	// Environ is a stdio server's environment before its Env (nodwyn: the
	// scrubbed environment commands get). nil is an empty environment.
	Environ []string
	// HTTPClient reaches URL servers; nil is a client of its own (with the
	// environment's proxy). Server.Headers are added to its requests.
	HTTPClient *http.Client
	// InitTimeout bounds starting a server, its initialize and the listing
	// of its tools. Zero is 10s.
	InitTimeout time.Duration
	// CallTimeout bounds a call (Server.CallTimeout overrides it). Zero is
	// 5 minutes; the caller's context may end it sooner.
	CallTimeout time.Duration
	// StopGrace is how long Close waits after closing a stdio server's
	// stdin before SIGTERM, and after SIGTERM before SIGKILL. Zero is 2s.
	StopGrace time.Duration
	// Stderr, when set, is given what the stdio servers write to stderr
	// (the last lines are kept in Status either way).
	Stderr io.Writer
	// ClientVersion is the version nodwyn gives in its initialize.
	ClientVersion string
}

func (o *Options) initTimeout() time.Duration { return or(o.InitTimeout, 10*time.Second) }
func (o *Options) stopGrace() time.Duration   { return or(o.StopGrace, 2*time.Second) }

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// State is where a server is in its life.
type State string

const (
	StateReady  State = "ready"  // initialized; its tools are listed
	StateFailed State = "failed" // did not start, initialize or list its tools in time: left out
	StateExited State = "exited" // was ready, then its process ended or its connection broke
	StateClosed State = "closed" // stopped by Close
)

// Status is one server's, for doctor and `nodwyn mcp list`.
type Status struct {
	Name      string
	Transport string // "stdio" or "http"
	State     State
	Err       error         // why it failed or exited
	Tools     int           // how many tools it offers
	Pid       int           // a stdio server's process, 0 otherwise
	Took      time.Duration // from start to ready (or failed)
	Stderr    string        // the last lines a stdio server wrote to stderr
	Server    string        // what it calls itself in its initialize answer ("name version")
}

// Tool is one tool of a ready server.
type Tool struct {
	Name   string // what the model calls it: server__tool, sanitized (see ToolName)
	Server string // the server's Name
	Remote string // the tool's own name on the server
	Note   string // what was changed to make Name ("" when it is server__tool as is)

	Summary     string          // the description's first sentence, for the first request
	Description string          // the whole description
	Schema      json.RawMessage // the input schema, given when the model asks for the tool
	Roles       []ArgRole       // arguments the schema marks as paths or URLs (ArgRoles)

	// The server's hints (annotations): a hint, not a promise, since the
	// server says it of itself.
	ReadOnly    bool
	Destructive bool
}

// Manager holds the servers of one session.
type Manager struct {
	opts    Options
	servers []*conn // in the order declared
	tools   map[string]*Tool
	order   []string // tool names, sorted

	closing   chan struct{}
	closeOnce sync.Once
	bg        sync.WaitGroup // stops of servers that failed to start
	http      *http.Client   // a URL server's, shared: Options.HTTPClient or one of the manager's own
}

// conn is one server's connection.
type conn struct {
	decl    Server
	mu      sync.Mutex
	status  Status
	session *sdk.ClientSession
	proc    *process           // stdio only
	kill    context.CancelFunc // a URL's: ends its requests in flight
	tools   []*Tool
}

// Start starts the servers at once and returns when each is ready or has
// failed: within its InitTimeout (else Options.InitTimeout), or sooner when ctx ends (ctx bounds
// the start, not the servers' lives: Close ends those). A declaration that
// does not validate, two servers of one name, a program that does not
// start, a server that does not answer: each is a failed Status, never an
// error, and the others go on.
func Start(ctx context.Context, servers []Server, opts Options) *Manager {
	m := &Manager{opts: opts, tools: map[string]*Tool{}, closing: make(chan struct{}), http: opts.HTTPClient}
	if m.http == nil {
		// Its own connections, closed at Close, rather than the process's
		// shared pool.
		m.http = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for _, s := range servers {
		c := &conn{decl: s, status: Status{Name: s.Name, Transport: s.Transport()}}
		m.servers = append(m.servers, c)
		err := s.Validate()
		if err == nil && seen[s.Name] {
			err = fmt.Errorf("mcp server %q is declared twice", s.Name)
		}
		seen[s.Name] = true
		if err != nil {
			c.status.State, c.status.Err = StateFailed, err
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.connect(ctx, c)
		}()
	}
	wg.Wait()

	// Names, in the order declared, then by the server's own order.
	taken := map[string]bool{}
	for _, c := range m.servers {
		for _, t := range c.tools {
			if taken[t.Name] {
				name := uniqueName(t.Name, t.Server+"__"+t.Remote, taken)
				t.Note = strings.TrimSpace(fmt.Sprintf("%s (%s__%s named %s: another tool has its name)", t.Note, t.Server, t.Remote, name))
				t.Name = name
			}
			taken[t.Name] = true
			m.tools[t.Name] = t
		}
	}
	m.order = slices.Sorted(maps.Keys(m.tools))
	return m
}

func (m *Manager) connect(ctx context.Context, c *conn) {
	began := time.Now()
	parent := ctx
	bound := or(c.decl.InitTimeout, m.opts.initTimeout())
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()

	err := m.initialize(ctx, c)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.Took = time.Since(began)
	if err != nil {
		switch {
		case parent.Err() != nil:
			err = fmt.Errorf("mcp server %q: the start was cancelled (%v): left out", c.decl.Name, context.Cause(parent))
		case ctx.Err() != nil:
			err = fmt.Errorf("mcp server %q did not answer its initialize and tools/list within %v: left out", c.decl.Name, bound)
		default:
			err = fmt.Errorf("mcp server %q: %w", c.decl.Name, err)
		}
		c.status.State, c.status.Err = StateFailed, err
		// Stopped in the background (Close waits for it): Start is not
		// held up by a server that ignores its stdin and SIGTERM.
		cs, proc, kill := c.session, c.proc, c.kill
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			if kill != nil {
				kill() // no polite DELETE to a server that did not answer
			}
			m.teardown(cs, proc, kill)
		}()
		return
	}
	c.status.State = StateReady
	c.status.Tools = len(c.tools)
}

// initialize connects to c's server and lists its tools.
func (m *Manager) initialize(ctx context.Context, c *conn) error {
	var transport sdk.Transport
	if c.decl.URL != "" {
		kill, cancel := context.WithCancel(context.Background())
		c.mu.Lock()
		c.kill = cancel
		c.mu.Unlock()
		transport = &sdk.StreamableClientTransport{
			Endpoint:   c.decl.URL,
			HTTPClient: httpClient(m.http, c.decl.Headers, kill),
			MaxRetries: -1, // a broken stream is the server gone; nothing retries behind the call's back
		}
	} else {
		p, err := startProcess(c.decl, &m.opts)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.proc = p
		c.status.Pid = p.pid
		c.mu.Unlock()
		transport = &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "nodwyn", Version: m.opts.ClientVersion}, nil)

	// A server that exits before it answers fails now, not at the bound.
	type connected struct {
		cs  *sdk.ClientSession
		err error
	}
	done := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(ctx, transport, nil)
		done <- connected{cs, err}
	}()
	var exited <-chan struct{} // never, for a URL
	if c.proc != nil {
		exited = c.proc.exited
	}
	abandon := func() {
		// Connect ends once the teardown that follows has cut its pipes
		// or requests; what it leaves is closed then (Close waits for it).
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			if r := <-done; r.err == nil {
				r.cs.Close()
			}
		}()
	}
	var r connected
	select {
	case r = <-done:
	case <-exited:
		abandon()
		return c.proc.exitError()
	case <-ctx.Done():
		abandon()
		return ctx.Err()
	}
	if r.err != nil {
		if c.proc != nil {
			select {
			case <-c.proc.exited:
				return c.proc.exitError()
			default:
			}
		}
		return r.err
	}
	c.mu.Lock()
	c.session = r.cs
	if ir := r.cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		c.status.Server = strings.TrimSpace(ir.ServerInfo.Name + " " + ir.ServerInfo.Version)
	}
	c.mu.Unlock()

	for t, err := range r.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing its tools: %w", err)
		}
		c.tools = append(c.tools, newTool(c.decl.Name, t))
	}
	return nil
}

func newTool(server string, t *sdk.Tool) *Tool {
	name, note := ToolName(server, t.Name)
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	if desc == "" {
		desc = t.Title
	}
	tool := &Tool{
		Name: name, Server: server, Remote: t.Name, Note: note,
		Summary: Summary(desc), Description: desc,
		Schema: schema, Roles: ArgRoles(schema),
	}
	if a := t.Annotations; a != nil {
		tool.ReadOnly = a.ReadOnlyHint
		tool.Destructive = a.DestructiveHint == nil || *a.DestructiveHint // the spec's default: true
		if tool.ReadOnly {
			tool.Destructive = false
		}
	}
	return tool
}

// Servers is every declared server's status, in the order declared.
func (m *Manager) Servers() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, c := range m.servers {
		c.mu.Lock()
		st := c.status
		if c.proc != nil {
			st.Stderr = c.proc.stderr.Tail()
		}
		c.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Tools is the tools of the servers that were ready at Start, sorted by
// name. A server that exits later keeps its tools here; calling them
// fails. server, when not "", keeps only that server's.
func (m *Manager) Tools(server string) []Tool {
	var out []Tool
	for _, n := range m.order {
		if t := m.tools[n]; server == "" || t.Server == server {
			out = append(out, *t)
		}
	}
	return out
}

// Tool is the tool the model calls name.
func (m *Manager) Tool(name string) (Tool, bool) {
	t, ok := m.tools[name]
	if !ok {
		return Tool{}, false
	}
	return *t, true
}

// CallError is a call that did not complete: the tool is unknown, its
// server is gone or went during the call, the call timed out or was
// cancelled. Its message is written for the model, as a tool's error.
type CallError struct {
	Tool string // the name the model used
	Err  error
}

func (e *CallError) Error() string { return e.Tool + ": " + e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// ErrClosed is the cause of a call made or cut short by Close.
var ErrClosed = errors.New("the MCP servers were stopped")

// Call calls the tool the model calls name with args, a JSON object (nil
// or empty is {}). A result whose IsError is set is the tool's own
// failure; a *CallError is a call that did not complete. It returns when
// the server answers, ctx ends, the call's timeout passes, the server
// dies, or Close is called.
func (m *Manager) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	t, ok := m.tools[name]
	if !ok {
		return Result{}, &CallError{name, errors.New("no such MCP tool")}
	}
	c := m.conn(t.Server)
	c.mu.Lock()
	state, cs, proc, why := c.status.State, c.session, c.proc, c.status.Err
	c.mu.Unlock()
	select {
	case <-m.closing:
		return Result{}, &CallError{name, ErrClosed}
	default:
	}
	if state != StateReady {
		return Result{}, &CallError{name, fmt.Errorf("mcp server %q has %s (%v)", t.Server, state, why)}
	}
	if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return Result{}, &CallError{name, fmt.Errorf("the arguments are not a JSON object: %v", err)}
	}
	timeout := or(c.decl.CallTimeout, or(m.opts.CallTimeout, 5*time.Minute))
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no answer within %v (the call was cancelled): %w", timeout, context.DeadlineExceeded))
	defer cancel()
	closing, cancelClosing := context.WithCancelCause(ctx)
	defer cancelClosing(nil)
	stopClose := watch(m.closing, func() { cancelClosing(ErrClosed) })
	defer stopClose()
	var stopExit func()
	if proc != nil {
		stopExit = watch(proc.exited, func() { cancelClosing(errExited) })
		defer stopExit()
	}

	res, err := callTool(closing, cs, &sdk.CallToolParams{Name: t.Remote, Arguments: args})
	if err == nil {
		return resultText(res), nil
	}
	// Why it did not complete, in the order of what is likeliest true.
	cause := context.Cause(closing)
	switch {
	case errors.Is(cause, ErrClosed):
		err = ErrClosed
	case answered(err):
		err = fmt.Errorf("mcp server %q answered: %v", t.Server, err)
	case proc != nil && (errors.Is(cause, errExited) || cause == nil && exitedWithin(proc, time.Second)):
		err = fmt.Errorf("mcp server %q %v", t.Server, proc.exitError())
		m.markExited(c, err)
	case cause != nil:
		err = cause
	case errors.Is(err, sdk.ErrConnectionClosed) || proc == nil && !answersPing(cs):
		err = fmt.Errorf("mcp server %q cannot be reached: %v", t.Server, err)
		m.markExited(c, err)
	default:
		err = fmt.Errorf("mcp server %q: %v", t.Server, err)
	}
	return Result{}, &CallError{name, err}
}

var errExited = errors.New("the server exited")

// answered reports whether err is the server's JSON-RPC error answer (it
// is there), rather than one the SDK makes of a connection that failed:
// "unknown", "client/server is closing", "rejected by transport".
func answered(err error) bool {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	switch we.Code {
	case -32001, -32003, -32004, -32005:
		return false
	}
	return true
}

// callTool is cs.CallTool, which returns when ctx ends, except while it
// writes to a stdio server that has stopped reading its stdin (a pipe's
// write does not heed a context): then callTool returns a second after ctx
// ends and leaves the write to end at Close, which closes the pipe.
func callTool(ctx context.Context, cs *sdk.ClientSession, p *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, p)
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		return a.res, a.err
	case <-ctx.Done():
	}
	select {
	case a := <-ch:
		return a.res, a.err
	case <-time.After(time.Second):
		return nil, context.Cause(ctx)
	}
}

// exitedWithin reports whether p exits within d: a pipe that broke is
// usually its process ending, which Wait reports a moment later.
func exitedWithin(p *process, d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// answersPing reports whether the server answers a ping within a second:
// whether an HTTP server whose call failed is still there.
func answersPing(cs *sdk.ClientSession) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return cs.Ping(ctx, nil) == nil
}

// watch calls f when ch closes, until the returned stop is called.
func watch(ch <-chan struct{}, f func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			f()
		case <-done:
		}
	}()
	return func() { close(done) }
}

func (m *Manager) markExited(c *conn, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status.State == StateReady {
		c.status.State, c.status.Err = StateExited, err
	}
}

func (m *Manager) conn(name string) *conn {
	for _, c := range m.servers {
		if c.decl.Name == name {
			return c
		}
	}
	return nil
}

// Close stops every server at once: calls in flight end with ErrClosed,
// each session is closed, and each stdio server's process group is ended
// (stdin closed; SIGTERM and SIGKILL after Options.StopGrace each). It
// returns when they are gone, within about three StopGraces.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		close(m.closing)
		var wg sync.WaitGroup
		for _, c := range m.servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.mu.Lock()
				if c.status.State == StateReady || c.status.State == StateExited {
					c.status.State = StateClosed
				}
				cs, proc, kill := c.session, c.proc, c.kill
				c.mu.Unlock()
				m.teardown(cs, proc, kill)
			}()
		}
		wg.Wait()
		m.bg.Wait()
		if m.opts.HTTPClient == nil {
			m.http.CloseIdleConnections()
		}
	})
	return nil
}

// teardown closes a server's session (bounded: a server that does not let
// go is left to the stop beside it) and stops its process or ends its
// requests.
func (m *Manager) teardown(cs *sdk.ClientSession, proc *process, kill context.CancelFunc) {
	grace := m.opts.stopGrace()
	done := make(chan struct{})
	go func() {
		if cs != nil {
			_ = cs.Close()
		}
		close(done)
	}()
	if proc != nil {
		// The session's Close closes the pipes; the process is stopped
		// beside it, so a server that ignores its stdin does not hold
		// Close up.
		proc.stop(grace)
	}
	select {
	case <-done:
	case <-time.After(grace):
	}
	if kill != nil {
		kill()
		select {
		case <-done:
		case <-time.After(grace):
		}
	}
}

// httpClient is base adding headers to each request, whose requests end
// when kill does.
func httpClient(base *http.Client, headers map[string]string, kill context.Context) *http.Client {
	c := new(http.Client)
	*c = *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &killableTransport{rt: rt, headers: headers, kill: kill}
	return c
}

type killableTransport struct {
	rt      http.RoundTripper
	headers map[string]string
	kill    context.Context
}

func (t *killableTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(t.kill, cancel)
	r = r.Clone(ctx)
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	resp, err := t.rt.RoundTrip(r)
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	resp.Body = &bodyDone{ReadCloser: resp.Body, done: func() { stop(); cancel() }}
	return resp, nil
}

// bodyDone calls done once, when the body is closed.
type bodyDone struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *bodyDone) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
