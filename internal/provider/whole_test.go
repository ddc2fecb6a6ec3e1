package provider

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func newTestResponses(t *testing.T, ws *wireServer, cfg Config) Model {
	t.Helper()
	cfg.API = "responses"
	return newTestOpenAI(t, ws, cfg)
}

// A server that answers a streaming request with one JSON body (a whole,
// not streamed, reply: Content-Type application/json) is read as the
// complete reply, in each wire format; an error in such a body is the
// error it says. The bodies are the APIs' own, as their references show
// them. Each of these tests failed before: the body was refused as "no
// event stream".

// The Chat Completions object (https://platform.openai.com/docs/api-reference/chat/object).
const wholeChat = `{
  "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
  "object": "chat.completion",
  "created": 1741570283,
  "model": "gpt-4o-2024-08-06",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "Reading both files.",
        "refusal": null,
        "tool_calls": [
          {"id": "call_abc", "type": "function", "function": {"name": "fs-read", "arguments": "{\"path\":\"a.txt\"}"}},
          {"id": "call_def", "type": "function", "function": {"name": "fs-read", "arguments": "{\"path\":\"b.txt\"}"}}
        ],
        "annotations": []
      },
      "logprobs": null,
      "finish_reason": "tool_calls"
    }
  ],
  "usage": {
    "prompt_tokens": 1117,
    "completion_tokens": 46,
    "total_tokens": 1163,
    "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": "fp_fc9f1d7035"
}`

func TestOpenAIWholeJSONReplyIsRead(t *testing.T) {
	ws := newWireServer(t, rawBody(wholeChat, "application/json"))
	m := newTestOpenAI(t, ws, Config{MaxRetries: -1})
	var d deltas
	reply, err := m.Stream(ctxT(t), sampleRequest, d.on)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "Reading both files." || d.text.String() != reply.Text {
		t.Errorf("text %q, deltas %q", reply.Text, d.text.String())
	}
	if got := fmt.Sprint(reply.ToolCalls); got != `[{call_abc fs-read {"path":"a.txt"}} {call_def fs-read {"path":"b.txt"}}]` {
		t.Errorf("calls %s", got)
	}
	if reply.StopReason != "tool_calls" || reply.Usage != (Usage{InputTokens: 93, OutputTokens: 46, CacheReadTokens: 1024}) {
		t.Errorf("stop %q usage %+v", reply.StopReason, reply.Usage)
	}
}

// The Responses object (https://platform.openai.com/docs/api-reference/responses/object),
// with a reasoning item, a message and a function call.
const wholeResponse = `{
  "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41",
  "object": "response",
  "created_at": 1741476777,
  "status": "completed",
  "error": null,
  "incomplete_details": null,
  "instructions": null,
  "max_output_tokens": null,
  "model": "gpt-5-2025-08-07",
  "output": [
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAABo-enc"},
    {
      "type": "message",
      "id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c45c1d41",
      "status": "completed",
      "role": "assistant",
      "content": [{"type": "output_text", "text": "Reading a.txt.", "annotations": []}]
    },
    {"type": "function_call", "id": "fc_1", "call_id": "call_xyz", "name": "fs-read", "arguments": "{\"path\":\"a.txt\"}", "status": "completed"}
  ],
  "parallel_tool_calls": true,
  "reasoning": {"effort": "medium", "summary": null},
  "store": false,
  "temperature": 1.0,
  "usage": {
    "input_tokens": 328,
    "input_tokens_details": {"cached_tokens": 128},
    "output_tokens": 52,
    "output_tokens_details": {"reasoning_tokens": 20},
    "total_tokens": 380
  }
}`

func TestResponsesWholeJSONReplyIsRead(t *testing.T) {
	ws := newWireServer(t, rawBody(wholeResponse, "application/json"))
	m := newTestResponses(t, ws, Config{MaxRetries: -1})
	var d deltas
	reply, err := m.Stream(ctxT(t), sampleRequest, d.on)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "Reading a.txt." || d.text.String() != reply.Text {
		t.Errorf("text %q, deltas %q", reply.Text, d.text.String())
	}
	if got := fmt.Sprint(reply.ToolCalls); got != `[{call_xyz fs-read {"path":"a.txt"}}]` {
		t.Errorf("calls %s", got)
	}
	if len(reply.Reasoning) != 1 || !strings.Contains(string(reply.Reasoning[0]), `"encrypted_content":"gAAAAABo-enc"`) {
		t.Errorf("reasoning %s", reply.Reasoning)
	}
	if reply.StopReason != "completed" || reply.Usage != (Usage{InputTokens: 200, OutputTokens: 52, CacheReadTokens: 128, ReasoningTokens: 20}) {
		t.Errorf("stop %q usage %+v", reply.StopReason, reply.Usage)
	}
}

// The Message object (https://docs.anthropic.com/en/api/messages), with
// extended thinking, text and a tool call.
const wholeMessage = `{
  "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5-20250929",
  "content": [
    {"type": "thinking", "thinking": "The user wants a.txt.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
    {"type": "text", "text": "Reading a.txt."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "fs-read", "input": {"path": "a.txt"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1800, "output_tokens": 503, "service_tier": "standard"}
}`

func TestAnthropicWholeJSONReplyIsRead(t *testing.T) {
	ws := newWireServer(t, rawBody(wholeMessage, "application/json"))
	m := newTestAnthropic(t, ws, Config{MaxRetries: -1})
	var d deltas
	reply, err := m.Stream(ctxT(t), sampleRequest, d.on)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Text != "Reading a.txt." || d.text.String() != reply.Text || fmt.Sprint(d.tools) != "[fs-read]" {
		t.Errorf("text %q, deltas %q %v", reply.Text, d.text.String(), d.tools)
	}
	if got := fmt.Sprint(reply.ToolCalls); got != `[{toolu_01A09q90qw90lq917835lq9 fs-read {"path":"a.txt"}}]` {
		t.Errorf("calls %s", got)
	}
	if len(reply.Reasoning) != 1 || string(reply.Reasoning[0]) != `{"type":"thinking","thinking":"The user wants a.txt.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}` {
		t.Errorf("reasoning %s", reply.Reasoning)
	}
	if reply.StopReason != "tool_use" || reply.Usage != (Usage{InputTokens: 2095, OutputTokens: 503, CacheReadTokens: 1800}) {
		t.Errorf("stop %q usage %+v", reply.StopReason, reply.Usage)
	}
}

// An error in a 200's JSON body is the error it says: the request fails
// with it (not retried when it says the request is wrong), and an
// overloaded server is asked again. An error status with a JSON body is
// the API error it was before.
func TestWholeJSONErrorIsTheAPIError(t *testing.T) {
	type model func(*testing.T, *wireServer, Config) Model
	cases := []struct {
		name     string
		newModel model
		refused  string // a 200 whose body says the request is wrong
		busy     string // a 200 whose body says to try again
		good     string
	}{
		{"openai", newTestOpenAI,
			`{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			`{"object":"error","message":"The engine is overloaded","type":"ServiceUnavailableError","param":null,"code":503}`,
			wholeChat},
		{"openai-responses", newTestResponses,
			`{"error":{"message":"Invalid 'input[0]': unknown item type.","type":"invalid_request_error","param":"input[0]","code":null}}`,
			`{"id":"resp_1","object":"response","status":"failed","error":{"code":"server_error","message":"The server had an error processing your request."},"output":[]}`,
			wholeResponse},
		{"anthropic", newTestAnthropic,
			`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fz"}`,
			wholeMessage},
	}
	for _, c := range cases {
		ws := newWireServer(t, rawBody(c.refused, "application/json"))
		_, err := c.newModel(t, ws, Config{MaxRetries: 3}).Stream(ctxT(t), sampleRequest, nil)
		if err == nil || !strings.Contains(err.Error(), "the server answered 200 OK with an error: ") || !strings.Contains(err.Error(), "invalid_request_error") {
			t.Errorf("%s: refused: err %v", c.name, err)
		}
		if n := len(ws.requests()); n != 1 {
			t.Errorf("%s: refused: %d requests, want 1", c.name, n)
		}

		ws = newWireServer(t, rawBody(c.busy, "application/json"), rawBody(c.good, "application/json"))
		var cause error
		reply, err := c.newModel(t, ws, Config{OnRetry: func(_ int, _ time.Duration, err error) { cause = err }}).Stream(ctxT(t), sampleRequest, nil)
		if err != nil || reply.Attempts != 2 || cause == nil || !strings.Contains(cause.Error(), "with an error: ") {
			t.Errorf("%s: busy: reply %+v, err %v, retried for %v", c.name, reply, err, cause)
		}

		ws = newWireServer(t, status(http.StatusBadRequest, c.refused))
		_, err = c.newModel(t, ws, Config{}).Stream(ctxT(t), sampleRequest, nil)
		var pe *Error
		if !errors.As(err, &pe) || pe.Status != http.StatusBadRequest || !strings.Contains(pe.Body, "invalid_request_error") {
			t.Errorf("%s: 400: err %v", c.name, err)
		}
	}
}

// JSON that is no reply of the API is an error that quotes it, not retried.
func TestWholeJSONThatIsNoReply(t *testing.T) {
	ws := newWireServer(t, rawBody(`{"status":"ok","detail":"hello from the proxy"}`, "application/json; charset=utf-8"))
	_, err := newTestOpenAI(t, ws, Config{MaxRetries: 3}).Stream(ctxT(t), sampleRequest, nil)
	if err == nil || !strings.Contains(err.Error(), `with JSON that is no chat completion (Content-Type application/json; charset=utf-8): {"status":"ok"`) {
		t.Errorf("err %v", err)
	}
	if n := len(ws.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
