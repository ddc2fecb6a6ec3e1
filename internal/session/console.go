package session

import (
	"context"
	"errors"
	"strings"
	"time"

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
	begun bool // run.start has been emitted (the first Continue)
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
	profile := s.profileName()
	proc := "continue-session"
	if !s.console.begun {
		s.console.begun, proc = true, "run-session"
		if s.opts.ResumeID == "" {
			s.opts.Instruction = text // (instruction), run.start and the saved state's task
		}
		s.emit("run.start", map[string]any{
			"session": s.ID, "folder": s.opts.Folder, "profile": profile,
			"sandbox": s.opts.Sandbox, "unattended": s.opts.Unattended, "yolo": s.opts.Yolo,
			"model": s.opts.ModelName, "resumed": s.opts.ResumeID != "", "scratch": s.scratch,
			"instruction":  s.redact(text),
			"exec":         s.tools.Sandbox().Capabilities().String(),
			"kernel_floor": s.floorLine,
		})
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
	if s.storeErr != nil && out.Status != "failed" {
		out = Outcome{Status: "failed", Text: s.storeErr.Error(), Err: s.storeErr}
	}
	return out
}

// turnInterrupted leaves the conversation well formed and saying so after
// an interrupted turn: the calls of the last reply that were not answered
// are answered (with their result when they ran), then a user message
// tells the model the person interrupted it.
func (s *Session) turnInterrupted(ctx context.Context) {
	// ctx is cancelled: what Scheme says here gets a few seconds of its own.
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	var ran []store.Event
	if s.opts.Store != nil && !s.opts.Dry {
		ran = ranResults(s.opts.Store.LogPath(s.ID))
	}
	closeDanglingWith(&s.messages, ran, danglingAnswers{
		ran: func(out string) string {
			return s.say(sctx, "interrupted-call-result", defaultDangling.ran(out), scheme.NewString(out))
		},
		notRun: s.say(sctx, "interrupted-call-not-run", defaultDangling.notRun),
	})
	s.addUser(s.say(sctx, "person-interrupted-message", "[the person interrupted you]"))
}

// End ends a console session: the run.end event with the totals and last,
// the last turn's outcome, and the saved state. A console that never got a
// message has nothing to end.
func (s *Session) End(last Outcome) Outcome {
	if !s.console.begun {
		return last
	}
	// As Run's run.end (TestConsoleEventsAreARunsEvents holds them equal).
	s.emit("run.end", s.usageData(s.usage, map[string]any{
		"status": last.Status, "text": s.redact(last.Text), "tool_call_count": s.toolCalls,
		"requests": s.requests, "elapsed_ms": time.Since(s.started).Milliseconds(),
	}))
	s.saveState(last.Status, s.profileName())
	if s.storeErr != nil && last.Status != "failed" {
		last = Outcome{Status: "failed", Text: s.storeErr.Error(), Err: s.storeErr}
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
// false when it returned #f (nothing to compact); text is what it returned
// when that was a string. ErrNoCompaction when compact-now! is not a
// procedure.
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
	v, err := s.interp.Call(ctx, proc)
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
