package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if sock := os.Getenv("RPC_TEST_DIAL"); sock != "" {
		// The peer of another uid (TestAPeerOfAnotherUIDIsRefused): connect,
		// send a request, print the first line the server sends.
		c, err := net.Dial("unix", sock)
		if err != nil {
			os.Stdout.WriteString("dial: " + err.Error() + "\n")
			os.Exit(0)
		}
		c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi"}}` + "\n"))
		line, _ := bufio.NewReader(c).ReadString('\n')
		os.Stdout.WriteString(line)
		os.Exit(0)
	}
	if v := os.Getenv("RPC_TEST_FLOOD"); v != "" {
		flood(v) // TestAProcessConnectingInALoopPushesOutOnlyItsOwn
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

type echoParams struct {
	Text  string `json:"text"`
	Times int    `json:"times"`
}

// serve starts a server with test methods on a socket in a fresh
// directory and returns its path.
func serve(t *testing.T, extra map[string]Handler) (string, *Server) {
	t.Helper()
	methods := map[string]Handler{
		"echo": func(ctx context.Context, call *Call) (any, error) {
			var p echoParams
			if err := DecodeParams(call.Params, &p); err != nil {
				return nil, err
			}
			if p.Text == "" {
				return nil, Required("text", &p)
			}
			return map[string]any{"text": strings.Repeat(p.Text, max(p.Times, 1)), "uid": call.Peer.UID}, nil
		},
		"count": func(ctx context.Context, call *Call) (any, error) {
			for i := range 3 {
				if err := call.Notify("tick", map[string]int{"n": i}); err != nil {
					return nil, err
				}
			}
			return "done", nil
		},
		"wait": func(ctx context.Context, call *Call) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
		"boom": func(ctx context.Context, call *Call) (any, error) {
			var calls []*Call
			return calls[len(call.Method)], nil // a bug in a handler: index out of range
		},
	}
	for k, v := range extra {
		methods[k] = v
	}
	dir := filepath.Join(t.TempDir(), "nodwyn")
	path := filepath.Join(dir, "daemon.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(methods)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return path, s
}

func dial(t *testing.T, path string, onNotify func(string, json.RawMessage)) *Client {
	t.Helper()
	c, err := Dial(context.Background(), path, onNotify)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCallsAndErrors(t *testing.T) {
	path, _ := serve(t, nil)
	c := dial(t, path, nil)
	ctx := context.Background()
	var res struct {
		Text string
		UID  int
	}
	if err := c.Call(ctx, "echo", map[string]any{"text": "ab", "times": 2}, &res); err != nil || res.Text != "abab" || res.UID != os.Getuid() {
		t.Fatalf("echo: %+v %v", res, err)
	}
	cases := []struct {
		method string
		params any
		code   int
		says   string
	}{
		{"nope", nil, CodeMethodNotFound, "no method nope"},
		{"echo", map[string]any{"text": "a", "colour": "red"}, CodeInvalidParams, "unknown parameter colour"},
		{"echo", map[string]any{"text": 3}, CodeInvalidParams, "parameter text: number is not a string"},
		{"echo", []string{"a"}, CodeInvalidParams, "params must be an object"},
		{"echo", map[string]any{}, CodeInvalidParams, "missing parameter text"},
		{"boom", nil, CodeInternalError, "boom: internal error"},
	}
	for _, k := range cases {
		err := c.Call(ctx, k.method, k.params, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != k.code || !strings.Contains(e.Message, k.says) || e.Data["fix"] == nil {
			t.Errorf("%s %v: got %v (%+v), want code %d saying %q with a fix", k.method, k.params, err, e, k.code, k.says)
		}
	}
	if err := c.Call(ctx, "echo", map[string]any{"text": "a", "colour": "red"}, nil); err != nil {
		var e *Error
		errors.As(err, &e)
		if known, _ := e.Data["known"].([]any); len(known) != 2 || e.Data["param"] != "colour" {
			t.Errorf("the data does not name the parameter and the known ones: %+v", e.Data)
		}
	}
	// After a panic and every error the connection still serves.
	if err := c.Call(ctx, "echo", map[string]any{"text": "x"}, &res); err != nil || res.Text != "x" {
		t.Errorf("after the errors: %+v %v", res, err)
	}
}

// Lines that are not JSON-RPC get errors with id null, and the connection
// goes on.
func TestMalformedLines(t *testing.T) {
	path, _ := serve(t, nil)
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	for _, k := range []struct{ send, want string }{
		{"this is not json", `"code":-32700`},
		{`{"id":1,"method":"echo"}`, `"code":-32600`},
		{`{"jsonrpc":"2.0","id":7,"method":"echo","params":{"text":"ok"}}`, `"id":7,"result":{"text":"ok"`},
	} {
		nc.Write([]byte(k.send + "\n"))
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, k.want) {
			t.Errorf("%s: got %q %v, want %s", k.send, line, err, k.want)
		}
	}
	// A notification (no id) is run and not answered; a line longer than
	// MaxMessage ends the connection with a parse error.
	nc.Write([]byte(`{"jsonrpc":"2.0","method":"echo","params":{"text":"n"}}` + "\n"))
	nc.Write([]byte(`{"jsonrpc":"2.0","id":8,"method":"echo","params":{"text":"after"}}` + "\n"))
	if line, _ := r.ReadString('\n'); !strings.Contains(line, `"id":8`) {
		t.Errorf("after a notification: %q", line)
	}
	big := make([]byte, MaxMessage+10)
	for i := range big {
		big[i] = 'x'
	}
	nc.Write(append(big, '\n'))
	if line, _ := r.ReadString('\n'); !strings.Contains(line, "longer than") {
		t.Errorf("an overlong line: %q", line)
	}
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("the connection went on after an overlong line")
	}
}

// Notifications come on the caller's connection, in order, before the
// response; concurrent calls on one connection all get their answers.
func TestNotificationsAndConcurrentCalls(t *testing.T) {
	path, _ := serve(t, nil)
	var mu sync.Mutex
	var got []string
	c := dial(t, path, func(method string, params json.RawMessage) {
		mu.Lock()
		got = append(got, method+string(params))
		mu.Unlock()
	})
	var res string
	if err := c.Call(context.Background(), "count", nil, &res); err != nil || res != "done" {
		t.Fatal(res, err)
	}
	mu.Lock()
	if strings.Join(got, " ") != `tick{"n":0} tick{"n":1} tick{"n":2}` {
		t.Errorf("notifications: %q", got)
	}
	mu.Unlock()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r struct{ Text string }
			want := strings.Repeat("z", i+1)
			if err := c.Call(context.Background(), "echo", map[string]any{"text": "z", "times": i + 1}, &r); err != nil || r.Text != want {
				t.Errorf("call %d: %q %v", i, r.Text, err)
			}
		}()
	}
	wg.Wait()
}

// waitServer serves a "wait" method that says on started when it runs and
// on ended when its context has ended.
func waitServer(t *testing.T) (path string, s *Server, started, ended <-chan struct{}) {
	st, en := make(chan struct{}, 8), make(chan struct{}, 8)
	path, s = serve(t, map[string]Handler{
		"wait": func(ctx context.Context, call *Call) (any, error) {
			st <- struct{}{}
			<-ctx.Done()
			en <- struct{}{}
			return nil, ctx.Err()
		},
	})
	return path, s, st, en
}

// await fails t unless ch delivers within a generous deadline.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
	panic("unreachable")
}

// A call waiting on a client that closes gets ErrClosed; Close ends the
// handlers still waiting and returns once they have (goleak checks
// nothing is left), and the client sees its connection end.
func TestDisconnectEndsHandlers(t *testing.T) {
	path, s, started, ended := waitServer(t)
	c := dial(t, path, nil)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "wait", nil, nil) }()
	await(t, started, "the wait handler never started")
	c.Close()
	if err := await(t, errc, "a call on a closed client still waits"); !errors.Is(err, ErrClosed) {
		t.Errorf("the call on a closed client: %v", err)
	}
	c2 := dial(t, path, nil)
	go func() { errc <- c2.Call(context.Background(), "wait", nil, nil) }()
	await(t, started, "the wait handler never started")
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	await(t, closed, "Close never returned: a handler waiting on its context was not ended")
	// Both handlers have ended by now (c's, had its going not ended it).
	if n := len(ended); n != 2 {
		t.Errorf("Close returned with %d of 2 handlers ended", n)
	}
	if err := await(t, errc, "a waiting call survived Close"); err == nil {
		t.Error("a waiting call survived Close")
	}
	await(t, c2.Done(), "the client never saw the server close")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c2.Call(ctx, "echo", map[string]any{"text": "x"}, nil); err == nil || ctx.Err() != nil {
		t.Errorf("a call after Close: %v (want the connection's error at once)", err)
	}
}

// A handler's context ends when its peer goes (Handler's doc), with the
// server still serving: a client that stops following a run.events does
// not leave its handler waiting until the run ends.
func TestAPeerThatGoesEndsItsHandlers(t *testing.T) {
	path, _, started, ended := waitServer(t)
	c := dial(t, path, nil)
	go c.Call(context.Background(), "wait", nil, nil)
	await(t, started, "the wait handler never started")
	c.Close()
	await(t, ended, "the handler of a peer that went is still waiting")
}

func TestListen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run", "nodwyn")
	path := filepath.Join(dir, "daemon.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v %v, want %04o", p, fi.Mode().Perm(), err, want)
		}
	}
	s := NewServer(map[string]Handler{})
	go s.Serve(ln)
	if _, err := Listen(path); !errors.Is(err, ErrInUse) {
		t.Errorf("a second daemon on a live socket: %v", err)
	}
	s.Close()
	// What a daemon that died leaves is taken over.
	dead, err := net.Listen("unix", path+".dead")
	if err != nil {
		t.Fatal(err)
	}
	dead.(*net.UnixListener).SetUnlinkOnClose(false)
	dead.Close()
	ln2, err := Listen(path + ".dead")
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	ln2.Close()
	// Not a socket, or a directory open to others: refused, naming the fix.
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	if _, err := Listen(filepath.Join(dir, "file")); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("over a file: %v", err)
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := Listen(filepath.Join(open, "s.sock")); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("in a directory open to others: %v", err)
	}
}

// A peer of another uid is refused by SO_PEERCRED even when the socket's
// modes would let it connect; the daemon's own user is served (the tests
// above).
func TestAPeerOfAnotherUIDIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a peer as nobody (setpriv); CI runs as root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux) to run a peer as another uid")
	}
	path, _ := serve(t, nil)
	// Open the way for the filesystem: only the credentials check stands.
	for p := filepath.Dir(path); p != "/" && p != filepath.Dir(os.TempDir()); p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	os.Chmod(path, 0o666)
	exe := filepath.Join(t.TempDir(), "peer")
	os.Chmod(filepath.Dir(exe), 0o755)
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", exe)
	cmd.Env = []string{"RPC_TEST_DIAL=" + path}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the peer: %v\n%s", err, out)
	}
	if strings.HasPrefix(string(out), "dial:") {
		t.Skipf("nobody cannot reach the socket here (%s); the credentials check is not what stopped it", out)
	}
	if !strings.Contains(string(out), `"code":-32003`) || !strings.Contains(string(out), "uid 65534") || strings.Contains(string(out), `"result"`) {
		t.Errorf("a peer of uid 65534 got %q; want a refusal naming its uid", out)
	}
}

// With a Hello, nothing but the hello is served until it has succeeded;
// Admit refuses peers the uid check lets through.
func TestHelloAndAdmit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	path := filepath.Join(dir, "s.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	admit := true
	var mu sync.Mutex
	s := NewServer(map[string]Handler{"echo": func(ctx context.Context, call *Call) (any, error) { return "served", nil }})
	s.Hello = func(ctx context.Context, call *Call) (any, error) {
		var p struct {
			Token string `json:"token"`
		}
		if err := DecodeParams(call.Params, &p); err != nil {
			return nil, err
		}
		if p.Token != "secret" {
			return nil, Errorf(CodeRefused, "read the token", "wrong token")
		}
		return "hello", nil
	}
	s.Admit = func(p Peer) error {
		mu.Lock()
		defer mu.Unlock()
		if !admit {
			return errors.New("a process of one of the daemon's runs")
		}
		return nil
	}
	go s.Serve(ln)
	defer s.Close()
	c := dial(t, path, nil)
	ctx := context.Background()
	if err := c.Call(ctx, "echo", nil, nil); err == nil || !strings.Contains(err.Error(), "not authenticated") {
		t.Errorf("before hello: %v", err)
	}
	if err := c.Call(ctx, HelloMethod, map[string]string{"token": "guess"}, nil); err == nil || !strings.Contains(err.Error(), "wrong token") {
		t.Errorf("a wrong token: %v", err)
	}
	if err := c.Call(ctx, "echo", nil, nil); err == nil {
		t.Error("served after a wrong token")
	}
	var res string
	if err := c.Call(ctx, HelloMethod, map[string]string{"token": "secret"}, &res); err != nil || res != "hello" {
		t.Fatalf("hello: %q %v", res, err)
	}
	if err := c.Call(ctx, "echo", nil, &res); err != nil || res != "served" {
		t.Errorf("after hello: %q %v", res, err)
	}
	mu.Lock()
	admit = false
	mu.Unlock()
	c2 := dial(t, path, nil)
	if err := c2.Call(ctx, HelloMethod, map[string]string{"token": "secret"}, nil); err == nil {
		t.Error("a refused peer's hello worked")
	}
	<-c2.Done() // the refusal is what the connection ended with
	if err := c2.Err(); err == nil || !strings.Contains(err.Error(), "one of the daemon's runs") {
		t.Errorf("a refused peer: %v", err)
	}
}

// Before its hello a connection costs little: a long line ends it; one that
// has said hello may send long messages. (Its hello timeout: below; how
// many wait at once: admission_test.go.)
func TestBeforeTheHelloAConnectionIsCheap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	path := filepath.Join(dir, "s.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(map[string]Handler{"echo": func(ctx context.Context, call *Call) (any, error) { return len(call.Params), nil }})
	s.Hello = func(ctx context.Context, call *Call) (any, error) { return "hello", nil }
	go s.Serve(ln)
	defer s.Close()
	// A line longer than PreHelloMessage before the hello ends the connection.
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	nc.Write(append([]byte(strings.Repeat("x", PreHelloMessage+10)), '\n'))
	r := bufio.NewReader(nc)
	if line, _ := r.ReadString('\n'); !strings.Contains(line, "longer than 4096") {
		t.Errorf("a long line before the hello: %q", line)
	}
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("the connection went on")
	}
	nc.Close()
	// A connection that says hello may send long messages.
	c := dial(t, path, nil)
	if err := c.Call(context.Background(), HelloMethod, nil, nil); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.Call(context.Background(), "echo", map[string]string{"x": strings.Repeat("y", 100<<10)}, &n); err != nil || n < 100<<10 {
		t.Errorf("a long message after the hello: %d %v", n, err)
	}
	// How many wait at once: admission_test.go.
}

// A connection that does not say hello within the server's hello timeout
// is closed (the timeout is shortened here; nothing is timed).
func TestNoHelloInTimeIsClosed(t *testing.T) {
	path, _ := serveHello(t, func(s *Server) { s.helloTimeout = time.Millisecond })
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if b, err := io.ReadAll(nc); err != nil || len(b) != 0 {
		t.Errorf("an idle connection past its hello timeout: read %q %v, want the end and nothing said", b, err)
	}
}

// Shutdown whose grace runs out ends what is still waiting, as Close does:
// it stopped accepting first, which must not make the Close it ends with
// a no-op.
func TestShutdownEndsWhatOutlivesItsGrace(t *testing.T) {
	path, s, started, ended := waitServer(t)
	c := dial(t, path, nil)
	go c.Call(context.Background(), "wait", nil, nil)
	await(t, started, "the wait handler never started")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace at all
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	await(t, ended, "a handler still waits after Shutdown's grace ran out")
	await(t, done, "Shutdown did not return")
}
