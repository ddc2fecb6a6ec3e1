package session

import (
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

	"github.com/nodwyn/nodwyn/internal/provider"
)

// A whole session through the real OpenAI client against a local server
// speaking Chat Completions' SSE: the tools' schemas are accepted, a tool
// call split across chunks runs, its result goes back with the call's id.
func TestASessionThroughTheOpenAIWireFormat(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(chunk string) {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
			w.(http.Flusher).Flush()
		}
		head := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[`
		if n == 0 {
			send(head + `{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"fs-write","arguments":"{\"path\": \"out.txt\", "}}]}}]}`)
			send(head + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"content\": \"hi\\n\"}"}}]}}]}`)
			send(head + `{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		} else {
			send(head + `{"index":0,"delta":{"role":"assistant","content":"Wrote out.txt."}}]}`)
			send(head + `{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		}
		send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	opts := baseOpts(t)
	model, err := provider.New(provider.Config{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1", APIKey: "sk-test-0123456789", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	opts.Model, opts.ModelName = model, "m"
	s, err := New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := s.Run(t.Context())
	s.Close()
	if out.Status != "finished" || out.Text != "Wrote out.txt." {
		t.Fatalf("outcome %+v", out)
	}
	if b, err := os.ReadFile(filepath.Join(opts.Folder, "out.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	tools, _ := bodies[0]["tools"].([]any)
	if len(tools) == 0 {
		t.Fatal("no tools sent")
	}
	msgs, _ := bodies[1]["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool" || last["tool_call_id"] != "call_x" || !strings.Contains(fmt.Sprint(last["content"]), "out.txt") {
		t.Fatalf("the tool result sent back: %v", last)
	}
}
