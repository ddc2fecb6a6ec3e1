package main

import (
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

// BenchmarkFloorCrowdedParent measures what the kernel floor's start-up
// costs when the directory above the home holds many entries (a home under
// a busy /tmp): launch to the first model request, whole process, the key
// in the environment, against a local OpenAI-compatible server, with the
// home under a parent of 6,000 entries and under one of 10, alternately in
// one run. crowded-over-quiet is the ratio of the medians (issue 27: within
// 1.10).
func BenchmarkFloorCrowdedParent(b *testing.B) {
	dir := quietDir(b)
	bin := buildNodwyn(b, dir)
	var first atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.CompareAndSwap(0, time.Now().UnixNano())
		w.Header().Set("Content-Type", "text/event-stream")
		sseAnswer(w)
		sseEnd(w)
	}))
	defer srv.Close()

	folder := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	os.MkdirAll(folder, 0o755)
	homeUnder := func(name string, entries int) string {
		parent := filepath.Join(dir, name)
		home := filepath.Join(parent, "home")
		for _, d := range []string{home + "/.ssh", home + "/.config/nodwyn", home + "/.local/share/nodwyn"} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				b.Fatal(err)
			}
		}
		for i := 0; i < entries; i++ {
			if err := os.WriteFile(filepath.Join(parent, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		return home
	}
	crowded, quiet := homeUnder("crowded", 6000), homeUnder("quiet", 10)
	run := func(home string) time.Duration {
		cmd := exec.Command(bin, "run", "--provider", "openai", "--model", "m", "--unattended", "-q", "-C", folder, "say done")
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/.config", "XDG_DATA_HOME="+home+"/.local/share",
			"TMPDIR="+filepath.Join(dir, "tmp"), "OPENAI_API_KEY=sk-bench-not-a-key", "OPENAI_BASE_URL="+srv.URL+"/v1", "NODWYN_SOCKET=", "NODWYN_PROFILE=")
		first.Store(0)
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("nodwyn run: %v\n%s", err, out)
		}
		f := first.Load()
		if f == 0 {
			b.Fatal("no request reached the server")
		}
		return time.Unix(0, f).Sub(t0)
	}
	var c, q []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c = append(c, float64(run(crowded).Microseconds())/1000)
		q = append(q, float64(run(quiet).Microseconds())/1000)
	}
	b.StopTimer()
	b.ReportMetric(median(c), "startup-crowded-ms")
	b.ReportMetric(median(q), "startup-quiet-ms")
	b.ReportMetric(median(c)/median(q), "crowded-over-quiet")
}
