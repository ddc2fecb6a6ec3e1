package egress

import (
	"net"
	"strconv"
	"time"
)

// Forward serves ln, a listener made in the session's network namespace on
// a loopback address the person named with its port (an allow_hosts entry
// such as "127.0.0.1:5432": [LocalPort]), by connecting each connection to
// target, the same service as nodwyn reaches it (host:port in nodwyn's own
// namespace, "localhost:5432" trying each of localhost's addresses). The
// bytes are copied as they are, both ways; each connection is reported to
// OnConn with Method "TCP" and rule when it ends. The listener is closed,
// and every connection ended, at Close.
func (p *Proxy) Forward(ln net.Listener, target, rule string) error {
	host, ps, err := net.SplitHostPort(target)
	if err != nil {
		ln.Close()
		return err
	}
	port, _ := strconv.Atoi(ps)
	return p.accept(ln, nil, func(c net.Conn) {
		p.relay(c, Conn{Host: normalHost(host), Port: port, Method: "TCP", Allowed: true, Rule: rule, Start: time.Now()}, target)
	})
}

// relay connects c to target and copies both ways until both sides are done.
func (p *Proxy) relay(c net.Conn, rec Conn, target string) {
	ctx, cancel := p.reqContext()
	var d net.Dialer
	up, err := d.DialContext(ctx, "tcp", target)
	cancel()
	if err != nil {
		rec.Err = err.Error()
		if p.isClosed() {
			rec.Err = "proxy closed"
		}
		p.report(&rec)
		return
	}
	rec.Addr = up.RemoteAddr().String()
	if !p.track(up) {
		up.Close()
		rec.Err = "proxy closed"
		p.report(&rec)
		return
	}
	defer p.untrack(up)
	p.splice(c, c, up, &rec)
}
