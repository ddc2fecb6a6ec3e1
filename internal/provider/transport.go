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
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// wireTransport is the providers' HTTP/1.1 transport. A provider's requests
// go one at a time, each a POST whose reply streams, so it keeps one
// connection and does all of a request's work on the caller's goroutine:
// the request is one write, the response is read where it is used. (net/http's
// transport runs a reader and a writer goroutine for each connection and
// hands every request and response between them and the caller: a third of
// what a turn of nodwyn's own cost before this transport.)
//
// What it leaves to net/http: a request the environment sends through a
// proxy (HTTPS_PROXY and the rest, as net/http reads them) goes through
// net/http's transport, with the same CA roots.
//
// For https:// the CA roots are settled at the first handshake, as roots.go
// says; for http:// nothing CA-related runs.
type wireTransport struct {
	https    bool
	fallback func() *x509.CertPool // the embedded roots, for a system without any

	rootsOnce sync.Once
	roots     *x509.CertPool // nil: Go's own system pool

	mu        sync.Mutex
	idle      *wireConn // a kept connection, between requests
	idleTimer *time.Timer
	proxied   *http.Transport // made by the first request through a proxy
}

// wireIdleTimeout is how long a kept connection waits for the next request
// before it is closed (net/http's default).
const wireIdleTimeout = 90 * time.Second

// wireDrainTimeout bounds reading the rest of a reply the caller stopped
// reading early (the chunked body's last lines after "[DONE]"), so that its
// connection can be kept.
const wireDrainTimeout = 2 * time.Second

func newWireTransport(https bool) *wireTransport {
	return &wireTransport{https: https, fallback: embeddedRoots}
}

// rootCAs is the pool a handshake verifies with: nil (the system's, which
// Go loads at the first verification) when the system has roots, else the
// embedded ones. Decided once, at the first handshake.
func (t *wireTransport) rootCAs() *x509.CertPool {
	t.rootsOnce.Do(func() {
		if !hasSystemRoots() {
			t.roots = t.fallback()
		}
	})
	return t.roots
}

// viaProxy is net/http's transport, for a request through a proxy.
func (t *wireTransport) viaProxy() *http.Transport {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proxied == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if t.https {
			if roots := t.rootCAs(); roots != nil {
				tr.TLSClientConfig = &tls.Config{RootCAs: roots}
			}
		}
		t.proxied = tr
	}
	return t.proxied
}

type wireConn struct {
	c    net.Conn
	lc   *limitedConn // c as br reads it
	br   *bufio.Reader
	addr string // scheme://host:port, what it was dialled for
	wbuf []byte // the last request as written
}

// RoundTrip sends req and returns its response, whose body reads from the
// connection. A body read to its end and closed leaves the connection for
// the next request.
func (t *wireTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		closeBody(req)
		return nil, fmt.Errorf("unsupported URL %v", req.URL)
	}
	if p, err := http.ProxyFromEnvironment(req); err != nil || p != nil {
		return t.viaProxy().RoundTrip(req)
	}
	ctx := req.Context()
	head, body, err := requestBytes(req)
	if err != nil {
		return nil, err
	}
	addr := req.URL.Scheme + "://" + hostPort(req.URL.Scheme, req.URL.Host)
	for retried := false; ; retried = true {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wc := t.take(addr)
		reused := wc != nil
		if wc == nil {
			if wc, err = t.dial(ctx, req.URL); err != nil {
				return nil, err
			}
		}
		// A cancelled request unblocks the connection's reads and writes at
		// once, and the connection is not kept.
		stop := context.AfterFunc(ctx, func() { wc.c.SetDeadline(time.Unix(1, 0)) })
		res, err := wc.exchange(head, body, req)
		if err == nil {
			// The caller gets a copy of the response: a body drained after
			// Close (wireBody) reads the trailers into the one
			// http.ReadResponse made, which the caller then never sees.
			shown := *res
			shown.Trailer = res.Trailer.Clone()
			shown.Body = &wireBody{rc: res.Body, t: t, wc: wc, stop: stop, ctx: ctx, keep: !res.Close && !req.Close,
				res: res, shown: &shown}
			return &shown, nil
		}
		stop()
		wc.c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A kept connection the server closed as the request went out, so
		// that the request could not be written whole: the server cannot
		// have acted on it, and it goes again, once, on a new connection.
		// One written whole and then dropped unanswered is the caller's to
		// retry (the server may have acted on it), as net/http leaves it.
		var nw notWritten
		if reused && !retried && errors.As(err, &nw) {
			continue
		}
		return nil, err
	}
}

// exchange writes the request and reads the response's head (after any
// informational 1xx ones, as net/http skips them). A request that could
// not be written whole is a notWritten error, unless the server answered
// before it closed (a 413 to a body too large, sent without reading it).
func (wc *wireConn) exchange(head, body []byte, req *http.Request) (*http.Response, error) {
	// One write of head and body, from a buffer the connection keeps (a
	// writev of the two would save the copy, but the race detector sees no
	// order through it, and tests that share a variable with their server
	// rely on the one it sees through write and read).
	wc.wbuf = append(append(wc.wbuf[:0], head...), body...)
	_, err := wc.c.Write(wc.wbuf)
	if cap(wc.wbuf) > 1<<20 {
		wc.wbuf = nil // a conversation's largest request is not kept
	}
	if err != nil {
		// A write the caller cancelled has no reply to wait for. (The
		// cancel sets a deadline in the past; the early reply's would put
		// it off by earlyReplyWait, so a cancel since is looked at again.)
		if req.Context().Err() != nil {
			return nil, notWritten{err}
		}
		wc.c.SetReadDeadline(time.Now().Add(earlyReplyWait))
		if req.Context().Err() != nil {
			wc.c.SetReadDeadline(time.Unix(1, 0))
		}
		if res, rerr := wc.readResponse(req); rerr == nil {
			wc.c.SetReadDeadline(time.Time{})
			res.Close = true
			return res, nil
		}
		return nil, notWritten{err}
	}
	return wc.readResponse(req)
}

// earlyReplyWait is how long a request that could not be written whole
// waits for the reply the server may have sent before it closed.
const earlyReplyWait = 100 * time.Millisecond

// maxReplyHead bounds a reply's status line and headers (net/http's
// default for a response's headers is 10 MB too).
const maxReplyHead = 10 << 20

// readResponse reads a reply's head, skipping informational (1xx) replies
// but for 101, five at most, as net/http does.
func (wc *wireConn) readResponse(req *http.Request) (*http.Response, error) {
	for n := 0; ; n++ {
		wc.lc.left = maxReplyHead
		res, err := http.ReadResponse(wc.br, req)
		wc.lc.left = -1
		if err != nil {
			if errors.Is(err, errHeadTooLong) {
				err = fmt.Errorf("the reply's headers are longer than %d bytes", maxReplyHead)
			}
			return nil, err
		}
		if res.StatusCode < 100 || res.StatusCode >= 200 || res.StatusCode == http.StatusSwitchingProtocols || n == 5 {
			return res, nil
		}
	}
}

// notWritten is the error of a request that could not be written whole.
type notWritten struct{ err error }

func (e notWritten) Error() string { return e.err.Error() }
func (e notWritten) Unwrap() error { return e.err }

// limitedConn is the connection as the reader of replies reads it: while
// left is not negative, at most left bytes more (the head of a reply).
type limitedConn struct {
	net.Conn
	left int
}

var errHeadTooLong = errors.New("reply head too long")

func (l *limitedConn) Read(p []byte) (int, error) {
	if l.left < 0 {
		return l.Conn.Read(p)
	}
	if l.left == 0 {
		return 0, errHeadTooLong
	}
	if len(p) > l.left {
		p = p[:l.left]
	}
	n, err := l.Conn.Read(p)
	l.left -= n
	return n, err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// requestBytes is req as HTTP/1.1 puts it on the wire: its head, and its
// body (a bodyBytes' bytes as they are, else read from the body).
func requestBytes(req *http.Request) (head, body []byte, err error) {
	if rb, ok := req.Body.(interface{ Bytes() []byte }); ok {
		body = rb.Bytes()
		req.Body.Close()
	} else if req.Body != nil && req.Body != http.NoBody {
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("reading the request body: %w", err)
		}
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	host = withoutZone(host)
	if !validHeaderValue(host) || strings.ContainsAny(host, " \t/") {
		return nil, nil, fmt.Errorf("invalid Host %q", host)
	}
	b := make([]byte, 0, 512)
	b = append(b, req.Method...)
	b = append(b, ' ')
	b = append(b, req.URL.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	for k, vs := range req.Header {
		if !validHeaderName(k) {
			return nil, nil, fmt.Errorf("invalid header field name %q", k)
		}
		switch strings.ToLower(k) {
		case "host", "content-length", "transfer-encoding", "connection":
			continue // this transport's own
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return nil, nil, fmt.Errorf("invalid header field value for %q", k)
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	if req.Close {
		b = append(b, "Connection: close\r\n"...)
	}
	if body != nil || req.Method == http.MethodPost || req.Method == http.MethodPut {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...), body, nil
}

// withoutZone is a host without an IPv6 zone ("[fe80::1%en0]:80" →
// "[fe80::1]:80"), which the Host header does not carry.
func withoutZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	if j := strings.LastIndex(host[:i], "%"); j > 0 {
		return host[:j] + host[i:]
	}
	return host
}

// validHeaderName: a token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue: no control characters but tab (a key read from a file
// with its line end would otherwise end the header early).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func hostPort(scheme, host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if scheme == "https" {
		return net.JoinHostPort(h, "443")
	}
	return net.JoinHostPort(h, "80")
}

func (t *wireTransport) dial(ctx context.Context, u *url.URL) (*wireConn, error) {
	scheme := u.Scheme
	hp := hostPort(scheme, u.Host)
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", hp)
	if err != nil {
		return nil, err
	}
	if scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: u.Hostname(), RootCAs: t.rootCAs(), NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	lc := &limitedConn{Conn: c, left: -1}
	return &wireConn{c: c, lc: lc, br: bufio.NewReaderSize(lc, 16<<10), addr: scheme + "://" + hp}, nil
}

// take returns the kept connection for addr, if there is one the server
// has not closed meanwhile.
func (t *wireTransport) take(addr string) *wireConn {
	wc, _ := t.unhook()
	if wc == nil {
		return nil
	}
	if wc.addr != addr || !wc.open() {
		wc.c.Close()
		return nil
	}
	return wc
}

// unhook takes the kept connection (nil: none) out of t, and says what
// transport a proxied request made.
func (t *wireTransport) unhook() (*wireConn, *http.Transport) {
	t.mu.Lock()
	defer t.mu.Unlock()
	wc := t.idle
	t.idle = nil
	if t.idleTimer != nil {
		t.idleTimer.Stop()
		t.idleTimer = nil
	}
	return wc, t.proxied
}

// put keeps wc for the next request (closing one kept before), for
// wireIdleTimeout at most.
func (t *wireTransport) put(wc *wireConn) {
	t.mu.Lock()
	old := t.idle
	t.idle = wc
	if t.idleTimer != nil {
		t.idleTimer.Stop()
	}
	t.idleTimer = time.AfterFunc(wireIdleTimeout, func() {
		t.mu.Lock()
		if t.idle == wc {
			t.idle = nil
			wc.c.Close()
		}
		t.mu.Unlock()
	})
	t.mu.Unlock()
	if old != nil {
		old.c.Close()
	}
}

// CloseIdleConnections closes the kept connection (http.Client's method of
// the same name calls it).
func (t *wireTransport) CloseIdleConnections() {
	wc, proxied := t.unhook()
	if wc != nil {
		wc.c.Close()
	}
	if proxied != nil {
		proxied.CloseIdleConnections()
	}
}

// open reports whether the server has not closed a kept connection nor sent
// anything on it unasked (an HTTP server's 408 before it closes; over TLS,
// the close_notify alert that comes before the end, or a reply that is no
// request's): a look at the socket that does not wait. Over TLS, bytes
// waiting may also be what the TLS layer reads and keeps to itself (a
// session ticket sent late, a key update): they are read through it, for a
// millisecond at most, and the connection is open if nothing else came —
// cheaper than the handshake of a new one.
func (wc *wireConn) open() bool {
	if wc.br.Buffered() > 0 {
		return false
	}
	raw := wc.c
	tc, isTLS := raw.(*tls.Conn)
	if isTLS {
		raw = tc.NetConn()
	}
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open, waiting := true, false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
		case err == nil && n > 0 && isTLS:
			waiting = true
		default:
			open = false // bytes, the end, or an error
		}
		return true
	})
	if err != nil || !open {
		return false
	}
	if waiting {
		wc.c.SetReadDeadline(time.Now().Add(time.Millisecond))
		_, err := wc.br.Peek(1)
		wc.c.SetReadDeadline(time.Time{})
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() // nothing but the TLS layer's own
	}
	return true
}

// wireBody is a response's body on a wireConn: it reads from the connection
// and, closed, gives the connection back when the reply was read to its end
// (what was left unread is read first, if it is already there or comes
// within wireDrainTimeout), else closes it.
type wireBody struct {
	rc     io.ReadCloser // http.ReadResponse's: knows the length or the chunks
	t      *wireTransport
	wc     *wireConn
	stop   func() bool // stops the cancellation; false when it has fired
	ctx    context.Context
	keep   bool // the server keeps the connection
	eof    bool
	closed bool
	mu     sync.Mutex
	// The response http.ReadResponse made (whose Trailer its body fills)
	// and the caller's copy of it.
	res, shown *http.Response
}

func (b *wireBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof = true
		b.shown.Trailer = b.res.Trailer
	} else if err != nil && b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	return n, err
}

func (b *wireBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if !b.stop() || !b.keep {
		b.wc.c.Close()
		return nil
	}
	if b.eof {
		b.t.put(b.wc)
		return nil
	}
	// The caller stopped before the end (the chunked body's last line
	// after "[DONE]"). What is already buffered is read without waiting
	// (a deadline in the past: a read that needs the socket fails, and
	// then the connection is not kept, since the body's reader keeps its
	// error); with nothing buffered, what is still to come is read on a
	// goroutine of its own, for a while, so that the connection can be
	// kept.
	if b.wc.br.Buffered() > 0 {
		b.wc.c.SetReadDeadline(time.Unix(1, 0))
		if drained(b.rc) {
			b.wc.c.SetReadDeadline(time.Time{})
			b.t.put(b.wc)
		} else {
			b.wc.c.Close()
		}
		return nil
	}
	go func(rc io.ReadCloser, wc *wireConn) {
		wc.c.SetReadDeadline(time.Now().Add(wireDrainTimeout))
		if drained(rc) {
			wc.c.SetReadDeadline(time.Time{})
			b.t.put(wc)
			return
		}
		wc.c.Close()
	}(b.rc, b.wc)
	return nil
}

// drained reads rc to its end, 64 KiB at most, and reports whether it got
// there.
func drained(rc io.Reader) bool {
	n, err := io.Copy(io.Discard, io.LimitReader(rc, 64<<10))
	if err != nil {
		return false
	}
	if n < 64<<10 {
		return true
	}
	var one [1]byte
	_, err = rc.Read(one[:])
	return err == io.EOF
}
