package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// anToolStream is a real-shaped Messages stream: text, a ping, then a
// tool_use block whose input arrives as input_json_delta fragments.
var anToolStream = events(
	"message_start\n"+`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"c1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":50,"output_tokens":1,"cache_read_input_tokens":30,"cache_creation_input_tokens":10}}}`,
	"content_block_start\n"+`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	"ping\n"+`{"type":"ping"}`,
	"content_block_delta\n"+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Writing "}}`,
	"content_block_delta\n"+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"it."}}`,
	"content_block_stop\n"+`{"type":"content_block_stop","index":0}`,
	"content_block_start\n"+`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"fs-write","input":{}}}`,
	"content_block_delta\n"+`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
	"content_block_delta\n"+`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.t"}}`,
	"content_block_delta\n"+`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"xt\"}"}}`,
	"content_block_stop\n"+`{"type":"content_block_stop","index":1}`,
	"content_block_start\n"+`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"git-status","input":{}}}`,
	"content_block_stop\n"+`{"type":"content_block_stop","index":2}`,
	"message_delta\n"+`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":25}}`,
	"message_stop\n"+`{"type":"message_stop"}`,
)

func anText(text string) string {
	return events(
		"message_start\n"+`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"c1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
		"content_block_start\n"+`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta\n"+fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text),
		"content_block_stop\n"+`{"type":"content_block_stop","index":0}`,
		"message_delta\n"+`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
		"message_stop\n"+`{"type":"message_stop"}`,
	)
}

func newTestAnthropic(t *testing.T, ws *wireServer, cfg Config) Model {
	t.Helper()
	cfg.Provider, cfg.BaseURL, cfg.Model, cfg.APIKey = "anthropic", ws.srv.URL, "c1", "sk-ant-test"
	m, err := New(fastRetries(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnthropicToolUseSplitMidJSON(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1") // ignored: Config decides
	ws := newWireServer(t, sseSplit(anToolStream, 9))
	m := newTestAnthropic(t, ws, Config{})
	var d deltas
	reply, err := m.Stream(ctxT(t), sampleRequest, d.on)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "Writing it." || d.text.String() != reply.Text {
		t.Errorf("text %q, deltas %q", reply.Text, d.text.String())
	}
	want := []ToolCall{{ID: "toolu_1", Name: "fs-write", Arguments: `{"path": "a.txt"}`}, {ID: "toolu_2", Name: "git-status", Arguments: "{}"}}
	if fmt.Sprint(reply.ToolCalls) != fmt.Sprint(want) {
		t.Errorf("tool calls %q, want %q", reply.ToolCalls, want)
	}
	if strings.Join(d.tools, ",") != "fs-write,git-status" {
		t.Errorf("tool deltas %q", d.tools)
	}
	if want := (Usage{InputTokens: 50, OutputTokens: 25, CacheReadTokens: 30, CacheWriteTokens: 10}); reply.Usage != want {
		t.Errorf("usage %+v, want %+v", reply.Usage, want)
	}
	if reply.Usage.TotalInput() != 90 {
		t.Errorf("total input %d", reply.Usage.TotalInput())
	}
	if reply.StopReason != "tool_use" || m.Name() != "anthropic:c1" {
		t.Errorf("stop %q name %q", reply.StopReason, m.Name())
	}

	r := ws.requests()[0]
	if r.path != "/v1/messages" {
		t.Errorf("path %q", r.path)
	}
	b := r.body
	checks := []struct {
		got  any
		want string
	}{
		{get(b, "model"), "c1"},
		{get(b, "stream"), "true"},
		{get(b, "max_tokens"), "1000"},
		{get(b, "system", 0, "text"), "You are terse."},
		{get(b, "system", 0, "cache_control", "type"), "ephemeral"},
		{get(b, "messages", 0, "role"), "user"},
		{get(b, "messages", 0, "content", 0, "text"), "make a.txt"},
		{get(b, "messages", 1, "role"), "assistant"},
		{get(b, "messages", 1, "content", 0, "text"), "ok"},
		{get(b, "messages", 1, "content", 1, "type"), "tool_use"},
		{get(b, "messages", 1, "content", 1, "input", "glob"), "*"},
		{get(b, "messages", 2, "content", 0, "type"), "tool_result"},
		{get(b, "messages", 2, "content", 0, "tool_use_id"), "call_0"},
		{get(b, "messages", 3, "content", 1, "input", "invalid_arguments"), `{"path":`},
		// two tool results and the user's text merged into one user message
		{get(b, "messages", 4, "role"), "user"},
		{get(b, "messages", 4, "content", 0, "tool_use_id"), "call_1"},
		{get(b, "messages", 4, "content", 0, "is_error"), "true"},
		{get(b, "messages", 4, "content", 0, "content", 0, "text"), "exit status 1"},
		{get(b, "messages", 4, "content", 1, "tool_use_id"), "call_2"},
		{get(b, "messages", 4, "content", 1, "content", 0, "text"), "(no output)"},
		{get(b, "messages", 4, "content", 2, "text"), "No file has changed"},
		{get(b, "messages", 4, "content", 2, "cache_control", "type"), "ephemeral"},
		{get(b, "messages", 5), "<nil>"},
		{get(b, "tools", 0, "name"), "fs-write"},
		{get(b, "tools", 0, "description"), "Write a file."},
		{get(b, "tools", 0, "input_schema", "type"), "object"},
		{get(b, "tools", 0, "input_schema", "required", 0), "path"},
		{get(b, "tools", 0, "input_schema", "properties", "path", "type"), "string"},
	}
	for i, c := range checks {
		if fmt.Sprint(c.got) != c.want {
			t.Errorf("check %d: got %v, want %s", i, c.got, c.want)
		}
	}
}

func TestAnthropicOverloadedThenSuccess(t *testing.T) {
	ws := newWireServer(t,
		status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "retry-after-ms", "1"),
		sseSplit(anText("done"), 13))
	m := newTestAnthropic(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Text != "done" || reply.Attempts != 2 {
		t.Fatalf("reply %+v err %v", reply, err)
	}
	if reply.Usage != (Usage{InputTokens: 5, OutputTokens: 3}) {
		t.Errorf("usage %+v", reply.Usage)
	}
}

func TestAnthropicCutStreamThenSuccess(t *testing.T) {
	cut := strings.Index(anToolStream, `xt\"}`) // inside the tool input
	ws := newWireServer(t, sseCut(anToolStream, cut), sseSplit(anToolStream, 64))
	m := newTestAnthropic(t, ws, Config{})
	var d deltas
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, d.on)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.ToolCalls) != 2 || reply.ToolCalls[0].Arguments != `{"path": "a.txt"}` || reply.Attempts != 2 {
		t.Errorf("reply %+v", reply)
	}
	if d.restarts != 1 || d.text.String() != "Writing it." {
		t.Errorf("restarts %d, text after restart %q", d.restarts, d.text.String())
	}
}

func TestAnthropicErrorEventMidStream(t *testing.T) {
	withErr := events(
		"message_start\n"+`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c1","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		"error\n"+`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	)
	ws := newWireServer(t, sseSplit(withErr, 50))
	m := newTestAnthropic(t, ws, Config{MaxRetries: 1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	want := fmt.Sprintf(`provider anthropic: POST %s/v1/messages: the server sent an error mid-stream: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}} after 2 attempts`, ws.srv.URL)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
}

func TestAnthropicNoMessageStopIsRetried(t *testing.T) {
	full := anText("x")
	partial := full[:strings.Index(full, "event: message_stop")]
	ws := newWireServer(t, sseSplit(partial, 100), sseSplit(full, 100))
	m := newTestAnthropic(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Attempts != 2 {
		t.Fatalf("reply %+v err %v", reply, err)
	}
}

func TestAnthropicBadRequestNotRetried(t *testing.T) {
	body := `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}`
	ws := newWireServer(t, status(400, body))
	m := newTestAnthropic(t, ws, Config{})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	want := fmt.Sprintf(`provider anthropic: POST %s/v1/messages: 400 Bad Request: %s`, ws.srv.URL, body)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if len(ws.requests()) != 1 {
		t.Errorf("%d requests", len(ws.requests()))
	}
}

func TestAnthropicMalformedToolInputKept(t *testing.T) {
	stream := strings.Replace(anToolStream, `xt\"}`, `xt`, 1)
	ws := newWireServer(t, sseSplit(stream, 4096))
	m := newTestAnthropic(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reply.ToolCalls[0].Arguments != `{"path": "a.txt` {
		t.Errorf("arguments %q", reply.ToolCalls[0].Arguments)
	}
	if _, err := ParseArgs(reply.ToolCalls[0]); err == nil {
		t.Error("ParseArgs accepted truncated input")
	}
}

func TestAnthropicEnvironmentKeyNotSent(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-env")
	ws := newWireServer(t, sseSplit(anText("hi"), 100))
	m, err := New(fastRetries(Config{Provider: "anthropic", BaseURL: ws.srv.URL, Model: "c1"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); err != nil {
		t.Fatal(err)
	}
	h := ws.requests()[0].header
	if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Errorf("sent credentials from the environment: %q %q", h.Get("Authorization"), h.Get("X-Api-Key"))
	}
	// With a key in Config it is sent.
	m, _ = New(fastRetries(Config{Provider: "anthropic", BaseURL: ws.srv.URL, Model: "c1", APIKey: "sk-ant-cfg"}))
	if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); err != nil {
		t.Fatal(err)
	}
	h = ws.requests()[1].header
	if !strings.Contains(h.Get("Authorization")+h.Get("X-Api-Key"), "sk-ant-cfg") {
		t.Errorf("configured key not sent: %v", h)
	}
}

func TestAnthropicInputSchema(t *testing.T) {
	in := inputSchema(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"a": map[string]any{"type": "string"}},
		"required":             []any{"a", 3},
		"additionalProperties": false,
	})
	if fmt.Sprint(in["required"]) != "[a]" || in["additionalProperties"] != false || in["properties"] == nil || in["type"] != "object" {
		t.Errorf("schema %+v", in)
	}
	if empty := inputSchema(nil); empty["properties"] == nil || empty["type"] != "object" {
		t.Errorf("nil schema %+v", empty)
	}
}

type countingTransport struct{ n int }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return http.DefaultTransport.RoundTrip(r)
}

func TestConfigHTTPClientIsUsed(t *testing.T) {
	for _, prov := range []string{"openai", "anthropic"} {
		stream, base := anText("x"), ""
		if prov == "openai" {
			stream, base = oaText("x"), "/v1"
		}
		ws := newWireServer(t, sseSplit(stream, 100))
		ct := &countingTransport{}
		m, err := New(Config{Provider: prov, BaseURL: ws.srv.URL + base, Model: "m", APIKey: "k", HTTPClient: &http.Client{Transport: ct}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); err != nil {
			t.Fatal(err)
		}
		if ct.n != 1 {
			t.Errorf("%s: the configured client made %d requests, want 1", prov, ct.n)
		}
	}
}

func TestAnthropicNonStreamBodySaysWhatCameBack(t *testing.T) {
	ws := newWireServer(t, rawBody(`{"type":"message","content":[{"type":"text","text":"hi"}]}`, "text/html"))
	m := newTestAnthropic(t, ws, Config{MaxRetries: 3})
	_, err := m.Stream(ctxT(t), sampleRequest, nil)
	if err == nil || !strings.Contains(err.Error(), `no event stream`) || !strings.Contains(err.Error(), `{"type":"message"`) {
		t.Errorf("error %v", err)
	}
	if n := len(ws.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestAnthropicHeaders(t *testing.T) {
	ws := newWireServer(t, sseSplit(anText("hi"), 100))
	m := newTestAnthropic(t, ws, Config{})
	if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); err != nil {
		t.Fatal(err)
	}
	h := ws.requests()[0].header
	if h.Get("X-Api-Key") != "sk-ant-test" || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Authorization") != "" {
		t.Errorf("headers %v", h)
	}
}

// Extended thinking: a budget per level, and max_tokens raised above it by
// what it was.
func TestAnthropicThinkingBudget(t *testing.T) {
	for _, c := range []struct {
		effort          string
		max             int
		budget, wantMax int
	}{
		{"", 0, 0, DefaultMaxTokens},
		{"low", 0, 2048, 2048 + DefaultMaxTokens},
		{"medium", 500, 8192, 8692},
		{"high", 0, 16384, 16384 + DefaultMaxTokens},
	} {
		ws := newWireServer(t, sseSplit(anText("hi"), 100))
		m := newTestAnthropic(t, ws, Config{Reasoning: c.effort})
		if _, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, MaxTokens: c.max}, nil); err != nil {
			t.Fatal(err)
		}
		b := ws.requests()[0].body
		if fmt.Sprint(get(b, "max_tokens")) != fmt.Sprint(c.wantMax) {
			t.Errorf("%q: max_tokens %v, want %d", c.effort, get(b, "max_tokens"), c.wantMax)
		}
		if c.budget == 0 {
			if get(b, "thinking") != nil {
				t.Errorf("%q: thinking sent", c.effort)
			}
			continue
		}
		if get(b, "thinking", "type") != "enabled" || fmt.Sprint(get(b, "thinking", "budget_tokens")) != fmt.Sprint(c.budget) {
			t.Errorf("%q: thinking %v", c.effort, get(b, "thinking"))
		}
	}
}

// At most four cache breakpoints: the system prompt, the last two user
// turns, the last tool; fewer when there are fewer of those.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	var long []Message
	for i := range 6 {
		long = append(long, Message{Role: RoleUser, Content: fmt.Sprint("u", i)},
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: fmt.Sprint("c", i), Name: "fs-read", Arguments: "{}"}}},
			Message{Role: RoleTool, ToolCallID: fmt.Sprint("c", i), Content: "r"})
	}
	tools := []Tool{{Name: "a"}, {Name: "b"}}
	for _, c := range []struct {
		req  Request
		want []string
	}{
		{Request{System: "s", Messages: long, Tools: tools}, []string{"system", "messages 12", "messages 10", "tools 1"}},
		{Request{Messages: long, Tools: tools}, []string{"messages 12", "messages 10", "tools 1"}},
		{Request{System: "s", Messages: long[:1]}, []string{"system", "messages 0"}},
	} {
		m := &Anthropic{model: "c"}
		b, _ := encodeBody(m.params(c.req))
		var p struct {
			System   []map[string]any
			Messages []struct{ Content []map[string]any }
			Tools    []map[string]any
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range p.System {
			if s["cache_control"] != nil {
				got = append(got, "system")
			}
		}
		for i := len(p.Messages) - 1; i >= 0; i-- {
			for j, blk := range p.Messages[i].Content {
				if blk["cache_control"] != nil {
					if j != len(p.Messages[i].Content)-1 {
						t.Errorf("breakpoint on block %d of %d", j, len(p.Messages[i].Content))
					}
					got = append(got, fmt.Sprint("messages ", i))
				}
			}
		}
		for i, tl := range p.Tools {
			if tl["cache_control"] != nil {
				got = append(got, fmt.Sprint("tools ", i))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("breakpoints %v, want %v", got, c.want)
		}
	}
}

// With thinking on, a tool loop whose last assistant turn lost its thinking
// block is sent without thinking (the API would refuse it); with the block
// kept, thinking stays on.
func TestAnthropicThinkingOffWhenTheLoopLostIt(t *testing.T) {
	loop := []Message{{Role: RoleUser, Content: "x"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "t1", Name: "fs-read", Arguments: "{}"}}},
		{Role: RoleTool, ToolCallID: "t1", Content: "r"}}
	m := &Anthropic{model: "c", reasoning: "low"}
	if p := m.params(Request{Messages: loop}); p.Thinking != nil {
		t.Errorf("thinking sent for a loop without its thinking block")
	}
	loop[1].Reasoning = []json.RawMessage{json.RawMessage(`{"type":"thinking","thinking":"t","signature":"s"}`)}
	if p := m.params(Request{Messages: loop}); p.Thinking == nil {
		t.Errorf("thinking dropped although the block was kept")
	}
	if p := m.params(Request{Messages: loop[:1]}); p.Thinking == nil {
		t.Errorf("thinking dropped for a first request")
	}
}
