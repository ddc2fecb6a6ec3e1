// Package egress is the proxy a session's commands reach the network
// through outside sandbox mode (issue 28, item 3): an HTTP proxy on
// 127.0.0.1 (and, for a bridge into a network namespace, a unix socket)
// that tunnels CONNECT to any port without looking inside (no TLS
// interception) and forwards plain absolute-URI HTTP requests. Every
// connection is put to a decision ([Proxy.Decide]; [Allowlist.Decide] is
// the usual one) and reported when it ends ([Proxy.OnConn]), refused ones
// included. The proxy resolves names itself, so a command needs no DNS, and
// it dials only the addresses it checked: a name that resolves to a
// loopback or link-local address reaches it only when the decision says
// the person named that host exactly ([Decision.Local]), which keeps DNS
// rebinding away from the person's local services (this machine's own
// interface addresses count as local too).
//
// The package enforces nothing by itself: a command that ignores the
// proxy settings ([Env]) goes around it unless the kernel stops it (a
// network namespace holding only loopback, or Landlock's TCP rules); that
// is the session's part.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AllowHostsKey is the key under [sandbox] in the person's own config.toml
// that lists the hosts commands may reach besides the defaults (exact names
// and *.suffix patterns). A refusal names it.
const AllowHostsKey = "allow_hosts"

// Decision is the answer to one connection: whether it may go through and
// by which rule (a phrase for the log, the trajectory and the refusal).
type Decision struct {
	Allow bool
	Rule  string
	// Local lets an allowed host reach loopback and link-local addresses
	// (127.0.0.0/8, ::1, 169.254.0.0/16, fe80::/10, 0.0.0.0, ::). Set it
	// only when the person named this host exactly (an allow_hosts entry,
	// an answer at the terminal about an address or localhost, see
	// [Asking]): a default, a *.suffix pattern or a yes to a name must not
	// let a name that resolves to 127.0.0.1 reach the person's own
	// services.
	Local bool
}

// Conn is the record of one connection through the proxy, delivered to
// [Proxy.OnConn] when it ends or is refused. A plain HTTP request is one
// record; a CONNECT tunnel is one record however long it lasts.
type Conn struct {
	Host    string `json:"host"`           // as the command named it, lower case
	Port    int    `json:"port"`           // as the command named it
	Addr    string `json:"addr,omitempty"` // the address dialled ("" when none was)
	Method  string `json:"method"`         // CONNECT, or the plain request's method
	Allowed bool   `json:"allowed"`        // the decision let it through
	Rule    string `json:"rule"`           // the decision's rule, or why it was refused
	// Sent counts the bytes from the command to the host (a tunnel's
	// payload; a plain request as forwarded), Received those back.
	Sent     int64     `json:"sent"`
	Received int64     `json:"received"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Err      string    `json:"error,omitempty"` // what ended it, when not a clean close
}

// Proxy is the session's egress proxy. Set its fields, then Start it; they
// must not change after.
type Proxy struct {
	// Decide decides each connection (host lower case, without brackets or
	// a final dot). It may block, for instance on a confirm at the
	// terminal: its context ends when the proxy closes (not when the
	// command hangs up), and Close waits for it to return. Nil refuses
	// everything.
	Decide func(ctx context.Context, host string, port int) Decision
	// OnConn receives each connection's record when it ends or is
	// refused. It is called from the connection's goroutine, one call at
	// a time per connection, possibly from several connections at once.
	OnConn func(Conn)
	// LookupNetIP resolves a name; nil is net.DefaultResolver's. Tests
	// put a resolver that lies here.
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)

	mu        sync.Mutex
	ctx       context.Context
	cancel    context.CancelFunc
	listeners []net.Listener
	self      []netip.AddrPort // the TCP addresses the proxy listens on
	open      map[net.Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
	addr      string
}

// Start listens on 127.0.0.1 on a port the kernel picks (see Addr) and
// serves until ctx ends or Close is called. When ctx ends the proxy stops
// as Close stops it; Close still waits for its goroutines.
func (p *Proxy) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.ctx != nil {
		p.mu.Unlock()
		return errors.New("egress: proxy already started")
	}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.open = map[net.Conn]struct{}{}
	p.mu.Unlock()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.Close()
		return fmt.Errorf("egress: listen on 127.0.0.1: %w", err)
	}
	p.mu.Lock()
	p.addr = ln.Addr().String()
	p.mu.Unlock()
	if err := p.Serve(ln); err != nil {
		p.Close()
		return err
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		select {
		case <-ctx.Done():
			p.shut()
		case <-p.ctx.Done():
		}
	}()
	return nil
}

// ListenUnix serves the proxy on a unix socket at path as well (for a
// bridge into a network namespace). The socket is removed at Close.
func (p *Proxy) ListenUnix(path string) error {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	return p.Serve(ln)
}

// Serve serves the proxy on a listener made elsewhere as well, such as one
// made inside a command's network namespace (a socket stays in the
// namespace it was made in, so the proxy accepts from there while it
// dials from the person's). The listener is closed at Close.
func (p *Proxy) Serve(ln net.Listener) error {
	return p.accept(ln, func(l net.Listener) {
		if a, ok := l.Addr().(*net.TCPAddr); ok {
			p.self = append(p.self, a.AddrPort())
		}
	}, p.handle)
}

// accept serves ln until Close, each connection on a goroutine of its own
// given to handle, tracked so that Close ends it. register runs under p.mu
// once the listener is p's.
func (p *Proxy) accept(ln net.Listener, register func(net.Listener), handle func(net.Conn)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx == nil || p.closed {
		ln.Close()
		return errors.New("egress: proxy not started or closed")
	}
	p.listeners = append(p.listeners, ln)
	if register != nil {
		register(ln)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				return // closed
			}
			if !p.track(c) {
				c.Close()
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer p.untrack(c)
				handle(c)
			}()
		}
	}()
	return nil
}

// Addr is the TCP address the proxy listens on, 127.0.0.1:port.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// Close stops listening, ends every open connection and tunnel (each
// reported with the error "proxy closed"), and returns when every
// goroutine the proxy started has.
func (p *Proxy) Close() error {
	p.shut()
	p.wg.Wait()
	return nil
}

// shut is Close without the wait.
func (p *Proxy) shut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.ctx == nil {
		p.closed = true
		return
	}
	p.closed = true
	p.cancel()
	for _, ln := range p.listeners {
		ln.Close()
	}
	for c := range p.open {
		c.Close()
	}
}

// track registers a connection that Close must end; false once closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.open[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Env is the environment that sends a command's HTTP(S) traffic to the
// proxy at addr (host:port), in the spellings programs read (curl reads
// only the lower-case http_proxy; Go, pip, npm, cargo and git read either).
// NO_PROXY keeps localhost direct, so a test server on 127.0.0.1 that the
// same command talks to is reached without the proxy.
func Env(addr string) []string {
	u := "http://" + addr
	const local = "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u,
		"http_proxy=" + u, "https_proxy=" + u, "all_proxy=" + u,
		"NO_PROXY=" + local, "no_proxy=" + local,
	}
}

// handle serves one client connection: a CONNECT, or plain requests for as
// long as the client keeps the connection alive.
func (p *Proxy) handle(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !p.isClosed() && !errors.Is(err, net.ErrClosed) {
				answer(c, http.StatusBadRequest, "Bad Request", "nodwyn's egress proxy could not read the request: "+err.Error()+"\n")
			}
			return
		}
		if req.Method == http.MethodConnect {
			p.tunnel(c, br, req)
			return
		}
		if !p.forward(c, req) {
			return
		}
	}
}

// target is what a request asks to reach.
func target(req *http.Request) (host string, port int, err error) {
	hostport := req.Host
	if req.Method != http.MethodConnect {
		if !req.URL.IsAbs() || req.URL.Host == "" {
			return "", 0, errors.New("nodwyn's egress proxy takes CONNECT host:port or an absolute http:// URI, not " + strconv.Quote(req.RequestURI))
		}
		if req.URL.Scheme != "http" {
			return "", 0, fmt.Errorf("nodwyn's egress proxy forwards plain http:// requests; for %s:// use CONNECT (set HTTPS_PROXY)", req.URL.Scheme)
		}
		hostport = req.URL.Host
		if req.URL.Port() == "" {
			hostport = net.JoinHostPort(req.URL.Hostname(), "80")
		}
	}
	h, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port", hostport)
	}
	port, err = strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("%q has no port between 1 and 65535", hostport)
	}
	host = normalHost(h)
	if host == "" || strings.ContainsAny(host, " \t\r\n/\\@%") {
		return "", 0, fmt.Errorf("%q is not a host name", h)
	}
	return host, port, nil
}

// normalHost is a host in the form decisions see: lower case, without IPv6
// brackets or a final dot.
func normalHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// dial decides a connection, resolves its host and dials the first
// address the decision allows. On refusal it returns the status to
// answer with; the record is filled either way.
func (p *Proxy) dial(ctx context.Context, rec *Conn) (net.Conn, int, error) {
	if a, err := netip.ParseAddr(rec.Host); err == nil && p.isSelf(netip.AddrPortFrom(a.Unmap(), uint16(rec.Port))) {
		// Refused before the decision: nobody is asked about a loop.
		rec.Rule = "the proxy's own address: a request through the proxy to itself would loop"
		return nil, http.StatusForbidden, nil
	}
	d := Decision{Rule: "no decision function: every host is refused"}
	if p.Decide != nil {
		d = p.Decide(ctx, rec.Host, rec.Port)
	}
	rec.Allowed, rec.Rule = d.Allow, d.Rule
	if !d.Allow {
		return nil, http.StatusForbidden, nil
	}
	addrs, err := p.lookup(ctx, rec.Host)
	if err != nil {
		return nil, http.StatusBadGateway, fmt.Errorf("cannot resolve %s: %w", rec.Host, err)
	}
	var usable []netip.Addr
	var local netip.Addr
	own := ownAddrs()
	for _, a := range addrs {
		a = a.Unmap()
		if (isLocal(a) || own[a]) && !d.Local {
			local = a
			continue
		}
		if p.isSelf(netip.AddrPortFrom(a, uint16(rec.Port))) {
			rec.Allowed, rec.Rule = false, "the proxy's own address: a request through the proxy to itself would loop"
			return nil, http.StatusForbidden, nil
		}
		usable = append(usable, a)
	}
	if len(usable) == 0 {
		rec.Allowed = false
		rec.Rule = fmt.Sprintf("%s resolves to %s, a loopback or link-local address or one of this machine's, which only a host named exactly in [sandbox] %s reaches (the decision was: %s)",
			rec.Host, local, AllowHostsKey, d.Rule)
		return nil, http.StatusForbidden, nil
	}
	var dialer net.Dialer
	var errs []error
	for _, a := range usable {
		addr := netip.AddrPortFrom(a, uint16(rec.Port)).String()
		up, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			rec.Addr = addr
			return up, 0, nil
		}
		errs = append(errs, err)
	}
	return nil, http.StatusBadGateway, errors.Join(errs...)
}

func (p *Proxy) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if p.LookupNetIP != nil {
		return p.LookupNetIP(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func (p *Proxy) isSelf(ap netip.AddrPort) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.self {
		if s.Port() == ap.Port() && (s.Addr() == ap.Addr() || ap.Addr().IsUnspecified() || ap.Addr().IsLoopback()) {
			return true
		}
	}
	return false
}

// isLocal: an address on this machine or its link, which a name the person
// did not name exactly must not reach. 0.0.0.0 and :: reach loopback
// services on Linux. 169.254.169.254 is the cloud metadata service.
func isLocal(a netip.Addr) bool {
	return a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsUnspecified() || !a.IsValid()
}

// ownAddrs are the addresses of this machine's interfaces: a service
// listening on all interfaces answers on each, so a name that resolves to
// one is as local as 127.0.0.1.
func ownAddrs() map[netip.Addr]bool {
	own := map[netip.Addr]bool{}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				own[ip.Unmap()] = true
			}
		}
	}
	return own
}

// refusal is the body of a 403: what was refused, by which rule, and how
// the person allows it.
func refusal(rec *Conn) string {
	return fmt.Sprintf("nodwyn refused the connection to %s: %s.\n"+
		"To allow it, the person adds %q to %s under [sandbox] in their own config.toml, "+
		"or answers yes when nodwyn asks at the terminal (an unattended run declines).\n",
		net.JoinHostPort(rec.Host, strconv.Itoa(rec.Port)), rec.Rule, rec.Host, AllowHostsKey)
}

// answer writes a short response of the proxy's own and asks the client
// to close. The reason phrase carries the message's first words, since
// some clients (curl, Go, Python) show only the status line of a failed
// CONNECT.
func answer(c net.Conn, code int, reason, body string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, reason, len(body), body)
}

func (p *Proxy) report(rec *Conn) {
	rec.End = time.Now()
	if p.OnConn != nil {
		p.OnConn(*rec)
	}
}

// reqContext ends when the proxy closes; a client that hangs up ends the
// work through the closed connection.
func (p *Proxy) reqContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(p.ctx)
}

func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request) {
	rec := Conn{Method: http.MethodConnect, Start: time.Now()}
	host, port, err := target(req)
	if err != nil {
		answer(c, http.StatusBadRequest, "Bad Request", err.Error()+"\n")
		return
	}
	rec.Host, rec.Port = host, port
	ctx, cancel := p.reqContext()
	up, code, err := p.dial(ctx, &rec)
	cancel()
	if up == nil {
		p.refuse(c, &rec, code, err)
		return
	}
	if !p.track(up) {
		up.Close()
		rec.Err = "proxy closed"
		p.report(&rec)
		return
	}
	defer p.untrack(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		rec.Err = err.Error()
		p.report(&rec)
		return
	}
	p.splice(c, br, up, &rec) // br holds what the client sent after CONNECT
}

// splice copies what the client sends (from: c, or a reader that already
// holds the first of it) to up and up's answer to c, each side's end
// closing the other's writing half, then reports rec with the bytes each
// way and what ended it.
func (p *Proxy) splice(c net.Conn, from io.Reader, up net.Conn, rec *Conn) {
	var wg sync.WaitGroup
	var upErr error
	wg.Add(1)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer wg.Done()
		rec.Sent, upErr = io.Copy(up, from)
		closeWrite(up)
	}()
	var downErr error
	rec.Received, downErr = io.Copy(c, up)
	closeWrite(c)
	wg.Wait()
	if p.isClosed() {
		rec.Err = "proxy closed"
	} else if err := errors.Join(upErr, downErr); err != nil {
		rec.Err = err.Error()
	}
	p.report(rec)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

func (p *Proxy) refuse(c net.Conn, rec *Conn, code int, err error) {
	switch {
	case code == http.StatusForbidden:
		answer(c, code, "Forbidden by nodwyn: "+rec.Host+" is not allowed ([sandbox] "+AllowHostsKey+")", refusal(rec))
	case p.isClosed():
		rec.Err = "proxy closed"
	default:
		rec.Err = err.Error()
		answer(c, code, http.StatusText(code), "nodwyn's egress proxy: "+rec.Err+"\n")
	}
	p.report(rec)
}

// hopHeaders are meant for one hop and never forwarded (RFC 9110 §7.6.1),
// besides those the Connection header names.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// forward serves one plain request on a connection of its own to the
// host, and says whether the client connection may take another.
func (p *Proxy) forward(c net.Conn, req *http.Request) bool {
	rec := Conn{Method: req.Method, Start: time.Now()}
	host, port, err := target(req)
	if err != nil {
		answer(c, http.StatusBadRequest, "Bad Request", err.Error()+"\n")
		return false
	}
	rec.Host, rec.Port = host, port
	ctx, cancel := p.reqContext()
	defer cancel()
	up, code, err := p.dial(ctx, &rec)
	if up == nil {
		p.refuse(c, &rec, code, err)
		return false
	}
	if !p.track(up) {
		up.Close()
		rec.Err = "proxy closed"
		p.report(&rec)
		return false
	}
	defer p.untrack(up)
	counted := &countConn{Conn: up}
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		// Say go on now: the body is read as the request is written.
		req.Header.Del("Expect")
		if _, err := io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			rec.Err = err.Error()
			p.report(&rec)
			return false
		}
	}
	keepClient := !req.Close
	removeHop(req.Header)
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // Request.Write would add Go's
	}
	// The Host header the host sees is the URI's authority, the one
	// decided: a different Host would reach another site behind a shared
	// front end (domain fronting).
	req.Host = req.URL.Host
	req.Close = true // one request per connection to the host
	err = req.Write(counted)
	var resp *http.Response
	ubr := bufio.NewReader(counted)
	for err == nil {
		resp, err = http.ReadResponse(ubr, req)
		if err != nil || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		removeHop(resp.Header) // an interim 1xx response: pass it on, read the next
		err = resp.Write(c)
	}
	if err != nil {
		if p.isClosed() {
			rec.Err = "proxy closed"
		} else {
			rec.Err = err.Error()
			answer(c, http.StatusBadGateway, "Bad Gateway", "nodwyn's egress proxy: "+req.Method+" "+rec.Host+": "+err.Error()+"\n")
		}
		rec.Sent, rec.Received = counted.sent, counted.received
		p.report(&rec)
		return false
	}
	removeHop(resp.Header)
	known := resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0 || req.Method == http.MethodHead ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	keepClient = keepClient && known && resp.StatusCode != http.StatusSwitchingProtocols
	resp.Close = !keepClient
	bw := bufio.NewWriter(c)
	err = resp.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	resp.Body.Close()
	rec.Sent, rec.Received = counted.sent, counted.received
	if err != nil {
		keepClient = false
		rec.Err = err.Error()
		if p.isClosed() {
			rec.Err = "proxy closed"
		}
	}
	p.report(&rec)
	return keepClient
}

// countConn counts the bytes through a connection.
type countConn struct {
	net.Conn
	sent, received int64
}

func (c *countConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.received += int64(n)
	return n, err
}

func (c *countConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent += int64(n)
	return n, err
}
