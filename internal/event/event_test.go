package event

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Map gives the map the writers built by hand before there were types: the
// same JSON, the same Go values in process (ints stay ints, a list of calls
// is []map[string]any), lists that are always there never null.
func TestMapIsTheHandBuiltMap(t *testing.T) {
	cost := 0.25
	for _, c := range []struct {
		d    Data
		want map[string]any
	}{
		{ToolResult{ID: "c1", Name: "shell-exec", Exit: 1, Output: "x", MS: 3},
			map[string]any{"id": "c1", "name": "shell-exec", "error": false, "exit": 1, "output": "x", "changed": []string{}, "ms": int64(3)}},
		{ToolResult{Name: "fs-read", Exit: -1, Error: true, Changed: []string{"a"}, Stopped: "person", Within: "t"},
			map[string]any{"id": "", "name": "fs-read", "error": true, "exit": -1, "output": "", "changed": []string{"a"}, "ms": int64(0), "stopped": "person", "within": "t"}},
		{ModelReply{Text: "hi", StopReason: "stop", Usage: Usage{InputTokens: 7, CostUSD: &cost}, MS: 2},
			map[string]any{"text": "hi", "tool_calls": []map[string]any{}, "stop_reason": "stop", "input_tokens": 7, "cached_tokens": 0,
				"cache_write_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0, "cost_usd": 0.25, "ms": int64(2)}},
		{ModelReply{ToolCalls: []ReplyCall{{ID: "a", Name: "n", RawArguments: "{"}}},
			map[string]any{"text": "", "tool_calls": []map[string]any{{"id": "a", "name": "n", "arguments": map[string]any{}, "raw_arguments": "{"}},
				"stop_reason": "", "input_tokens": 0, "cached_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0, "ms": int64(0)}},
		{ModelRequest{Messages: 1, Tools: 0, System: "s", ToolNames: []string{}},
			map[string]any{"messages": 1, "tools": 0, "system": "s", "tool_names": []string{}}}, // with system, even empty
		{ModelRequest{Messages: 3, Tools: 2}, map[string]any{"messages": 3, "tools": 2}},
		{RunStart{Confinement: Confinement{Reads: "r", Network: "n"}},
			map[string]any{"session": "", "folder": "", "profile": "", "model": "", "provider": "", "instruction": "", "scratch": "", "sandbox": false,
				"unattended": false, "yolo": false, "resumed": false, "exec": "", "kernel_floor": "",
				"confinement": map[string]any{"reads": "r", "writes": "", "processes": "", "network": "n"}}},
	} {
		got := Map(c.d)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Map(%#v)\n got %#v\nwant %#v", c.d, got, c.want)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(c.want)
		if string(g) != string(w) {
			t.Errorf("%s: JSON %s, want %s", c.d.Type(), g, w)
		}
	}
}

// Decode reads back what Map made, in process (Go ints) and through JSON
// (float64), to the same value.
func TestDecodeReadsWhatMapMade(t *testing.T) {
	cost := 0.0125
	for _, d := range []Data{
		ToolResult{ID: "c1", Name: "shell-exec", Exit: 2, Output: "o", Changed: []string{}, MS: 12, Within: "w"},
		ToolResult{Name: "x", Exit: -1, Error: true, Changed: []string{"a", "b"}, Stopped: "deadline"},
		RunEnd{Status: "finished", ToolCallCount: 4, Usage: Usage{InputTokens: 4479, OutputTokens: 87, CostUSD: &cost}, Requests: 5, ElapsedMS: 300},
		ModelReply{Text: "t", ToolCalls: []ReplyCall{{ID: "a", Name: "n", Arguments: map[string]any{"path": "p"}}}, StopReason: "tool_calls"},
		RunStart{Session: "s", Sandbox: true, Confinement: Confinement{Writes: "w"}},
		SelfValidation{Tool: "run-tests", Exit: -1, JournalSeq: 3, EvidenceOnly: true},
		NetConn{Host: "h", Port: 443, Sent: 1 << 40},
	} {
		in, err := Decode(d.Type(), Map(d))
		if err != nil || !reflect.DeepEqual(in, d) {
			t.Errorf("in process: Decode(Map(%#v)) = %#v, %v", d, in, err)
		}
		b, _ := json.Marshal(Map(d))
		var m map[string]any
		json.Unmarshal(b, &m)
		out, err := Decode(d.Type(), m)
		if err != nil || !reflect.DeepEqual(out, d) {
			t.Errorf("through JSON: Decode(%s) = %#v, %v; want %#v", b, out, err, d)
		}
	}
}

// The cause of the daemon's "ok" for a failed command: an exit status that
// came through JSON is a float64, and a reader that asked for an int got
// none. Decoded, it is the int it was.
func TestAnExitStatusThroughJSONIsAnInt(t *testing.T) {
	var m map[string]any
	json.Unmarshal([]byte(`{"id":"c","name":"shell-exec","error":false,"exit":1,"output":"FAIL","changed":[],"ms":4}`), &m)
	d, err := Decode("tool.result", m)
	if r, ok := d.(ToolResult); err != nil || !ok || r.Exit != 1 {
		t.Errorf("Decode = %#v, %v; want a ToolResult with Exit 1", d, err)
	}
}

func TestDecodeOfWhatItDoesNotKnow(t *testing.T) {
	if d, err := Decode("confirm.ask", map[string]any{"ask": 1}); d != nil || err != nil {
		t.Errorf("a type of no event here: %#v, %v; want nil, nil", d, err)
	}
	if d, err := Decode("note", nil); d != (Note{}) || err != nil {
		t.Errorf("no data: %#v, %v; want a zero Note", d, err)
	}
	// A log from before schema 1: model.reply's arguments were the model's
	// JSON text. The other fields are read; the error names the field.
	d, err := Decode("model.reply", map[string]any{"text": "t", "tool_calls": []any{map[string]any{"id": "a", "name": "n", "arguments": `{"x":1}`}}})
	r, _ := d.(ModelReply)
	if err == nil || !strings.Contains(err.Error(), "arguments") || r.Text != "t" || len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "a" {
		t.Errorf("an old model.reply: %#v, %v", d, err)
	}
}

// Every type is listed once, and its type's name is docs/events.md's form.
func TestTypesAreListedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Types() {
		if seen[d.Type()] {
			t.Errorf("%s is listed twice", d.Type())
		}
		seen[d.Type()] = true
		if reflect.TypeOf(d).Kind() != reflect.Struct {
			t.Errorf("%s: %T is not a struct", d.Type(), d)
		}
	}
}

// A trajectory's extra holds run.start's confinement as it is: its JSON is
// the map's, keys in order.
func TestConfinementMarshalsAsItsMap(t *testing.T) {
	c := Confinement{Reads: "r", Writes: "w", Processes: "p", Network: "n"}
	got, _ := json.Marshal(c)
	want, _ := json.Marshal(Map(RunStart{Confinement: c})["confinement"])
	if string(got) != string(want) {
		t.Errorf("Confinement marshals as %s, its map as %s", got, want)
	}
}
