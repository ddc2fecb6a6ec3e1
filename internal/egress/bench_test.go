package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
)

// BenchmarkProxyRoundTrip: one GET to a local server, directly and
// through the proxy (issue 28: the proxy adds at most 1 ms per request on
// loopback). Compare each proxy-* with its direct-*:
//
//	keepalive: one connection reused (direct), or a tunnel reused (proxy-tunnel)
//	newconn:   a connection per request (direct), or a CONNECT per request (proxy-connect)
//	proxy-http: a plain request; the proxy dials the host for each
//
// go test -run - -bench Proxy -count 5 ./internal/egress/
func BenchmarkProxyRoundTrip(b *testing.B) {
	body := []byte("ok")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p := &Proxy{
		Decide: allowLocal("bench.test"),
		LookupNetIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	}
	if err := p.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer p.Close()

	// tunnelDial dials the host through a CONNECT to the proxy.
	tunnelDial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.Addr())
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(c, "CONNECT bench.test:%s HTTP/1.1\r\nHost: bench.test:%s\r\n\r\n", port, port)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil || resp.StatusCode != 200 || br.Buffered() != 0 {
			c.Close()
			return nil, fmt.Errorf("CONNECT: %v %v", resp, err)
		}
		return c, nil
	}
	proxyURL := &url.URL{Scheme: "http", Host: p.Addr()}
	for _, c := range []struct {
		name string
		tr   *http.Transport
		url  string
	}{
		{"direct-keepalive", &http.Transport{}, srv.URL},
		{"proxy-tunnel-keepalive", &http.Transport{DialContext: tunnelDial}, "http://bench.test:" + port},
		{"proxy-http-keepalive", &http.Transport{Proxy: http.ProxyURL(proxyURL)}, "http://bench.test:" + port},
		{"direct-newconn", &http.Transport{DisableKeepAlives: true}, srv.URL},
		{"proxy-connect-newconn", &http.Transport{DialContext: tunnelDial, DisableKeepAlives: true}, "http://bench.test:" + port},
	} {
		b.Run(c.name, func(b *testing.B) {
			defer c.tr.CloseIdleConnections()
			client := &http.Client{Transport: c.tr}
			for b.Loop() {
				resp, err := client.Get(c.url + "/")
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != int64(len(body)) {
					b.Fatalf("%d bytes", n)
				}
			}
		})
	}
}
