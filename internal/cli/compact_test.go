package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nodwyn/nodwyn/internal/store"
)

// windowServer is an OpenAI-compatible (or Anthropic) server that enforces
// a context window: a request whose body is over window tokens (four bytes
// a token) is refused with the provider's own error shape, as a real one
// refuses it. Its replies call fs-read on part-N.txt, calls times, then
// say "Done."; a request without tools (a summary) gets a summary.
type windowServer struct {
	t         *testing.T
	window    int
	calls     int
	anthropic bool

	mu        sync.Mutex
	issued    int // tool calls sent
	refused   int // requests over the window
	accepted  int
	maxTokens int
	bodies    []string // the accepted requests' bodies (the last few)
	sumIn     int      // the usage it reported, all replies together
	sumOut    int
}

func (ws *windowServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tokens := len(body) / 4
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if tokens > ws.window {
		ws.refused++
		w.WriteHeader(http.StatusBadRequest)
		if ws.anthropic {
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, tokens, ws.window)
		} else {
			fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, ws.window, tokens)
		}
		return
	}
	ws.accepted++
	ws.sumIn += tokens
	ws.sumOut += 20
	ws.maxTokens = max(ws.maxTokens, tokens)
	ws.bodies = append(ws.bodies, string(body))
	if len(ws.bodies) > 3 {
		ws.bodies = ws.bodies[1:]
	}
	var req struct {
		Tools []any `json:"tools"`
	}
	json.Unmarshal(body, &req)
	text, call := "", ""
	switch {
	case len(req.Tools) == 0:
		text = fmt.Sprintf("1. Task: read the parts. 2. Done: read parts up to %d. 3. Files: none changed. 4. Open problems: none. 5. Next step: read the next part.", ws.issued)
	case ws.issued < ws.calls:
		call = fmt.Sprintf(`{"path":"part-%d.txt"}`, ws.issued)
		ws.issued++
	default:
		text = "Done."
	}
	if ws.anthropic {
		ws.anthropicReply(w, tokens, text, call)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
	}
	if call != "" {
		args, _ := json.Marshal(call)
		chunk(fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"fs-read","arguments":%s}}]}`, ws.issued, args), "null")
		chunk(`{}`, `"tool_calls"`)
	} else {
		t, _ := json.Marshal(text)
		chunk(fmt.Sprintf(`{"role":"assistant","content":%s}`, t), "null")
		chunk(`{}`, `"stop"`)
	}
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":20,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", tokens, tokens+20)
}

func (ws *windowServer) anthropicReply(w http.ResponseWriter, tokens int, text, call string) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, tokens))
	stop := "end_turn"
	if call != "" {
		args, _ := json.Marshal(call)
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_%d","name":"fs-read","input":{}}}`, ws.issued))
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%s}}`, args))
		stop = "tool_use"
	} else {
		t, _ := json.Marshal(text)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, t))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q},"usage":{"output_tokens":20}}`, stop))
	ev("message_stop", `{"type":"message_stop"}`)
}

// compactionProject makes a folder with n 6 KB files to read.
func compactionProject(t *testing.T, n int) (home, proj string) {
	home = t.TempDir()
	proj = filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	line := strings.Repeat("0123456789abcdef ", 6) + "\n"
	body := strings.Repeat(line, 6000/len(line))
	for i := 0; i < n; i++ {
		os.WriteFile(filepath.Join(proj, fmt.Sprintf("part-%d.txt", i)), []byte(fmt.Sprintf("part %d\n%s", i, body)), 0o644)
	}
	cfg := filepath.Join(home, ".config", "nodwyn")
	os.MkdirAll(cfg, 0o755)
	os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[provider]\ncontext_window = 32000\n"), 0o644)
	return home, proj
}

// The run: 400 tool calls, each returning 6 KB, against a 32k
// window the server enforces. Compaction keeps every request within it,
// the run finishes, the log holds every result, and a resume goes on from
// the compacted state. The same run with compaction turned off by a
// project's profile fails with the provider's overflow: it is the policy
// that saves it.
func TestCompactionKeepsALongRunInItsWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("400 tool calls")
	}
	const calls = 400
	home, proj := compactionProject(t, calls)
	ws := &windowServer{t: t, window: 32000, calls: calls}
	srv := httptest.NewServer(ws)
	defer srv.Close()
	getenv := homeEnv(home)
	env := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test"
		}
		return getenv(k)
	}
	var stdout, stderr bytes.Buffer
	traj := filepath.Join(home, "trajectory.json")
	code := Main([]string{"run", "--provider", "openai", "--model", "m", "--base-url", srv.URL + "/v1", "--unattended", "--trajectory", traj, "-C", proj, "read every part, then say done"},
		strings.NewReader(""), &stdout, &stderr, env)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, tail(stderr.String(), 3000))
	}
	if ws.refused != 0 || ws.maxTokens > ws.window || ws.issued != calls {
		t.Errorf("refused %d requests over the window (largest accepted %d tokens of %d); %d of %d calls made", ws.refused, ws.maxTokens, ws.window, ws.issued, calls)
	}
	data := filepath.Join(home, ".local", "share", "nodwyn")
	sessions, _ := filepath.Glob(filepath.Join(data, "sessions", "*", "events.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("sessions: %v", sessions)
	}
	events, err := store.ReadLog(sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	results, compactions, folds := 0, 0, 0
	for _, ev := range events {
		switch ev.Type {
		case "run.end":
			// The totals are the sum of what the server reported, the
			// summaries' requests included.
			if in, out := ev.Data["input_tokens"], ev.Data["output_tokens"]; in != float64(ws.sumIn) || out != float64(ws.sumOut) {
				t.Errorf("run.end says %v in, %v out; the server reported %d and %d", in, out, ws.sumIn, ws.sumOut)
			}
		case "tool.result":
			if out, _ := ev.Data["output"].(string); strings.Contains(out, "part ") {
				results++
			}
		case "note":
			if text, _ := ev.Data["text"].(string); strings.HasPrefix(text, "compaction:") {
				if strings.Contains(text, "replaced by a summary") {
					compactions++
				} else if strings.Contains(text, "folded") {
					folds++
				}
			}
		}
	}
	if results != calls || compactions == 0 || folds == 0 {
		t.Errorf("the log holds %d results of %d, %d summaries and %d folds", results, calls, compactions, folds)
	}
	t.Logf("%d requests accepted, the largest %d tokens; %d summaries, %d folds of older results", ws.accepted, ws.maxTokens, compactions, folds)
	b, err := os.ReadFile(traj)
	if err != nil {
		t.Fatal(err)
	}
	if problems := atifProblems(b); len(problems) > 0 {
		t.Errorf("the trajectory breaks ATIF: %v", problems)
	}
	var doc struct {
		Final map[string]any `json:"final_metrics"`
	}
	json.Unmarshal(b, &doc)
	if doc.Final["total_prompt_tokens"] != float64(ws.sumIn) || doc.Final["total_completion_tokens"] != float64(ws.sumOut) {
		t.Errorf("final_metrics %v; the server reported %d in, %d out", doc.Final, ws.sumIn, ws.sumOut)
	}

	// A resume continues from the compacted state: its first request
	// carries the summary, not the 400 results.
	ws.mu.Lock()
	ws.bodies = nil
	ws.mu.Unlock()
	stderr.Reset()
	code = Main([]string{"run", "--provider", "openai", "--model", "m", "--base-url", srv.URL + "/v1", "--unattended", "--resume", "last", "and once more"},
		strings.NewReader(""), &stdout, &stderr, env)
	if code != 0 || len(ws.bodies) == 0 {
		t.Fatalf("resume: exit %d, %d requests\n%s", code, len(ws.bodies), tail(stderr.String(), 2000))
	}
	if first := ws.bodies[0]; !strings.Contains(first, "compacted into this summary") || len(first)/4 > ws.window {
		t.Errorf("the resumed run's first request (%d tokens) does not start from the compacted state", len(first)/4)
	}

	// Compaction off by a project's profile: the provider's overflow ends it.
	os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755)
	os.WriteFile(filepath.Join(proj, ".nodwyn", "init.scm"), []byte(
		"(define-profile 'no-compaction (cons (cons 'compact #f) (profile-named 'lean)))\n"), 0o644)
	ws2 := &windowServer{t: t, window: 32000, calls: calls}
	srv2 := httptest.NewServer(ws2)
	defer srv2.Close()
	stderr.Reset()
	code = Main([]string{"run", "--provider", "openai", "--model", "m", "--base-url", srv2.URL + "/v1", "--unattended", "--trust-project",
		"--profile", "no-compaction", "-C", proj, "read every part, then say done"}, strings.NewReader(""), &stdout, &stderr, env)
	if code != ExitFailed || !strings.Contains(stderr.String(), "context_length_exceeded") || ws2.issued >= calls {
		t.Errorf("without compaction: exit %d after %d calls\n%s", code, ws2.issued, tail(stderr.String(), 1500))
	}
}

// The server answers a request over its window with the provider's error
// (OpenAI's and Anthropic's shapes); the loop compacts and sends it again,
// once. The threshold is set past the window, so only the overflow can
// make it compact.
func TestOverflowIsCompactedAndRetriedOnce(t *testing.T) {
	for _, anthropic := range []bool{false, true} {
		name := map[bool]string{false: "openai", true: "anthropic"}[anthropic]
		t.Run(name, func(t *testing.T) {
			home, proj := compactionProject(t, 40)
			os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755)
			os.WriteFile(filepath.Join(proj, ".nodwyn", "init.scm"), []byte("(define compact-threshold 5)\n"), 0o644)
			ws := &windowServer{t: t, window: 32000, calls: 40, anthropic: anthropic}
			srv := httptest.NewServer(ws)
			defer srv.Close()
			getenv := homeEnv(home)
			env := func(k string) string {
				if k == "OPENAI_API_KEY" || k == "ANTHROPIC_API_KEY" {
					return "sk-test"
				}
				return getenv(k)
			}
			base := srv.URL + "/v1"
			if anthropic {
				base = srv.URL
			}
			var stdout, stderr bytes.Buffer
			code := Main([]string{"run", "--provider", name, "--model", "m", "--base-url", base, "--unattended", "--trust-project", "-C", proj, "read every part"},
				strings.NewReader(""), &stdout, &stderr, env)
			if code != 0 || ws.refused == 0 || ws.issued != 40 {
				t.Fatalf("exit %d, %d refused, %d calls\n%s", code, ws.refused, ws.issued, tail(stderr.String(), 2000))
			}
			if !strings.Contains(stderr.String(), "compaction:") {
				t.Errorf("no compaction note\n%s", tail(stderr.String(), 2000))
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
