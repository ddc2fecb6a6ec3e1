package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/mcp/mcptest"
	"go.uber.org/goleak"
)

// serverBin is the test binary itself: started with mcptest.Env set
// (serverEnv), it is the test server (mcptest), so no test builds one.
var serverBin, _ = os.Executable()

func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	os.Exit(m.Run())
}

// testServer declares the test server as name, with its flags.
func testServer(name string, flags ...string) Server {
	return Server{Name: name, Command: serverBin, Args: flags, Env: mcptest.StdioEnv()}
}

// generous bounds every wait a test does for something to happen.
const generous = 30 * time.Second

func fastOpts() Options {
	return Options{InitTimeout: generous, StopGrace: 200 * time.Millisecond, Environ: []string{"PATH=" + os.Getenv("PATH")}}
}

func startManager(t *testing.T, servers []Server, opts Options) *Manager {
	t.Helper()
	done := make(chan *Manager, 1)
	go func() { done <- Start(context.Background(), servers, opts) }()
	select {
	case m := <-done:
		t.Cleanup(func() { m.Close() })
		return m
	case <-time.After(generous + opts.initTimeout()):
		t.Fatal("Start did not return")
		return nil
	}
}

func status(t *testing.T, m *Manager, name string) Status {
	t.Helper()
	for _, s := range m.Servers() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no server %q in %+v", name, m.Servers())
	return Status{}
}

func call(t *testing.T, m *Manager, name, args string) Result {
	t.Helper()
	r, err := m.Call(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// alive reports whether pid is a running process (a zombie is not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !waitFor(generous, cond) {
		t.Fatalf("waited %v for %s", generous, what)
	}
}

// startHTTPServer runs the test server with -http and returns its URL, its
// process and its stderr.
func startHTTPServer(t *testing.T, args ...string) (string, *exec.Cmd, *tailBuf) {
	t.Helper()
	cmd := exec.Command(serverBin, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), mcptest.Env+"=1")
	stderr := &tailBuf{max: 4096}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case u := <-line:
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("mcpserver -http said %q", u)
		}
		return u, cmd, stderr
	case <-time.After(generous):
		t.Fatal("mcpserver -http did not say its URL")
		return "", nil, nil
	}
}

func TestStdioServer(t *testing.T) {
	m := startManager(t, []Server{testServer("t")}, fastOpts())
	st := status(t, m, "t")
	if st.State != StateReady || st.Transport != "stdio" || st.Pid == 0 || st.Server != "nodwyn-test 1" {
		t.Fatalf("status %+v", st)
	}
	var names []string
	for _, tool := range m.Tools("") {
		names = append(names, tool.Name)
	}
	want := "t__crash t__echo t__fail t__fetch t__getenv t__home_probe t__mixed t__read_file t__slow t__spawn t__write_file"
	if strings.Join(names, " ") != want || st.Tools != 11 {
		t.Fatalf("tools %v (%d), want %s", names, st.Tools, want)
	}
	echo, _ := m.Tool("t__echo")
	if echo.Summary != "Echo the text back." || echo.Remote != "echo" || echo.Server != "t" || echo.Note != "" {
		t.Errorf("echo %+v", echo)
	}
	if !strings.Contains(string(echo.Schema), `"text"`) {
		t.Errorf("echo's schema %s", echo.Schema)
	}

	if r := call(t, m, "t__echo", `{"text":"hello there"}`); r.Text != "hello there" || r.IsError {
		t.Errorf("echo: %+v", r)
	}
	if r := call(t, m, "t__fail", ``); r.Text != "it failed as asked" || !r.IsError {
		t.Errorf("fail: %+v", r)
	}
	wantMixed := "first\n[image image/png, 9 bytes]\nsecond\n[resource link file:///tmp/report.txt, text/plain, 2048 bytes, \"report\"]\n[resource mem://notes, text/plain, 11 bytes of text]"
	if r := call(t, m, "t__mixed", `{}`); r.Text != wantMixed {
		t.Errorf("mixed:\n%s\nwant\n%s", r.Text, wantMixed)
	}
	// Arguments the tool refuses: the server's answer, and it stays.
	_, err := m.Call(context.Background(), "t__echo", json.RawMessage(`{"text":5}`))
	if err == nil || !strings.Contains(err.Error(), `mcp server "t" answered`) || status(t, m, "t").State != StateReady {
		t.Errorf("bad arguments: %v, %+v", err, status(t, m, "t"))
	}
	if _, err := m.Call(context.Background(), "t__echo", json.RawMessage(`["x"]`)); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("arguments not an object: %v", err)
	}
	_, err = m.Call(context.Background(), "t__nope", nil)
	var ce *CallError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "no such MCP tool") {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestStdioEnvironment(t *testing.T) {
	opts := fastOpts()
	opts.Environ = append(opts.Environ, "BASE=from-environ", "SECRET_NOT_PASSED=")
	t.Setenv("NODWYN_MCP_LEAK", "leaked")
	m := startManager(t, []Server{withEnv(testServer("t"), "TOKEN", "from-entry")}, opts)
	for name, want := range map[string]string{"BASE": "from-environ", "TOKEN": "from-entry", "NODWYN_MCP_LEAK": "(unset)"} {
		if r := call(t, m, "t__getenv", `{"name":"`+name+`"}`); r.Text != want {
			t.Errorf("%s = %q, want %q", name, r.Text, want)
		}
	}
}

// The caller's start is the one that starts the process: nodwyn's is the
// execution seam.
func TestStartIsTheCallers(t *testing.T) {
	var mu sync.Mutex
	var started []string
	opts := fastOpts()
	opts.Start = func(cmd *exec.Cmd) error {
		mu.Lock()
		started = append(started, cmd.Path)
		mu.Unlock()
		if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
			return errors.New("not in a process group of its own")
		}
		if strings.Contains(cmd.Path, "refused") {
			return errors.New("refused by the seam")
		}
		return cmd.Start()
	}
	refused := filepath.Join(t.TempDir(), "refused")
	m := startManager(t, []Server{testServer("ok"), {Name: "no", Command: refused}}, opts)
	if len(started) != 2 {
		t.Fatalf("started %v", started)
	}
	if st := status(t, m, "ok"); st.State != StateReady {
		t.Errorf("ok: %+v", st)
	}
	st := status(t, m, "no")
	if st.State != StateFailed || !strings.Contains(fmt.Sprint(st.Err), "refused by the seam") || !strings.Contains(fmt.Sprint(st.Err), `"no"`) {
		t.Errorf("no: %+v", st)
	}
	if len(m.Tools("no")) != 0 || len(m.Tools("ok")) != 11 {
		t.Errorf("tools: %d of no, %d of ok", len(m.Tools("no")), len(m.Tools("ok")))
	}
}

func TestBadDeclarations(t *testing.T) {
	m := startManager(t, []Server{
		{Name: "both", Command: "x", URL: "http://127.0.0.1:1/"},
		{Name: "neither"},
		{Name: "ftp", URL: "ftp://example.com"},
		testServer("dup"),
		testServer("dup"),
		{Name: "missing", Command: "/nonexistent/mcp-server"},
	}, fastOpts())
	want := map[string]string{
		"both":    "not both",
		"neither": "set command",
		"ftp":     "not http",
		"missing": "no such file",
	}
	for _, st := range m.Servers() {
		if w, ok := want[st.Name]; ok && (st.State != StateFailed || !strings.Contains(fmt.Sprint(st.Err), w)) {
			t.Errorf("%s: %+v, want an error with %q", st.Name, st, w)
		}
	}
	sts := m.Servers()
	if sts[3].State != StateReady || sts[4].State != StateFailed || !strings.Contains(fmt.Sprint(sts[4].Err), "declared twice") {
		t.Errorf("dup: %+v %+v", sts[3], sts[4])
	}
}

func TestHTTPServer(t *testing.T) {
	url, _, _ := startHTTPServer(t, "-require-header", "Authorization: Bearer sesame")
	leaks := goleak.IgnoreCurrent()
	m := startManager(t, []Server{
		{Name: "web", URL: url, Headers: map[string]string{"Authorization": "Bearer sesame"}},
		{Name: "nokey", URL: url},
	}, fastOpts())
	st := status(t, m, "web")
	if st.State != StateReady || st.Transport != "http" || st.Tools != 11 || st.Pid != 0 {
		t.Fatalf("web: %+v", st)
	}
	if r := call(t, m, "web__echo", `{"text":"over http"}`); r.Text != "over http" {
		t.Errorf("echo: %+v", r)
	}
	if st := status(t, m, "nokey"); st.State != StateFailed || !strings.Contains(fmt.Sprint(st.Err), "Unauthorized") {
		t.Errorf("nokey: %+v", st)
	}

	// A slow call ends at its timeout and the server goes on.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := m.Call(ctx, "web__slow", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow over http: %v", err)
	}
	if r := call(t, m, "web__echo", `{"text":"still here"}`); r.Text != "still here" {
		t.Errorf("echo after slow: %+v", r)
	}
	m.Close()
	goleak.VerifyNone(t, leaks)
}

// A server that never answers initialize is left out at the bound, the
// others are not held up, and it is stopped (it ignores its stdin's end
// and SIGTERM: SIGKILL stops it).
func TestNeverAnswersInitialize(t *testing.T) {
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read, so that the server notices the client going (net/http
		// watches the connection only once the body is read).
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer hung.Close()
	leaks := goleak.IgnoreCurrent()
	opts := fastOpts()
	opts.InitTimeout = 500 * time.Millisecond
	m := startManager(t, []Server{
		testServer("silent", "-silent"),
		{Name: "hung", URL: hung.URL},
		testServer("ok"),
	}, opts)
	for _, name := range []string{"silent", "hung"} {
		st := status(t, m, name)
		if st.State != StateFailed || !strings.Contains(fmt.Sprint(st.Err), "did not answer its initialize") {
			t.Errorf("%s: %+v", name, st)
		}
	}
	if st := status(t, m, "ok"); st.State != StateReady {
		t.Errorf("ok: %+v", st)
	}
	pid := status(t, m, "silent").Pid
	waitUntil(t, "the silent server to be stopped", func() bool { return !alive(pid) })
	if r := call(t, m, "ok__echo", `{"text":"x"}`); r.Text != "x" {
		t.Errorf("ok: %+v", r)
	}
	if _, err := m.Call(context.Background(), "silent__echo", nil); err == nil {
		t.Error("a call to a left-out server's tool succeeded")
	}
	m.Close()
	goleak.VerifyNone(t, leaks)
}

// A call ends when its context does, or at its timeout, and the server
// stays usable.
func TestCallCancelled(t *testing.T) {
	m := startManager(t, []Server{
		testServer("t"),
		withTimeout(testServer("short"), 200*time.Millisecond),
	}, fastOpts())

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "t__slow", nil)
		errc <- err
	}()
	waitUntil(t, "the slow call to start", func() bool {
		return strings.Contains(status(t, m, "t").Stderr, "slow call started")
	})
	cancel()
	select {
	case err := <-errc:
		var ce *CallError
		if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v", err)
		}
	case <-time.After(generous):
		t.Fatal("a cancelled call did not return")
	}
	// The server heard of it (notifications/cancelled).
	waitUntil(t, "the server to see the cancel", func() bool {
		return strings.Contains(status(t, m, "t").Stderr, "slow call cancelled")
	})
	if r := call(t, m, "t__echo", `{"text":"after"}`); r.Text != "after" {
		t.Errorf("echo after cancel: %+v", r)
	}

	_, err := m.Call(context.Background(), "short__slow", nil)
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("timed out call: %v", err)
	}
	if st := status(t, m, "short"); st.State != StateReady {
		t.Errorf("short after a timeout: %+v", st)
	}
}

// A server that dies in the middle of a call gives that call an error
// saying so (with its last stderr), and its later calls fail at once.
func TestServerDiesMidCall(t *testing.T) {
	m := startManager(t, []Server{testServer("t")}, fastOpts())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "t__crash", nil)
		errc <- err
	}()
	var err error
	select {
	case err = <-errc:
	case <-time.After(generous):
		t.Fatal("a call to a server that died did not return")
	}
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "crashing as asked") {
		t.Fatalf("crash: %v", err)
	}
	st := status(t, m, "t")
	if st.State != StateExited {
		t.Errorf("status after the crash: %+v", st)
	}
	if _, err := m.Call(context.Background(), "t__echo", json.RawMessage(`{"text":"x"}`)); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("call after the crash: %v", err)
	}
	// The child it left holding its stdout goes at Close.
	var child int
	i := strings.Index(st.Stderr, "child ")
	if i < 0 {
		t.Fatalf("no child in %q", st.Stderr)
	}
	if _, err := fmt.Sscanf(st.Stderr[i:], "child %d", &child); err != nil || !alive(child) {
		t.Fatalf("no live child in %q (%v)", st.Stderr, err)
	}
	m.Close()
	if alive(child) {
		t.Errorf("the crashed server's child %d outlived Close", child)
	}
}

// The same, killed from outside (SIGKILL) while a call waits.
func TestServerKilledMidCall(t *testing.T) {
	m := startManager(t, []Server{testServer("t")}, fastOpts())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "t__slow", nil)
		errc <- err
	}()
	waitUntil(t, "the slow call to start", func() bool {
		return strings.Contains(status(t, m, "t").Stderr, "slow call started")
	})
	p, _ := os.FindProcess(status(t, m, "t").Pid)
	p.Kill()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "signal: killed") {
			t.Errorf("killed: %v", err)
		}
	case <-time.After(generous):
		t.Fatal("a call to a killed server did not return")
	}
}

// Close ends the calls in flight, and no process a server started is
// left: the server, and the child it started in the background.
func TestCloseStopsEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	m := Start(context.Background(), []Server{testServer("t"), testServer("u")}, fastOpts())
	child, err := strconv.Atoi(call(t, m, "t__spawn", "").Text)
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{status(t, m, "t").Pid, status(t, m, "u").Pid, child}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d is not running before Close", pid)
		}
	}
	errc := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "u__slow", nil)
		errc <- err
	}()
	waitUntil(t, "the slow call to start", func() bool {
		return strings.Contains(status(t, m, "u").Stderr, "slow call started")
	})

	closed := make(chan struct{})
	go func() {
		m.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(generous):
		t.Fatal("Close did not return")
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("the call in flight: %v", err)
		}
	case <-time.After(generous):
		t.Fatal("the call in flight did not return at Close")
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d outlived Close", pid)
		}
	}
	for _, st := range m.Servers() {
		if st.State != StateClosed {
			t.Errorf("%s after Close: %s", st.Name, st.State)
		}
	}
	if _, err := m.Call(context.Background(), "t__echo", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
	m.Close() // twice is fine
}

// The reference server, where npx can fetch it (not here: no network).
func TestServerEverything(t *testing.T) {
	if os.Getenv("NODWYN_SLOW_TESTS") != "1" {
		t.Skip("the reference server through npx takes tens of seconds: make test-slow runs it (NODWYN_SLOW_TESTS=1)")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("no npx: the reference @modelcontextprotocol/server-everything is not run")
	}
	opts := fastOpts()
	opts.Environ = os.Environ()
	opts.InitTimeout = 2 * time.Minute // a first npx fetches the package
	m := startManager(t, []Server{{Name: "everything", Command: npx, Args: []string{"-y", "@modelcontextprotocol/server-everything"}}}, opts)
	st := status(t, m, "everything")
	if st.State != StateReady {
		t.Skipf("server-everything did not start (no network or npm registry?): %v", st.Err)
	}
	if r := call(t, m, "everything__echo", `{"message":"hi"}`); !strings.Contains(r.Text, "hi") {
		t.Errorf("echo: %+v", r)
	}
	pid := st.Pid
	m.Close()
	if alive(pid) {
		t.Errorf("npx (pid %d) outlived Close", pid)
	}
}

// An HTTP server killed while a call waits: the call fails, not hangs.
func TestHTTPServerKilledMidCall(t *testing.T) {
	url, cmd, stderr := startHTTPServer(t)
	m := startManager(t, []Server{{Name: "web", URL: url}}, fastOpts())
	if st := status(t, m, "web"); st.State != StateReady {
		t.Fatalf("%+v", st)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "web__slow", nil)
		errc <- err
	}()
	waitUntil(t, "the slow call to start", func() bool { return strings.Contains(stderr.Tail(), "slow call started") })
	cmd.Process.Kill()
	select {
	case err := <-errc:
		var ce *CallError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), `mcp server "web" cannot be reached`) {
			t.Errorf("killed: %v", err)
		}
		if st := status(t, m, "web"); st.State != StateExited {
			t.Errorf("status after the kill: %+v", st)
		}
	case <-time.After(generous):
		t.Fatal("a call to a killed HTTP server did not return")
	}
	if _, err := m.Call(context.Background(), "web__echo", json.RawMessage(`{"text":"x"}`)); err == nil {
		t.Error("a call to a killed HTTP server succeeded")
	}
}

func withTimeout(s Server, d time.Duration) Server { s.CallTimeout = d; return s }

func withEnv(s Server, k, v string) Server {
	s.Env[k] = v
	return s
}
