package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSessionNamespaces measures what the session's namespaces and
// egress proxy cost (issue 28): a whole process, the key in the
// environment, against a local OpenAI-compatible server that asks for 20
// shell-exec calls and then answers, with [sandbox] namespaces on and off
// in the person's config, alternately in one run. It reports launch to the
// first model request, the whole run, and the per-command difference of
// the two whole runs over the 20 commands.
func BenchmarkSessionNamespaces(b *testing.B) {
	dir := quietDir(b)
	bin := buildNodwyn(b, dir)
	var n atomic.Int64
	var first atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.CompareAndSwap(0, time.Now().UnixNano())
		i := n.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		if i <= 20 {
			args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("true %d", i)})
			call := map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", i), "type": "function",
				"function": map[string]any{"name": "shell-exec", "arguments": string(args)}}
			chunk, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "tool_calls": []any{call}}, "finish_reason": "tool_calls"}}})
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		} else {
			sseAnswer(w)
		}
		sseEnd(w)
	}))
	defer srv.Close()
	folder := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	os.MkdirAll(folder, 0o755)
	home := func(name, config string) string {
		h := filepath.Join(dir, name)
		os.MkdirAll(filepath.Join(h, ".config", "nodwyn"), 0o700)
		if config != "" {
			os.WriteFile(filepath.Join(h, ".config", "nodwyn", "config.toml"), []byte(config), 0o600)
		}
		return h
	}
	on, off := home("on", ""), home("off", "[sandbox]\nnamespaces = \"off\"\n")
	run := func(h string, flags ...string) (startup, whole time.Duration) {
		args := append([]string{"run", "--provider", "openai", "--model", "m", "--unattended", "-q", "-C", folder}, flags...)
		cmd := exec.Command(bin, append(args, "run true twenty times")...)
		cmd.Env = append(os.Environ(), "HOME="+h, "XDG_CONFIG_HOME="+h+"/.config", "XDG_DATA_HOME="+h+"/.local/share",
			"TMPDIR="+filepath.Join(dir, "tmp"), "OPENAI_API_KEY=sk-bench-not-a-key", "OPENAI_BASE_URL="+srv.URL+"/v1", "NODWYN_SOCKET=", "NODWYN_PROFILE=")
		n.Store(0)
		first.Store(0)
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("nodwyn run: %v\n%s", err, out)
		}
		whole = time.Since(t0)
		if n.Load() != 21 {
			b.Fatalf("%d requests, want 21", n.Load())
		}
		return time.Unix(0, first.Load()).Sub(t0), whole
	}
	var sOn, sOff, wOn, wOff, sNone, wNone []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, w := run(on)
		sOn, wOn = append(sOn, float64(s.Microseconds())/1000), append(wOn, float64(w.Microseconds())/1000)
		s, w = run(off)
		sOff, wOff = append(sOff, float64(s.Microseconds())/1000), append(wOff, float64(w.Microseconds())/1000)
		s, w = run(on, "--no-kernel-floor")
		sNone, wNone = append(sNone, float64(s.Microseconds())/1000), append(wNone, float64(w.Microseconds())/1000)
	}
	b.StopTimer()
	// The whole confinement (floor, writes, namespaces, proxy) against
	// --no-kernel-floor, per command.
	b.ReportMetric(median(sNone), "startup-no-floor-ms")
	b.ReportMetric((median(wOn)-median(wNone)-(median(sOn)-median(sNone)))/20, "per-command-vs-no-floor-ms")
	b.ReportMetric(median(sOn), "startup-ns-ms")
	b.ReportMetric(median(sOff), "startup-no-ns-ms")
	b.ReportMetric(median(wOn), "run-ns-ms")
	b.ReportMetric(median(wOff), "run-no-ns-ms")
	b.ReportMetric((median(wOn)-median(wOff)-(median(sOn)-median(sOff)))/20, "per-command-ms")
}
