package session

import (
	"encoding/json"
	"testing"

	"github.com/nodwyn/nodwyn/internal/provider"
)

// messagesJSON gives what json.Marshal gives for the whole conversation, through
// every way the session changes its messages: appended, a result folded in
// place, a call's arguments or a reasoning item changed in place, the
// conversation compacted (fewer, different messages), a nil and an empty
// list of calls.
func TestMsgJSONIsTheConversationsJSON(t *testing.T) {
	var c provider.MessageJSON
	check := func(step string, msgs []provider.Message) {
		t.Helper()
		want, _ := json.Marshal(msgs)
		got, err := messagesJSON(&c, msgs)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", step, got, want)
		}
	}
	var msgs []provider.Message
	check("none", msgs)
	msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: "do <it> & more"})
	check("the task", msgs)
	msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "1", Name: "fs-read", Arguments: `{"path":"a"}`}},
		Reasoning: []json.RawMessage{json.RawMessage(`{"type":"reasoning","id":"r"}`)}})
	check("a call", msgs)
	msgs = append(msgs, provider.Message{Role: provider.RoleTool, ToolCallID: "1", Name: "fs-read", Content: "long result"})
	check("its result", msgs)
	check("unchanged", msgs)
	first, _ := messagesJSON(&c, msgs)
	again, _ := messagesJSON(&c, msgs)
	if &first[0] == &again[0] {
		t.Error("two calls gave the same bytes, which the state writer keeps")
	}
	msgs[2].Content = "folded"
	check("a result folded in place", msgs)
	msgs[1].ToolCalls[0].Arguments = `{"path":"b"}`
	check("arguments changed in place", msgs)
	msgs[1].Reasoning[0][len(msgs[1].Reasoning[0])-3] = 's'
	check("a reasoning item changed in place", msgs)
	msgs[1].ToolCalls = []provider.ToolCall{}
	check("an empty list of calls", msgs)
	msgs[1].ToolCalls = nil
	check("no list of calls", msgs)
	msgs = append(msgs[:0:0], provider.Message{Role: provider.RoleUser, Content: "summary"}, msgs[2])
	check("compacted", msgs)
	msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, Content: "done", IsError: true})
	check("appended after compaction", msgs)
	check("empty", []provider.Message{})
}
