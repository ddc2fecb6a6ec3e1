package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/mcp/mcptest"
)

// BenchmarkMCPWholeProcess is issue 31's figures as a harness sees them: a
// whole nodwyn run, the key in the environment, against a local
// OpenAI-compatible server that answers at once. With one stdio MCP server
// of 50 tools declared in the person's config.toml (the test binary,
// re-executed as mcptest's server), it reports the first request's tool
// definitions as sent on the wire — the MCP tools' (and tool-schema's)
// bytes and tokens (bytes/4: no tokenizer runs offline here) — as a
// catalogue in tool-schema's description (the default), on demand (a
// definition with a summary each) and in full (mcp-schemas 'full), and
// launch to the first request with that server against none, alternately
// in one run.
//
//	go test -run '^$' -bench MCPWholeProcess -benchtime 5x ./cmd/nodwyn/
func BenchmarkMCPWholeProcess(b *testing.B) {
	dir := quietDir(b)
	bin := buildNodwyn(b, dir)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var firstBody []byte
	var firstAt time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		if firstBody == nil {
			firstBody, firstAt = body, time.Now()
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		sseAnswer(w)
		sseEnd(w)
	}))
	defer srv.Close()
	folder := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	os.MkdirAll(folder, 0o755)
	server := fmt.Sprintf("[mcp.servers.gh]\ncommand = %q\nargs = [\"-tools\", \"50\"]\nenv = { %s = \"1\" }\n", self, mcptest.Env)
	profile := func(schemas string) string {
		return `(define-profile 'measured (append (list (cons 'mcp-schemas '` + schemas + `)) (profile-named 'lean)))`
	}
	home := func(name, config, init string) string {
		h := filepath.Join(dir, name)
		cfg := filepath.Join(h, ".config", "nodwyn")
		os.MkdirAll(cfg, 0o700)
		os.WriteFile(filepath.Join(cfg, "config.toml"), []byte(config), 0o600)
		os.WriteFile(filepath.Join(cfg, "init.scm"), []byte(init), 0o600)
		return h
	}
	none := home("none", "", profile("catalogue"))
	catalogue := home("catalogue", server, profile("catalogue"))
	onDemand := home("on-demand", server, profile("on-demand"))
	full := home("full", server, profile("full"))
	// run returns launch to the first request, and the bytes of the
	// first request's MCP tool definitions (and tool-schema's).
	run := func(h string) (time.Duration, int) {
		cmd := exec.Command(bin, "run", "--provider", "openai", "--model", "m", "--unattended", "-q", "-C", folder, "say done")
		cmd.Env = append(os.Environ(), "HOME="+h, "XDG_CONFIG_HOME="+h+"/.config", "XDG_DATA_HOME="+h+"/.local/share",
			"TMPDIR="+filepath.Join(dir, "tmp"), "OPENAI_API_KEY=sk-bench-not-a-key", "OPENAI_BASE_URL="+srv.URL+"/v1",
			"NODWYN_SOCKET=", "NODWYN_PROFILE=measured")
		mu.Lock()
		firstBody = nil
		mu.Unlock()
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("nodwyn run: %v\n%s", err, out)
		}
		mu.Lock()
		defer mu.Unlock()
		if firstBody == nil {
			b.Fatal("no request reached the server")
		}
		var req struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(firstBody, &req); err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, t := range req.Tools {
			var d struct {
				Function struct{ Name string } `json:"function"`
			}
			json.Unmarshal(t, &d)
			if strings.HasPrefix(d.Function.Name, "gh__") || d.Function.Name == "tool-schema" {
				n += len(t)
			}
		}
		return firstAt.Sub(t0), n
	}
	var sNone, sOne []float64
	var bytesCatalogue, bytesOnDemand, bytesFull int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, _ := run(none)
		sNone = append(sNone, float64(s.Microseconds())/1000)
		s, bytesCatalogue = run(catalogue)
		sOne = append(sOne, float64(s.Microseconds())/1000)
		_, bytesOnDemand = run(onDemand)
		_, bytesFull = run(full)
	}
	b.StopTimer()
	if bytesCatalogue == 0 || bytesOnDemand == 0 || bytesFull == 0 {
		b.Fatalf("the first request carried no MCP tools (%d, %d, %d bytes)", bytesCatalogue, bytesOnDemand, bytesFull)
	}
	b.ReportMetric(float64(bytesCatalogue+3)/4, "catalogue-tokens")
	b.ReportMetric(float64(bytesOnDemand+3)/4, "on-demand-tokens")
	b.ReportMetric(float64(bytesFull+3)/4, "full-schema-tokens")
	b.ReportMetric(median(sNone), "startup-no-mcp-ms")
	b.ReportMetric(median(sOne), "startup-1-stdio-ms")
}
