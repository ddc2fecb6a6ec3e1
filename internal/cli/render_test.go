package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/store"
)

// On a terminal the status line and the lines above it show the model's and
// the tools' control characters escaped; the only escapes written are the
// display's own (carriage return, erase line) (issue 8 item 5).
func TestTheTerminalDisplayEscapesControlCharacters(t *testing.T) {
	var buf bytes.Buffer
	r := &renderer{w: &buf, tty: true, start0: time.Now()}
	evil := "\x1b]0;PWNED\x07\x1b[2J\u009b1m\r\u202e"
	for _, ev := range []store.Event{
		{Type: "model.request"},
		{Type: "model.reply", Data: map[string]any{"text": "look " + evil}},
		{Type: "tool.call", Data: map[string]any{"name": "shell-exec", "arguments": map[string]any{"command": "echo " + evil}}},
		{Type: "tool.decision", Data: map[string]any{"name": "shell-exec", "allowed": false, "decision": "refuse", "checker": "x", "reason": evil}},
		{Type: "tool.result", Data: map[string]any{"name": "shell-exec", "error": true, "output": evil}},
		{Type: "note", Data: map[string]any{"text": evil}},
		{Type: "error", Data: map[string]any{"text": evil}},
	} {
		r.event(ev)
		if ev.Type == "tool.call" {
			r.draw() // the ticker's redraw
		}
	}
	out := strings.ReplaceAll(buf.String(), "\r\x1b[K", "")
	if strings.ContainsAny(out, "\x1b\x07\r\u009b\u202e") {
		t.Fatalf("raw control characters reach the terminal: %q", out)
	}
	if !strings.Contains(out, `running shell-exec: echo \x1b]0;PWNED\a`) {
		t.Errorf("the status line does not show the call escaped: %q", out)
	}
}
