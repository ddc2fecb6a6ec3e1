package provider

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Tests from a review that attacked the transport (each failed before the
// fix its comment names), and the cases it found sound, kept.

// rawConnServer: each accepted connection is handed to serve.
func rawConnServer(t *testing.T, ln net.Listener, serve func(c net.Conn, br *bufio.Reader)) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c, bufio.NewReader(c))
			}()
		}
	}()
}

func readReq(br *bufio.Reader) bool {
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, req.Body)
	return true
}

// 1xx: a 103 Early Hints (or an unasked 100 Continue) before the final
// response is returned as the response; the final one then answers the
// next request.
func TestWireTransportReview1xxDesync(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	rawConnServer(t, ln, func(c net.Conn, br *bufio.Reader) {
		if !readReq(br) {
			return
		}
		// The 103 and the 200 in writes of their own: whether they come in
		// one read or two, the 103 is skipped.
		io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n")
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
		if !readReq(br) {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond")
	})
	url := "http://" + ln.Addr().String()
	for _, name := range []string{"net/http", "wire"} {
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		if name == "wire" {
			hc = defaultHTTPClient(url)
		}
		got1, err1 := post(t, hc, t.Context(), url, "{}")
		got2, err2 := post(t, hc, t.Context(), url, "{}")
		t.Logf("%-8s request 1: %q %v; request 2: %q %v", name, got1, err1, got2, err2)
		if got1 != "200 first" || got2 != "200 second" {
			t.Errorf("%s: want 200 first, 200 second", name)
		}
	}
}

func tlsTestServer(t *testing.T) (*tls.Config, *x509.CertPool) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{Certificates: srv.TLS.Certificates}, pool
}

func wireTLSClient(pool *x509.CertPool) *http.Client {
	tr := newWireTransport(true)
	tr.rootsOnce.Do(func() { tr.roots = pool })
	return &http.Client{Transport: tr}
}

// waitNoLeaks waits until no goroutine is left but those opts ignore
// (goleak.Find's own wait is under half a second; this one is waitFor's).
func waitNoLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	var err error
	waitFor(t, func() bool { err = goleak.Find(opts...); return err == nil })
	if err != nil {
		t.Fatal(err)
	}
}

// waitForSocket waits until what the server sent on hc's kept connection
// after its reply (bytes, its end) has reached the client's socket, so
// that the look the next request makes at it (open) can see it: the state
// those tests are about. A look reads nothing the next request would need
// (it peeks, and over TLS keeps what it read).
func waitForSocket(t *testing.T, hc *http.Client) {
	t.Helper()
	tr := hc.Transport.(*wireTransport)
	waitFor(t, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.idle == nil || !tr.idle.open()
	})
}

// Over TLS the look at a kept connection ignores bytes in the socket, so a
// stray reply (a second response, bytes past Content-Length in a record of
// their own, a 408 before close) answers the next request.
func TestWireTransportReviewTLSStrayBytesDesync(t *testing.T) {
	cfg, pool := tlsTestServer(t)
	ln, _ := tls.Listen("tcp", "127.0.0.1:0", cfg)
	kept := make(chan struct{})     // request 1 is answered and its connection kept
	stray := make(chan struct{}, 1) // the stray reply is written
	rawConnServer(t, ln, func(c net.Conn, br *bufio.Reader) {
		if !readReq(br) {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		select { // the stray reply comes to the kept connection, not with the first
		case <-kept:
		case <-time.After(time.Minute):
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale") // a server bug
		select {
		case stray <- struct{}{}:
		default:
		}
		if !readReq(br) {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh")
	})
	url := "https://" + ln.Addr().String()
	hc := wireTLSClient(pool)
	got1, err1 := post(t, hc, t.Context(), url, "{}")
	close(kept)
	<-stray
	waitForSocket(t, hc) // the stray reply is in the kept connection's socket
	got2, err2 := post(t, hc, t.Context(), url, "{}")
	t.Logf("request 1: %q %v; request 2: %q %v", got1, err1, got2, err2)
	if got2 == "200 stale" {
		t.Errorf("request 2 got the stray reply of request 1's connection")
	}
}

// A server that answers 408 on an idle TLS connection, then closes it (as
// some do at their idle timeout): the next request gets the 408.
func TestWireTransportReviewTLS408OnIdle(t *testing.T) {
	cfg, pool := tlsTestServer(t)
	ln, _ := tls.Listen("tcp", "127.0.0.1:0", cfg)
	var reqs atomic.Int64
	kept := make(chan struct{}) // request 1 is answered and its connection kept
	rawConnServer(t, ln, func(c net.Conn, br *bufio.Reader) {
		if !readReq(br) {
			return
		}
		reqs.Add(1)
		io.WriteString(c, okReply)
		select { // the idle connection times out
		case <-kept:
		case <-time.After(time.Minute):
		}
		io.WriteString(c, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
	})
	url := "https://" + ln.Addr().String()
	hc := wireTLSClient(pool)
	got1, err1 := post(t, hc, t.Context(), url, "{}")
	close(kept)
	waitForSocket(t, hc) // the 408 is in the kept connection's socket
	got2, err2 := post(t, hc, t.Context(), url, "{}")
	t.Logf("request 1: %q %v; request 2: %q %v", got1, err1, got2, err2)
	if got2 != "200 ok" {
		t.Errorf("request 2: %q %v, want 200 ok", got2, err2)
	}
}

// A server that answers early, without reading a large body (a 413, a 400
// for a malformed request), and closes: net/http returns the answer; the
// wire transport's write fails and the answer is lost.
func TestWireTransportReviewEarlyReplyToALargeBody(t *testing.T) {
	var reqs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		if r.URL.Path == "/small" {
			io.ReadAll(r.Body)
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Connection", "close")
		http.Error(w, `{"error":"request too large"}`, http.StatusRequestEntityTooLarge)
	}))
	t.Cleanup(srv.Close)
	big := strings.Repeat("x", 4<<20)
	for _, name := range []string{"net/http", "wire"} {
		reqs.Store(0)
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		if name == "wire" {
			hc = defaultHTTPClient(srv.URL)
		}
		post(t, hc, t.Context(), srv.URL+"/small", "{}") // a kept connection
		got, err := post(t, hc, t.Context(), srv.URL+"/big", big)
		t.Logf("%-8s: %q %v; the server saw %d requests", name, excerpt(got, 60), err, reqs.Load())
		if !strings.HasPrefix(got, "413") {
			t.Errorf("%s: got %q %v, want the 413", name, excerpt(got, 60), err)
		}
	}
}

// The daemon makes a model, and so a transport, for each session: the
// session's end closes its kept connection (CloseIdle, from Session.Close),
// so 200 sessions leave no descriptors, as net/http's transports, whose
// reader sees the server's close, leave none.
func TestWireTransportReviewFDsAcrossTransports(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.IdleTimeout = 50 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	for _, name := range []string{"net/http", "wire"} {
		before := fds()
		for range 200 {
			hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
			if name == "wire" {
				hc = defaultHTTPClient(srv.URL)
			}
			if got, err := post(t, hc, t.Context(), srv.URL, "{}"); err != nil {
				t.Fatal(got, err)
			}
			if name == "wire" {
				m := &OpenAI{}
				m.hc = hc
				CloseIdle(m)
			}
		}
		// The wait is for the descriptors to go (the server closes its idle
		// connections after 50 ms; net/http's readers see it); only
		// descriptors that are kept for good run into waitFor's bound.
		waitFor(t, func() bool { runtime.GC(); return fds()-before <= 20 })
		t.Logf("%-8s: %d more fds after 200 sessions", name, fds()-before)
	}
}

// Cancellation: a write blocked on a server that does not read, a cause.
func TestWireTransportReviewCancelBlockedWrite(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	block := make(chan struct{})
	accepted := make(chan struct{}, 1)
	t.Cleanup(func() { close(block) })
	// The server takes the connection and reads one byte (the write has
	// begun), then no more: a 16 MiB body fills the socket buffers and the
	// write blocks.
	rawConnServer(t, ln, func(c net.Conn, br *bufio.Reader) { c.Read(make([]byte, 1)); accepted <- struct{}{}; <-block })
	url := "http://" + ln.Addr().String()
	body := strings.Repeat("x", 16<<20)
	ctx, cancel := context.WithCancelCause(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := post(t, defaultHTTPClient(url), ctx, url, body)
		errc <- err
	}()
	<-accepted
	cancel(ErrIdleTimeout)
	// What is checked is that the cancel ends the blocked write, with the
	// context's error: the wait is for that, and only a write that never
	// ends (a hang, not a slow machine) runs into the bound below.
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ended with %v, want the context's error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the write is still blocked a minute after the cancel")
	}
}

// Concurrent use of one transport, with bodies closed early, cancels and
// server closes, under -race; then no goroutines nor connections left.
func TestWireTransportReviewConcurrentUse(t *testing.T) {
	before := goleak.IgnoreCurrent()
	var n atomic.Int64
	var open atomic.Int64 // the server's connections not closed
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		k := n.Add(1)
		switch k % 5 {
		case 0:
			w.Header().Set("Connection", "close")
		case 1:
			w.(http.Flusher).Flush()
		case 2:
			time.Sleep(time.Duration(k%7) * time.Millisecond)
		}
		fmt.Fprintf(w, "%s", b)
		if k%3 == 0 {
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
			fmt.Fprintf(w, "%s", strings.Repeat(" ", int(k%5000)))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	hc := defaultHTTPClient(srv.URL)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				want := fmt.Sprintf("g%di%d", g, i)
				ctx, cancel := context.WithCancel(t.Context())
				if i%11 == 0 {
					time.AfterFunc(time.Duration(i%4)*time.Millisecond, cancel)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(want))
				res, err := hc.Do(req)
				if err != nil {
					cancel()
					continue
				}
				buf := make([]byte, len(want))
				_, err = io.ReadFull(res.Body, buf)
				if err == nil && string(buf) != want {
					bad.Add(1)
					t.Errorf("desync: want %q got %q", want, buf)
				}
				if i%2 == 0 {
					io.Copy(io.Discard, res.Body)
				}
				res.Body.Close()
				cancel()
			}
		}()
	}
	wg.Wait()
	// No goroutine of the transport's is left: the drains of bodies closed
	// early end (they keep their connection, or close it). The server's
	// goroutines are its own.
	waitNoLeaks(t, before,
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).backgroundRead"),
		goleak.IgnoreAnyFunction("net/http/httptest.(*Server).goServe.func1"))
	// No connection is left: closing the kept one leaves the server none.
	hc.CloseIdleConnections()
	waitFor(t, func() bool { return open.Load() == 0 })
}

// TLS to an IPv6 literal and ALPN: works, and the server saw http/1.1.
func TestWireTransportReviewTLSIPv6(t *testing.T) {
	var proto atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.TLS.NegotiatedProtocol + " sni=" + r.TLS.ServerName)
		io.WriteString(w, "ok")
	}))
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip(err)
	}
	srv.Listener = ln
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	got, err := post(t, wireTLSClient(pool), t.Context(), srv.URL, "{}")
	t.Logf("%s: %q %v, server saw %v", srv.URL, got, err, proto.Load())
	if got != "200 ok" {
		t.Error(err)
	}
}

// A TLS server that closes idle connections (close_notify then FIN): the
// kept one passes the peek and the request relies on the retry.
func TestWireTransportReviewTLSServerIdleClose(t *testing.T) {
	var reqs atomic.Int64
	var closed atomic.Int64 // connections the server closed
	srv, conns := unstartedCounter(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		io.WriteString(w, "ok")
	})
	counted := srv.Config.ConnState
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		counted(c, s)
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	srv.Config.IdleTimeout = 30 * time.Millisecond
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	hc := wireTLSClient(pool)
	tr := hc.Transport.(*wireTransport)
	for i := range 3 {
		got, err := post(t, hc, t.Context(), srv.URL, "{}")
		if got != "200 ok" {
			t.Fatalf("%d: %q %v", i, got, err)
		}
		// The server's idle timeout has closed the connection (close_notify,
		// then its end, both sent before the server marks it closed).
		waitFor(t, func() bool { return closed.Load() == int64(i+1) })
		tr.mu.Lock()
		wc := tr.idle
		tr.mu.Unlock()
		if wc != nil && wc.open() {
			t.Errorf("%d: a connection the server closed (close_notify, then its end) is taken as open", i)
		}
	}
	t.Logf("%d requests handled, %d connections", reqs.Load(), conns.Load())
}

// tlsConnCounter is connCounter over TLS, with the server's idle timeout
// (0: its default), and a wire client that trusts it.
func tlsConnCounter(t *testing.T, h http.HandlerFunc, idle time.Duration) (*httptest.Server, *atomic.Int64, *http.Client) {
	srv, conns := unstartedCounter(h)
	srv.Config.IdleTimeout = idle
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, conns, wireTLSClient(pool)
}

// Bodiless replies, chunked bodies with trailers closed early, then the
// next reply on the same connection is its own; no goroutine left.
func TestWireTransportReviewBodilessAndTrailers(t *testing.T) {
	before := goleak.IgnoreCurrent()
	replies := []string{
		"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", // to HEAD
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n5\r\nhello\r\n5\r\nworld\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
		okReply,
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	var conns atomic.Int64
	closed4 := make(chan struct{}) // reply 4's body is closed, its rest unread
	rawConnServer(t, ln, func(c net.Conn, br *bufio.Reader) {
		conns.Add(1)
		for i := 0; ; i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			var n int
			fmt.Sscan(req.Header.Get("N"), &n)
			io.WriteString(c, replies[n])
			if n == 4 {
				// The rest comes after the client closed the body: the
				// transport drains it in the background.
				select {
				case <-closed4:
				case <-time.After(time.Minute):
				}
				io.WriteString(c, "5\r\nworld\r\n0\r\nX-T: 2\r\n\r\n")
			}
		}
	})
	url := "http://" + ln.Addr().String()
	hc := defaultHTTPClient(url)
	tr := hc.Transport.(*wireTransport)
	for n := range replies {
		method := http.MethodPost
		if n == 2 {
			method = http.MethodHead
		}
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("N", fmt.Sprint(n))
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		var b []byte
		if n == 3 || n == 4 {
			buf := make([]byte, 5)
			io.ReadFull(res.Body, buf) // stops early: the rest (and trailers) drained
			b = buf
		} else {
			b, _ = io.ReadAll(res.Body)
		}
		res.Body.Close()
		t.Logf("%d: %d %q trailer %v", n, res.StatusCode, b, res.Trailer)
		if n == 4 {
			close(closed4)
			// The drain read the rest and kept the connection.
			waitFor(t, func() bool { tr.mu.Lock(); defer tr.mu.Unlock(); return tr.idle != nil })
		}
	}
	t.Logf("%d connections for %d replies", conns.Load(), len(replies))
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for %d replies, want 1", n, len(replies))
	}
	// No goroutine left, the server's gone too: its listener closed, its
	// connection's goroutine sees the client close the kept connection.
	hc.CloseIdleConnections()
	ln.Close()
	waitNoLeaks(t, before)
}

// The Host header is not checked (net/http refuses a Host with a line end).
func TestWireTransportReviewHostInjection(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(fmt.Sprint(r.Header["X-Injected"]))
	}))
	t.Cleanup(srv.Close)
	for _, name := range []string{"net/http", "wire"} {
		got.Store("")
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		if name == "wire" {
			hc = defaultHTTPClient(srv.URL)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
		req.Host = "h\r\nX-Injected: 1"
		_, err := hc.Do(req)
		t.Logf("%-8s: err %v; server saw X-Injected %v", name, err, got.Load())
		if s, _ := got.Load().(string); strings.Contains(s, "1") {
			t.Errorf("%s: a Host with a line end put a header in the request", name)
		}
		if name == "wire" && (err == nil || !strings.Contains(err.Error(), "invalid Host")) {
			t.Errorf("wire: err %v, want the Host refused", err)
		}
	}
}

func TestWireTransportReviewTLSReuse(t *testing.T) {
	srv, conns, hc := tlsConnCounter(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 0)
	for range 5 {
		if got, err := post(t, hc, t.Context(), srv.URL, "{}"); got != "200 ok" {
			t.Fatal(err)
		}
		// The pause of a tool run between turns, in which what the TLS
		// layer sends late (a session ticket) may come: the scenario's
		// pace; nothing waits on it, and the test holds without it.
		time.Sleep(20 * time.Millisecond)
	}
	if conns.Load() != 1 {
		t.Errorf("%d conns", conns.Load())
	}
}

// The background drain writes res.Trailer after Body.Close returned.
func TestWireTransportReviewTrailerRaceAfterClose(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := make(chan struct{}) // the body is closed, its end unread
	rawConnServer(t, ln, func(c net.Conn, br *bufio.Reader) {
		for readReq(br) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
			select {
			case <-closed:
			case <-time.After(time.Minute):
			}
			io.WriteString(c, "0\r\nX-T: 1\r\n\r\n")
		}
	})
	url := "http://" + ln.Addr().String()
	hc := defaultHTTPClient(url)
	tr := hc.Transport.(*wireTransport)
	res, err := hc.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(res.Body, make([]byte, 5))
	res.Body.Close()
	close(closed)
	// The caller reads its response's trailers while the drain reads the
	// reply's (the race detector sees any access without an order), until
	// the drain has ended and kept the connection.
	waitFor(t, func() bool {
		_ = res.Trailer.Get("X-T")
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.idle != nil
	})
}
