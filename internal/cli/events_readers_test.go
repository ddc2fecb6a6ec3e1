package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/store"
)

// throughJSON is an event as a reader gets it from a log or the daemon:
// its numbers float64, its lists []any.
func throughJSON(t *testing.T, ev store.Event) store.Event {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var out store.Event
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The console prints a reply without tool calls whole, once, whether the
// event was built in this process or came through JSON; a reply with calls,
// or with no text, it leaves to the display, and --json prints none.
func TestTheConsolePrintsAnswersOnly(t *testing.T) {
	reply := func(d event.ModelReply) store.Event { return store.Event{Type: d.Type(), Data: event.Map(d)} }
	withCall := reply(event.ModelReply{Text: "Looking.", ToolCalls: []event.ReplyCall{{ID: "a", Name: "shell-exec", Arguments: map[string]any{"command": "ls"}}}})
	for _, c := range []struct {
		name string
		ev   store.Event
		json bool
		want string
	}{
		{"an answer", reply(event.ModelReply{Text: "Done.\n", StopReason: "stop"}), false, "Done.\n"},
		{"with a call", withCall, false, ""},
		{"with a call, through JSON", throughJSON(t, withCall), false, ""},
		{"blank", reply(event.ModelReply{Text: " \n"}), false, ""},
		{"--json", reply(event.ModelReply{Text: "Done."}), true, ""},
		{"another type", store.Event{Type: "message", Data: event.Map(event.Message{Role: "user", Text: "hi"})}, false, ""},
	} {
		var out, display bytes.Buffer
		k := &console{r: &RunCmd{JSON: c.json}, out: &out, rend: &renderer{w: &display}}
		k.answers(c.ev)
		if out.String() != c.want || k.lastAnswer != c.want {
			t.Errorf("%s: printed %q, last answer %q; want %q", c.name, out.String(), k.lastAnswer, c.want)
		}
		if j := throughJSON(t, c.ev); c.want != "" {
			out.Reset()
			k.answers(j)
			if out.String() != c.want {
				t.Errorf("%s through JSON: printed %q, want %q", c.name, out.String(), c.want)
			}
		}
	}
}

// 'nodwyn journal verify' compares the journal with the highest
// journal_seq its session's log records.
func TestLoggedJournalSeqIsTheLogsHighest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if got := loggedJournalSeq(path); got != 0 {
		t.Errorf("no log: %d, want 0", got)
	}
	l, err := store.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []event.Data{
		event.SelfValidation{Tool: "run-tests", JournalSeq: 3},
		event.SelfValidation{Tool: "run-tests", JournalSeq: 7},
		event.SelfValidation{Tool: "self-check", JournalError: "disk full"}, // no entry: 0
		event.Note{Text: "journal_seq 99"},
	} {
		if err := l.Write(&store.Event{Type: d.Type(), Data: event.Map(d)}); err != nil {
			t.Fatal(err)
		}
	}
	// A line of another JSON type for journal_seq (a hand edit) counts as none.
	l.Write(&store.Event{Type: "self_validation", Data: map[string]any{"journal_seq": "12"}})
	l.Close()
	if got := loggedJournalSeq(path); got != 7 {
		t.Errorf("loggedJournalSeq = %d, want 7", got)
	}
	if err := os.WriteFile(path, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := loggedJournalSeq(path); got != 0 {
		t.Errorf("a log of no events: %d, want 0", got)
	}
}
