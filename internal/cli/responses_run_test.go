package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A whole run on OpenAI's Responses API (--provider openai-responses),
// with --reasoning and [provider.compat] from config.toml: the first reply
// (a recorded stream: a reasoning item, text and an fs-write call) is
// acted on, and the next request carries that reasoning item back
// unchanged, with store false and the effort asked for.
func TestARunOnTheResponsesAPI(t *testing.T) {
	first, err := os.ReadFile(filepath.Join("..", "provider", "testdata", "responses_reasoning_tool.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			w.Write(first)
			return
		}
		io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"m\",\"output_index\":0,\"content_index\":0,\"delta\":\"Done.\"}\n\n"+
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"r2\",\"status\":\"completed\",\"output\":[{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Done.\"}]}],\"usage\":{\"input_tokens\":50,\"input_tokens_details\":{\"cached_tokens\":40},\"output_tokens\":3,\"output_tokens_details\":{\"reasoning_tokens\":0}}}}\n\n")
	}))
	defer srv.Close()
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	cfgDir := filepath.Join(home, ".config", "nodwyn")
	os.MkdirAll(cfgDir, 0o755)
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[provider.compat]\nno_parallel_tool_calls = true\n[provider.prices]\ninput = 2\ncached_input = 0.5\noutput = 8\n"), 0o644)
	getenv := homeEnv(home)
	env := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test"
		}
		return getenv(k)
	}
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "--provider", "openai-responses", "--model", "gpt-5-mini", "--reasoning", "high", "--base-url", srv.URL + "/v1",
		"--unattended", "--json", "-C", proj, "write a.txt"}, strings.NewReader(""), &stdout, &stderr, env)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(proj, "a.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("the call of the recorded reply did not run: %q %v", b, err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	for i, b := range bodies {
		for _, want := range []string{"/v1/responses ", `"store":false`, `"effort":"high"`} {
			if !strings.Contains(b, want) {
				t.Errorf("request %d lacks %s: %.300s", i+1, want, b)
			}
		}
		if strings.Contains(b, "parallel_tool_calls") {
			t.Errorf("request %d sends parallel_tool_calls, which [provider.compat] turned off", i+1)
		}
	}
	if !strings.Contains(bodies[1], "gAAAAABoISQ24OyVRYbkYfukQ") || !strings.Contains(bodies[1], `"call_id":"call_a"`) {
		t.Errorf("the second request does not pass back the reasoning item and the call: %.600s", bodies[1])
	}
	if !strings.Contains(stdout.String(), `"cached_tokens":40`) {
		t.Errorf("the reply's cached tokens are not on model.reply")
	}
	// The second reply's cost at [provider.prices]: 10 uncached at $2, 40
	// cached at $0.5 and 3 out at $8 a million.
	cost, _ := json.Marshal((10*2 + 40*0.5 + 3*8) / 1e6)
	if want := `"cost_usd":` + string(cost); !strings.Contains(stdout.String(), want) {
		t.Errorf("model.reply lacks %s:\n%s", want, stdout.String())
	}
}
