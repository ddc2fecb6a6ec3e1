package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const oaHead = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m1","choices":`

func oaChunk(choices string) string { return oaHead + choices + "}" }

// oaToolStream is a real-shaped Chat Completions stream: text, then two
// tool calls whose arguments arrive in fragments, then usage and [DONE].
var oaToolStream = events(
	oaChunk(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{"content":"Writing "},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{"content":"the file."},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"fs-write","arguments":""}}]},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"a.txt\", \"content\": \"hi\\n\"}"}}]},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"shell-exec","arguments":"{\"command\":"}}]},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":" \"ls\"}"}}]},"finish_reason":null}]`),
	oaChunk(`[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`),
	oaChunk(`[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":40}}`),
	"[DONE]",
)

func oaText(text string) string {
	return events(
		oaChunk(fmt.Sprintf(`[{"index":0,"delta":{"role":"assistant","content":%q},"finish_reason":null}]`, text)),
		oaChunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`),
		oaChunk(`[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}`),
		"[DONE]",
	)
}

func newTestOpenAI(t *testing.T, ws *wireServer, cfg Config) Model {
	t.Helper()
	cfg.Provider, cfg.BaseURL = "openai", ws.srv.URL+"/v1"
	if cfg.Model == "" {
		cfg.Model = "m1"
	}
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-test"
	}
	m, err := New(fastRetries(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var sampleRequest = Request{
	System: "You are terse.",
	Messages: []Message{
		{Role: RoleUser, Content: "make a.txt"},
		{Role: RoleAssistant, Content: "ok", ToolCalls: []ToolCall{{ID: "call_0", Name: "fs-find", Arguments: `{"glob":"*"}`}}},
		{Role: RoleTool, ToolCallID: "call_0", Name: "fs-find", Content: "b.txt"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "shell-exec", Arguments: `{"command":"false"}`}, {ID: "call_2", Name: "fs-read", Arguments: `{"path":`}}},
		{Role: RoleTool, ToolCallID: "call_1", Name: "shell-exec", Content: "exit status 1", IsError: true},
		{Role: RoleTool, ToolCallID: "call_2", Name: "fs-read", Content: ""},
		{Role: RoleUser, Content: "No file has changed"},
	},
	Tools: []Tool{{Name: "fs-write", Description: "Write a file.", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"},
	}}},
	MaxTokens: 1000,
}

func TestOpenAIToolCallsSplitMidJSON(t *testing.T) {
	ws := newWireServer(t, sseSplit(oaToolStream, 7))
	m := newTestOpenAI(t, ws, Config{})
	var d deltas
	reply, err := m.Stream(ctxT(t), sampleRequest, d.on)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "Writing the file." || d.text.String() != reply.Text {
		t.Errorf("text = %q, deltas %q", reply.Text, d.text.String())
	}
	want := []ToolCall{
		{ID: "call_a", Name: "fs-write", Arguments: `{"path": "a.txt", "content": "hi\n"}`},
		{ID: "call_b", Name: "shell-exec", Arguments: `{"command": "ls"}`},
	}
	if fmt.Sprint(reply.ToolCalls) != fmt.Sprint(want) {
		t.Errorf("tool calls = %q, want %q", reply.ToolCalls, want)
	}
	if strings.Join(d.tools, ",") != "fs-write,shell-exec" {
		t.Errorf("tool deltas = %q", d.tools)
	}
	if reply.StopReason != "tool_calls" || reply.Attempts != 1 {
		t.Errorf("stop %q attempts %d", reply.StopReason, reply.Attempts)
	}
	if want := (Usage{InputTokens: 60, OutputTokens: 20, CacheReadTokens: 40}); reply.Usage != want {
		t.Errorf("usage = %+v, want %+v", reply.Usage, want)
	}
	if m.Name() != "openai:m1" {
		t.Errorf("name %q", m.Name())
	}

	r := ws.requests()[0]
	if r.path != "/v1/chat/completions" || r.header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("path %q auth %q", r.path, r.header.Get("Authorization"))
	}
	b := r.body
	checks := []struct {
		got  any
		want string
	}{
		{get(b, "model"), "m1"},
		{get(b, "stream"), "true"},
		{get(b, "stream_options", "include_usage"), "true"},
		{get(b, "max_tokens"), "1000"}, // a compatible server: max_tokens
		{get(b, "messages", 0, "role"), "system"},
		{get(b, "messages", 0, "content"), "You are terse."},
		{get(b, "messages", 1, "content"), "make a.txt"},
		{get(b, "messages", 2, "tool_calls", 0, "function", "arguments"), `{"glob":"*"}`},
		{get(b, "messages", 2, "tool_calls", 0, "id"), "call_0"},
		{get(b, "messages", 3, "role"), "tool"},
		{get(b, "messages", 3, "tool_call_id"), "call_0"},
		{get(b, "messages", 4, "tool_calls", 1, "function", "arguments"), `{"path":`}, // sent back as the model wrote it
		{get(b, "messages", 5, "content"), "Error: exit status 1"},
		{get(b, "messages", 6, "content"), "(no output)"},
		{get(b, "messages", 7, "role"), "user"},
		{get(b, "tools", 0, "type"), "function"},
		{get(b, "tools", 0, "function", "name"), "fs-write"},
		{get(b, "tools", 0, "function", "parameters", "required", 0), "path"},
	}
	for i, c := range checks {
		if fmt.Sprint(c.got) != c.want {
			t.Errorf("check %d: got %v, want %s", i, c.got, c.want)
		}
	}
}

// Malformed arguments with a finish_reason that says the calls are
// complete are the model's: kept as sent, for ParseArgs to explain. (Cut
// off by the token limit they are an error: TestOpenAILengthMidToolCall.)
func TestOpenAIMalformedToolArgumentsKept(t *testing.T) {
	stream := events(
		oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"fs-write","arguments":"{\"path\": \"a"}}]},"finish_reason":null}]`),
		oaChunk(`[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`),
		"[DONE]",
	)
	ws := newWireServer(t, sseSplit(stream, 1000))
	m := newTestOpenAI(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].Arguments != `{"path": "a` {
		t.Fatalf("tool calls %q", reply.ToolCalls)
	}
	_, err = ParseArgs(reply.ToolCalls[0])
	if err == nil || err.Error() != "arguments for fs-write are not valid JSON: unexpected end of input; send one JSON object" {
		t.Errorf("ParseArgs error = %v", err)
	}
}

func TestOpenAIOfficialSendsMaxCompletionTokens(t *testing.T) {
	m, err := newOpenAI(Config{Model: "gpt-x", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.params(Request{MaxTokens: 5}, Compat{})
	b, _ := encodeBody(p)
	if !strings.Contains(string(b), `"max_completion_tokens":5`) || strings.Contains(string(b), `"max_tokens"`) {
		t.Errorf("official endpoint: body %s", b)
	}
}

func TestOpenAI429RetryAfterThenSuccess(t *testing.T) {
	ws := newWireServer(t,
		status(429, `{"error":{"message":"slow down"}}`, "Retry-After", "0"),
		sseSplit(oaText("hello"), 5))
	var waits []time.Duration
	m := newTestOpenAI(t, ws, Config{OnRetry: func(n int, wait time.Duration, err error) {
		waits = append(waits, wait)
		if !strings.Contains(err.Error(), "429 Too Many Requests") {
			t.Errorf("retry %d err = %v", n, err)
		}
	}})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "hello" || reply.Attempts != 2 || len(ws.requests()) != 2 {
		t.Errorf("reply %+v after %d requests", reply, len(ws.requests()))
	}
	if len(waits) != 1 || waits[0] != 0 {
		t.Errorf("waits %v, want [0s] from Retry-After: 0", waits)
	}
}

func TestOpenAI500ThenSuccess(t *testing.T) {
	ws := newWireServer(t, status(500, `oops`), sseSplit(oaText("fine"), 3))
	m := newTestOpenAI(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Text != "fine" || reply.Attempts != 2 {
		t.Fatalf("reply %+v, err %v", reply, err)
	}
}

func TestOpenAICutStreamThenSuccess(t *testing.T) {
	ws := newWireServer(t, sseCut(oaToolStream, len(oaToolStream)/2), sseSplit(oaText("again"), 11))
	m := newTestOpenAI(t, ws, Config{})
	var d deltas
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, d.on)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "again" || len(reply.ToolCalls) != 0 || reply.Attempts != 2 {
		t.Errorf("reply %+v", reply)
	}
	if d.restarts != 1 || d.text.String() != "again" {
		t.Errorf("restarts %d, shown after restart %q", d.restarts, d.text.String())
	}
}

func TestOpenAIStreamWithoutFinishIsRetried(t *testing.T) {
	noFinish := events(oaChunk(`[{"index":0,"delta":{"content":"par"},"finish_reason":null}]`), "[DONE]")
	ws := newWireServer(t, sseSplit(noFinish, 100))
	m := newTestOpenAI(t, ws, Config{MaxRetries: 1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	want := fmt.Sprintf("provider openai: POST %s/v1/chat/completions: stream cut mid-reply: the stream ended with no finish_reason after 2 attempts", ws.srv.URL)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if !errors.Is(err, errStreamCut) {
		t.Errorf("err does not wrap errStreamCut")
	}
}

func TestOpenAIErrorEventMidStreamRetried(t *testing.T) {
	withErr := events(oaChunk(`[{"index":0,"delta":{"content":"a"},"finish_reason":null}]`), `{"error":{"message":"overloaded","type":"server_error"}}`)
	ws := newWireServer(t, sseSplit(withErr, 100), sseSplit(oaText("b"), 100))
	m := newTestOpenAI(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Text != "b" || reply.Attempts != 2 {
		t.Fatalf("reply %+v err %v", reply, err)
	}
}

func TestOpenAIRetriesExhausted(t *testing.T) {
	ws := newWireServer(t, status(429, `{"error": {"message": "slow down"}}`))
	m := newTestOpenAI(t, ws, Config{MaxRetries: 2})
	var retries int
	m.(*OpenAI).retry.onRetry = func(int, time.Duration, error) { retries++ }
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	want := fmt.Sprintf(`provider openai: POST %s/v1/chat/completions: 429 Too Many Requests after 3 attempts: {"error": {"message": "slow down"}}`, ws.srv.URL)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 429 || pe.Attempts != 3 {
		t.Errorf("*Error = %+v", pe)
	}
	if retries != 2 || len(ws.requests()) != 3 {
		t.Errorf("%d retries, %d requests", retries, len(ws.requests()))
	}
}

func TestOpenAIClientErrorNotRetried(t *testing.T) {
	ws := newWireServer(t, status(401, `{"error":{"message":"bad key"}}`))
	m := newTestOpenAI(t, ws, Config{})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	want := fmt.Sprintf(`provider openai: POST %s/v1/chat/completions: 401 Unauthorized: {"error":{"message":"bad key"}}`, ws.srv.URL)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if n := len(ws.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOpenAIRetryAfterBeyondBudget(t *testing.T) {
	ws := newWireServer(t, status(503, `busy`, "Retry-After", "3600"))
	m := newTestOpenAI(t, ws, Config{MaxRetryWait: time.Minute})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable (the server asked to wait 1h0m0s, more than the 1m0s left of the retry budget): busy") {
		t.Errorf("err = %v", err)
	}
	if n := len(ws.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOpenAICancelDuringBackoff(t *testing.T) {
	ws := newWireServer(t, status(503, `busy`, "Retry-After", "60"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newTestOpenAI(t, ws, Config{MaxRetryWait: time.Hour, OnRetry: func(int, time.Duration, error) { cancel() }})
	done := make(chan error, 1)
	go func() {
		_, err := m.Stream(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled while waiting to retry after 503 Service Unavailable") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stream did not return after ctx was cancelled during a 60 s backoff")
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	ws := newWireServer(t, status(200, ``))
	url := ws.srv.URL
	ws.srv.Close()
	m, err := New(fastRetries(Config{Provider: "openai", BaseURL: url + "/v1", Model: "m", MaxRetries: 1}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	prefix := fmt.Sprintf("provider openai: POST %s/v1/chat/completions: connection failed: ", url)
	if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.HasSuffix(err.Error(), "after 2 attempts") {
		t.Errorf("err = %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Provider: "x"}, `provider: unknown provider "x"; use openai, anthropic or script`},
		{Config{}, `provider: no provider chosen; use openai, anthropic or script`},
		{Config{Provider: "openai", BaseURL: "ftp://h", Model: "m"}, `provider openai: base URL "ftp://h" is not an http(s) URL`},
		{Config{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1"}, `provider openai: no model named`},
		{Config{Provider: "openai", Model: "gpt"}, `provider openai: no API key for https://api.openai.com/v1`},
		{Config{Provider: "anthropic", Model: "c"}, `provider anthropic: no API key for https://api.anthropic.com`},
		{Config{Provider: "anthropic", BaseURL: "127.0.0.1:9", Model: "c"}, `provider anthropic: base URL "127.0.0.1:9" is not an http(s) URL`},
		{Config{Provider: "script"}, `provider script: no script file named`},
		{Config{Provider: "script", Script: "/nonexistent/s.txt"}, `provider script: open /nonexistent/s.txt: no such file or directory`},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %s…", c.cfg, err, c.want)
		}
	}
	// Ordinary configurations are accepted.
	for _, cfg := range []Config{
		{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "local"},
		{Provider: "openai", Model: "gpt", APIKey: "k"},
		{Provider: "anthropic", Model: "c", APIKey: "k"},
	} {
		if _, err := New(cfg); err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
		}
	}
}

func TestOpenAIIgnoresStatusHandlers(t *testing.T) {
	// A 404 from a wrong base URL names the URL so the user can fix it.
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	m := newTestOpenAI(t, ws, Config{})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), ws.srv.URL+"/v1/chat/completions: 404 Not Found: 404 page not found") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAIEnvironmentKeyNotSent(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/elsewhere")
	ws := newWireServer(t, sseSplit(oaText("hi"), 100))
	m, err := New(fastRetries(Config{Provider: "openai", BaseURL: ws.srv.URL + "/v1", Model: "local"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); err != nil {
		t.Fatal(err)
	}
	h := ws.requests()[0].header
	if h.Get("Authorization") != "" || h.Get("OpenAI-Organization") != "" {
		t.Errorf("sent credentials from the environment: %q %q", h.Get("Authorization"), h.Get("OpenAI-Organization"))
	}
}

func TestOpenAIStalledStreamIsCutAndRetried(t *testing.T) {
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(events(oaChunk(`[{"index":0,"delta":{"content":"sta"},"finish_reason":null}]`))))
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done() // send nothing more until the client gives up
	}
	ws := newWireServer(t, stall, sseSplit(oaText("moving"), 100))
	var cause error
	m := newTestOpenAI(t, ws, Config{IdleTimeout: 300 * time.Millisecond, OnRetry: func(n int, _ time.Duration, err error) {
		if n == 1 {
			cause = err
		}
	}})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	// At least 2 attempts: the good one is not bound to beat the idle
	// timeout on a loaded machine, and another retry proves nothing less.
	if err != nil || reply.Text != "moving" || reply.Attempts < 2 {
		t.Fatalf("reply %+v, err %v", reply, err)
	}
	if !errors.Is(cause, ErrIdleTimeout) || !strings.Contains(cause.Error(), "no data from the model for 300ms, not a byte") {
		t.Errorf("retry cause %v", cause)
	}
}

func TestOpenAICallsAllNumberedZero(t *testing.T) {
	// Some compatible servers give every call index 0, told apart by id,
	// and send a call whole in one chunk.
	stream := events(
		oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"fs-read","arguments":"{\"path\":\"a\"}"}}]},"finish_reason":null}]`),
		oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"fs-read","arguments":"{\"path\":\"b\"}"}}]},"finish_reason":null}]`),
		oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":{"name":"git-status"}}]},"finish_reason":"tool_calls"}]`),
		"[DONE]",
	)
	ws := newWireServer(t, sseSplit(stream, 1000))
	m := newTestOpenAI(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Tools: []Tool{{Name: "git-status"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{c1 fs-read {"path":"a"}} {c2 fs-read {"path":"b"}} {call_2 git-status }]`
	if fmt.Sprint(reply.ToolCalls) != want {
		t.Errorf("calls %v, want %s", reply.ToolCalls, want)
	}
	if got := get(ws.requests()[0].body, "tools", 0, "function", "parameters", "type"); got != "object" {
		t.Errorf("a tool with no schema is sent an empty object schema, got %v", got)
	}
}

// rawBody answers 200 with a body that is no event stream.
func rawBody(body, ctype string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	}
}

// A 200 whose body is no event stream nor JSON (a proxy's page, a JSON
// reply labelled as a stream) is an error that says what came back, and is
// not retried: asking again gets the same. (A JSON reply labelled JSON is
// read: whole_test.go.)
func TestOpenAINonStreamBodySaysWhatCameBack(t *testing.T) {
	for _, ct := range []string{"text/event-stream", "text/html"} {
		body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
		ws := newWireServer(t, rawBody(body, ct))
		m := newTestOpenAI(t, ws, Config{MaxRetries: 3})
		_, err := m.Stream(ctxT(t), sampleRequest, nil)
		if err == nil {
			t.Fatalf("%s: no error", ct)
		}
		for _, want := range []string{"200", "no event stream", ct, `"object":"chat.completion"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", ct, err, want)
			}
		}
		if n := len(ws.requests()); n != 1 {
			t.Errorf("%s: %d requests, want 1", ct, n)
		}
	}
}

// A 200 that ends before its first event (nothing, or only a comment) is a
// cut stream, retried.
func TestOpenAIStreamEndedBeforeItsFirstEventIsRetried(t *testing.T) {
	for _, first := range []string{"", ": keep-alive\n\n"} {
		ws := newWireServer(t, rawBody(first, "text/event-stream"), sseSplit(oaText("hi"), 50))
		m := newTestOpenAI(t, ws, Config{})
		reply, err := m.Stream(ctxT(t), sampleRequest, nil)
		if err != nil || reply.Text != "hi" || reply.Attempts != 2 {
			t.Errorf("%q: %+v %v", first, reply, err)
		}
	}
}

// vLLM sends the error object itself as an event.
func TestOpenAIErrorObjectMidStream(t *testing.T) {
	withErr := events(oaChunk(`[{"index":0,"delta":{"content":"a"},"finish_reason":null}]`), `{"object":"error","message":"The engine is dead","type":"InternalServerError","param":null,"code":500}`)
	ws := newWireServer(t, sseSplit(withErr, 100))
	m := newTestOpenAI(t, ws, Config{MaxRetries: -1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `the server sent an error mid-stream: {"object":"error","message":"The engine is dead"`) {
		t.Errorf("err = %v", err)
	}
}
