package session

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

// console is a console session with a scripted model, and its events.
type consoleRun struct {
	s      *Session
	model  *provider.Script
	events []store.Event
}

func newConsole(t *testing.T, opts Options, model string) *consoleRun {
	t.Helper()
	c := &consoleRun{model: script(t, model)}
	opts.Model = c.model
	opts.Instruction = ""
	opts.Sinks = append(opts.Sinks, func(ev store.Event) { c.events = append(c.events, ev) })
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("session.New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	c.s = s
	return c
}

func (c *consoleRun) of(typ string) []store.Event {
	var out []store.Event
	for _, ev := range c.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// Two messages are one session: one conversation the second request
// carries whole, one run.start (with the first message as the task) and
// one run.end at End, with the totals of both turns.
func TestAConsoleSessionIsOneConversation(t *testing.T) {
	c := newConsole(t, baseOpts(t), `
> reply
call shell-exec {"command": "echo one"}
> reply
First answer.
> reply if message contains the second message
Second answer.
`)
	if out := c.s.Continue(context.Background(), "the first message"); out.Status != "finished" || out.Text != "First answer." {
		t.Fatalf("first turn: %+v", out)
	}
	if out := c.s.Continue(context.Background(), "the second message"); out.Status != "finished" || out.Text != "Second answer." {
		t.Fatalf("second turn: %+v", out)
	}
	out := c.s.End(Outcome{Status: "finished", Text: "Second answer."})
	if out.Status != "finished" {
		t.Fatalf("End: %+v", out)
	}
	reqs := c.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	got := contents(reqs[2].Messages)
	if len(got) != 5 || got[0] != "the first message" || got[3] != "First answer." || got[4] != "the second message" {
		t.Errorf("the second message's request is not the whole conversation: %q", got)
	}
	if n := len(c.of("run.start")); n != 1 {
		t.Errorf("%d run.start events, want 1", n)
	}
	if start := c.of("run.start"); len(start) > 0 && start[0].Data["instruction"] != "the first message" {
		t.Errorf("run.start's instruction is %q", start[0].Data["instruction"])
	}
	ends := c.of("run.end")
	if len(ends) != 1 || ends[0].Data["tool_call_count"] != 1 || ends[0].Data["input_tokens"] != c.s.Totals().Usage.InputTokens {
		t.Errorf("run.end: %+v (totals %+v)", ends, c.s.Totals())
	}
	st, err := c.s.opts.Store.LoadState(c.s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Instruction != "the first message" || st.Status != "finished" {
		t.Errorf("saved: task %q, status %q", st.Instruction, st.Status)
	}
}

// A console's run.start and run.end have the fields a run's have: Continue
// and End write them in place of Run (console.go), and must not drift.
func TestConsoleEventsAreARunsEvents(t *testing.T) {
	const model = "> reply\nDone.\n"
	r := runSession(t, baseOpts(t), model)
	c := newConsole(t, baseOpts(t), model)
	c.s.Continue(context.Background(), "the task")
	c.s.End(Outcome{Status: "finished"})
	for _, typ := range []string{"run.start", "run.end"} {
		var runs []store.Event
		for _, ev := range r.events {
			if ev.Type == typ {
				runs = append(runs, ev)
			}
		}
		cons := c.of(typ)
		if len(runs) != 1 || len(cons) != 1 {
			t.Fatalf("%s: %d in the run, %d in the console", typ, len(runs), len(cons))
		}
		want := slices.Sorted(maps.Keys(runs[0].Data))
		got := slices.Sorted(maps.Keys(cons[0].Data))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the console's fields %v, a run's %v", typ, got, want)
		}
	}
}

// What Steer returns is added before the next request, a user message
// each, with a note; the turn goes on with it.
func TestSteeringMessagesReachTheNextRequest(t *testing.T) {
	opts := baseOpts(t)
	asked := 0
	opts.Steer = func() []string {
		asked++
		if asked == 2 { // the request after the tool call's result
			return []string{"also look at b.txt", "  "}
		}
		return nil
	}
	c := newConsole(t, opts, `
> reply
call shell-exec {"command": "echo a"}
> reply if message contains also look at b.txt
Looked at b.txt too.
> else
the steering was missed
`)
	out := c.s.Continue(context.Background(), "look at a.txt")
	if out.Text != "Looked at b.txt too." {
		t.Fatalf("the turn ended with %q", out.Text)
	}
	reqs := c.model.Requests()
	last := lastMessage(reqs[1])
	if last.Role != provider.RoleUser || last.Content != "also look at b.txt" {
		t.Errorf("the second request ends with %+v", last)
	}
	if prev := reqs[1].Messages[len(reqs[1].Messages)-2]; prev.Role != provider.RoleTool {
		t.Errorf("the steering message is not after the call's result: %+v", prev)
	}
	var notes int
	for _, ev := range c.of("note") {
		if strings.HasPrefix(ev.Data["text"].(string), "steering:") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d steering notes, want 1 (an empty text is not given)", notes)
	}
}

// A turn interrupted while a command runs: the command stops, the turn
// ends "interrupted", the call is answered, the model is told, and the
// next message goes on in the same conversation.
func TestAnInterruptedTurnLeavesTheSessionGoingOn(t *testing.T) {
	opts := baseOpts(t)
	c := newConsole(t, opts, `
> reply
call shell-exec {"command": "touch started; sleep 30"}
> reply if message contains go on
Going on.
`)
	start := time.Now()
	out := continueInterrupted(c, opts.Folder, "wait")
	if out.Status != "interrupted" {
		t.Fatalf("status %q, want interrupted", out.Status)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the interruption took %s", d)
	}
	if out := c.s.Continue(context.Background(), "go on"); out.Status != "finished" || out.Text != "Going on." {
		t.Fatalf("after the interruption: %+v", out)
	}
	msgs := c.model.Requests()[1].Messages
	var roles, texts []string
	for _, m := range msgs {
		roles, texts = append(roles, string(m.Role)), append(texts, m.Content)
	}
	if want := []string{"user", "assistant", "tool", "user", "user"}; !slices.Equal(roles, want) {
		t.Fatalf("roles %v, want %v (%q)", roles, want, texts)
	}
	if !strings.Contains(texts[2], "interrupted") || texts[3] != "[the person interrupted you]" {
		t.Errorf("the interrupted call and the message after it: %q", texts[2:4])
	}
}

// Compact calls compact-now! as the init chain has it, and says when it
// is not a procedure.
func TestCompactCallsCompactNow(t *testing.T) {
	for _, tc := range []struct {
		init      string
		compacted bool
		text      string
		err       error
	}{
		{"(define compact-now! #f)", false, "", ErrNoCompaction},
		{"(define (compact-now!) #f)", false, "", nil},
		{"(define (compact-now!) #t)", true, "", nil},
		{"(define (compact-now!) (log-note \"ran\") \"summarized 3 messages\")", true, "summarized 3 messages", nil},
	} {
		opts := baseOpts(t)
		opts.UserInit = filepath.Join(t.TempDir(), "init.scm")
		os.WriteFile(opts.UserInit, []byte(tc.init), 0o644)
		c := newConsole(t, opts, "> reply\nDone.\n")
		c.s.Continue(context.Background(), "the task")
		compacted, text, err := c.s.Compact(context.Background())
		if compacted != tc.compacted || text != tc.text || !errors.Is(err, tc.err) {
			t.Errorf("%s: (%v, %q, %v), want (%v, %q, %v)", tc.init, compacted, text, err, tc.compacted, tc.text, tc.err)
		}
	}
}
