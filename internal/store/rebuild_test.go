package store

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
)

// writeLog writes a session's event log: its events' data as the session
// writes them (event.Map), or a map for a log older than the schema.
func writeLog(t *testing.T, s *Store, id string, evs ...any) {
	t.Helper()
	if err := os.MkdirAll(s.SessionDir(id), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLog(s.LogPath(id))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for i, e := range evs {
		ev := &Event{Time: at.Add(time.Duration(i) * time.Second)}
		switch e := e.(type) {
		case event.Data:
			ev.Type, ev.Data = e.Type(), event.Map(e)
		case Event:
			ev.Type, ev.Data = e.Type, e.Data
		}
		if err := l.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
}

// A log with all that rebuildState reads: two runs (the settings are the
// first's, the model and provider the last's), calls with arguments as an object and as
// raw text, a call of an earlier reply with no result (answered "not run"),
// a stopped result, a compaction (its summary the model.aside before it),
// the judge's tokens in the usage but not run.end's, and a model.reply of a
// log before schema 1 (its arguments JSON text: the call is kept, its
// arguments are not).
func TestRebuildStateFromALog(t *testing.T) {
	s := openStore(t)
	cost := 0.5
	writeLog(t, s, "s1",
		event.RunStart{Session: "s1", Folder: "/p", Profile: "default", Model: "m1", Provider: "openai", BaseURL: "http://127.0.0.1:8080/v1", API: "responses",
			Instruction: "go", Sandbox: true, Yolo: true},
		event.Message{Role: "user", Text: "go"},
		event.ModelReply{Text: "Looking.", ToolCalls: []event.ReplyCall{
			{ID: "a", Name: "shell-exec", Arguments: map[string]any{"command": "ls", "n": 2}},
			{ID: "b", Name: "fs-read", Arguments: map[string]any{}, RawArguments: `{"path":`}},
			StopReason: "tool_calls", Usage: event.Usage{InputTokens: 100, CachedTokens: 40, CacheWriteTokens: 5, OutputTokens: 10, CostUSD: &cost}},
		event.ToolCall{ID: "a", Name: "shell-exec", N: 1},
		event.ToolResult{ID: "a", Name: "shell-exec", Output: "x\n"},
		event.ToolCall{ID: "b", Name: "fs-read", N: 2},
		event.ToolResult{ID: "b", Name: "fs-read", Error: true, Exit: -1, Output: "bad arguments"},
		event.ModelReply{ToolCalls: []event.ReplyCall{{ID: "c", Name: "shell-exec", Arguments: map[string]any{"command": "sleep 9"}}},
			Usage: event.Usage{InputTokens: 200, OutputTokens: 20}},
		event.ToolCall{ID: "c", Name: "shell-exec", N: 3},
		event.Judge{ID: "c", Name: "shell-exec", Answer: "yes", InputTokens: 7, OutputTokens: 2},
		event.Message{Role: "user", Text: "next"},
		event.ModelReply{ToolCalls: []event.ReplyCall{{ID: "d", Name: "shell-exec", Arguments: map[string]any{"command": "make"}}},
			Usage: event.Usage{InputTokens: 300, OutputTokens: 30}},
		event.ToolCall{ID: "d", Name: "shell-exec", N: 4},
		event.ToolResult{ID: "d", Name: "shell-exec", Error: true, Exit: -1, Output: "stopped: …", Stopped: "person"},
		event.ToolResult{ID: "", Name: "fs-read", Output: "a Scheme tool's", Within: "t"},
		event.ModelAside{Text: "SUMMARY", Usage: event.Usage{InputTokens: 50, OutputTokens: 5}},
		event.Compaction{From: 0, To: 4, Messages: 4},
		event.ModelReply{Text: "Done.", Usage: event.Usage{InputTokens: 60, OutputTokens: 6}},
		event.RunEnd{Status: "finished", Usage: event.Usage{InputTokens: 1000, OutputTokens: 1000}},
		event.RunStart{Session: "s1", Folder: "/elsewhere", Profile: "other", Model: "m2", Provider: "anthropic", Instruction: "again", Resumed: true},
		Event{Type: "message", Data: map[string]any{"role": "user", "text": "again"}},
		Event{Type: "model.reply", Data: map[string]any{"text": "old", "tool_calls": []any{
			map[string]any{"id": "e", "name": "fs-read", "arguments": `{"path":"a"}`}},
			"input_tokens": 1, "output_tokens": 1}},
		event.ToolCall{ID: "e", Name: "fs-read", N: 1},
	)
	st, err := s.rebuildState("s1", "state.json is missing")
	if err != nil {
		t.Fatal(err)
	}
	if st.Folder != "/p" || st.Instruction != "go" || st.Profile != "default" || !st.Sandbox || st.Unattended || !st.Yolo ||
		st.Model != "m2" || st.Provider != "anthropic" || st.BaseURL != "" || st.API != "" || st.Status != "running" || st.ToolCalls != 5 {
		t.Errorf("rebuilt: %+v", st)
	}
	wantUsage := map[string]int{"input_tokens": 100 + 200 + 7 + 300 + 50 + 60 + 1, "cached_tokens": 40, "cache_write_tokens": 5, "output_tokens": 10 + 20 + 2 + 30 + 5 + 6 + 1}
	if !reflect.DeepEqual(st.Usage, wantUsage) {
		t.Errorf("usage %v, want %v", st.Usage, wantUsage)
	}
	var msgs []logMessage
	if err := json.Unmarshal(st.Messages, &msgs); err != nil {
		t.Fatal(err)
	}
	want := []logMessage{
		{Role: "user", Content: "[a summary of the earlier conversation]\nSUMMARY"},
		{Role: "assistant", ToolCalls: []logToolCall{{ID: "c", Name: "shell-exec", Arguments: `{"command":"sleep 9"}`}}},
		{Role: "tool", ToolCallID: "c", Name: "shell-exec", Content: notLogged, IsError: true},
		{Role: "user", Content: "next"},
		{Role: "assistant", ToolCalls: []logToolCall{{ID: "d", Name: "shell-exec", Arguments: `{"command":"make"}`}}},
		{Role: "tool", ToolCallID: "d", Name: "shell-exec", Content: "stopped: …", IsError: true},
		{Role: "assistant", Content: "Done."},
		{Role: "user", Content: "again"},
		{Role: "assistant", Content: "old", ToolCalls: []logToolCall{{ID: "e", Name: "fs-read"}}},
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("messages:\n%+v\nwant\n%+v", msgs, want)
	}
	if !strings.Contains(st.Rebuilt, "state.json is missing") || !strings.Contains(st.Rebuilt, "(9 messages)") || strings.Contains(st.Rebuilt, "compaction") {
		t.Errorf("Rebuilt: %q", st.Rebuilt)
	}
}

// Before the compaction: the calls of a reply before the last with no
// result are answered "not run"; arguments as an object are their JSON,
// raw arguments are as the model gave them. A compaction the log cannot
// apply (no summary before it, a range out of the conversation) is counted.
func TestRebuildStateAnswersCallsWithNoResult(t *testing.T) {
	s := openStore(t)
	writeLog(t, s, "s2",
		event.RunStart{Session: "s2", Instruction: "go"},
		event.Message{Role: "user", Text: "go"},
		event.ModelReply{Text: "Looking.", ToolCalls: []event.ReplyCall{
			{ID: "a", Name: "shell-exec", Arguments: map[string]any{"command": "ls", "n": 2}},
			{ID: "b", Name: "fs-read", Arguments: map[string]any{}, RawArguments: `{"path":`}}},
		event.ToolResult{ID: "b", Name: "fs-read", Error: true, Exit: -1, Output: "bad arguments"},
		event.ToolResult{ID: "b", Name: "fs-read", Output: "answered twice"},
		event.Compaction{From: 0, To: 2}, // no model.aside before it
		event.ModelAside{Text: "S"},
		event.Compaction{From: 1, To: 9},
		Event{Type: "compaction", Data: map[string]any{"from": 0.5, "to": 1}},
		event.Message{Role: "user", Text: "next"},
		event.RunEnd{Status: "interrupted"},
	)
	st, err := s.rebuildState("s2", "state.json cannot be read")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []logMessage
	json.Unmarshal(st.Messages, &msgs)
	want := []logMessage{
		{Role: "user", Content: "go"},
		{Role: "assistant", Content: "Looking.", ToolCalls: []logToolCall{{ID: "a", Name: "shell-exec", Arguments: `{"command":"ls","n":2}`}, {ID: "b", Name: "fs-read", Arguments: `{"path":`}}},
		{Role: "tool", ToolCallID: "b", Name: "fs-read", Content: "bad arguments", IsError: true},
		{Role: "tool", ToolCallID: "a", Name: "shell-exec", Content: notLogged, IsError: true},
		{Role: "user", Content: "next"},
	}
	if !reflect.DeepEqual(msgs, want) || st.Status != "interrupted" {
		t.Errorf("status %q, messages:\n%+v\nwant\n%+v", st.Status, msgs, want)
	}
	if !strings.Contains(st.Rebuilt, "3 compaction(s) could not be applied") {
		t.Errorf("Rebuilt: %q", st.Rebuilt)
	}
	if !reflect.DeepEqual(st.Usage, map[string]int{"input_tokens": 0, "cached_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0}) {
		t.Errorf("usage %v", st.Usage)
	}
}
