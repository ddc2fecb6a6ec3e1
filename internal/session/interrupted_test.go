package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

// waitFile waits for path to exist (a command got that far).
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// continueInterrupted sends the console session msg and interrupts the
// turn, as Ctrl-C does, once the folder's file "started" exists (the
// command the turn runs has begun); the turn's outcome.
func continueInterrupted(c *consoleRun, folder, msg string) Outcome {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(folder, "started")); err == nil {
				cancel(ErrInterrupted)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return c.s.Continue(ctx, msg)
}

// logEvents reads the session's log as it is on disk.
func logEvents(t *testing.T, s *Session) []store.Event {
	t.Helper()
	evs, err := store.ReadLog(s.opts.Store.LogPath(s.ID))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func resultsOf(evs []store.Event, id string) []store.Event {
	var out []store.Event
	for _, ev := range evs {
		if ev.Type == "tool.result" && ev.Data["id"] == id {
			out = append(out, ev)
		}
	}
	return out
}

// A command the person stops with Ctrl-C in the console ran: the model is
// told it ran and was stopped by the person, with what it printed, and the
// log has the call's tool.result (issue 29, item 5).
func TestACommandStoppedByCtrlCIsToldAsStopped(t *testing.T) {
	opts := baseOpts(t)
	c := newConsole(t, opts, `
> reply
call shell-exec {"command": "echo partial-output; touch started; sleep 30"}
> reply if message contains go on
Going on.
`)
	if out := continueInterrupted(c, opts.Folder, "wait"); out.Status != "interrupted" {
		t.Fatalf("status %q, want interrupted", out.Status)
	}
	if out := c.s.Continue(context.Background(), "go on"); out.Text != "Going on." {
		t.Fatalf("after the interruption: %+v", out)
	}
	msgs := c.model.Requests()[1].Messages
	var res *provider.Message
	for i := range msgs {
		if msgs[i].Role == provider.RoleTool {
			res = &msgs[i]
		}
	}
	if res == nil {
		t.Fatalf("no result in %q", contents(msgs))
	}
	for _, want := range []string{"stopped", "ran for", "the person interrupted", "partial-output"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("the model read %q, which lacks %q", res.Content, want)
		}
	}
	if strings.Contains(res.Content, "not run") {
		t.Errorf("the model was told the call did not run: %q", res.Content)
	}
	rs := resultsOf(logEvents(t, c.s), res.ToolCallID)
	if len(rs) != 1 || rs[0].Data["stopped"] != "person" || !strings.Contains(rs[0].Data["output"].(string), "partial-output") {
		t.Errorf("the log's tool.result of the stopped call: %+v", rs)
	}
}

// A resumed session whose log shows a call that started and has no result
// (its process was killed while the command ran): the model is told the
// call ran and the session ended while it did, not that it never ran, and
// the log gets the call's tool.result; a call of the same reply that never
// started is not run.
func TestACallRunningWhenTheSessionDiedIsToldAsStopped(t *testing.T) {
	c := newConsole(t, baseOpts(t), "> reply\nDone.\n")
	s := c.s
	// What the killed process had logged: the reply, the first call and
	// its decision, and no more.
	killedMidReply(s, []string{"sleep 60", "true"}, 1, nil)
	s.closeInterrupted(context.Background())

	if len(s.messages) != 4 {
		t.Fatalf("%d messages, want 4: %q", len(s.messages), contents(s.messages))
	}
	first, second := s.messages[2], s.messages[3]
	if first.ToolCallID != "c1" || !strings.Contains(first.Content, "had run for at least") || strings.Contains(first.Content, "not run") {
		t.Errorf("the call that was running: %+v", first)
	}
	if second.ToolCallID != "c2" || !strings.Contains(second.Content, "not run") {
		t.Errorf("the call that never started: %+v", second)
	}
	rs := resultsOf(logEvents(t, s), "c1")
	if len(rs) != 1 || rs[0].Data["stopped"] != "session-ended" || rs[0].Data["output"] != first.Content {
		t.Errorf("the log's tool.result of the call that was running: %+v", rs)
	}
	if rs := resultsOf(logEvents(t, s), "c2"); len(rs) != 0 {
		t.Errorf("a tool.result for a call the log never had: %+v", rs)
	}
}

// A confirm no one answered (the end of a piped console's input) is
// logged and told as that, not as a person's no; a confirm still waiting
// when the person interrupts the turn, likewise (issue 29, item 6).
func TestAConfirmNoOneAnsweredIsNotAPersonsNo(t *testing.T) {
	opts := baseOpts(t)
	opts.Unattended = false
	opts.ConfirmNote = func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool, string) {
		ConfirmUnanswered(ctx, "no answer (end of input)")
		return false, false, ""
	}
	r := runSession(t, opts, `
> reply
call shell-exec {"command": "rm -rf build"}
> reply
done
`)
	var dec store.Event
	for _, ev := range r.events {
		if ev.Type == "tool.decision" {
			dec = ev
		}
	}
	if dec.Data["answer"] != "declined: no answer (end of input)" {
		t.Errorf("the decision's answer is %q", dec.Data["answer"])
	}
	read := lastMessage(r.model.Requests()[1]).Content
	if !strings.Contains(read, "no answer (end of input)") || strings.Contains(read, "by a person") {
		t.Errorf("the model read %q", read)
	}

	// Interrupted while it asks.
	opts = baseOpts(t)
	opts.Unattended = false
	asked := make(chan struct{})
	opts.ConfirmNote = func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool, string) {
		close(asked)
		<-ctx.Done()
		return false, false, ""
	}
	c := newConsole(t, opts, "> reply\ncall shell-exec {\"command\": \"rm -rf build\"}\n")
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { <-asked; cancel(ErrInterrupted) }()
	c.s.Continue(ctx, "clean up")
	var answers []any
	for _, ev := range c.of("tool.decision") {
		answers = append(answers, ev.Data["answer"])
	}
	if len(answers) != 1 || !strings.Contains(answers[0].(string), "no answer (the person interrupted the session") {
		t.Errorf("the decisions' answers: %q", answers)
	}
}

// A file a tool created is recorded as absent before it, so restoring
// that version removes it; a file it changed is kept as before
// (issue 29, item 10).
func TestUndoRemovesAFileTheModelCreated(t *testing.T) {
	opts := baseOpts(t)
	if err := os.WriteFile(filepath.Join(opts.Folder, "old.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runSession(t, opts, `
> reply
call fs-write {"path": "new.txt", "content": "made by the model\n"}
> reply
call fs-write {"path": "old.txt", "content": "changed\n"}
> reply
done
`)
	if r.out.Status != "finished" {
		t.Fatalf("%+v", r.out)
	}
	vs, err := opts.Store.Versions("")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]store.Version{}
	for _, v := range vs {
		if v.Session == r.s.ID {
			byName[filepath.Base(v.Path)] = v
		}
	}
	created, ok := byName["new.txt"]
	if !ok || !created.Absent {
		t.Fatalf("the created file's version: %+v (all: %+v)", created, vs)
	}
	if old, ok := byName["old.txt"]; !ok || old.Absent || old.Size != 4 {
		t.Errorf("the changed file's version: %+v", old)
	}
	if err := opts.Store.Restore(created); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(opts.Folder, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt is still there after its undo (%v)", err)
	}
}

// A console's run starts at its first message: run.end's elapsed time does
// not count the time the person spent at the prompt before it.
func TestAConsolesClockStartsAtTheFirstMessage(t *testing.T) {
	c := newConsole(t, baseOpts(t), "> reply\nDone.\n")
	c.s.started = c.s.started.Add(-time.Hour) // an hour at the prompt
	c.s.Continue(context.Background(), "the task")
	c.s.End(Outcome{Status: "finished"})
	ends := c.of("run.end")
	if len(ends) != 1 {
		t.Fatalf("%d run.end events", len(ends))
	}
	if ms, _ := ends[0].Data["elapsed_ms"].(int64); ms >= time.Hour.Milliseconds() {
		t.Errorf("run.end says %d ms: the time at the prompt is counted", ms)
	}
}

// /compact on a short conversation: the summary would be larger than what
// it replaces, so nothing is replaced and Compact says why; on a long one
// it compacts (issue 29, item 10).
func TestCompactRefusesASummaryThatIsNotSmaller(t *testing.T) {
	for _, tc := range []struct {
		name          string
		message       string
		summary       string
		wantCompacted bool
	}{
		{"short", "ok", strings.Repeat("a long summary of very little. ", 40), false},
		{"long", strings.Repeat("a long message with much in it. ", 200), "Short summary.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConsole(t, baseOpts(t), "> reply\nDone.\n> reply\n"+tc.summary+"\n")
			c.s.Continue(context.Background(), "the task")
			msgs := []provider.Message{{Role: provider.RoleUser, Content: "the task"}}
			for i := 0; i < 12; i++ {
				msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: tc.message},
					provider.Message{Role: provider.RoleAssistant, Content: tc.message})
			}
			c.s.messages = msgs
			compacted, text, err := c.s.Compact(context.Background())
			if err != nil || compacted != tc.wantCompacted {
				t.Fatalf("Compact: (%v, %q, %v), want compacted %v", compacted, text, err, tc.wantCompacted)
			}
			if len(c.model.Requests()) != 2 {
				t.Fatalf("%d requests: the summary was not asked for", len(c.model.Requests()))
			}
			if !tc.wantCompacted {
				if !strings.Contains(text, "not smaller") || len(c.s.messages) != len(msgs) || len(c.of("compaction")) != 0 {
					t.Errorf("text %q; %d messages (had %d); %d compaction events", text, len(c.s.messages), len(msgs), len(c.of("compaction")))
				}
			} else if len(c.s.messages) >= len(msgs) || len(c.of("compaction")) != 1 {
				t.Errorf("%d messages after compacting %d", len(c.s.messages), len(msgs))
			}
		})
	}
}

// killedMidReply makes s's conversation the task and one reply whose
// shell-exec calls c1, c2 … run commands, and logs what a process killed
// during that reply had logged: the reply, and for each of the first
// started calls its call and allowing decision, and its result where
// results has one (by id).
func killedMidReply(s *Session, commands []string, started int, results map[string]string) {
	var calls []provider.ToolCall
	var logged []event.ReplyCall
	for i, c := range commands {
		id := fmt.Sprintf("c%d", i+1)
		args, _ := json.Marshal(map[string]string{"command": c})
		calls = append(calls, provider.ToolCall{ID: id, Name: "shell-exec", Arguments: string(args)})
		logged = append(logged, event.ReplyCall{ID: id, Name: "shell-exec"})
	}
	s.messages = []provider.Message{{Role: provider.RoleUser, Content: "the task"}, {Role: provider.RoleAssistant, ToolCalls: calls}}
	s.emit(event.ModelReply{ToolCalls: logged})
	for i, c := range calls[:started] {
		s.emit(event.ToolCall{ID: c.ID, Name: c.Name, N: i + 1, Arguments: map[string]any{"command": commands[i]}})
		s.emit(event.ToolDecision{ID: c.ID, Name: c.Name, Allowed: true, Decision: "allow"})
		if out, ok := results[c.ID]; ok {
			s.emit(s.toolResult(c.ID, c.Name, false, 0, out, nil, 3, ""))
		}
	}
}
