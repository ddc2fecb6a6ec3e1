package session

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/mcp"
	"github.com/nodwyn/nodwyn/internal/mcp/mcptest"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/scheme"
)

// The test binary is the MCP test server when NODWYN_MCPTEST is set
// (internal/mcp/mcptest): no test builds one.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	os.Exit(m.Run())
}

// stdioServer declares the test server as name, run by the kernel's seam
// as a command is.
func stdioServer(t *testing.T, name string, flags ...string) MCPServer {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return MCPServer{Server: mcp.Server{Name: name, Command: self, Args: flags, Env: mcptest.StdioEnv()}, Origin: "config.toml:1"}
}

// httpServer declares the test server served over streamable HTTP on
// 127.0.0.1, in this process.
func httpServer(t *testing.T, name string) MCPServer {
	t.Helper()
	srv := httptest.NewServer(mcptest.Handler(mcptest.NewServer(0), ""))
	t.Cleanup(srv.Close)
	return MCPServer{Server: mcp.Server{Name: name, URL: srv.URL}, Origin: "config.toml:9"}
}

// resultOf is the tool.result of the call named name (the first).
func (r *run) resultOf(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, d := range r.eventsOf("tool.result") {
		if d["name"] == name {
			return d
		}
	}
	t.Fatalf("no tool.result of %s in %v", name, r.eventsOf("tool.result"))
	return nil
}

func (r *run) decisionOf(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, d := range r.eventsOf("tool.decision") {
		if d["name"] == name {
			return d
		}
	}
	t.Fatalf("no tool.decision of %s", name)
	return nil
}

func toolNamed(req provider.Request, name string) (provider.Tool, bool) {
	for _, tl := range req.Tools {
		if tl.Name == name {
			return tl, true
		}
	}
	return provider.Tool{}, false
}

// A call through a session, over stdio and over HTTP: the first request
// lists the tools by name and one-line summary in tool-schema's
// description; tool-schema gives the schema and puts the tool in the
// tool list; the call the person's
// allow_tools allows runs, and its result is the model's, logged as any
// tool's.
func TestAnMCPToolIsOfferedDescribedAndCalled(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			opts := baseOpts(t)
			srv := stdioServer(t, "t")
			if transport == "http" {
				srv = httpServer(t, "t")
			}
			srv.AllowTools = []string{"echo"}
			opts.MCP = []MCPServer{srv}
			r := runSession(t, opts, `
> reply
call tool-schema {"name": "t__echo"}
> reply
call t__echo {"text": "hello over mcp"}
> reply
done`)
			if r.out.Status != "finished" {
				t.Fatalf("%+v", r.out)
			}
			ev := r.eventsOf("mcp.server")
			if len(ev) != 1 || ev[0]["state"] != "ready" || ev[0]["transport"] != transport || ev[0]["origin"] == "" {
				t.Fatalf("mcp.server events %v", ev)
			}
			reqs := r.model.Requests()
			// mcp-schemas 'catalogue, the default: the first request
			// lists the tool in tool-schema's description only; once
			// asked for, it is in the tool list, whole.
			if echo, ok := toolNamed(reqs[0], "t__echo"); ok {
				t.Fatalf("t__echo offered before it was asked for: %+v", echo)
			}
			ts, ok := toolNamed(reqs[0], "tool-schema")
			if !ok || !strings.Contains(ts.Description, "\nt__echo: Echo the text back.") {
				t.Fatalf("tool-schema is not offered with the catalogue: %+v", ts)
			}
			echo, ok := toolNamed(reqs[1], "t__echo")
			if !ok || !strings.Contains(echo.Description, "Useful for checking") || echo.Parameters["properties"] == nil {
				t.Fatalf("t__echo offered after tool-schema as %+v", echo)
			}
			if got := lastMessage(reqs[1]).Content; !strings.Contains(got, `"required":["text"]`) || !strings.Contains(got, "Useful for checking") {
				t.Errorf("tool-schema answered %q", got)
			}
			if got := lastMessage(reqs[2]); got.Content != "hello over mcp" || got.IsError || got.Name != "t__echo" {
				t.Errorf("the model read %+v", got)
			}
			if d := r.decisionOf(t, "t__echo"); d["allowed"] != true {
				t.Errorf("decision %v", d)
			}
			if res := r.resultOf(t, "t__echo"); res["output"] != "hello over mcp" || res["error"] != false || res["id"] == "" {
				t.Errorf("tool.result %v", res)
			}
		})
	}
}

// Without allow or allow_tools, an MCP call is an ordinary confirm:
// declined unattended (the tool never runs: its file is not written),
// answered by --yolo; allow = true lets every tool of the server run.
func TestAnMCPCallIsConfirmedUnlessAllowed(t *testing.T) {
	for _, c := range []struct {
		name         string
		yolo, allow  bool
		allowedTools []string
		runs         bool
	}{
		{name: "unattended", runs: false},
		{name: "yolo", yolo: true, runs: true},
		{name: "allow_tools", allowedTools: []string{"write_file"}, runs: true},
		{name: "allow_tools of another", allowedTools: []string{"echo"}, runs: false},
		{name: "allow", allow: true, runs: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := baseOpts(t)
			opts.Yolo = c.yolo
			srv := stdioServer(t, "t")
			srv.Allow, srv.AllowTools = c.allow, c.allowedTools
			opts.MCP = []MCPServer{srv}
			r := runSession(t, opts, `
> reply
call t__write_file {"path": "out.txt", "content": "written"}
> reply
done`)
			_, err := os.Stat(filepath.Join(opts.Folder, "out.txt"))
			if ran := err == nil; ran != c.runs {
				t.Fatalf("the tool ran: %v, want %v (%v)", ran, c.runs, r.decisionOf(t, "t__write_file"))
			}
			d := r.decisionOf(t, "t__write_file")
			if !c.runs && (d["decision"] != "confirm" || d["checker"] != "mcp" || !strings.Contains(d["answer"].(string), "declined")) {
				t.Errorf("decision %v", d)
			}
			if !c.runs && !strings.Contains(lastMessage(r.model.Requests()[1]).Content, "allow_tools") {
				t.Errorf("the model read %q", lastMessage(r.model.Requests()[1]).Content)
			}
		})
	}
}

// The arguments a tool's schema marks as paths are judged as the file
// tools' are: a credential is refused even for an allowed server, written
// as given, with a ~ (which a server may expand), or as a file: URL; a
// secret in any argument is a security confirm, declined unattended even
// with --yolo. An ordinary path in the folder goes through.
func TestAnMCPCallsArgumentsAreJudged(t *testing.T) {
	opts := baseOpts(t)
	opts.Yolo = true
	key := plantCanary(t)
	srv := stdioServer(t, "t")
	srv.Allow = true
	opts.MCP = []MCPServer{srv}
	writeFile(t, filepath.Join(opts.Folder, "notes.txt"), "plain notes")
	r := runSession(t, opts, `
> reply
call t__read_file {"path": "`+key+`"}
> reply
call t__read_file {"path": "~/.ssh/id_rsa"}
> reply
call t__fetch {"url": "file://`+key+`"}
> reply
call t__echo {"text": "AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
> reply
call t__read_file {"path": "notes.txt"}
> reply
done`)
	var decisions []string
	for _, d := range r.eventsOf("tool.decision") {
		decisions = append(decisions, d["decision"].(string)+"/"+d["checker"].(string)+"/"+strconv.FormatBool(d["allowed"].(bool)))
	}
	if len(decisions) != 5 {
		t.Fatalf("decisions %v", decisions)
	}
	for i, want := range []string{"refuse", "refuse", "refuse", "security-confirm"} {
		if !strings.HasPrefix(decisions[i], want+"/") || !strings.HasSuffix(decisions[i], "/false") {
			t.Errorf("call %d: %s, want %s and not run", i+1, decisions[i], want)
		}
	}
	if decisions[4] != "allow/mcp/true" && !strings.HasSuffix(decisions[4], "/true") {
		t.Errorf("a path in the folder: %s", decisions[4])
	}
	if out, saw := modelSaw(r.model.Requests(), canary); saw {
		t.Fatalf("the model saw the canary: %q", out)
	}
	if got := lastMessage(r.model.Requests()[5]).Content; got != "plain notes" {
		t.Errorf("notes.txt read as %q", got)
	}
}

// A server that never answers its initialize is left out within its
// bound, said in an mcp.server event; the run goes on with the other.
// A server killed in the middle of a call gives that call an error
// result, and the run goes on.
func TestAnMCPServerThatHangsOrDiesDoesNotStopTheRun(t *testing.T) {
	opts := baseOpts(t)
	mute := stdioServer(t, "mute", "-silent")
	mute.InitTimeout = 300 * time.Millisecond
	ok := stdioServer(t, "t")
	ok.Allow = true
	opts.MCP = []MCPServer{mute, ok}
	r := runSession(t, opts, `
> reply
call t__crash {}
> reply
call t__echo {"text": "after the crash"}
> reply
done`)
	if r.out.Status != "finished" {
		t.Fatalf("%+v", r.out)
	}
	states := map[string]map[string]any{}
	for _, d := range r.eventsOf("mcp.server") {
		states[d["server"].(string)] = d
	}
	if d := states["mute"]; d["state"] != "failed" || !strings.Contains(d["error"].(string), "did not answer its initialize") {
		t.Errorf("mute: %v", d)
	}
	if d := states["t"]; d["state"] != "ready" {
		t.Errorf("t: %v", d)
	}
	if _, offered := toolNamed(r.model.Requests()[0], "mute__echo"); offered {
		t.Error("a left-out server's tool is offered")
	}
	crash := lastMessage(r.model.Requests()[1])
	if !crash.IsError || !strings.Contains(crash.Content, "exit status 3") {
		t.Errorf("the crashed call: %+v", crash)
	}
	if after := lastMessage(r.model.Requests()[2]); !after.IsError || !strings.Contains(after.Content, "exited") {
		t.Errorf("a call after the crash: %+v", after)
	}
}

// No process of a server outlives the session: the servers, and a child
// one started in the background.
func TestNoMCPServerProcessOutlivesTheSession(t *testing.T) {
	opts := baseOpts(t)
	srv := stdioServer(t, "t")
	srv.Allow = true
	opts.MCP = []MCPServer{srv, stdioServer(t, "u")}
	opts.Model = script(t, "> reply\ncall t__spawn {}\n> reply\ndone")
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out := s.Run(context.Background()); out.Status != "finished" {
		t.Fatalf("%+v", out)
	}
	var pids []int
	for _, st := range s.mcpManager().Servers() {
		pids = append(pids, st.Pid)
	}
	if _, err := strconv.Atoi(lastMessage(opts.Model.(*provider.Script).Requests()[1]).Content); err != nil {
		t.Fatalf("spawn: %v", err)
	}
	// The pid it answered is its own namespace's (the session's PID
	// namespace, where there is one): its child is found from here.
	children := childrenOf(pids[0])
	if len(children) == 0 {
		t.Fatalf("the server %d has no child", pids[0])
	}
	pids = append(pids, children...)
	for _, pid := range pids {
		if !processAlive(pid) {
			t.Fatalf("pid %d is not running before Close", pid)
		}
	}
	s.Close()
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("pid %d outlived the session", pid)
		}
	}
}

// childrenOf are pid's children, as this process's PID namespace numbers
// them.
func childrenOf(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(w); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// processAlive reports whether pid is a running process (a zombie is not).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// A stdio server runs under the kernel floor and the write confinement
// as a command does: on its own account (no argument the guard could
// judge), it cannot read ~/.ssh/id_rsa nor write ~/.bashrc.
func TestAnMCPServerIsUnderTheKernelFloor(t *testing.T) {
	opts := baseOpts(t)
	plantCanary(t)
	bashrc := filepath.Join(os.Getenv("HOME"), ".bashrc")
	writeFile(t, bashrc, "# the person's\n")
	srv := stdioServer(t, "t")
	srv.Allow = true
	opts.MCP = []MCPServer{srv}
	r := runSession(t, opts, "> reply\ncall t__home_probe {}\n> reply\ndone")
	if strings.HasPrefix(r.s.FloorStatus(), "off") {
		t.Skipf("no kernel floor here: %s", r.s.FloorStatus())
	}
	got := lastMessage(r.model.Requests()[1]).Content
	if strings.Contains(got, canary) || !strings.Contains(got, "read: permission denied") {
		t.Errorf("the server read the key: %q", got)
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "# the person's\n" || !strings.Contains(got, "write: permission denied") {
		t.Errorf("the server wrote ~/.bashrc (%q): %q", b, got)
	}
	// Ordinary work goes through: a file in the folder.
	if res := r.resultOf(t, "t__home_probe"); res["error"] != false {
		t.Errorf("%v", res)
	}
}

// The scrubbed environment: a variable of nodwyn's own environment that
// commands do not get is not the server's either; its env entry is.
func TestAnMCPServerGetsTheCommandsEnvironment(t *testing.T) {
	opts := baseOpts(t)
	t.Setenv("NODWYN_TEST_SECRET_TOKEN", "leaked")
	srv := stdioServer(t, "t")
	srv.Env["FROM_ENTRY"] = "entry"
	srv.Allow = true
	opts.MCP = []MCPServer{srv}
	r := runSession(t, opts, `
> reply
call t__getenv {"name": "NODWYN_TEST_SECRET_TOKEN"}
> reply
call t__getenv {"name": "FROM_ENTRY"}
> reply
done`)
	if got := lastMessage(r.model.Requests()[1]).Content; got != "(unset)" {
		t.Errorf("the server saw NODWYN_TEST_SECRET_TOKEN=%q", got)
	}
	if got := lastMessage(r.model.Requests()[2]).Content; got != "entry" {
		t.Errorf("FROM_ENTRY=%q", got)
	}
}

// The profile's mcp-tools chooses what is offered: a glob list offers
// those; 'none starts no server at all.
func TestTheProfileChoosesTheMCPTools(t *testing.T) {
	t.Run("globs", func(t *testing.T) {
		opts := baseOpts(t)
		opts.MCP = []MCPServer{stdioServer(t, "t"), stdioServer(t, "u")}
		writeInit(t, &opts, `(define-profile 'picky (cons (cons 'mcp-tools '("t__e*" u)) (profile-named 'lean)))`)
		opts.Profile = "picky"
		r := runSession(t, opts, "> reply\ndone")
		// The catalogue in tool-schema's description lists what is
		// offered, one "name: summary" a line.
		ts, _ := toolNamed(r.model.Requests()[0], "tool-schema")
		var mcpNames []string
		for _, line := range strings.Split(ts.Description, "\n") {
			if name, _, ok := strings.Cut(line, ": "); ok && strings.Contains(name, "__") {
				mcpNames = append(mcpNames, name)
			}
		}
		got := strings.Join(mcpNames, " ")
		if !strings.HasPrefix(got, "t__echo u__crash u__echo") || strings.Contains(got, "t__fail") {
			t.Errorf("offered %s", got)
		}
	})
	t.Run("none", func(t *testing.T) {
		opts := baseOpts(t)
		opts.MCP = []MCPServer{stdioServer(t, "t")}
		writeInit(t, &opts, `(define-profile 'plain (cons (cons 'mcp-tools 'none) (profile-named 'lean)))`)
		opts.Profile = "plain"
		r := runSession(t, opts, "> reply\ndone")
		if ev := r.eventsOf("mcp.server"); len(ev) != 0 {
			t.Errorf("servers started: %v", ev)
		}
		if n := r.notes("MCP servers not started"); len(n) != 1 {
			t.Errorf("notes %v", n)
		}
		if _, ok := toolNamed(r.model.Requests()[0], "tool-schema"); ok {
			t.Error("tool-schema offered without MCP tools")
		}
	})
}

// (mcp-servers) and (mcp-tools server) from Scheme.
func TestMCPProceduresInScheme(t *testing.T) {
	opts := baseOpts(t)
	opts.Dry = true
	opts.MCP = []MCPServer{stdioServer(t, "t")}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eval := func(src string) string {
		t.Helper()
		v, err := s.interp.Eval(context.Background(), src, "test")
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return scheme.WriteString(v)
	}
	if got := eval(`(map (lambda (s) (list (alist-ref s 'name) (alist-ref s 'state) (alist-ref s 'tools))) (mcp-servers))`); got != `(("t" "ready" 11))` {
		t.Errorf("(mcp-servers) = %s", got)
	}
	if got := eval(`(alist-ref (car (mcp-tools "t")) 'name)`); got != `"t__crash"` {
		t.Errorf("(mcp-tools \"t\") starts with %s", got)
	}
	if got := eval(`(alist-ref (mcp-tool "t__echo") 'summary)`); got != `"Echo the text back."` {
		t.Errorf("summary %s", got)
	}
	if got := eval(`(mcp-tools "nope")`); got != `()` {
		t.Errorf("%s", got)
	}
}

// ProbeMCP starts the servers as a session would, and stops them.
func TestProbeMCP(t *testing.T) {
	opts := baseOpts(t)
	mute := stdioServer(t, "mute", "-silent")
	mute.InitTimeout = 200 * time.Millisecond
	opts.MCP = []MCPServer{stdioServer(t, "t"), mute}
	sts, tools, err := ProbeMCP(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 2 || sts[0].State != mcp.StateReady || sts[0].Tools != 11 || sts[1].State != mcp.StateFailed || len(tools) != 11 {
		t.Fatalf("%+v, %d tools", sts, len(tools))
	}
	if processAlive(sts[0].Pid) || processAlive(sts[1].Pid) {
		t.Error("a probed server outlived ProbeMCP")
	}
}

// firstRequestTokens is the first request's tools, as bytes/4 of their
// JSON (name, description, schema), with 50 MCP tools offered as the
// profile's mcp-schemas says.
func firstRequestTokens(t *testing.T, schemas string) (tools int, tokens int) {
	opts := baseOpts(t)
	opts.MCP = []MCPServer{stdioServer(t, "gh", "-tools", "50")}
	writeInit(t, &opts, `(define-profile 'measured (append (list (cons 'mcp-tools '("gh__*_??")) (cons 'mcp-schemas '`+schemas+`)) (profile-named 'lean)))`)
	opts.Profile = "measured"
	r := runSession(t, opts, "> reply\ndone")
	var mcpTools []provider.Tool
	for _, tl := range r.model.Requests()[0].Tools {
		if strings.HasPrefix(tl.Name, "gh__") || tl.Name == "tool-schema" {
			mcpTools = append(mcpTools, tl)
		}
	}
	b, err := json.Marshal(mcpTools)
	if err != nil {
		t.Fatal(err)
	}
	return len(mcpTools), (len(b) + 3) / 4
}

// TestFirstRequestTokensWithFiftyMCPTools is the figure of issue 31: the
// first request's tool definitions with 50 MCP tools, on demand (a
// summary each, and tool-schema) against with their full schemas.
//
//	go test -run TestFirstRequestTokens -v ./internal/session/
func TestFirstRequestTokensWithFiftyMCPTools(t *testing.T) {
	c, cat := firstRequestTokens(t, "catalogue")
	n, lean := firstRequestTokens(t, "on-demand")
	m, full := firstRequestTokens(t, "full")
	t.Logf("first request, 50 MCP tools: catalogue %d definitions ≈ %d tokens; on demand %d definitions ≈ %d tokens; full schemas %d definitions ≈ %d tokens (bytes/4 of their JSON)", c, cat, n, lean, m, full)
	if c != 1 || n != 51 || m != 50 {
		t.Fatalf("%d, %d and %d definitions", c, n, m)
	}
	if lean*5 > full || cat >= lean {
		t.Errorf("the catalogue (%d tokens) is not a fraction of on demand (%d), or that of full schemas (%d)", cat, lean, full)
	}
}

// BenchmarkSessionStartMCP is a session's start-up with one stdio server
// (New, the server ready, Close) against none:
//
//	go test -run '^$' -bench SessionStartMCP -benchtime 10x ./internal/session/
func BenchmarkSessionStartMCP(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{0, 1} {
		b.Run(strconv.Itoa(n)+"-servers", func(b *testing.B) {
			folder, dirs, st := benchEnv(b)
			opts := Options{Folder: folder, Instruction: "x", Dirs: dirs, Store: st, Unattended: true, Model: provider.NewScript(nil)}
			if n == 1 {
				opts.MCP = []MCPServer{{Server: mcp.Server{Name: "t", Command: self, Env: mcptest.StdioEnv()}}}
			}
			for b.Loop() {
				s, err := New(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				if m := s.mcpManager(); n == 1 && m.Servers()[0].State != mcp.StateReady {
					b.Fatalf("%+v", m.Servers())
				}
				s.Close()
			}
		})
	}
}
