package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the request goldens in testdata")

// replayServer answers each request with the next of its streams (the last
// repeats), written in pieces of chunk bytes, and keeps the raw bodies.
type replayServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newReplayServer(t *testing.T, chunk int, streams ...[]byte) *replayServer {
	rs := &replayServer{}
	rs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		n := len(rs.bodies)
		rs.bodies = append(rs.bodies, b)
		rs.mu.Unlock()
		sseSplit(string(streams[min(n, len(streams)-1)]), chunk)(w, r)
	}))
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *replayServer) requests() [][]byte {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([][]byte(nil), rs.bodies...)
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goldenModel is a model of api ("chat", "responses", "anthropic") at url.
func goldenModel(t *testing.T, api, url string, cfg Config) Model {
	t.Helper()
	cfg.Model, cfg.APIKey = "m1", "sk-test"
	switch api {
	case "chat":
		cfg.Provider, cfg.BaseURL = "openai", url+"/v1"
	case "responses":
		cfg.Provider, cfg.API, cfg.BaseURL = "openai", "responses", url+"/v1"
	case "anthropic":
		cfg.Provider, cfg.BaseURL = "anthropic", url
	}
	m, err := New(fastRetries(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	rsItem       = `{"id":"rs_67c9fdd0a9c48190a83d4ce7b1b9e0ea","type":"reasoning","encrypted_content":"gAAAAABoISQ24OyVRYbkYfukQ-1u9mM2-OZpqB0RAe6E7Yl9ZWIw8zhORLsbf5pL7IBmwrLQ1jdWMPVPAhWESu4V6Ec4AHxRi8ZaPxEqQ7tdHaC8-q2XlF-HZ1rxt7DN_OB1GuBBJ6gvE0V7xGHyT7t0rDUd3LnOYpqcxuQ_Fj3gfvhEvHZfnNTJpXhI0cuF0uKlHlu8E0Wtp=","summary":[]}`
	thinkingItem = `{"type":"thinking","thinking":"The user wants a.txt with \"hi\". I will write it \u003cnow\u003e \u0026 check.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds8ii4eKzmbSfl/rNqIPJxq5ss4y6ymmCOz2YVuhvbt2BdWWzE0dyyWfIBhhs6fc5iEEJCCVEyEg5H4XdZHPJ2sXvkfjA1c8Y5e6tqCHFJHcC4iLsvyyXdqpm8="}`
	redactedItem = `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pdmiQ8zIHhq8PFAL5Ke6cRQ=="}`
)

var goldens = []struct {
	file string
	api  string
	// want is the reply (Attempts aside); with wantErr set, the error must
	// say each of them and wrap wantIs (when set).
	want     Reply
	wantErr  []string
	wantIs   error
	requests int // with MaxRetries 2: 1 for a reply or a final error, 3 for a retried one
}{
	{file: "chat_tool_calls.sse", api: "chat", requests: 1, want: Reply{
		Text: "Writing the file.",
		ToolCalls: []ToolCall{
			{ID: "call_a", Name: "fs-write", Arguments: `{"path": "a.txt", "content": "hi\n"}`},
			{ID: "call_b", Name: "shell-exec", Arguments: `{"command": "ls"}`},
		},
		Usage:      Usage{InputTokens: 60, OutputTokens: 20, CacheReadTokens: 40, ReasoningTokens: 8},
		StopReason: "tool_calls",
	}},
	{file: "chat_crlf_compat.sse", api: "chat", requests: 1, want: Reply{
		Text: "Hello, world.", Usage: Usage{InputTokens: 9, OutputTokens: 3}, StopReason: "stop",
	}},
	{file: "chat_length_mid_tool.sse", api: "chat", requests: 1, wantIs: ErrOutputLimit, wantErr: []string{
		"/v1/chat/completions: the reply hit its output token limit (max_tokens = 1000) in the middle of a call to fs-write, whose arguments are cut off; raise the output token limit (max_tokens)",
	}},
	{file: "chat_error_event.sse", api: "chat", requests: 3, wantErr: []string{
		`the server sent an error mid-stream: {"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error"`,
		"after 3 attempts",
	}},
	{file: "responses_reasoning_tool.sse", api: "responses", requests: 1, want: Reply{
		Text:       "Writing the file.",
		ToolCalls:  []ToolCall{{ID: "call_a", Name: "fs-write", Arguments: `{"path": "a.txt", "content": "hi\n"}`}},
		Usage:      Usage{InputTokens: 56, OutputTokens: 50, CacheReadTokens: 64, ReasoningTokens: 32},
		StopReason: "completed",
		Reasoning:  []json.RawMessage{json.RawMessage(rsItem)},
	}},
	{file: "responses_failed.sse", api: "responses", requests: 3, wantErr: []string{
		`/v1/responses: the server sent an error mid-stream: {"code":"server_error","message":"The model produced invalid content.`,
	}},
	{file: "responses_error_event.sse", api: "responses", requests: 3, wantErr: []string{
		`the server sent an error mid-stream: {"type":"error","sequence_number":1,"code":"rate_limit_exceeded"`,
	}},
	{file: "responses_incomplete_mid_call.sse", api: "responses", requests: 1, wantIs: ErrOutputLimit, wantErr: []string{
		"the reply hit its output token limit (max_output_tokens = 1000) in the middle of a call to fs-write",
	}},
	{file: "anthropic_thinking_tool.sse", api: "anthropic", requests: 1, want: Reply{
		Text:       "Writing it.",
		ToolCalls:  []ToolCall{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "fs-write", Arguments: `{"path": "a.txt", "content": "hi\n"}`}},
		Usage:      Usage{InputTokens: 12, OutputTokens: 89, CacheReadTokens: 1800, CacheWriteTokens: 200},
		StopReason: "tool_use",
		Reasoning:  []json.RawMessage{json.RawMessage(thinkingItem)},
	}},
	{file: "anthropic_redacted_thinking.sse", api: "anthropic", requests: 1, want: Reply{
		Text: "Done.", Usage: Usage{InputTokens: 30, OutputTokens: 40}, StopReason: "end_turn",
		Reasoning: []json.RawMessage{json.RawMessage(redactedItem)},
	}},
	{file: "anthropic_error.sse", api: "anthropic", requests: 3, wantErr: []string{
		`/v1/messages: the server sent an error mid-stream: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}} after 3 attempts`,
	}},
	{file: "anthropic_max_tokens_mid_tool.sse", api: "anthropic", requests: 1, wantIs: ErrOutputLimit, wantErr: []string{
		"the reply hit its output token limit (max_tokens = 1000) in the middle of a call to fs-write, whose arguments are cut off",
	}},
}

// Each recorded stream, replayed in pieces of 1, 7 and 64 bytes and whole,
// gives the expected reply or error.
func TestGoldenStreams(t *testing.T) {
	req := Request{System: "You are terse.", Messages: []Message{{Role: RoleUser, Content: "make a.txt"}}, MaxTokens: 1000}
	for _, g := range goldens {
		stream := readGolden(t, g.file)
		for _, chunk := range []int{1, 7, 64, len(stream)} {
			name := fmt.Sprintf("%s/%d", g.file, chunk)
			rs := newReplayServer(t, chunk, stream)
			m := goldenModel(t, g.api, rs.srv.URL, Config{MaxRetries: 2})
			var d deltas
			reply, err := m.Stream(ctxT(t), req, d.on)
			if n := len(rs.requests()); n != g.requests {
				t.Errorf("%s: %d requests, want %d", name, n, g.requests)
			}
			if g.wantErr != nil {
				if err == nil {
					t.Errorf("%s: no error; reply %+v", name, reply)
					continue
				}
				for _, s := range g.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%s: error\n%s\ndoes not say\n%s", name, err, s)
					}
				}
				if g.wantIs != nil && !errors.Is(err, g.wantIs) {
					t.Errorf("%s: error does not wrap %v", name, g.wantIs)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			reply.Attempts = 0
			if !reflect.DeepEqual(reply, g.want) {
				t.Errorf("%s:\n got %s\nwant %s", name, show(reply), show(g.want))
			}
			if d.text.String() != reply.Text {
				t.Errorf("%s: deltas %q, text %q", name, d.text.String(), reply.Text)
			}
		}
	}
}

func show(r Reply) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// The reasoning items of a reply go back unchanged in the next request, as
// the API requires, after a JSON round trip through the session's saved
// messages; and a provider sends only its own kind.
func TestGoldenReasoningPassedBack(t *testing.T) {
	cases := []struct {
		file, api, next string
		check           func(t *testing.T, body []byte)
	}{
		{"responses_reasoning_tool.sse", "responses", respText("ok"), func(t *testing.T, body []byte) {
			var b struct{ Input []json.RawMessage }
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, it := range b.Input {
				var h struct{ Type, Role string }
				_ = json.Unmarshal(it, &h)
				kinds = append(kinds, h.Type+":"+h.Role)
			}
			if want := "message:user reasoning: message:assistant function_call: function_call_output:"; strings.Join(kinds, " ") != want {
				t.Errorf("input items %v, want %s", kinds, want)
			}
			if len(b.Input) > 1 && string(b.Input[1]) != rsItem {
				t.Errorf("reasoning item sent as\n%s\nwant\n%s", b.Input[1], rsItem)
			}
			if len(b.Input) > 3 && string(b.Input[3]) != `{"type":"function_call","call_id":"call_a","name":"fs-write","arguments":"{\"path\": \"a.txt\", \"content\": \"hi\\n\"}"}` {
				t.Errorf("function call sent as %s", b.Input[3])
			}
			if len(b.Input) > 4 && string(b.Input[4]) != `{"type":"function_call_output","call_id":"call_a","output":"wrote a.txt"}` {
				t.Errorf("function call output sent as %s", b.Input[4])
			}
		}},
		{"anthropic_thinking_tool.sse", "anthropic", anText("ok"), func(t *testing.T, body []byte) {
			var b struct {
				Messages []struct {
					Role    string
					Content []json.RawMessage
				}
			}
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatal(err)
			}
			if len(b.Messages) != 3 || b.Messages[1].Role != "assistant" || len(b.Messages[1].Content) != 3 {
				t.Fatalf("messages %s", body)
			}
			if got := string(b.Messages[1].Content[0]); got != thinkingItem {
				t.Errorf("thinking block sent as\n%s\nwant\n%s", got, thinkingItem)
			}
			if !bytes.Contains(body, []byte(thinkingItem)) {
				t.Error("the body does not hold the thinking block byte for byte")
			}
		}},
		{"anthropic_redacted_thinking.sse", "anthropic", anText("ok"), func(t *testing.T, body []byte) {
			if !bytes.Contains(body, []byte(`{"role":"assistant","content":[`+redactedItem+`,{"type":"text","text":"Done."}]}`)) {
				t.Errorf("redacted thinking not passed back first and unchanged: %s", body)
			}
		}},
	}
	for _, c := range cases {
		rs := newReplayServer(t, 5, readGolden(t, c.file), []byte(c.next))
		m := goldenModel(t, c.api, rs.srv.URL, Config{})
		msgs := []Message{{Role: RoleUser, Content: "make a.txt"}}
		reply, err := m.Stream(ctxT(t), Request{Messages: msgs}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		msgs = append(msgs, reply.Message())
		for _, tc := range reply.ToolCalls {
			msgs = append(msgs, Message{Role: RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: "wrote a.txt"})
		}
		saved, _ := json.Marshal(msgs) // as the session keeps them
		var restored []Message
		if err := json.Unmarshal(saved, &restored); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(restored, msgs) {
			t.Fatalf("%s: messages changed in a JSON round trip:\n%s", c.file, saved)
		}
		if _, err := m.Stream(ctxT(t), Request{Messages: restored}, nil); err != nil {
			t.Fatalf("%s: second request: %v", c.file, err)
		}
		c.check(t, rs.requests()[1])

		// Chat Completions sends none of it.
		chat := newReplayServer(t, 100, []byte(oaText("ok")))
		if _, err := goldenModel(t, "chat", chat.srv.URL, Config{}).Stream(ctxT(t), Request{Messages: restored}, nil); err != nil {
			t.Fatal(err)
		}
		body := string(chat.requests()[0])
		if strings.Contains(body, "encrypted_content") || strings.Contains(body, "signature") || strings.Contains(body, "redacted") {
			t.Errorf("%s: chat completions sent reasoning items: %s", c.file, body)
		}
	}
	// Anthropic's blocks do not go to the Responses API, nor its items to
	// Anthropic.
	mixed := []Message{{Role: RoleUser, Content: "x"},
		{Role: RoleAssistant, Content: "y", Reasoning: []json.RawMessage{json.RawMessage(thinkingItem), json.RawMessage(rsItem)}},
		{Role: RoleUser, Content: "z"}}
	for _, api := range []string{"responses", "anthropic"} {
		next := respText("ok")
		if api == "anthropic" {
			next = anText("ok")
		}
		rs := newReplayServer(t, 100, []byte(next))
		if _, err := goldenModel(t, api, rs.srv.URL, Config{}).Stream(ctxT(t), Request{Messages: mixed}, nil); err != nil {
			t.Fatal(err)
		}
		body := string(rs.requests()[0])
		if (api == "responses") != strings.Contains(body, `"type":"reasoning"`) || (api == "anthropic") != strings.Contains(body, `"type":"thinking"`) {
			t.Errorf("%s sent another provider's items: %s", api, body)
		}
	}
}

// A reasoning item without encrypted_content is not sent back: with store
// false the API would look its id up and fail.
func TestResponsesReasoningWithoutEncryptedContentDropped(t *testing.T) {
	rs := newReplayServer(t, 100, []byte(respText("ok")))
	msgs := []Message{{Role: RoleUser, Content: "x"},
		{Role: RoleAssistant, Content: "y", Reasoning: []json.RawMessage{json.RawMessage(`{"id":"rs_1","type":"reasoning","summary":[]}`)}},
		{Role: RoleUser, Content: "z"}}
	if _, err := goldenModel(t, "responses", rs.srv.URL, Config{}).Stream(ctxT(t), Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	if body := string(rs.requests()[0]); strings.Contains(body, "rs_1") {
		t.Errorf("sent a reasoning item with no encrypted content: %s", body)
	}
}

// The request bodies of sampleRequest, one per API, are as recorded in
// testdata/*_request.json (go test -update rewrites them).
func TestGoldenRequestBodies(t *testing.T) {
	for _, api := range []string{"chat", "responses", "anthropic"} {
		var next string
		switch api {
		case "chat":
			next = oaText("ok")
		case "responses":
			next = respText("ok")
		default:
			next = anText("ok")
		}
		rs := newReplayServer(t, 100, []byte(next))
		if _, err := goldenModel(t, api, rs.srv.URL, Config{Reasoning: "medium"}).Stream(ctxT(t), sampleRequest, nil); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := json.Indent(&got, rs.requests()[0], "", "  "); err != nil {
			t.Fatal(err)
		}
		got.WriteString("\n")
		name := filepath.Join("testdata", api+"_request.json")
		if *update {
			if err := os.WriteFile(name, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (go test -run TestGoldenRequestBodies -update writes it)", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s request body differs from %s:\n%s", api, name, got.Bytes())
		}
	}
}

// respText is a minimal Responses stream of one text reply.
func respText(text string) string {
	q, _ := json.Marshal(text)
	return events(
		"response.created\n"+`{"type":"response.created","sequence_number":0,"response":{"id":"resp_2","object":"response","status":"in_progress","output":[],"usage":null}}`,
		"response.output_item.added\n"+`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_2","type":"message","status":"in_progress","content":[],"role":"assistant"}}`,
		"response.output_text.delta\n"+`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_2","output_index":0,"content_index":0,"delta":`+string(q)+`}`,
		"response.completed\n"+`{"type":"response.completed","sequence_number":3,"response":{"id":"resp_2","object":"response","status":"completed","output":[],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":12}}}`,
	)
}
