package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/scheme"
)

// The console (nodwyn chat): one session, many messages. Where Run gives
// the model one task and returns when the loop ends, a console calls
// Continue once for each message the person types, on the same
// conversation, guard, scratch directory and log, and End when the person
// leaves. The session's events are those of a run: one run.start (at the
// first message, which is the session's instruction), the turns, and one
// run.end (at End).

// consoleState is what a console session keeps between its turns.
type consoleState struct {
	begun bool      // run.start has been emitted (the first Continue)
	began time.Time // when: the console's run starts at its first message, not at the prompt
	// refused says why the last (replace-messages! …) replaced nothing
	// (compact.go): Compact tells the person.
	refused string
}

// ErrNoCompaction is what Compact returns when no procedure is bound to
// compact-now! in the session's Scheme.
var ErrNoCompaction = errors.New("compaction is not available in this build")

// Continue gives the model text, the person's next message, and runs the
// loop on the conversation so far until the turn ends: the first message
// through (run-session text), as Run does, each later one through
// (continue-session text) (runtime/loop.scm), under the run's budgets and
// deadline. Cancelling ctx interrupts the turn only: its calls left
// unanswered are answered as a resumed run answers them, the model is told
// (person-interrupted-message, prompts/messages.scm), and the session can
// go on with the next Continue.
func (s *Session) Continue(ctx context.Context, text string) Outcome {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !s.deadline.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadlineCause(ctx, s.deadline, ErrDeadline)
		defer stop()
	}
	s.cancel = cancel
	s.asking.setTurn(ctx) // the proxy's questions are asked while it runs
	profile := s.profileName()
	proc := "continue-session"
	if !s.console.begun {
		s.console.begun, s.console.began, proc = true, time.Now(), "run-session"
		if s.opts.ResumeID == "" {
			s.opts.Instruction = text // (instruction), run.start and the saved state's task
		}
		s.emit(s.runStart(profile, text))
		for _, n := range s.seamNotes {
			s.Note(n)
		}
	}
	s.saveState("running", profile)
	s.outcome = nil // the last turn's finish! is not this one's
	var err error
	if s.storeErr == nil {
		_, err = s.interp.CallByName(ctx, proc, scheme.NewString(text))
	}
	out := s.outcomeOf(ctx, err)
	if out.Status == "interrupted" {
		s.turnInterrupted(ctx)
	}
	s.saveState(out.Status, profile)
	if s.storeErr != nil {
		out = s.storageOutcome()
	}
	return out
}

// StorageFailed is the error a session ends with when its log or state
// could not be written: it wraps ErrStorage and the write's error (a full
// disk's syscall.ENOSPC). What was written before stays whole (a log line
// is one write, a state file is renamed into place), so the session can be
// resumed by ID once Dir can be written again.
type StorageFailed struct {
	ID  string
	Dir string // the data directory
	Err error
}

func (e *StorageFailed) Error() string { return e.Err.Error() }
func (e *StorageFailed) Unwrap() error { return e.Err }

// Advice says what to do, with the command that continues the session
// ("nodwyn run" or "nodwyn chat").
func (e *StorageFailed) Advice(command string) string {
	return fmt.Sprintf("the session is saved up to its last complete step: once %s can be written again (free space on its disk), continue it with: %s --resume %s",
		e.Dir, command, e.ID)
}

// storageOutcome is how a session ends whose log or state could not be
// written.
func (s *Session) storageOutcome() Outcome {
	err := &StorageFailed{ID: s.ID, Dir: s.opts.Dirs.Data, Err: s.storeErr}
	if s.opts.Store != nil {
		err.Dir = s.opts.Store.Root
	}
	return Outcome{Status: "failed", Text: s.storeErr.Error(), Err: err}
}

// turnInterrupted leaves the conversation well formed and saying so after
// an interrupted turn: the calls of the last reply that were not answered
// are answered (a call stopped while it ran was, by callTool), then a user
// message tells the model the person interrupted it.
func (s *Session) turnInterrupted(ctx context.Context) {
	// ctx is cancelled: what Scheme says here gets a few seconds of its own.
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	s.closeInterrupted(sctx)
	s.addUser(s.say(sctx, "person-interrupted-message", "[the person interrupted you]"))
}

// closeInterrupted answers the calls of the conversation's last reply that
// have no result in it, from what the session's log says of each: one
// whose tool.result is there ran before the session stopped (that
// result); one the log shows allowed and started but with no result was
// still running when the process ended (killed, or the machine stopped):
// the model is told so, with how long it had run at least, and the log
// gets its tool.result; the others did not run. A resumed session calls
// it once its Scheme is loaded (New), and a console turn the person
// interrupted.
func (s *Session) closeInterrupted(ctx context.Context) {
	var evs []store.Event
	if s.opts.Store != nil && !s.opts.Dry {
		evs, _, _ = store.ReadLogSkipping(s.opts.Store.LogPath(s.ID))
	}
	// The events of the log's last reply: its calls, decisions and results.
	var last time.Time
	called, allowed := map[string]time.Time{}, map[string]bool{} // by call id: when its tool.call was logged
	var results []event.ToolResult
	for _, ev := range evs {
		last = ev.Time
		var d event.Data
		switch ev.Type {
		case "model.reply":
			called, allowed, results = map[string]time.Time{}, map[string]bool{}, nil
		case "tool.call", "tool.decision", "tool.result":
			d, _ = event.Decode(ev.Type, ev.Data) // a field of another type is left zero
		}
		switch e := d.(type) {
		case event.ToolCall:
			if e.ID != "" {
				called[e.ID] = ev.Time
			}
		case event.ToolDecision:
			if e.Allowed && e.ID != "" {
				allowed[e.ID] = true
			}
		case event.ToolResult:
			results = append(results, e)
		}
	}
	m := s.messages
	i := len(m) - 1
	for i >= 0 && (m[i].Role != provider.RoleAssistant || len(m[i].ToolCalls) == 0) {
		i--
	}
	if i < 0 {
		return
	}
	answered := map[string]bool{}
	for _, later := range m[i+1:] {
		if later.Role == provider.RoleTool {
			answered[later.ToolCallID] = true
		}
	}
	used := make([]bool, len(results))
	resultOf := func(tc provider.ToolCall) (event.ToolResult, bool) {
		for j, r := range results { // by id; a log of before ids, by name in order
			if !used[j] && (r.ID == tc.ID || (r.ID == "" && r.Name == tc.Name)) {
				used[j] = true
				return r, true
			}
		}
		return event.ToolResult{}, false
	}
	for _, tc := range m[i].ToolCalls {
		if answered[tc.ID] {
			resultOf(tc) // its result is the one the conversation has
			continue
		}
		if r, ok := resultOf(tc); ok {
			text := r.Output
			if r.Stopped == "" { // a stopped call's result says so itself
				text = s.say(ctx, "interrupted-call-result", defaultDangling.ran(r.Output), scheme.NewString(r.Output))
			}
			m = append(m, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: text, IsError: r.Error})
			continue
		}
		text := s.say(ctx, "interrupted-call-not-run", defaultDangling.notRun)
		at, logged := called[tc.ID]
		stopped := stoppedNotRun
		var ran time.Duration
		if logged && allowed[tc.ID] {
			ran, stopped = max(0, last.Sub(at)), stoppedSessionEnded
			text = s.say(ctx, "interrupted-call-stopped", unfinishedText(tc.Name, seconds(ran)),
				scheme.NewString(tc.Name), scheme.NewString(seconds(ran)))
		}
		if logged { // the log has its call: it gets its result too
			s.emit(s.toolResult(tc.ID, tc.Name, true, -1, text, nil, ran.Milliseconds(), stopped))
		}
		m = append(m, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: text, IsError: true})
	}
	s.messages = m
}

// tool.result's stopped for a call closeInterrupted answers: one the log
// shows called but not allowed (the session ended before it ran), and one
// allowed with no result (it was running when the session's process
// ended). docs/events.md names them (TestStoppedValuesAreDocumented).
const (
	stoppedNotRun       = "not-run"
	stoppedSessionEnded = "session-ended"
)

// unfinishedText is what the model reads of a call that was running when
// the session's process ended (interrupted-call-stopped in
// prompts/messages.scm may say it otherwise).
func unfinishedText(name, ran string) string {
	return fmt.Sprintf("stopped: this %s call started and had run for at least %s when the session ended while it ran "+
		"(its process was stopped or killed); what it printed was not kept. Check what it did before you run it again", name, ran)
}

// End ends a console session: the run.end event with the totals and last,
// the last turn's outcome, and the saved state. A console that never got a
// message has nothing to end.
func (s *Session) End(last Outcome) Outcome {
	if !s.console.begun {
		return last
	}
	// As Run's run.end (TestConsoleEventsAreARunsEvents holds them equal).
	s.emit(s.runEnd(last, s.console.began))
	s.saveState(last.Status, s.profileName())
	if s.storeErr != nil {
		last = s.storageOutcome()
	}
	return last
}

// Begun reports whether the console session has had its first message.
func (s *Session) Begun() bool { return s.console.begun }

// steer gives the model what the person typed while it worked
// (Options.Steer): each text a user message, with a note saying so, added
// before the request modelTurn is about to send.
func (s *Session) steer() {
	if s.opts.Steer == nil {
		return
	}
	for _, text := range s.opts.Steer() {
		if strings.TrimSpace(text) == "" {
			continue
		}
		s.Note("steering: a message the person typed while the model worked is given to it before this request")
		s.addUser(text)
	}
}

// Totals are what a session has used so far.
type Totals struct {
	Usage     provider.Usage // tokens, summed over the replies
	ToolCalls int
}

// Totals returns the tokens and tool calls used so far (a resumed
// session's tool calls include the earlier runs').
func (s *Session) Totals() Totals { return Totals{Usage: s.usage, ToolCalls: s.toolCalls} }

// Compact calls (compact-now!) as the init chain defines it
// (runtime/compact.scm), under ctx and the run's deadline. compacted is
// false when it returned #f (nothing to compact), or when the summary it
// made was not smaller than what it would replace (text then says so:
// the conversation is as it was); text is what it returned when that was
// a string. ErrNoCompaction when compact-now! is not a procedure.
func (s *Session) Compact(ctx context.Context) (compacted bool, text string, err error) {
	proc, ok := s.interp.Lookup("compact-now!")
	if !ok || !scheme.IsProcedure(proc) {
		return false, "", ErrNoCompaction
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !s.deadline.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadlineCause(ctx, s.deadline, ErrDeadline)
		defer stop()
	}
	s.cancel = cancel
	s.console.refused = ""
	v, err := s.interp.Call(ctx, proc)
	if why := s.console.refused; err == nil && why != "" {
		s.console.refused = ""
		return false, "not compacted: " + why, nil
	}
	if s.console.begun && s.state != nil {
		s.saveState(s.state.Status, s.profileName()) // what the model now sees
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, "", context.Cause(ctx)
		}
		return false, "", err
	}
	switch x := v.(type) {
	case bool:
		return x, "", nil
	case *scheme.String:
		return true, x.S, nil
	}
	return true, "", nil
}

// Tell adds text to the conversation as a user message between turns (the
// console says so when the person restores a file with /undo).
func (s *Session) Tell(text string) { s.addUser(text) }
