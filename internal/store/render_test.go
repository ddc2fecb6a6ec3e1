package store

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRenderLog(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 13, 55, 1, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	evs := []Event{
		{Seq: 1, Time: at(0), Type: "run.start", Data: map[string]any{
			"session": "20261202-135501-ab12cd", "folder": "/work/p", "profile": "lean", "model": "gpt-x",
			"sandbox": false, "unattended": true, "yolo": false, "resumed": false,
			"instruction": "Fix the failing test in parser.go\nand run the tests",
		}},
		{Seq: 2, Time: at(200 * time.Millisecond), Type: "model.request", Data: map[string]any{"messages": 1, "tools": 9}},
		{Seq: 3, Time: at(1500 * time.Millisecond), Type: "model.reply", Data: map[string]any{"text": "Looking at the parser.",
			"tool_calls": []map[string]any{{"id": "call_1", "name": "shell-exec", "arguments": map[string]any{}}}}},
		{Seq: 4, Time: at(1500 * time.Millisecond), Type: "tool.call", Data: map[string]any{
			"id": "call_1", "name": "shell-exec",
			"arguments": map[string]any{"command": "go test ./... -run TestParse " + strings.Repeat("-v ", 40)},
		}},
		{Seq: 5, Time: at(1600 * time.Millisecond), Type: "tool.decision", Data: map[string]any{"id": "call_1", "decision": "allow", "reason": "standing approval: go test"}},
		{Seq: 6, Time: at(3 * time.Second), Type: "tool.result", Data: map[string]any{"id": "call_1", "name": "shell-exec", "error": false, "exit": 1, "output": "--- FAIL: TestParse\nparser_test.go:12: got 1\nFAIL"}},
		{Seq: 7, Time: at(65 * time.Second), Type: "note", Data: map[string]any{"text": "progress warning: same call twice"}},
		{Seq: 8, Time: at(66 * time.Second), Type: "tool.result", Data: map[string]any{"id": "", "name": "fs-read", "error": true, "exit": -1, "output": "refused"}},
		{Seq: 9, Time: at(67 * time.Second), Type: "error", Data: map[string]any{"text": "provider: 429 from https://api.example"}},
		{Seq: 10, Time: at(2*time.Hour + 3*time.Minute), Type: "run.end", Data: map[string]any{
			"status": "finished", "text": "Fixed the off-by-one in parser.go.", "tool_call_count": 12,
			"input_tokens": 5000, "output_tokens": 300, "elapsed_ms": 7380000,
		}},
		{Seq: 11, Time: at(2*time.Hour + 4*time.Minute), Type: "custom.thing", Data: map[string]any{"b": "two words", "a": 1.5, "on": true}},
	}
	// Through JSON, as `nodwyn log` reads them.
	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := l.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	read, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	RenderLog(&b, read)
	want := `   +0.0s  run.start     "Fix the failing test in parser.go and run the tests"  folder=/work/p  model=gpt-x  profile=lean  session=20261202-135501-ab12cd  unattended
   +0.2s  model.request messages=1  tools=9
   +1.5s  model.reply   "Looking at the parser."  1 tool call
   +1.5s  tool.call     shell-exec  {"command":"go test ./... -run TestParse -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -v -…
   +1.6s  tool.decision allow  (standing approval: go test)
   +3.0s  tool.result   shell-exec  exit 1  "--- FAIL: TestParse (3 lines)"
  +1m05s  note          progress warning: same call twice
  +1m06s  tool.result   fs-read  error  exit -1  "refused"
  +1m07s  error         provider: 429 from https://api.example
  +2h03m  run.end       finished  12 tool calls  2h3m0s  input_tokens=5000  output_tokens=300  "Fixed the off-by-one in parser.go."
  +2h04m  custom.thing  a=1.5  b="two words"  on
`
	if got := b.String(); got != want {
		t.Errorf("RenderLog =\n%s\nwant\n%s", got, want)
	}
}

// A log from before schema 1 (docs/events.md, Changes) reads as it did:
// tool.call's arguments that were not one object were the text given,
// model.reply's were the model's JSON text, run.end's count was tool_calls
// and error's text was error.
func TestRenderLogOfSchemaZero(t *testing.T) {
	at := time.Unix(0, 0)
	var b bytes.Buffer
	RenderLog(&b, []Event{
		{Type: "model.reply", Time: at, Data: map[string]any{"text": "", "tool_calls": []any{map[string]any{"id": "c", "name": "fs-edit", "arguments": `{"path": "a.go"}`}}}},
		{Type: "tool.call", Time: at, Data: map[string]any{"name": "fs-edit", "arguments": `{"path": "a.go",  "old": "x"}`}},
		{Type: "tool.call", Time: at, Data: map[string]any{"name": "fs-edit", "arguments": `{"path": `}},
		{Type: "error", Time: at, Data: map[string]any{"error": "boom"}},
		{Type: "run.end", Time: at, Data: map[string]any{"status": "failed", "tool_calls": float64(3)}},
	})
	want := `   +0.0s  model.reply   1 tool call
   +0.0s  tool.call     fs-edit  {"old":"x","path":"a.go"}
   +0.0s  tool.call     fs-edit  {"path":
   +0.0s  error         boom
   +0.0s  run.end       failed  3 tool calls
`
	if got := b.String(); got != want {
		t.Errorf("RenderLog =\n%s\nwant\n%s", got, want)
	}
}

func TestRenderLogEmpty(t *testing.T) {
	var b bytes.Buffer
	RenderLog(&b, nil)
	if b.Len() != 0 {
		t.Errorf("RenderLog(nil) wrote %q", b.String())
	}
}

func TestShortCutsRunes(t *testing.T) {
	s := short(strings.Repeat("é", 10), 5)
	if s != "éééé…" || !json.Valid([]byte(`"`+s+`"`)) {
		t.Errorf("short = %q", s)
	}
}

// What the model, a tool or Scheme chose is escaped, each event on one
// line: a name or path holding ESC, CSI, OSC, the 8-bit CSI or a newline
// cannot move the cursor, erase lines, set the title or forge a line of
// the log, and stays recognisable (issue 27).
func TestRenderLogEscapesWhatOthersChose(t *testing.T) {
	evil := "x\x1b[3A\x1b[J\x1b]0;title\x07\u009b2J\nforged\r\u202e"
	at := time.Unix(0, 0)
	evs := []Event{
		{Type: "run.start", Time: at, Data: map[string]any{"instruction": "fix " + evil}},
		{Type: "tool.call", Time: at, Data: map[string]any{"name": "fs-write", "arguments": map[string]any{"path": "evil.go" + evil}}},
		{Type: "tool.call", Time: at, Data: map[string]any{"name": "fs-write" + evil, "arguments": `{"path": 1`}},
		{Type: "tool.result", Time: at, Data: map[string]any{"name": "shell" + evil, "output": evil}},
		{Type: "tool.decision", Time: at, Data: map[string]any{"decision": "refuse" + evil, "reason": evil}},
		{Type: "note" + evil, Time: at, Data: map[string]any{"what" + evil: evil}},
		{Type: "run.end", Time: at, Data: map[string]any{"status": "finished" + evil, "text": evil}},
	}
	var b bytes.Buffer
	RenderLog(&b, evs)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\r\u009b\u202e") {
		t.Errorf("raw control characters reach the terminal:\n%q", out)
	}
	if n := strings.Count(out, "\n"); n != len(evs) {
		t.Errorf("%d events on %d lines:\n%s", len(evs), n, out)
	}
	for _, want := range []string{"evil.go", `\x1b[3A\x1b[J`, `\u009b2J`, `fs-writex\x1b`, `shellx\x1b`, `notex\x1b`, `\nforged`} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not show %q:\n%s", want, out)
		}
	}
}
