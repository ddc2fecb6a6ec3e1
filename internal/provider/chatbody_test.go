package provider

import (
	"encoding/json"
	"testing"
)

// The body made from the last request's parts is the body params makes,
// encoded whole, byte for byte: through appended messages, messages changed
// in place, compaction, tools added, dropped and replaced, a system prompt
// changed, and each compatibility setting.
func TestChatBodyIsTheParamsJSON(t *testing.T) {
	temp := 0.5
	schema := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string", "description": "a <path> & more"}}}
	other := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	m := &OpenAI{}
	m.model, m.reasoning = "gpt-x", "low"
	check := func(step string, req Request, cc Compat) {
		t.Helper()
		p, wantSent := m.params(req, cc)
		want, err := encodeBody(p)
		if err != nil {
			t.Fatal(err)
		}
		got, sent, err := m.body(req, cc)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", step, got, want)
		}
		if sent != wantSent {
			t.Errorf("%s: sent %+v, want %+v", step, sent, wantSent)
		}
		if !json.Valid(got) {
			t.Errorf("%s: not JSON: %s", step, got)
		}
	}
	req := Request{System: "You are <terse> & exact.", Messages: []Message{{Role: RoleUser, Content: "make a.txt"}},
		Tools: []Tool{{Name: "fs-read", Description: "read", Parameters: schema}, {Name: "none", Description: "no schema"}}}
	check("the first", req, Compat{})
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "fs-read", Arguments: `{"path":"a"}`}, {ID: "c2", Name: "none"}},
			Reasoning: []json.RawMessage{json.RawMessage(`{"type":"reasoning"}`)}},
		Message{Role: RoleTool, ToolCallID: "c1", Name: "fs-read", Content: "1\ta"},
		Message{Role: RoleTool, ToolCallID: "c2", Name: "none", Content: "", IsError: true})
	check("a turn more", req, Compat{})
	check("the same again", req, Compat{})
	req.Messages[2].Content = "[folded]"
	check("a result folded in place", req, Compat{})
	req.Messages[1].ToolCalls[0].Arguments = `{"path":"b"}`
	check("arguments changed in place", req, Compat{})
	req.Messages = append(req.Messages, Message{Role: RoleAssistant, Content: "done"}, Message{Role: RoleUser, Content: "and?"})
	check("text", req, Compat{})
	req.Messages = []Message{{Role: RoleUser, Content: "summary"}, req.Messages[4]}
	check("compacted", req, Compat{})
	req.Tools = []Tool{{Name: "fs-read", Description: "read", Parameters: other}}
	check("a tool's schema replaced, one dropped", req, Compat{})
	req.Tools = append(req.Tools, Tool{Name: "fs-write", Description: "write", Parameters: schema})
	check("a tool added", req, Compat{})
	req.Tools[0].Description = "read a file"
	check("a description changed", req, Compat{})
	req.System = "Another prompt."
	check("the system prompt changed", req, Compat{})
	req.MaxTokens, req.Temperature, req.Model = 1000, &temp, "other"
	check("max tokens, temperature, model", req, Compat{})
	check("compat", req, Compat{SystemRole: "developer", MaxTokensField: "max_tokens", NoStreamOptions: true, NoParallelToolCalls: true, NoReasoningEffort: true})
	m.official = true
	check("official", req, Compat{})
	req.Tools, req.System = nil, ""
	check("no tools, no system prompt", req, Compat{})
	req.Messages = nil
	check("no messages", req, Compat{})
}
