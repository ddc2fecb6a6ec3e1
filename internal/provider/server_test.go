package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// wireServer is an httptest server that answers each request with the
// next of its steps (the last one repeats), recording what it received.
type wireServer struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	steps []func(w http.ResponseWriter, r *http.Request)
	reqs  []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   map[string]any
}

func newWireServer(t *testing.T, steps ...func(w http.ResponseWriter, r *http.Request)) *wireServer {
	ws := &wireServer{t: t, steps: steps}
	ws.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, b)
		}
		ws.mu.Lock()
		n := len(ws.reqs)
		ws.reqs = append(ws.reqs, recorded{path: r.URL.Path, header: r.Header.Clone(), body: body})
		step := ws.steps[min(n, len(ws.steps)-1)]
		ws.mu.Unlock()
		step(w, r)
	}))
	t.Cleanup(ws.srv.Close)
	return ws
}

func (ws *wireServer) requests() []recorded {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]recorded(nil), ws.reqs...)
}

// sseSplit writes payload as an event stream in pieces of n bytes, flushing
// each, so events (and the JSON in them) are split across TCP writes.
func sseSplit(payload string, n int) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for rest := payload; len(rest) > 0; {
			k := min(n, len(rest))
			if _, err := io.WriteString(w, rest[:k]); err != nil {
				return
			}
			_ = rc.Flush()
			rest = rest[k:]
		}
	}
}

// sseCut writes the first n bytes of payload, flushes, then drops the
// connection mid-reply.
func sseCut(payload string, n int) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, payload[:n])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
}

// status answers with a status, headers (pairs) and a body.
func status(code int, body string, headers ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// events joins SSE events: each item is "data" or "event\ndata".
func events(items ...string) string {
	var b strings.Builder
	for _, it := range items {
		if ev, data, ok := strings.Cut(it, "\n"); ok {
			b.WriteString("event: " + ev + "\n")
			it = data
		}
		b.WriteString("data: " + it + "\n\n")
	}
	return b.String()
}

// deltas collects what onDelta received.
type deltas struct {
	mu       sync.Mutex
	text     strings.Builder
	tools    []string
	restarts int
}

func (d *deltas) on(x Delta) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x.Restart {
		d.restarts++
		d.text.Reset()
	}
	d.text.WriteString(x.Text)
	if x.ToolName != "" {
		d.tools = append(d.tools, x.ToolName)
	}
}

// fastRetries is a config whose waits are tiny, so tests do not sleep.
func fastRetries(cfg Config) Config {
	cfg.RetryBaseWait = time.Millisecond
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	return cfg
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// get walks a decoded JSON value by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
