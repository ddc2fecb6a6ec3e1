package provider

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// connCounter is an httptest server that counts the connections it took.
func connCounter(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	srv, n := unstartedCounter(h)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, n
}

// unstartedCounter is connCounter's server before it starts.
func unstartedCounter(h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return srv, &n
}

func post(t testing.TB, hc *http.Client, ctx context.Context, url, body string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return fmt.Sprintf("%d %s", res.StatusCode, b), err
}

// A provider's requests, one after another, go over one connection, and
// each carries its body whole, with the headers the caller set.
func TestWireTransportKeepsOneConnection(t *testing.T) {
	srv, conns := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" || r.ContentLength != int64(len(b)) {
			t.Errorf("header %v, length %d for %d bytes", r.Header, r.ContentLength, len(b))
		}
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // chunked
		}
		fmt.Fprintf(w, "got %s", b)
	})
	hc := defaultHTTPClient(srv.URL)
	for i := range 6 {
		path := "/length"
		if i%2 == 1 {
			path = "/chunked"
		}
		got, err := post(t, hc, t.Context(), srv.URL+path, fmt.Sprintf(`{"n":%d}`, i))
		if want := fmt.Sprintf(`200 got {"n":%d}`, i); err != nil || got != want {
			t.Fatalf("request %d: %q, %v; want %q", i, got, err, want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("6 requests took %d connections, want 1", n)
	}
}

// An event stream the caller stops reading at "[DONE]", with the chunked
// body's end still to come, leaves its connection for the next request.
func TestWireTransportKeepsAConnectionReadToDone(t *testing.T) {
	streamed := make(chan struct{}) // the caller has its reply: the body's end may come
	srv, conns := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, oaText("hi"))
		w.(http.Flusher).Flush()
		select { // the body's last chunk comes after the caller stopped reading
		case <-streamed:
		case <-r.Context().Done():
		}
	})
	m, err := New(fastRetries(Config{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1}))
	if err != nil {
		t.Fatal(err)
	}
	tr := m.(*OpenAI).hc.Transport.(*wireTransport)
	for range 3 {
		if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); err != nil {
			t.Fatal(err)
		}
		streamed <- struct{}{}
		// a tool runs, while the reply's end is read
		waitFor(t, func() bool { tr.mu.Lock(); defer tr.mu.Unlock(); return tr.idle != nil })
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 requests took %d connections, want 1", n)
	}
}

// A kept connection the server has closed since is not used: the next
// request goes on a new one, without an error.
func TestWireTransportServerClosedTheKeptConnection(t *testing.T) {
	var mu sync.Mutex
	var last net.Conn
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateIdle {
			mu.Lock()
			last = c
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	hc := defaultHTTPClient(srv.URL)
	tr := hc.Transport.(*wireTransport)
	for i := range 3 {
		if got, err := post(t, hc, t.Context(), srv.URL, "{}"); err != nil || got != "200 ok" {
			t.Fatalf("request %d: %q %v", i, got, err)
		}
		waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return last != nil })
		mu.Lock()
		last.Close() // the server's idle timeout
		last = nil
		mu.Unlock()
		// The close has reached the client's socket: a look at the kept
		// connection (what the next request makes) sees it.
		waitFor(t, func() bool {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			return tr.idle == nil || !tr.idle.open()
		})
	}
}

// A raw server: each connection's requests are answered by reply (nil: the
// connection is closed at once, having read the request).
func rawServer(t *testing.T, reply func(conn, req int) string) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1))
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					r := reply(n, i)
					if r == "" {
						return
					}
					io.WriteString(c, r)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

const okReply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// A request written whole on a kept connection and then dropped unanswered
// is not sent again by the transport: the server may have acted on it (a
// model's reply is paid for), and the caller's retries, which count and
// bound it, decide. With no retries the server gets it once.
func TestWireTransportDoesNotResendWhatWasWritten(t *testing.T) {
	var got atomic.Int64
	url, conns := rawServer(t, func(conn, req int) string {
		if conn == 1 && req == 0 {
			return okReply
		}
		got.Add(1)
		return "" // read it, then dropped the connection
	})
	hc := defaultHTTPClient(url)
	if s, err := post(t, hc, t.Context(), url, "{}"); err != nil || s != "200 ok" {
		t.Fatalf("the first request: %q %v", s, err)
	}
	if _, err := post(t, hc, t.Context(), url, "{}"); err == nil {
		t.Error("a request the server dropped succeeded")
	}
	if n := got.Load(); n != 1 {
		t.Errorf("the server got the dropped request %d times, want 1", n)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}

	// Through a provider with no retries: once.
	got.Store(0)
	url, _ = rawServer(t, func(conn, req int) string {
		if conn == 1 && req == 0 {
			return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + fmt.Sprint(len(oaText("hi"))) + "\r\n\r\n" + oaText("hi")
		}
		got.Add(1)
		return ""
	})
	m, err := New(fastRetries(Config{Provider: "openai", BaseURL: url + "/v1", Model: "m", MaxRetries: -1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "y"}}}, nil); err == nil {
		t.Error("a request the server dropped succeeded")
	}
	if n := got.Load(); n != 1 {
		t.Errorf("with no retries the server got the request %d times, want 1", n)
	}
}

// A reply the server says ends its connection (Connection: close) is not
// kept, nor is a connection whose reply had more bytes than it said.
func TestWireTransportDoesNotKeepWhatTheServerCloses(t *testing.T) {
	url, conns := rawServer(t, func(conn, req int) string {
		return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
	})
	hc := defaultHTTPClient(url)
	for range 2 {
		if got, err := post(t, hc, t.Context(), url, "{}"); err != nil || got != "200 ok" {
			t.Fatalf("%q %v", got, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("Connection: close: %d connections, want 2", n)
	}
	url, conns = rawServer(t, func(conn, req int) string {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA"
	})
	hc = defaultHTTPClient(url)
	for range 2 {
		if got, err := post(t, hc, t.Context(), url, "{}"); err != nil || got != "200 ok" {
			t.Fatalf("%q %v", got, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("a reply with bytes after it: %d connections, want 2", n)
	}
}

// A cancelled request stops a read that waits on the server, with the
// context's error, and its connection is not used again. (How soon is
// BenchmarkWireTransportCancel's.)
func TestWireTransportCancelStopsARead(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stalled := make(chan struct{}, 1) // the server sent a part and waits
	srv, conns := connCounter(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			io.WriteString(w, "part")
			w.(http.Flusher).Flush()
			stalled <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, "ok")
	})
	hc := defaultHTTPClient(srv.URL)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := post(t, hc, ctx, srv.URL+"/stall", "{}")
		errc <- err
	}()
	<-stalled
	cancel()
	// The wait is for the read to end; only a read that never ends (a
	// hang, not a slow machine) runs into the bound.
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the read is still waiting a minute after the cancel")
	}
	if got, err := post(t, hc, t.Context(), srv.URL, "{}"); err != nil || got != "200 ok" {
		t.Fatalf("after the cancel: %q %v", got, err)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the cancelled one not kept)", n)
	}
}

// A header value with a line end (a key read from a file with its newline)
// is refused before anything is sent.
func TestWireTransportRefusesALineEndInAHeader(t *testing.T) {
	url, conns := rawServer(t, func(conn, req int) string { return okReply })
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer sk-x\r\nX-Injected: 1")
	_, err := defaultHTTPClient(url).Do(req)
	if err == nil || !strings.Contains(err.Error(), `invalid header field value for "Authorization"`) {
		t.Errorf("err = %v", err)
	}
	if conns.Load() != 0 {
		t.Error("the request was sent")
	}
}

// A request the environment sends through a proxy goes through it (net/http
// reads the proxy variables once a process, so this runs in a process of
// its own).
func TestWireTransportUsesTheEnvironmentsProxy(t *testing.T) {
	if os.Getenv("NODWYN_WIRE_PROXY_CHILD") != "" {
		hc := defaultHTTPClient("http://model.invalid")
		// A session that ended before any request (CloseIdle) leaves the
		// model usable, through the proxy too.
		hc.CloseIdleConnections()
		for range 2 {
			got, err := post(t, hc, t.Context(), "http://model.invalid/v1/chat/completions", "{}")
			if err != nil || got != "200 via proxy" {
				t.Fatalf("%q %v", got, err)
			}
			hc.CloseIdleConnections()
		}
		return
	}
	var seen atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.String())
		io.WriteString(w, "via proxy")
	}))
	t.Cleanup(proxy.Close)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWireTransportUsesTheEnvironmentsProxy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NODWYN_WIRE_PROXY_CHILD=1", "HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "NO_PROXY=", "no_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s, _ := seen.Load().(string); s != "http://model.invalid/v1/chat/completions" {
		t.Errorf("the proxy saw %q", s)
	}
}

// waitFor waits until ok holds, looking every millisecond. The deadline
// is generous: only a state that never comes (a bug, not a slow machine)
// runs into it.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the state waited for did not come within a minute")
		}
	}
}

// BenchmarkWireTransportCancel measures how soon a cancel ends a request:
// a read that waits on the server, and a write blocked on a server that
// does not read (16 MiB). The tests check that a cancel ends them; how
// soon is a bound a loaded machine may not keep, so it is measured here,
// as µs/cancel (from cancel to the request's return):
//
//	go test -run '^$' -bench WireTransportCancel ./internal/provider/
func BenchmarkWireTransportCancel(b *testing.B) {
	measure := func(b *testing.B, url string, body string, ready <-chan struct{}) {
		var total time.Duration
		for b.Loop() {
			ctx, cancel := context.WithCancel(b.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := post(b, defaultHTTPClient(url), ctx, url, body)
				errc <- err
			}()
			<-ready
			start := time.Now()
			cancel()
			err := <-errc
			total += time.Since(start)
			if !errors.Is(err, context.Canceled) {
				b.Fatalf("ended with %v, want the context's error", err)
			}
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/cancel")
	}
	b.Run("read", func(b *testing.B) {
		ready := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "part")
			w.(http.Flusher).Flush()
			ready <- struct{}{}
			<-r.Context().Done()
		}))
		b.Cleanup(srv.Close)
		measure(b, srv.URL, "{}", ready)
	})
	b.Run("blocked-write", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ready := make(chan struct{})
		block := make(chan struct{})
		b.Cleanup(func() { close(block); ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					// One byte read: the request's write has begun; no more
					// is, so it fills the socket and blocks.
					c.Read(make([]byte, 1))
					ready <- struct{}{}
					<-block
				}()
			}
		}()
		measure(b, "http://"+ln.Addr().String(), strings.Repeat("x", 16<<20), ready)
	})
}
