package session

import (
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

func TestCloseDanglingGivesTheResultOfACallThatRan(t *testing.T) {
	msgs := []provider.Message{
		{Role: provider.RoleUser, Content: "task"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "a", Name: "shell-exec"}, {ID: "b", Name: "fs-write"}}},
	}
	ran := []store.Event{{Type: "tool.result", Data: map[string]any{"name": "shell-exec", "output": "hello", "error": false}}}
	closeDangling(&msgs, ran)
	if len(msgs) != 4 {
		t.Fatalf("got %d messages, want 4", len(msgs))
	}
	if m := msgs[2]; m.ToolCallID != "a" || !strings.Contains(m.Content, "hello") || strings.Contains(m.Content, "not run") || m.IsError {
		t.Errorf("the call that ran: %+v", m)
	}
	if m := msgs[3]; m.ToolCallID != "b" || !strings.Contains(m.Content, "not run") {
		t.Errorf("the call that did not run: %+v", m)
	}
}
