// Command piboot compares the start-up of nodwyn with Pi's
// (@mariozechner/pi-coding-agent), measured the same way in the same run.
//
// It serves OpenAI Chat Completions SSE on 127.0.0.1 (a random port), then
// launches the two agents alternately, each as a whole process the way a
// harness starts it: its own HOME, a TMPDIR outside that HOME, the API key in
// the environment, a fresh working folder, one prompt, non-interactive. For
// each launch it records the time from cmd.Start to the first request
// reaching the server and the time to the process's exit, and prints the
// medians (min, max) and the nodwyn/pi ratios. See README.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const apiKey = "sk-bench-not-a-key"

// launch is what the server learns about one launch's requests.
type launch struct {
	first    atomic.Int64 // UnixNano of the first request's arrival; 0 until then
	mu       sync.Mutex
	requests []request
}

type request struct {
	at     time.Time
	method string
	path   string
	model  string // the body's "model", for a chat completion
	auth   bool   // Authorization: Bearer <apiKey>
	stream bool
	msgs   int
	tools  int
	bytes  int
}

func (l *launch) add(r request) {
	l.first.CompareAndSwap(0, r.at.UnixNano())
	l.mu.Lock()
	l.requests = append(l.requests, r)
	l.mu.Unlock()
}

// current is the launch under way; launches are sequential.
var current atomic.Pointer[launch]

var verbose bool

func handler(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(r.Body)
	req := request{
		at:     at,
		method: r.Method,
		path:   r.URL.Path,
		auth:   r.Header.Get("Authorization") == "Bearer "+apiKey,
		bytes:  len(body),
	}
	var parsed struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &parsed) == nil {
		req.model, req.stream, req.msgs, req.tools = parsed.Model, parsed.Stream, len(parsed.Messages), len(parsed.Tools)
	}
	if l := current.Load(); l != nil {
		l.add(req)
	}
	if verbose {
		b := string(body)
		if len(b) > 300 {
			b = b[:300] + "…"
		}
		fmt.Fprintf(os.Stderr, "  server: %s %s auth=%v model=%q stream=%v messages=%d tools=%d body=%dB %s\n",
			r.Method, r.URL.Path, req.auth, req.model, req.stream, req.msgs, req.tools, len(body), b)
	}

	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		model := parsed.Model
		if model == "" {
			model = "m"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		created := at.Unix()
		chunk := func(choices string, extra string) string {
			return fmt.Sprintf(`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":%d,"model":%q,"choices":%s%s}`,
				created, model, choices, extra)
		}
		events := []string{
			chunk(`[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":null}]`, ""),
			chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`, ""),
			chunk(`[]`, `,"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}`),
			"[DONE]",
		}
		f, _ := w.(http.Flusher)
		for _, e := range events {
			fmt.Fprintf(w, "data: %s\n\n", e)
			if f != nil {
				f.Flush()
			}
		}
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"bench"}]}`)
	default:
		http.Error(w, `{"error":{"message":"not served by piboot"}}`, http.StatusNotFound)
	}
}

// agent is one of the two programs compared.
type agent struct {
	name string
	home string // HOME, shared by its launches (its configuration lives there)
	tmp  string // TMPDIR, not under home
	argv func(work string) []string
	env  []string
	// inWork: run the process in the working folder (Pi has no -C).
	inWork bool
}

type result struct {
	first time.Duration // cmd.Start -> first request at the server
	exit  time.Duration // cmd.Start -> exit
	reqs  []request
}

func (a *agent) run(ctx context.Context, work string, timeout time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := a.argv(work)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = a.env
	if a.inWork {
		cmd.Dir = work
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// cmd.Stdin is nil: /dev/null, so Pi's read of piped stdin ends at once.
	l := &launch{}
	current.Store(l)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, fmt.Errorf("%s: start: %w", a.name, err)
	}
	err := cmd.Wait()
	exit := time.Since(t0)
	current.Store(nil)
	l.mu.Lock()
	reqs := slices.Clone(l.requests)
	l.mu.Unlock()
	if err != nil {
		return result{}, fmt.Errorf("%s exited: %v (after %v)\ncommand: %s\n--- stdout ---\n%s\n--- stderr ---\n%s",
			a.name, err, exit.Round(time.Millisecond), strings.Join(argv, " "), stdout.String(), stderr.String())
	}
	first := l.first.Load()
	if first == 0 {
		return result{}, fmt.Errorf("%s exited 0 but no request reached the server\ncommand: %s\n--- stdout ---\n%s\n--- stderr ---\n%s",
			a.name, strings.Join(argv, " "), stdout.String(), stderr.String())
	}
	if verbose {
		fmt.Fprintf(os.Stderr, "  %s stdout: %q\n", a.name, strings.TrimSpace(stdout.String()))
		if s := strings.TrimSpace(stderr.String()); s != "" {
			fmt.Fprintf(os.Stderr, "  %s stderr: %q\n", a.name, s)
		}
	}
	return result{first: time.Unix(0, first).Sub(t0), exit: exit, reqs: reqs}, nil
}

// piModels is Pi's ~/.pi/agent/models.json: a provider "bench" that speaks
// Chat Completions at baseURL, one model "m", the key read from
// $OPENAI_API_KEY (Pi resolves an apiKey that names a variable).
func piModels(baseURL string) string {
	return fmt.Sprintf(`{
  "providers": {
    "bench": {
      "baseUrl": %q,
      "api": "openai-completions",
      "apiKey": "OPENAI_API_KEY",
      "compat": {
        "supportsDeveloperRole": false,
        "supportsReasoningEffort": false
      },
      "models": [
        { "id": "m", "name": "m", "reasoning": false, "input": ["text"], "contextWindow": 128000, "maxTokens": 16384 }
      ]
    }
  }
}
`, baseURL)
}

func main() {
	nodwynBin := flag.String("nodwyn", "", "path to the nodwyn binary (required; e.g. bin/nodwyn after make build)")
	piCmd := flag.String("pi", "", "Pi's command: node_modules/.bin/pi, or its dist/cli.js (run with node) (required)")
	nodeBin := flag.String("node", "node", "node, for a -pi that ends in .js")
	n := flag.Int("n", 20, "iterations; each launches nodwyn then Pi")
	warmup := flag.Int("warmup", 1, "launches of each before the measured ones, not counted")
	prompt := flag.String("prompt", "say done", "the one prompt both get")
	offline := flag.Bool("pi-offline", true, "set PI_OFFLINE=1 for Pi (its print mode makes no start-up network calls either way)")
	piExtra := flag.String("pi-args", "", "extra arguments for Pi, space-separated (e.g. --no-session)")
	piEnv := flag.String("pi-env", "", "extra environment for Pi, space-separated KEY=VALUE (e.g. PI_TIMING=1, shown with -v)")
	timeout := flag.Duration("timeout", 2*time.Minute, "one launch's limit")
	keep := flag.Bool("keep", false, "keep the temporary folders (printed) for inspection")
	flag.BoolVar(&verbose, "v", false, "log every request and each launch's output to stderr")
	flag.Parse()
	if *nodwynBin == "" || *piCmd == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: piboot -nodwyn PATH -pi COMMAND [-n 20]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	if err := run(*nodwynBin, *piCmd, *nodeBin, *n, *warmup, *prompt, *offline, *piExtra, *piEnv, *timeout, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "piboot:", err)
		os.Exit(1)
	}
}

func run(nodwynBin, piCmd, nodeBin string, n, warmup int, prompt string, offline bool, piExtra, piEnv string, timeout time.Duration, keep bool) error {
	abs := func(p string) (string, error) {
		p, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	nodwynBin, err := abs(nodwynBin)
	if err != nil {
		return fmt.Errorf("-nodwyn: %w", err)
	}
	piCmd, err = abs(piCmd)
	if err != nil {
		return fmt.Errorf("-pi: %w", err)
	}
	piArgv := []string{piCmd}
	if strings.HasSuffix(piCmd, ".js") || strings.HasSuffix(piCmd, ".mjs") {
		node, err := exec.LookPath(nodeBin)
		if err != nil {
			return fmt.Errorf("-node: %w", err)
		}
		piArgv = []string{node, piCmd}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(handler)}
	go srv.Serve(ln)
	defer srv.Close()
	baseURL := "http://" + ln.Addr().String() + "/v1"

	base, err := os.MkdirTemp("", "piboot-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("temporary folders in", base)
	} else {
		defer os.RemoveAll(base)
	}
	var mkErr error // the first failure of mk
	mk := func(parts ...string) string {
		p := filepath.Join(append([]string{base}, parts...)...)
		if mkErr == nil {
			mkErr = os.MkdirAll(p, 0o755)
		}
		return p
	}
	// PATH is passed on (Pi's bin starts with #!/usr/bin/env node); nothing
	// else of this process's environment is (no proxy, no XDG_*).
	env := func(home, tmp string, extra ...string) []string {
		return append([]string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + home,
			"TMPDIR=" + tmp,
			"OPENAI_API_KEY=" + apiKey,
			"OPENAI_BASE_URL=" + baseURL,
		}, extra...)
	}

	nodwyn := &agent{name: "nodwyn", home: mk("home-nodwyn"), tmp: mk("tmp-nodwyn")}
	nodwyn.env = env(nodwyn.home, nodwyn.tmp)
	nodwyn.argv = func(work string) []string {
		return []string{nodwynBin, "run", "--provider", "openai", "--model", "m", "--unattended", "-q", "-C", work, prompt}
	}

	pi := &agent{name: "pi", home: mk("home-pi"), tmp: mk("tmp-pi"), inWork: true}
	var piEnvExtra []string
	if offline {
		piEnvExtra = append(piEnvExtra, "PI_OFFLINE=1")
	}
	piEnvExtra = append(piEnvExtra, strings.Fields(piEnv)...)
	pi.env = env(pi.home, pi.tmp, piEnvExtra...)
	piArgs := []string{"-p", "--provider", "bench", "--model", "m"}
	piArgs = append(piArgs, strings.Fields(piExtra)...)
	pi.argv = func(work string) []string {
		return append(append(slices.Clone(piArgv), piArgs...), prompt)
	}
	agentDir := mk("home-pi", ".pi", "agent")
	mk("work")
	if mkErr != nil {
		return mkErr
	}
	if err := os.WriteFile(filepath.Join(agentDir, "models.json"), []byte(piModels(baseURL)), 0o644); err != nil {
		return err
	}

	fmt.Printf("server   %s\n", baseURL)
	fmt.Printf("nodwyn   HOME=%s TMPDIR=%s %s\n", nodwyn.home, nodwyn.tmp, strings.Join(nodwyn.argv("<work>"), " "))
	fmt.Printf("pi       HOME=%s TMPDIR=%s %s %s (in <work>)\n", pi.home, pi.tmp, strings.Join(piEnvExtra, " "), strings.Join(pi.argv("<work>"), " "))
	fmt.Printf("         %s/models.json: provider bench, api openai-completions, baseUrl %s, apiKey from $OPENAI_API_KEY\n", agentDir, baseURL)
	fmt.Printf("launches %d warm-up + %d measured of each, alternating nodwyn, pi, nodwyn, pi, …\n\n", warmup, n)

	ctx := context.Background()
	seq := 0
	launchOne := func(a *agent) (result, error) {
		seq++
		work := mk("work", fmt.Sprintf("%03d-%s", seq, a.name))
		if mkErr != nil {
			return result{}, mkErr
		}
		return a.run(ctx, work, timeout)
	}
	for i := 0; i < warmup; i++ {
		for _, a := range []*agent{nodwyn, pi} {
			r, err := launchOne(a)
			if err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
			fmt.Printf("warm-up  %-6s first request %7.1f ms  exit %7.1f ms  %s\n", a.name, ms(r.first), ms(r.exit), describe(r.reqs))
		}
	}

	var nw, pw []result
	for i := 0; i < n; i++ {
		rn, err := launchOne(nodwyn)
		if err != nil {
			return err
		}
		rp, err := launchOne(pi)
		if err != nil {
			return err
		}
		nw, pw = append(nw, rn), append(pw, rp)
		fmt.Printf("%3d  nodwyn first %6.1f ms exit %6.1f ms | pi first %6.1f ms exit %6.1f ms | %s | %s\n",
			i+1, ms(rn.first), ms(rn.exit), ms(rp.first), ms(rp.exit), describe(rn.reqs), describe(rp.reqs))
	}

	fmt.Println()
	report := func(label string, get func(result) time.Duration) {
		var a, b, ratios []float64
		for i := range nw {
			x, y := ms(get(nw[i])), ms(get(pw[i]))
			a, b, ratios = append(a, x), append(b, y), append(ratios, x/y)
		}
		fmt.Printf("%s\n", label)
		fmt.Printf("  nodwyn  median %7.1f ms  min %7.1f  max %7.1f\n", median(a), minOf(a), maxOf(a))
		fmt.Printf("  pi      median %7.1f ms  min %7.1f  max %7.1f\n", median(b), minOf(b), maxOf(b))
		fmt.Printf("  nodwyn/pi: ratio of medians %.3f, median of pairwise ratios %.3f (min %.3f, max %.3f)\n",
			median(a)/median(b), median(ratios), minOf(ratios), maxOf(ratios))
	}
	report("launch -> first request at the server", func(r result) time.Duration { return r.first })
	report("launch -> exit", func(r result) time.Duration { return r.exit })
	fmt.Printf("requests per launch: nodwyn %s; pi %s\n", summarize(nw), summarize(pw))
	return nil
}

// describe is one launch's requests, briefly: each's path and model, and
// whether it carried the key.
func describe(reqs []request) string {
	var parts []string
	for _, r := range reqs {
		s := r.method + " " + r.path
		if r.model != "" {
			s += fmt.Sprintf(" model=%s", r.model)
		}
		if !r.auth {
			s += " (no key!)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func summarize(rs []result) string {
	counts := map[string]int{}
	for _, r := range rs {
		counts[describe(r.reqs)]++
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%d× [%s]", counts[k], k))
	}
	return strings.Join(out, " ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(xs []float64) float64 { return slices.Min(xs) }
func maxOf(xs []float64) float64 { return slices.Max(xs) }
