package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// BenchmarkDaemon compares a run submitted to a warm daemon with the same
// run in its own process, as a harness starts them: the built binary, the
// key in the environment, a local OpenAI-compatible server speaking Chat
// Completions SSE. Each iteration runs both, one after the other, so the
// two share the machine's noise. It reports, as medians over the
// iterations: launch → the first request reaching the server
// (startup-inproc-ms, startup-daemon-ms, and their difference,
// added-startup-ms: the target is ≤ 2), and the time per turn of a 20-turn
// run whose tool spawns nothing (fs-read): turn-inproc-ms, turn-daemon-ms,
// added-turn-ms, each (wall − launch to the first request) / 20, the run's
// end included; and turn-marginal-inproc-ms, what a turn adds: (the
// twenty-turn run − the run that asks the model once) / 20, both whole;
// and turn-client-inproc-ms, nodwyn's own time a turn with the server's
// left out: from the end of a reply to the next request's arrival (the
// tool, the loop, the saves and the log, building and sending the
// request), the mean over a run.
func BenchmarkDaemon(b *testing.B) {
	dir := quietDir(b)
	bin := buildNodwyn(b, dir)
	const turns = 20
	var first atomic.Int64 // unix ns of the current run's first request
	// nodwyn's own time between turns: from the end of a reply (written
	// and flushed) to the next request's arrival, summed over a run.
	var replied, between, betweens atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		if at := replied.Load(); at != 0 {
			between.Add(now - at)
			betweens.Add(1)
		}
		defer func() {
			w.(http.Flusher).Flush()
			replied.Store(time.Now().UnixNano())
		}()
		body, _ := io.ReadAll(r.Body)
		first.CompareAndSwap(0, now)
		// The turn is the number of tool results the request carries;
		// the task says how many turns the run has.
		done := strings.Count(string(body), `"role":"tool"`)
		want := 0
		if strings.Contains(string(body), "twenty turns") {
			want = turns
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) {
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
		}
		if done < want {
			chunk(fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"fs-read","arguments":"{\"path\":\"a%d.txt\"}"}}]}`, done, done), "null")
			chunk(`{}`, `"tool_calls"`)
		} else {
			chunk(`{"role":"assistant","content":"Done."}`, "null")
			chunk(`{}`, `"stop"`)
		}
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	folder := filepath.Join(dir, "proj")
	home := filepath.Join(dir, "home")
	rt := filepath.Join(dir, "rt")
	// The scratch directories go in a TMPDIR of their own, not in a
	// directory above HOME: one made there changes what the kernel floor's
	// ruleset was built from, and each command would build it anew (a
	// person's TMPDIR is not above their home either).
	for _, d := range []string{folder, home, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	os.Mkdir(rt, 0o700)
	// As on a person's machine, the home and nodwyn's directories are not
	// brand new: the kernel floor reuses its ruleset only when the
	// directories above the denied ones have not changed in the last
	// second (sandbox/floor.go, fresh), which a HOME made a moment ago has.
	for _, d := range []string{home + "/.config/nodwyn", home + "/.local/share/nodwyn"} {
		os.MkdirAll(d, 0o755)
	}
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{home + "/.config/nodwyn", home + "/.config", home + "/.local/share/nodwyn", home + "/.local/share", home + "/.local", home} {
		os.Chtimes(d, old, old)
	}
	for i := 0; i < turns; i++ { // a file a turn: the same call four times would stop the run
		os.WriteFile(filepath.Join(folder, fmt.Sprintf("a%d.txt", i)), []byte("a\n"), 0o644)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/.config", "XDG_DATA_HOME="+home+"/.local/share",
		"TMPDIR="+filepath.Join(dir, "tmp"), "OPENAI_API_KEY=sk-bench-not-a-key", "OPENAI_BASE_URL="+srv.URL+"/v1", "NODWYN_SOCKET=", "NODWYN_PROFILE=")

	sock := filepath.Join(rt, "daemon.sock")
	dargs := []string{"daemon", "--socket", sock}
	if _, err := sandbox.LandlockABI(); err != nil {
		dargs = append(dargs, "--no-kernel-floor") // the daemon refuses to serve without it otherwise
	}
	daemon := exec.Command(bin, dargs...)
	daemon.Env = env
	var dlog strings.Builder
	daemon.Stderr = &dlog
	if err := daemon.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		daemon.Process.Signal(os.Interrupt)
		daemon.Wait()
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the daemon did not start: %s", dlog.String())
		}
	}

	run := func(viaDaemon bool, task string) (startup, wall time.Duration) {
		args := []string{"run", "--provider", "openai", "--model", "m", "--unattended", "-q", "-C", folder}
		if viaDaemon {
			args = append(args, "--daemon", sock)
		}
		cmd := exec.Command(bin, append(args, task)...)
		cmd.Env = env
		first.Store(0)
		replied.Store(0)
		between.Store(0)
		betweens.Store(0)
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("nodwyn %s: %v\n%s\n%s", strings.Join(args, " "), err, out, dlog.String())
		}
		wall = time.Since(t0)
		f := first.Load()
		if f == 0 {
			b.Fatal("no request reached the server")
		}
		return time.Unix(0, f).Sub(t0), wall
	}
	var sIn, sD, tIn, tD, mg, cl []float64
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, w0 := run(false, "say done")
		sIn = append(sIn, ms(s))
		s, _ = run(true, "say done")
		sD = append(sD, ms(s))
		s, w := run(false, "twenty turns")
		tIn = append(tIn, ms(w-s)/turns)
		if n := betweens.Load(); n > 0 {
			cl = append(cl, float64(between.Load())/float64(n)/1e6)
		}
		// What a turn adds: the twenty-turn run less the one that asks
		// the model once, both whole (the start and the end are in both).
		mg = append(mg, ms(w-w0)/turns)
		s, w = run(true, "twenty turns")
		tD = append(tD, ms(w-s)/turns)
	}
	b.StopTimer()
	b.ReportMetric(median(mg), "turn-marginal-inproc-ms")
	b.ReportMetric(median(cl), "turn-client-inproc-ms")
	mIn, mD, tmIn, tmD := median(sIn), median(sD), median(tIn), median(tD)
	b.ReportMetric(mIn, "startup-inproc-ms")
	b.ReportMetric(mD, "startup-daemon-ms")
	b.ReportMetric(mD-mIn, "added-startup-ms")
	b.ReportMetric(tmIn, "turn-inproc-ms")
	b.ReportMetric(tmD, "turn-daemon-ms")
	b.ReportMetric(tmD-tmIn, "added-turn-ms")
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
