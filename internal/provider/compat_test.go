package provider

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// pickyServer refuses, with 400 and body, a request whose JSON has any of
// the refused keys (a dotted key looks one level down, "messages.0.role=x"
// a value); otherwise it answers with stream.
type pickyServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

type refusal struct {
	key, body string
}

func newPickyServer(t *testing.T, stream string, refused ...refusal) *pickyServer {
	ps := &pickyServer{}
	ps.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		ps.mu.Lock()
		ps.bodies = append(ps.bodies, body)
		ps.mu.Unlock()
		for _, rf := range refused {
			if has(body, rf.key) {
				status(400, rf.body)(w, r)
				return
			}
		}
		sseSplit(stream, 50)(w, r)
	}))
	t.Cleanup(ps.srv.Close)
	return ps
}

func has(body map[string]any, key string) bool {
	key, want, byValue := strings.Cut(key, "=")
	var path []any
	for _, p := range strings.Split(key, ".") {
		if p == "0" {
			path = append(path, 0)
		} else {
			path = append(path, p)
		}
	}
	v := get(body, path...)
	if byValue {
		return v == want
	}
	return v != nil
}

func (ps *pickyServer) requests() []map[string]any {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]map[string]any(nil), ps.bodies...)
}

var toolRequest = Request{System: "sys", Messages: []Message{{Role: RoleUser, Content: "x"}}, MaxTokens: 100,
	Tools: []Tool{{Name: "fs-read", Parameters: map[string]any{"type": "object"}}}}

func TestCompatLearntFromFirstError(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		refused refusal
		gone    string // what the second request no longer has (or has another value)
		note    string
	}{
		{"max_tokens refused (OpenAI's reasoning models)", Config{},
			refusal{"max_tokens", `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`},
			"max_completion_tokens", "asking again with max_completion_tokens"},
		{"max_completion_tokens refused (an older server)", Config{Compat: Compat{MaxTokensField: "max_completion_tokens"}},
			refusal{"max_completion_tokens", `{"error":{"message":"Unrecognized request argument supplied: max_completion_tokens","type":"invalid_request_error"}}`},
			"max_tokens", "asking again with max_tokens"},
		{"stream_options refused", Config{},
			refusal{"stream_options", `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`},
			"-stream_options", "does not take stream_options"},
		{"parallel_tool_calls refused (pydantic)", Config{},
			refusal{"parallel_tool_calls", `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'parallel_tool_calls'), 'msg': 'Extra inputs are not permitted', 'input': True}]","type":"BadRequestError","param":null,"code":400}`},
			"-parallel_tool_calls", "does not take parallel_tool_calls"},
		{"developer role refused", Config{Compat: Compat{SystemRole: "developer"}},
			refusal{"messages.0.role=developer", `{"error":"Invalid role 'developer': expected one of system, user, assistant, tool"}`},
			"messages.0.role=system", "as a system message"},
		{"system role refused (o1-mini)", Config{},
			refusal{"messages.0.role=system", `{"error":{"message":"Unsupported value: 'messages[0].role' does not support 'system' with this model.","type":"invalid_request_error","param":"messages[0].role","code":"unsupported_value"}}`},
			"messages.0.role=developer", "as a developer message"},
		{"reasoning_effort refused", Config{Reasoning: "high"},
			refusal{"reasoning_effort", `{"error":{"message":"Unrecognized request argument supplied: reasoning_effort","type":"invalid_request_error"}}`},
			"-reasoning_effort", "does not take a reasoning effort"},
	}
	for _, c := range cases {
		ps := newPickyServer(t, oaText("fine"), c.refused)
		var notes []string
		var waits []time.Duration
		c.cfg.OnRetry = func(n int, wait time.Duration, err error) {
			notes = append(notes, err.Error())
			waits = append(waits, wait)
		}
		c.cfg.Provider, c.cfg.BaseURL, c.cfg.Model = "openai", ps.srv.URL+"/v1", "m"
		m, err := New(fastRetries(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		reply, err := m.Stream(ctxT(t), toolRequest, nil)
		if err != nil || reply.Text != "fine" || reply.Attempts != 2 {
			t.Errorf("%s: reply %+v, err %v", c.name, reply, err)
			continue
		}
		reqs := ps.requests()
		if len(reqs) != 2 {
			t.Errorf("%s: %d requests", c.name, len(reqs))
			continue
		}
		second := reqs[1]
		if strings.HasPrefix(c.gone, "-") {
			if has(second, c.gone[1:]) {
				t.Errorf("%s: the second request still has %s", c.name, c.gone[1:])
			}
		} else if !has(second, c.gone) {
			t.Errorf("%s: the second request lacks %s: %v", c.name, c.gone, second)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "400 Bad Request ("+"the ") || !strings.Contains(notes[0], c.note) || waits[0] != 0 {
			t.Errorf("%s: OnRetry got %q waits %v", c.name, notes, waits)
		}
		if get(second, "tools", 0, "function", "name") != "fs-read" {
			t.Errorf("%s: the tools were dropped", c.name)
		}
		// Remembered: the next request goes right the first time.
		if _, err := m.Stream(ctxT(t), toolRequest, nil); err != nil || len(ps.requests()) != 3 {
			t.Errorf("%s: the next request took %d requests (%v)", c.name, len(ps.requests())-2, err)
		}
	}
}

// A server that refuses several things at once is asked until it has none
// of them, each setting switched once.
func TestCompatSeveralRefusals(t *testing.T) {
	ps := newPickyServer(t, oaText("fine"),
		refusal{"stream_options", `{"error":{"message":"Unrecognized request argument supplied: stream_options"}}`},
		refusal{"parallel_tool_calls", `{"error":{"message":"Unrecognized request argument supplied: parallel_tool_calls"}}`})
	m, _ := New(fastRetries(Config{Provider: "openai", BaseURL: ps.srv.URL + "/v1", Model: "m"}))
	reply, err := m.Stream(ctxT(t), toolRequest, nil)
	if err != nil || reply.Attempts != 3 || len(ps.requests()) != 3 {
		t.Fatalf("reply %+v err %v after %d requests", reply, err, len(ps.requests()))
	}
}

// Both names of the limit refused: each is tried once, then the error.
func TestCompatSwitchesASettingOnce(t *testing.T) {
	ps := newPickyServer(t, oaText("fine"),
		refusal{"max_tokens", `{"error":{"message":"Unsupported parameter: 'max_tokens'"}}`},
		refusal{"max_completion_tokens", `{"error":{"message":"Unsupported parameter: 'max_completion_tokens'"}}`})
	m, _ := New(fastRetries(Config{Provider: "openai", BaseURL: ps.srv.URL + "/v1", Model: "m"}))
	_, err := m.Stream(ctxT(t), toolRequest, nil)
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Attempts != 2 || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Fatalf("err = %v", err)
	}
	if _, err := m.Stream(ctxT(t), toolRequest, nil); err == nil || len(ps.requests()) != 3 {
		t.Errorf("switched again: %d requests, %v", len(ps.requests()), err)
	}
}

// A setting a request succeeded with is not switched by a later 400 that
// names it: the limit's value, not its name, is wrong then.
func TestCompatProvenSettingKept(t *testing.T) {
	var n int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k == 1 {
			sseSplit(oaText("fine"), 100)(w, r)
			return
		}
		status(400, `{"error":{"message":"max_tokens is too large: 100000. This model supports at most 4096 completion tokens, whereas you provided 100000. (unsupported value)"}}`)(w, r)
	}))
	t.Cleanup(srv.Close)
	m, _ := New(fastRetries(Config{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "m"}))
	if _, err := m.Stream(ctxT(t), toolRequest, nil); err != nil {
		t.Fatal(err)
	}
	_, err := m.Stream(ctxT(t), toolRequest, nil)
	if err == nil || n != 2 {
		t.Errorf("err %v after %d requests; want the 400, not another attempt", err, n)
	}
}

// A server that refuses the tools fails the request: nodwyn never asks
// again without them, and says why.
func TestToolsRefusedAreNeverDropped(t *testing.T) {
	ps := newPickyServer(t, oaText("fine"),
		refusal{"tools", `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`})
	m, _ := New(fastRetries(Config{Provider: "openai", BaseURL: ps.srv.URL + "/v1", Model: "m"}))
	_, err := m.Stream(ctxT(t), toolRequest, nil)
	if err == nil || !strings.Contains(err.Error(), "does not support tools") || !strings.Contains(err.Error(), "nodwyn needs a model that takes tools") {
		t.Fatalf("err = %v", err)
	}
	if n := len(ps.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestResponsesCompatLearnt(t *testing.T) {
	cases := []struct {
		cfg     Config
		refused refusal
		gone    string
	}{
		{Config{}, refusal{"include", `{"error":{"message":"Encrypted content is not supported with this model.","type":"invalid_request_error","param":"include","code":"unsupported_parameter"}}`}, "include"},
		{Config{Reasoning: "low"}, refusal{"reasoning", `{"error":{"message":"Unsupported parameter: 'reasoning.effort' is not supported with this model.","type":"invalid_request_error","param":"reasoning.effort","code":"unsupported_parameter"}}`}, "reasoning"},
	}
	for _, c := range cases {
		ps := newPickyServer(t, respText("fine"), c.refused)
		c.cfg.Provider, c.cfg.BaseURL, c.cfg.Model = "openai-responses", ps.srv.URL+"/v1", "gpt-4o"
		m, err := New(fastRetries(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		reply, err := m.Stream(ctxT(t), toolRequest, nil)
		if err != nil || reply.Text != "fine" || len(ps.requests()) != 2 || has(ps.requests()[1], c.gone) {
			t.Errorf("%s: reply %+v err %v, %d requests", c.gone, reply, err, len(ps.requests()))
		}
	}
}

func TestCompatChecked(t *testing.T) {
	for _, c := range []struct {
		cc   Compat
		want string
	}{
		{Compat{MaxTokensField: "max_output"}, `compat max_tokens_field "max_output" is neither`},
		{Compat{SystemRole: "admin"}, `compat system_role "admin" is neither system nor developer`},
	} {
		_, err := New(Config{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m", Compat: c.cc})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.cc, err)
		}
	}
}
