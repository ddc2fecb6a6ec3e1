// Command turns times nodwyn's turns whole process, as a harness starts it:
// the key in the environment, a local Chat Completions SSE server. A request
// whose conversation holds "twenty turns" is answered with an fs-read call
// until it carries 20 tool results, then "Done."; any other, "Done." at
// once.
//
//	turns [-addr 127.0.0.1:18778]        serve only (for run.sh)
//	turns -n 30 BIN [BIN ...]            time each nodwyn binary, in turn
//
// With binaries it serves on a port of its own and, -n times, runs each
// binary once asked to "say done" and once asked for "twenty turns" (after
// one run of each not counted), in a home, folder and TMPDIR of its own under
// -dir whose directories are an hour old (the kernel floor rebuilds its
// ruleset while the directories above the denied ones are newer than its
// trust window; -dir should not be under a /tmp other programs write in,
// for the same reason). For each binary it prints the medians (min–max) of:
//
//   - first: launch → the first request at the server, ms;
//   - turn: what a turn adds, (the 20-turn run − the one-turn run) / 20,
//     both whole, ms — the server's own time in each turn included;
//   - client: nodwyn's own time a turn, from the end of a reply (written
//     and flushed) to the next request's arrival, the mean over a 20-turn
//     run, ms — the server's time left out;
//   - cpu: the processor time a turn adds (user + system), ms;
//
// and, against the first binary, the median of the pairwise ratios of
// first and client.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// What the server saw of the current run.
var (
	first             atomic.Int64 // unix ns of the run's first request
	replied           atomic.Int64 // unix ns at the end of the last reply
	between, betweens atomic.Int64 // the time from a reply to the next request, summed, and how many
	served, serving   atomic.Int64 // the server's own time a request, summed, and how many
)

func handler(w http.ResponseWriter, r *http.Request) {
	now := time.Now().UnixNano()
	first.CompareAndSwap(0, now)
	if at := replied.Load(); at != 0 {
		between.Add(now - at)
		betweens.Add(1)
	}
	defer func() {
		w.(http.Flusher).Flush()
		end := time.Now().UnixNano()
		replied.Store(end)
		served.Add(end - now)
		serving.Add(1)
	}()
	body, _ := io.ReadAll(r.Body)
	done := strings.Count(string(body), `"role":"tool"`)
	want := 0
	if strings.Contains(string(body), "twenty turns") {
		want = 20
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
}

func main() {
	addr := flag.String("addr", "127.0.0.1:18778", "where to serve when no binary is given")
	n := flag.Int("n", 30, "runs of each binary and task")
	dir := flag.String("dir", "/var/tmp/nodwyn-turns", "the runs' home, folder and TMPDIR")
	flag.Parse()
	if flag.NArg() == 0 {
		if err := http.ListenAndServe(*addr, http.HandlerFunc(handler)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, http.HandlerFunc(handler))
	env, folder, err := setUp(*dir, "http://"+ln.Addr().String()+"/v1")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	compare(flag.Args(), *n, env, folder)
}

// setUp makes the runs' directories, once, and returns their environment.
func setUp(d, base string) ([]string, string, error) {
	home := filepath.Join(d, "h")
	for _, p := range []string{d + "/proj", home + "/.config/nodwyn", home + "/.local/share/nodwyn", d + "/tmp"} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, "", err
		}
	}
	for i := 0; i < 20; i++ { // a file a turn: the same call four times would stop the run
		if err := os.WriteFile(filepath.Join(d, "proj", fmt.Sprintf("a%d.txt", i)), []byte("a\n"), 0o644); err != nil {
			return nil, "", err
		}
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{home + "/.config/nodwyn", home + "/.config", home + "/.local/share/nodwyn", home + "/.local/share", home + "/.local", home, d} {
		os.Chtimes(p, old, old)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/.config", "XDG_DATA_HOME="+home+"/.local/share",
		"TMPDIR="+d+"/tmp", "OPENAI_API_KEY=sk-bench-not-a-key", "OPENAI_BASE_URL="+base, "NODWYN_SOCKET=", "NODWYN_PROFILE=")
	return env, d + "/proj", nil
}

type figures struct{ first, turn, client, cpu []float64 }

func compare(bins []string, n int, env []string, folder string) {
	figs := make([]figures, len(bins))
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i := -1; i < n; i++ {
		for j, bin := range bins {
			var wall1, cpu1 time.Duration
			for _, task := range []string{"say done", "twenty turns"} {
				cmd := exec.Command(bin, "run", "--provider", "openai", "--model", "m", "--unattended", "-q", "-C", folder, task)
				cmd.Env = env
				for _, v := range []*atomic.Int64{&first, &replied, &between, &betweens} {
					v.Store(0)
				}
				t0 := time.Now()
				out, err := cmd.CombinedOutput()
				wall := time.Since(t0)
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s %q: %v\n%s", bin, task, err, out)
					os.Exit(1)
				}
				cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				if i < 0 {
					continue
				}
				f := &figs[j]
				if task == "say done" {
					wall1, cpu1 = wall, cpu
					f.first = append(f.first, ms(time.Unix(0, first.Load()).Sub(t0)))
					continue
				}
				f.turn = append(f.turn, ms(wall-wall1)/20)
				f.cpu = append(f.cpu, ms(cpu-cpu1)/20)
				if k := betweens.Load(); k > 0 {
					f.client = append(f.client, float64(between.Load())/float64(k)/1e6)
				}
			}
		}
	}
	fmt.Printf("%d runs of each; the server's own time a request: %.0f µs on average\n", n, float64(served.Load())/float64(max(serving.Load(), 1))/1e3)
	for j, bin := range bins {
		f := figs[j]
		fmt.Printf("%s\n  first %s ms  turn %s ms  client %s ms  cpu %s ms\n", bin, spread(f.first), spread(f.turn), spread(f.client), median(f.cpu))
		if j > 0 {
			fmt.Printf("  against %s: first %.3f, client %.3f (medians of the pairwise ratios)\n", bins[0], ratio(f.first, figs[0].first), ratio(f.client, figs[0].client))
		}
	}
}

func median(xs []float64) string { return fmt.Sprintf("%.3f", med(xs)) }

func spread(xs []float64) string {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%.3f–%.3f)", med(s), s[0], s[len(s)-1])
}

func med(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func ratio(a, b []float64) float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			r = append(r, a[i]/b[i])
		}
	}
	return med(r)
}
