package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"net/url"
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
	goleak.VerifyTestMain(m)
}

// lab is a proxy under test with a resolver that lies: every name in
// names resolves to its address, any other is unknown.
type lab struct {
	p     *Proxy
	names map[string]string
	mu    sync.Mutex
	recs  []Conn
	got   chan Conn
}

// allowLocal is a decision that allows the hosts in set as if the person
// named each exactly (the test servers are all on 127.0.0.1).
func allowLocal(set ...string) func(context.Context, string, int) Decision {
	return func(_ context.Context, host string, _ int) Decision {
		for _, s := range set {
			if s == host {
				return Decision{Allow: true, Rule: "test allows " + host, Local: true}
			}
		}
		return Decision{Rule: "test refuses " + host}
	}
}

func newLab(t *testing.T, decide func(context.Context, string, int) Decision, names map[string]string) *lab {
	t.Helper()
	l := &lab{names: names, got: make(chan Conn, 100)}
	l.p = &Proxy{
		Decide: decide,
		OnConn: func(c Conn) {
			l.mu.Lock()
			l.recs = append(l.recs, c)
			l.mu.Unlock()
			l.got <- c
		},
		LookupNetIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			a, ok := l.names[host]
			if !ok {
				return nil, fmt.Errorf("no such host %s", host)
			}
			var out []netip.Addr
			for _, s := range strings.Split(a, ",") {
				out = append(out, netip.MustParseAddr(s))
			}
			return out, nil
		},
	}
	if err := l.p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.p.Close() })
	return l
}

// next waits for the next connection record.
func (l *lab) next(t *testing.T) Conn {
	t.Helper()
	select {
	case c := <-l.got:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no connection record")
		return Conn{}
	}
}

// until waits for a record that ok accepts, skipping others.
func (l *lab) until(t *testing.T, ok func(Conn) bool) Conn {
	t.Helper()
	for {
		if c := l.next(t); ok(c) {
			return c
		}
	}
}

// connect opens a tunnel by hand: it returns the connection and the
// proxy's status line and body (read only when the status is not 200).
func connect(t *testing.T, network, proxyAddr, target string, early []byte) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial(network, proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	c.Write(early) // bytes a client sends before the answer
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

// echoServer answers each line with the line in upper case and counts
// the connections it accepted.
type echoServer struct {
	ln       net.Listener
	mu       sync.Mutex
	accepted int
	wg       sync.WaitGroup
}

func newEcho(t *testing.T) *echoServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.accepted++
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				defer c.Close()
				sc := bufio.NewScanner(c)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					if _, err := fmt.Fprintf(c, "%s\n", strings.ToUpper(sc.Text())); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); e.wg.Wait() })
	return e
}

func (e *echoServer) port() string { _, p, _ := net.SplitHostPort(e.ln.Addr().String()); return p }
func (e *echoServer) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.accepted
}

func TestConnectTunnelsBothWays(t *testing.T) {
	e := newEcho(t)
	l := newLab(t, allowLocal("echo.test"), map[string]string{"echo.test": "127.0.0.1"})
	early := []byte("sent before the answer\n")
	c, br, resp := connect(t, "tcp", l.p.Addr(), "echo.test:"+e.port(), early)
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	big := strings.Repeat("x", 200000) + "\n"
	if _, err := io.WriteString(c, big); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	want := "SENT BEFORE THE ANSWER\n" + strings.ToUpper(big)
	if string(got) != want {
		t.Fatalf("through the tunnel: %d bytes, want %d", len(got), len(want))
	}
	rec := l.next(t)
	if !rec.Allowed || rec.Host != "echo.test" || rec.Method != "CONNECT" || rec.Rule != "test allows echo.test" ||
		rec.Addr != "127.0.0.1:"+e.port() || rec.Err != "" {
		t.Errorf("record: %+v", rec)
	}
	if rec.Sent != int64(len(early)+len(big)) || rec.Received != int64(len(want)) {
		t.Errorf("bytes: sent %d received %d, want %d and %d", rec.Sent, rec.Received, len(early)+len(big), len(want))
	}
	if rec.Start.IsZero() || rec.End.Before(rec.Start) {
		t.Errorf("times: %v %v", rec.Start, rec.End)
	}
}

// TLS passes through: the client sees the server's own certificate.
func TestConnectTLSUntouched(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello over tls")
	}))
	defer srv.Close()
	// httptest's certificate names example.com.
	l := newLab(t, allowLocal("example.com"), map[string]string{"example.com": "127.0.0.1"})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: l.p.Addr()})
	var peer []*x509.Certificate
	tr.TLSClientConfig.VerifyConnection = func(cs tls.ConnectionState) error { peer = cs.PeerCertificates; return nil }
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://example.com:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello over tls" {
		t.Fatalf("body %q", body)
	}
	if len(peer) == 0 || !peer[0].Equal(srv.Certificate()) {
		t.Fatal("the client did not see the server's own certificate")
	}
	tr.CloseIdleConnections()
	rec := l.next(t)
	if !rec.Allowed || rec.Sent == 0 || rec.Received < int64(len(body)) {
		t.Errorf("record: %+v", rec)
	}
}

func TestRefusedHost(t *testing.T) {
	e := newEcho(t)
	l := newLab(t, allowLocal("echo.test"), map[string]string{"echo.test": "127.0.0.1", "evil.test": "127.0.0.1"})
	_, br, resp := connect(t, "tcp", l.p.Addr(), "evil.test:"+e.port(), nil)
	body, _ := io.ReadAll(br)
	if resp.StatusCode != 403 || !strings.Contains(resp.Status, "evil.test is not allowed") {
		t.Fatalf("status %q", resp.Status)
	}
	for _, want := range []string{"evil.test:" + e.port(), "test refuses evil.test", `"evil.test" to allow_hosts under [sandbox]`, "config.toml", "at the terminal"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("refusal %q lacks %q", body, want)
		}
	}
	rec := l.next(t)
	if rec.Allowed || rec.Rule != "test refuses evil.test" || rec.Addr != "" || rec.Host != "evil.test" {
		t.Errorf("record: %+v", rec)
	}
	// A plain request is refused alike.
	resp2, body2 := plainGet(t, l.p.Addr(), "http://evil.test:"+e.port()+"/x")
	if resp2.StatusCode != 403 || !strings.Contains(body2, AllowHostsKey) {
		t.Errorf("plain refusal: %s %q", resp2.Status, body2)
	}
	if rec := l.next(t); rec.Allowed || rec.Method != "GET" {
		t.Errorf("record: %+v", rec)
	}
	if e.count() != 0 {
		t.Errorf("the refused host was dialled %d times", e.count())
	}
}

// A proxy without a decision refuses.
func TestNoDecideRefuses(t *testing.T) {
	e := newEcho(t)
	l := newLab(t, nil, map[string]string{"echo.test": "127.0.0.1"})
	_, _, resp := connect(t, "tcp", l.p.Addr(), "echo.test:"+e.port(), nil)
	if resp.StatusCode != 403 {
		t.Fatal(resp.Status)
	}
	l.next(t)
}

func plainGet(t *testing.T, proxyAddr, target string) (*http.Response, string) {
	t.Helper()
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxyAddr})}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(target)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func TestPlainHTTPForwarded(t *testing.T) {
	type seen struct {
		uri    string
		host   string
		header http.Header
		body   string
	}
	got := make(chan seen, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.RequestURI, r.Host, r.Header.Clone(), string(b)}
		if r.URL.Path == "/stream" { // no length: the proxy passes it on chunked
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, strings.Repeat("r", 5000))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	l := newLab(t, allowLocal("web.test"), map[string]string{"web.test": "127.0.0.1"})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: l.p.Addr(), User: url.UserPassword("u", "secret")})}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	req, _ := http.NewRequest("POST", "http://web.test:"+port+"/up?q=1", strings.NewReader("payload"))
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "for the proxy only")
	req.Header.Set("X-End", "for the server")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b) != 5000 {
		t.Fatalf("%s, %d bytes", resp.Status, len(b))
	}
	s := <-got
	if s.uri != "/up?q=1" || s.body != "payload" || s.header.Get("X-End") != "for the server" {
		t.Errorf("the server saw %+v", s)
	}
	for _, h := range []string{"X-Hop", "Proxy-Authorization", "Proxy-Connection"} {
		if s.header.Get(h) != "" {
			t.Errorf("%s reached the server", h)
		}
	}
	if s.host != "web.test:"+port {
		t.Errorf("the server saw Host %q", s.host)
	}
	if s.header.Get("User-Agent") != "Go-http-client/1.1" {
		t.Errorf("User-Agent %q", s.header.Get("User-Agent"))
	}
	rec := l.next(t)
	if !rec.Allowed || rec.Method != "POST" || rec.Host != "web.test" || rec.Sent < int64(len("payload")) || rec.Received < 5000 || rec.Err != "" {
		t.Errorf("record: %+v", rec)
	}

	// A second request, on the same connection to the proxy, of unknown
	// length.
	resp, err = client.Get("http://web.test:" + port + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(b) != 5000 {
		t.Fatalf("%d bytes", len(b))
	}
	<-got
	if rec := l.next(t); rec.Method != "GET" || rec.Received < 5000 {
		t.Errorf("record: %+v", rec)
	}

	// HEAD: headers only, and the connection still serves.
	resp, err = client.Head("http://web.test:" + port + "/h")
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(resp, err)
	}
	resp.Body.Close()
	<-got
	l.next(t)

	// A body sent after 100 Continue.
	req, _ = http.NewRequest("PUT", "http://web.test:"+port+"/e", strings.NewReader("after continue"))
	req.Header.Set("Expect", "100-continue")
	tr.ExpectContinueTimeout = time.Hour // a proxy that never said go on would hang the test
	resp, err = client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if s := <-got; s.body != "after continue" {
		t.Errorf("the server saw %q", s.body)
	}
	l.next(t)
}

// A Host header other than the URI's does not reach the host: the proxy
// decided on the URI.
func TestPlainHostHeaderReplaced(t *testing.T) {
	hosts := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hosts <- r.Host }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	l := newLab(t, allowLocal("web.test"), map[string]string{"web.test": "127.0.0.1"})
	c, err := net.Dial("tcp", l.p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://web.test:%s/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", port)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(resp, err)
	}
	if h := <-hosts; h != "web.test:"+port {
		t.Errorf("the server saw Host %q", h)
	}
	l.next(t)
}

// A name that resolves to one of this machine's own interface addresses
// reaches a service listening on all interfaces only as a local name does.
func TestOwnAddressRefused(t *testing.T) {
	var own netip.Addr
	for a := range ownAddrs() {
		if !isLocal(a) && a.Is4() {
			own = a
		}
	}
	if !own.IsValid() {
		t.Skip("no non-loopback IPv4 address")
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	person := func(_ context.Context, host string, _ int) Decision {
		return Decision{Allow: true, Rule: "allowed", Local: host == "mine.test"}
	}
	l := newLab(t, person, map[string]string{"own.test": own.String(), "mine.test": own.String()})
	if _, _, resp := connect(t, "tcp", l.p.Addr(), "own.test:"+port, nil); resp.StatusCode != 403 {
		t.Errorf("own.test: %s", resp.Status)
	}
	l.next(t)
	if _, _, resp := connect(t, "tcp", l.p.Addr(), "mine.test:"+port, nil); resp.StatusCode != 200 {
		t.Errorf("mine.test: %s", resp.Status)
	}
	l.p.Close()
	l.next(t)
}

func TestOriginFormRefused(t *testing.T) {
	l := newLab(t, allowLocal(), nil)
	c, err := net.Dial("tcp", l.p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 {
		t.Fatal(resp.Status)
	}
}

// A name that resolves to a loopback or link-local address (DNS
// rebinding) does not reach it unless the decision says the person named
// the host exactly.
func TestLocalAddressesRefused(t *testing.T) {
	e := newEcho(t)
	notLocal := func(_ context.Context, host string, _ int) Decision {
		return Decision{Allow: true, Rule: "*.test from a default"}
	}
	l := newLab(t, notLocal, map[string]string{
		"rebind.test":   "127.0.0.1",
		"rebind6.test":  "::1",
		"mapped.test":   "::ffff:127.0.0.1",
		"meta.test":     "169.254.169.254",
		"any.test":      "0.0.0.0",
		"mixed.test":    "127.0.0.1,127.0.0.2",
		"localhost":     "127.0.0.1",
		"llv6.test":     "fe80::1",
		"unspecv6.test": "::",
	})
	for _, host := range []string{"rebind.test", "rebind6.test", "mapped.test", "meta.test", "any.test", "mixed.test", "localhost", "llv6.test", "unspecv6.test",
		"127.0.0.1", "[::1]", "0.0.0.0", "169.254.169.254"} {
		_, br, resp := connect(t, "tcp", l.p.Addr(), host+":"+e.port(), nil)
		body, _ := io.ReadAll(br)
		if resp.StatusCode != 403 || !strings.Contains(string(body), "loopback or link-local") {
			t.Errorf("%s: %s %q", host, resp.Status, body)
		}
		if rec := l.next(t); rec.Allowed || !strings.Contains(rec.Rule, "*.test from a default") {
			t.Errorf("%s: record %+v", host, rec)
		}
	}
	if e.count() != 0 {
		t.Errorf("a local address was dialled %d times", e.count())
	}
}

// The person's exact entry reaches a local server; their pattern and a
// default do not.
func TestAllowlistLocal(t *testing.T) {
	e := newEcho(t)
	var a Allowlist
	if err := a.Add(
		Rule{Pattern: "*.corp.test", Source: "config.toml:3", Person: true},
		Rule{Pattern: "dev.corp.test", Source: "git remote", Person: false},
		Rule{Pattern: "localhost", Source: "config.toml:3", Person: true},
		Rule{Pattern: "127.0.0.1", Source: "config.toml:3", Person: true},
	); err != nil {
		t.Fatal(err)
	}
	l := newLab(t, a.Decide, map[string]string{"localhost": "127.0.0.1", "dev.corp.test": "127.0.0.1", "x.corp.test": "127.0.0.1"})
	for host, want := range map[string]int{"localhost": 200, "127.0.0.1": 200, "dev.corp.test": 403, "x.corp.test": 403} {
		c, br, resp := connect(t, "tcp", l.p.Addr(), net.JoinHostPort(host, e.port()), nil)
		if resp.StatusCode != want {
			t.Errorf("%s: %s, want %d", host, resp.Status, want)
		}
		if want == 200 {
			io.WriteString(c, "ping\n")
			c.(*net.TCPConn).CloseWrite()
			if b, _ := io.ReadAll(br); string(b) != "PING\n" {
				t.Errorf("%s: %q", host, b)
			}
		}
		l.next(t)
	}
}

// A request through the proxy to the proxy itself would loop.
func TestSelfRefused(t *testing.T) {
	l := newLab(t, allowLocal("127.0.0.1"), nil)
	_, _, resp := connect(t, "tcp", l.p.Addr(), l.p.Addr(), nil)
	if resp.StatusCode != 403 {
		t.Fatal(resp.Status)
	}
	if rec := l.next(t); !strings.Contains(rec.Rule, "loop") {
		t.Errorf("record %+v", rec)
	}
}

func TestCloseEndsLongTunnel(t *testing.T) {
	e := newEcho(t)
	l := newLab(t, allowLocal("echo.test"), map[string]string{"echo.test": "127.0.0.1"})
	c, br, resp := connect(t, "tcp", l.p.Addr(), "echo.test:"+e.port(), nil)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	io.WriteString(c, "still here\n")
	if line, _ := br.ReadString('\n'); line != "STILL HERE\n" {
		t.Fatalf("%q", line)
	}
	// An idle keep-alive client connection too.
	idle, err := net.Dial("tcp", l.p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if err := l.p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(br); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Logf("read after close: %v", err)
	}
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("the idle connection is still open")
	}
	rec := l.next(t)
	if rec.Err != "proxy closed" || rec.Sent != int64(len("still here\n")) || rec.Received != int64(len("STILL HERE\n")) {
		t.Errorf("record: %+v", rec)
	}
	if _, err := net.Dial("tcp", l.p.Addr()); err == nil {
		t.Error("the proxy still listens")
	}
}

// Close while a decision waits (a confirm at the terminal): the decision's
// context ends and Close returns.
func TestCloseEndsWaitingDecision(t *testing.T) {
	waiting := make(chan struct{})
	decide := func(ctx context.Context, host string, _ int) Decision {
		close(waiting)
		<-ctx.Done()
		return Decision{Rule: "no answer before the session ended"}
	}
	l := newLab(t, decide, map[string]string{})
	c, err := net.Dial("tcp", l.p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT far.test:443 HTTP/1.1\r\nHost: far.test:443\r\n\r\n")
	<-waiting
	l.p.Close()
	if rec := l.next(t); rec.Allowed {
		t.Errorf("record %+v", rec)
	}
}

// The context given to Start stops the proxy.
func TestStartContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := &Proxy{}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	addr := p.Addr()
	cancel()
	p.Close()
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("the proxy still listens")
	}
}

func TestUnixSocket(t *testing.T) {
	e := newEcho(t)
	l := newLab(t, allowLocal("echo.test"), map[string]string{"echo.test": "127.0.0.1"})
	sock := filepath.Join(t.TempDir(), "egress.sock")
	if err := l.p.ListenUnix(sock); err != nil {
		t.Fatal(err)
	}
	c, br, resp := connect(t, "unix", sock, "echo.test:"+e.port(), nil)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	io.WriteString(c, "via unix\n")
	c.(*net.UnixConn).CloseWrite()
	if b, _ := io.ReadAll(br); string(b) != "VIA UNIX\n" {
		t.Fatalf("%q", b)
	}
	l.next(t)
	l.p.Close()
	if _, err := os.Stat(sock); err == nil {
		t.Error("the socket outlives the proxy")
	}
}

func TestEnv(t *testing.T) {
	env := strings.Join(Env("127.0.0.1:4711"), "\n")
	for _, want := range []string{"HTTP_PROXY=http://127.0.0.1:4711", "https_proxy=http://127.0.0.1:4711", "ALL_PROXY=http://127.0.0.1:4711", "NO_PROXY=localhost,127.0.0.1,::1"} {
		if !strings.Contains(env, want) {
			t.Errorf("Env lacks %s", want)
		}
	}
}

// commandEnv is a command's environment with the proxy settings and
// nothing else of the test's.
func commandEnv(t *testing.T, proxyAddr string) []string {
	return append(Env(proxyAddr), "PATH="+os.Getenv("PATH"), "HOME="+t.TempDir())
}

// curl through the proxy, by its environment: an allowed https host, a
// plain http one, and a refused one.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl")
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "curl got through") }))
	defer srv.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "plain "+r.RequestURI) }))
	defer plain.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	_, pport, _ := net.SplitHostPort(plain.Listener.Addr().String())
	l := newLab(t, allowLocal("example.com", "plain.test"), map[string]string{"example.com": "127.0.0.1", "plain.test": "127.0.0.1", "www.example.org": "127.0.0.1"})

	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(curl, append([]string{"-sS", "--max-time", "60", "--cacert", ca}, args...)...)
		cmd.Env = commandEnv(t, l.p.Addr())
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	if out, stderr, err := run("https://example.com:" + port + "/"); err != nil || out != "curl got through" {
		t.Errorf("curl https: %v %q %s", err, out, stderr)
	}
	if rec := l.next(t); !rec.Allowed || rec.Method != "CONNECT" {
		t.Errorf("record %+v", rec)
	}
	if out, stderr, err := run("http://plain.test:" + pport + "/a?b"); err != nil || out != "plain /a?b" {
		t.Errorf("curl http: %v %q %s", err, out, stderr)
	}
	if rec := l.next(t); !rec.Allowed || rec.Method != "GET" {
		t.Errorf("record %+v", rec)
	}
	_, stderr, err := run("https://www.example.org:" + port + "/")
	if err == nil || !strings.Contains(stderr, "403") {
		t.Errorf("curl to a refused host: %v %s", err, stderr)
	}
	if rec := l.next(t); rec.Allowed {
		t.Errorf("record %+v", rec)
	}
}

// git ls-remote and clone through the proxy to git http-backend.
func TestGitThroughProxy(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	execPath, err := exec.Command(git, "--exec-path").Output()
	if err != nil {
		t.Skip("git --exec-path:", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git-http-backend")
	}
	root := t.TempDir()
	gitIn := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(commandEnv(t, "127.0.0.1:1"), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	src := filepath.Join(root, "src")
	os.Mkdir(src, 0o755)
	gitIn(src, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644)
	gitIn(src, "add", "f")
	gitIn(src, "commit", "-q", "-m", "one")
	gitIn(root, "clone", "-q", "--bare", "src", "repo.git")
	head := strings.TrimSpace(gitIn(src, "rev-parse", "HEAD"))

	srv := httptest.NewServer(gitBackend(backend, root))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	l := newLab(t, allowLocal("git.test"), map[string]string{"git.test": "127.0.0.1"})

	cmd := exec.Command(git, "ls-remote", "http://git.test:"+port+"/repo.git")
	cmd.Env = append(commandEnv(t, l.p.Addr()), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), head+"\tHEAD") {
		t.Fatalf("git ls-remote: %v\n%s", err, out)
	}
	l.until(t, func(c Conn) bool { return c.Allowed && c.Host == "git.test" && c.Method == "GET" && c.Received > 0 })
	cmd = exec.Command(git, "ls-remote", "http://elsewhere.test:"+port+"/repo.git")
	cmd.Env = append(commandEnv(t, l.p.Addr()), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("git ls-remote to a refused host: %s", out)
	}
	l.until(t, func(c Conn) bool { return !c.Allowed && c.Host == "elsewhere.test" })
}

// gitBackend serves the repositories under root with git http-backend, as
// a web server's CGI does.
func gitBackend(backend, root string) http.Handler {
	return &cgi.Handler{
		Path: backend,
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root},
	}
}

// Serve takes a listener made elsewhere (inside a network namespace, for
// the session); before Start it refuses.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var idle Proxy
	if err := idle.Serve(ln); err == nil {
		t.Fatal("Serve before Start")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the refused listener still listens")
	}
	e := newEcho(t)
	l := newLab(t, allowLocal("echo.test"), map[string]string{"echo.test": "127.0.0.1"})
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.p.Serve(ln); err != nil {
		t.Fatal(err)
	}
	if _, _, resp := connect(t, "tcp", ln.Addr().String(), "echo.test:"+e.port(), nil); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	l.p.Close()
	l.next(t)
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the listener outlives the proxy")
	}
}
