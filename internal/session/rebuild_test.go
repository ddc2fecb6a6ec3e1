package session

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

// A session whose state.json is missing or corrupt is rebuilt from its
// events.jsonl: the same conversation, listed by ListSessions, and it
// resumes (issue 29, item 9).
func TestAStateLostIsRebuiltFromTheLog(t *testing.T) {
	for _, damage := range []string{"missing", "corrupt"} {
		t.Run(damage, func(t *testing.T) {
			opts := baseOpts(t)
			r := runSession(t, opts, `
> reply
Looking.
call shell-exec {"command": "echo one"}
call fs-write {"path": "a.txt", "content": "a\n"}
> reply
call shell-exec {"command": "exit 3"}
> reply
All done.
`)
			if r.out.Status != "finished" {
				t.Fatalf("%+v", r.out)
			}
			st := opts.Store
			saved, err := st.LoadState(r.s.ID)
			if err != nil {
				t.Fatal(err)
			}
			path := st.StatePath(r.s.ID)
			if damage == "missing" {
				err = os.Remove(path)
			} else {
				err = os.WriteFile(path, []byte(`{"id": "x", "messages": [{"Role": "us`), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.LoadState(r.s.ID)
			if err != nil {
				t.Fatalf("LoadState: %v", err)
			}
			if got.Rebuilt == "" || got.Instruction != saved.Instruction || got.Folder != saved.Folder || got.ToolCalls != saved.ToolCalls || got.Status != "finished" {
				t.Errorf("rebuilt: %+v\nsaved: %+v", got, saved)
			}
			if got.Usage["input_tokens"] != saved.Usage["input_tokens"] || got.Usage["output_tokens"] != saved.Usage["output_tokens"] {
				t.Errorf("usage rebuilt %v, saved %v", got.Usage, saved.Usage)
			}
			var want, have []provider.Message
			json.Unmarshal(saved.Messages, &want)
			json.Unmarshal(got.Messages, &have)
			if !slices.EqualFunc(want, have, sameMessage) {
				t.Errorf("rebuilt messages:\n%+v\nsaved:\n%+v", have, want)
			}
			list, err := st.ListSessions()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(list, func(s store.SessionState) bool { return s.ID == r.s.ID && s.Status == "finished" }) {
				t.Errorf("ListSessions does not list it: %+v", list)
			}

			opts.ResumeID, opts.Instruction = r.s.ID, ""
			again := runSession(t, opts, "> reply\nResumed.\n")
			if again.out.Text != "Resumed." {
				t.Fatalf("resume: %+v", again.out)
			}
			sent := again.model.Requests()[0].Messages
			if len(sent) != len(want)+1 || !slices.EqualFunc(want, sent[:len(want)], sameMessage) {
				t.Errorf("the resumed request: %q", contents(sent))
			}
		})
	}
}

func sameMessage(a, b provider.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || a.IsError != b.IsError || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := a.ToolCalls[i], b.ToolCalls[i]
		var ax, ay any
		json.Unmarshal([]byte(x.Arguments), &ax)
		json.Unmarshal([]byte(y.Arguments), &ay)
		if x.ID != y.ID || x.Name != y.Name || string(mustJSONAny(ax)) != string(mustJSONAny(ay)) {
			return false
		}
	}
	return true
}

func mustJSONAny(v any) []byte { b, _ := json.Marshal(v); return b }
