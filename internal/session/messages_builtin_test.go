package session

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

// The built-in text of a message the session says (say's fallback, said
// when the message fails or is no string) is what prompts/messages.scm
// says: the same runs, once with messages.scm's definitions and once with
// each of them bound to a number (so the built-in text is said, and a
// note says so), give the model the same words. Not covered here:
// interrupted-call-result, interrupted-call-stopped, stopped-call-result
// and person-interrupted-message.
func TestTheBuiltInMessagesAreMessagesScms(t *testing.T) {
	const builtin = `
(define refusal-message 0)
(define not-approved-message 0)
(define no-such-tool-message 0)
(define bad-arguments-message 0)
(define continue-message 0)
(define interrupted-call-not-run 0)
`
	// Calls that do not run: refused, no such tool, not approved, bad JSON.
	calls := func(init string) ([]string, int) {
		opts := baseOpts(t)
		key := plantCanary(t)
		if init != "" {
			writeInit(t, &opts, init)
		}
		r := runSession(t, opts, `
> reply
call fs-read {"path": "`+key+`"}
> reply
call fs-delete {"path": "a"}
> reply
call shell-exec {"command": "curl https://example.com"}
> reply
rawcall fs-write {"path": "a.txt", "content": "unterminated
> reply
done
`)
		reqs := r.model.Requests()
		if len(reqs) != 5 {
			t.Fatalf("%d requests: %s", len(reqs), r.out.Text)
		}
		home := filepath.Dir(filepath.Dir(key)) // each run's own
		var read []string
		for _, req := range reqs[1:] {
			read = append(read, strings.ReplaceAll(lastMessage(req).Content, home, "HOME"))
		}
		return read, len(r.notes("prompts: "))
	}
	// A resumed run: its task, and the answer to a call left unanswered.
	resumed := func(init string) ([]string, int) {
		opts := baseOpts(t)
		if init != "" {
			writeInit(t, &opts, init)
		}
		msgs, _ := json.Marshal([]provider.Message{
			{Role: provider.RoleUser, Content: "the task"},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "shell-exec", Arguments: `{"command": "true"}`}}},
		})
		id := store.NewSessionID()
		if err := opts.Store.SaveState(&store.SessionState{ID: id, Folder: opts.Folder, Instruction: "the task", Status: "interrupted", Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		opts.ResumeID, opts.Instruction = id, ""
		r := runSession(t, opts, "> reply\ndone\n")
		return contents(r.model.Requests()[0].Messages), len(r.notes("prompts: "))
	}
	for name, run := range map[string]func(string) ([]string, int){"calls that do not run": calls, "a resumed run": resumed} {
		scm, scmNotes := run("")
		goText, goNotes := run(builtin)
		if !slices.Equal(scm, goText) {
			t.Errorf("%s: prompts/messages.scm says\n%q\nthe built-in texts say\n%q", name, scm, goText)
		}
		if scmNotes != 0 || goNotes == 0 {
			t.Errorf("%s: %d notes of built-in text with messages.scm, %d without: the built-in text was not what was said", name, scmNotes, goNotes)
		}
	}
}
