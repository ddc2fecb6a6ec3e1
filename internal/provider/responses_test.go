package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestResponsesRequestAndName(t *testing.T) {
	ws := newWireServer(t, sseSplit(respText("hi"), 9))
	m, err := New(fastRetries(Config{Provider: "openai", API: "responses", BaseURL: ws.srv.URL + "/v1", Model: "gpt-5", APIKey: "sk-r", Reasoning: "high"}))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "openai-responses:gpt-5" {
		t.Errorf("name %q", m.Name())
	}
	reply, err := m.Stream(ctxT(t), sampleRequest, nil)
	if err != nil || reply.Text != "hi" || reply.StopReason != "completed" || reply.Usage != (Usage{InputTokens: 10, OutputTokens: 2}) {
		t.Fatalf("reply %+v err %v", reply, err)
	}
	r := ws.requests()[0]
	if r.path != "/v1/responses" || r.header.Get("Authorization") != "Bearer sk-r" {
		t.Errorf("path %q auth %q", r.path, r.header.Get("Authorization"))
	}
	b := r.body
	for i, c := range []struct {
		got  any
		want string
	}{
		{get(b, "store"), "false"},
		{get(b, "stream"), "true"},
		{get(b, "include", 0), "reasoning.encrypted_content"},
		{get(b, "reasoning", "effort"), "high"},
		{get(b, "reasoning", "summary"), "<nil>"},
		{get(b, "instructions"), "You are terse."},
		{get(b, "max_output_tokens"), "1000"},
		{get(b, "tools", 0, "type"), "function"},
		{get(b, "tools", 0, "name"), "fs-write"},
		{get(b, "tools", 0, "strict"), "false"},
		{get(b, "tools", 0, "parameters", "required", 0), "path"},
		{get(b, "input", 2, "type"), "function_call"},
		{get(b, "input", 2, "call_id"), "call_0"},
		{get(b, "input", 3, "type"), "function_call_output"},
		{get(b, "input", 3, "call_id"), "call_0"},
		{get(b, "input", 6, "output"), "Error: exit status 1"},
	} {
		if fmt.Sprint(c.got) != c.want {
			t.Errorf("check %d: got %v, want %s", i, c.got, c.want)
		}
	}
}

func TestResponsesProviderAlias(t *testing.T) {
	m, err := New(Config{Provider: "openai-responses", Model: "gpt-5", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*Responses); !ok {
		t.Errorf("openai-responses gave %T", m)
	}
	for _, cfg := range []Config{
		{Provider: "openai-responses", API: "chat", Model: "m", APIKey: "k"},
		{Provider: "openai", API: "assistants", Model: "m", APIKey: "k"},
		{Provider: "anthropic", API: "responses", Model: "m", APIKey: "k"},
		{Provider: "openai", Model: "m", APIKey: "k", Reasoning: "max"},
		{Provider: "anthropic", Model: "m", APIKey: "k", Reasoning: "extreme"},
		{Provider: "openai-responses", Model: "gpt"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if m, err := New(Config{Provider: "openai", API: "chat", Model: "m", APIKey: "k"}); err != nil || m.Name() != "openai:m" {
		t.Errorf("api chat: %v %v", m, err)
	}
}

// A reply cut by max_output_tokens in its text is no error: the text comes
// back with the reason.
func TestResponsesIncompleteTextIsAReply(t *testing.T) {
	stream := strings.Replace(respText("par"), `"type":"response.completed","sequence_number":3,"response":{"id":"resp_2","object":"response","status":"completed"`,
		`"type":"response.incomplete","sequence_number":3,"response":{"id":"resp_2","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}`, 1)
	stream = strings.Replace(stream, "event: response.completed", "event: response.incomplete", 1)
	ws := newWireServer(t, sseSplit(stream, 100))
	m, _ := New(fastRetries(Config{Provider: "openai-responses", BaseURL: ws.srv.URL, Model: "m"}))
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Text != "par" || reply.StopReason != "max_output_tokens" {
		t.Fatalf("reply %+v err %v", reply, err)
	}
}

func TestResponsesCutStreamRetried(t *testing.T) {
	full := respText("again")
	cut := full[:strings.Index(full, "event: response.completed")]
	ws := newWireServer(t, sseSplit(cut, 100), sseSplit(full, 7))
	m, _ := New(fastRetries(Config{Provider: "openai-responses", BaseURL: ws.srv.URL, Model: "m"}))
	var d deltas
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, d.on)
	if err != nil || reply.Text != "again" || reply.Attempts != 2 || d.restarts != 1 || d.text.String() != "again" {
		t.Fatalf("reply %+v err %v deltas %+v", reply, err, d.text.String())
	}
	// With no retries the error says what was missing.
	ws = newWireServer(t, sseSplit(cut, 100))
	m, _ = New(fastRetries(Config{Provider: "openai-responses", BaseURL: ws.srv.URL, Model: "m", MaxRetries: -1}))
	_, err = m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if !errors.Is(err, errStreamCut) || !strings.Contains(err.Error(), "no response.completed") {
		t.Errorf("err = %v", err)
	}
}

// A length stop in the text (no tool call under way) is a reply, as before.
func TestOpenAILengthInTextIsAReply(t *testing.T) {
	stream := events(
		oaChunk(`[{"index":0,"delta":{"content":"a long ans"},"finish_reason":null}]`),
		oaChunk(`[{"index":0,"delta":{},"finish_reason":"length"}]`),
		"[DONE]")
	ws := newWireServer(t, sseSplit(stream, 100))
	m := newTestOpenAI(t, ws, Config{})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Text != "a long ans" || reply.StopReason != "length" {
		t.Fatalf("reply %+v err %v", reply, err)
	}
}

// finish_reason length in the middle of a call is a final error that names
// the limit, with no limit sent too.
func TestOpenAILengthMidToolCall(t *testing.T) {
	stream := events(
		oaChunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"fs-write","arguments":"{\"path\": \"a"}}]},"finish_reason":null}]`),
		oaChunk(`[{"index":0,"delta":{},"finish_reason":"length"}]`),
		"[DONE]",
	)
	ws := newWireServer(t, sseSplit(stream, 1000))
	m := newTestOpenAI(t, ws, Config{})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	want := fmt.Sprintf("provider openai: POST %s/v1/chat/completions: the reply hit its output token limit (none was sent, so the server's default applies) in the middle of a call to fs-write, whose arguments are cut off; raise the server's default output limit, send a larger max_tokens, or ask for the work in smaller pieces", ws.srv.URL)
	if err == nil || err.Error() != want || !errors.Is(err, ErrOutputLimit) {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if n := len(ws.requests()); n != 1 {
		t.Errorf("%d requests: the same request would be cut again", n)
	}
}
