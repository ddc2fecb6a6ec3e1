package provider

import (
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The embedded roots are a real pool: the test's own machine aside, a static
// binary in an image without certificates verifies with them.
func TestEmbeddedRootsAreAUsablePool(t *testing.T) {
	p := embeddedRoots()
	if p.Equal(x509.NewCertPool()) {
		t.Fatal("the embedded pool is empty")
	}
}

// fakeSystemRoots makes the system's pool what pool says, counting looks.
func fakeSystemRoots(t *testing.T, pool *x509.CertPool, err error) *atomic.Int64 {
	var n atomic.Int64
	old := systemRoots
	systemRoots = func() (*x509.CertPool, error) { n.Add(1); return pool, err }
	t.Cleanup(func() { systemRoots = old })
	return &n
}

// Nothing CA-related runs for an http:// endpoint: not at New, not at the
// request.
func TestHTTPEndpointTouchesNoRoots(t *testing.T) {
	looks := fakeSystemRoots(t, nil, errors.New("must not be asked"))
	if tr, ok := defaultHTTPClient("http://127.0.0.1:1/v1").Transport.(*wireTransport); !ok || tr.https {
		t.Errorf("an http:// client's transport is %#v, want nodwyn's own for http", tr)
	}
	ws := newWireServer(t, sseSplit(oaText("hi"), 100))
	for _, prov := range []string{"openai", "openai-responses", "anthropic"} {
		m, err := New(fastRetries(Config{Provider: prov, BaseURL: ws.srv.URL + "/v1", Model: "m", MaxRetries: -1}))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	}
	if looks.Load() != 0 {
		t.Errorf("the system roots were looked at %d times for http://", looks.Load())
	}
}

// For https:// the roots are settled at the first request, once: New does
// not look at them.
func TestHTTPSRootsSettledAtFirstRequest(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseSplit(oaText("over tls"), 100)(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the system pool refuses
	t.Cleanup(srv.Close)
	serverPool := x509.NewCertPool()
	serverPool.AddCert(srv.Certificate())

	// A system with no roots: the fallback pool verifies.
	looks := fakeSystemRoots(t, x509.NewCertPool(), nil)
	m, err := New(fastRetries(Config{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1}))
	if err != nil {
		t.Fatal(err)
	}
	if looks.Load() != 0 {
		t.Fatalf("New looked at the system roots")
	}
	lr, ok := m.(*OpenAI).hc.Transport.(*wireTransport)
	if !ok {
		t.Fatalf("https client transport %T", m.(*OpenAI).hc.Transport)
	}
	var fallbacks atomic.Int64
	lr.fallback = func() *x509.CertPool { fallbacks.Add(1); return serverPool }
	for range 2 {
		reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
		if err != nil || reply.Text != "over tls" {
			t.Fatalf("with the fallback roots: %+v %v", reply, err)
		}
	}
	if looks.Load() != 1 || fallbacks.Load() != 1 {
		t.Errorf("system roots looked at %d times, fallback built %d times; want 1 and 1", looks.Load(), fallbacks.Load())
	}

	// A system with roots: RootCAs stays nil and Go's own system pool
	// verifies, which does not know the test server.
	fakeSystemRoots(t, serverPool, nil)
	m, _ = New(fastRetries(Config{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1}))
	lr = m.(*OpenAI).hc.Transport.(*wireTransport)
	lr.fallback = func() *x509.CertPool { t.Error("fallback built although the system has roots"); return serverPool }
	_, err = m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("err = %v, want a certificate error from the system's pool", err)
	}
	if lr.roots != nil {
		t.Error("RootCAs set although the system has roots")
	}
}
