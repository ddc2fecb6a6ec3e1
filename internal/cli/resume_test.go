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
)

// chatServer is an OpenAI Chat Completions server that answers every
// request "Done." and keeps the model each request named.
type chatServer struct {
	*httptest.Server
	mu     sync.Mutex
	models []string
}

func newChatServer(t *testing.T) *chatServer {
	cs := &chatServer{}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Model string `json:"model"`
		}
		json.Unmarshal(b, &req)
		cs.mu.Lock()
		cs.models = append(cs.models, r.URL.Path+" "+req.Model)
		cs.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}` + "\n\n"
		fmt.Fprintf(w, chunk, `{"role":"assistant","content":"Done."}`, "null")
		fmt.Fprintf(w, chunk, `{}`, `"stop"`)
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(cs.Close)
	return cs
}

// taken returns the models named since the last call.
func (cs *chatServer) taken() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	m := cs.models
	cs.models = nil
	return m
}

// run --resume goes on with the provider and model the session started
// with, though config.toml names another provider and the resume names
// none; a flag of the resume wins (issue 29 item 3); and so does a
// session whose state.json was lost, rebuilt from its log.
func TestResumeKeepsTheSessionsProviderAndModel(t *testing.T) {
	srv := newChatServer(t)
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	cfg := filepath.Join(home, ".config", "nodwyn")
	os.MkdirAll(cfg, 0o755)
	os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[provider]\nname = \"anthropic\"\nmodel = \"claude-config\"\n"), 0o644)
	getenv := homeEnv(home)
	env := func(k string) string {
		switch k {
		case "OPENAI_API_KEY", "ANTHROPIC_API_KEY":
			return "sk-test-key"
		}
		return getenv(k)
	}
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"run", "--unattended", "--no-keychain"}, args...), strings.NewReader(""), &stdout, &stderr, env)
		return code, stderr.String()
	}
	if code, errs := run("--provider", "openai", "--model", "gpt-first", "--base-url", srv.URL+"/v1", "-C", proj, "say done"); code != 0 {
		t.Fatalf("the first run: exit %d\n%s", code, errs)
	}
	if got := srv.taken(); len(got) == 0 || got[0] != "/v1/chat/completions gpt-first" {
		t.Fatalf("the first run's requests: %q", got)
	}
	if code, errs := run("--resume", "last", "go on"); code != 0 {
		t.Fatalf("the resumed run: exit %d\n%s", code, errs)
	}
	got := srv.taken()
	if len(got) == 0 {
		t.Fatal("the resumed run sent nothing to the session's provider")
	}
	for _, m := range got {
		if m != "/v1/chat/completions gpt-first" {
			t.Errorf("the resumed run asked %q, not the session's model gpt-first", m)
		}
	}
	if code, errs := run("--resume", "last", "--model", "gpt-second", "go on"); code != 0 {
		t.Fatalf("resumed with --model: exit %d\n%s", code, errs)
	}
	if got := srv.taken(); len(got) == 0 || got[0] != "/v1/chat/completions gpt-second" {
		t.Errorf("resumed with --model gpt-second: %q", got)
	}
	// With state.json lost, the state rebuilt from the log has them too
	// (run.start carries the provider, its endpoint and the model).
	states, _ := filepath.Glob(filepath.Join(home, ".local", "share", "nodwyn", "sessions", "*", "state*"))
	if len(states) == 0 {
		t.Fatal("no state.json to lose")
	}
	for _, p := range states {
		os.Remove(p)
	}
	if code, errs := run("--resume", "last", "go on"); code != 0 {
		t.Fatalf("resumed from the log alone: exit %d\n%s", code, errs)
	}
	if got := srv.taken(); len(got) == 0 || got[0] != "/v1/chat/completions gpt-second" {
		t.Errorf("resumed from the log alone: %q", got)
	}
}
