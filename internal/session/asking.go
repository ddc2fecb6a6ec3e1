package session

import (
	"context"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
)

// A person is asked one question at a time. Questions come from the loop
// (a tool call's confirm) and from the egress proxy's connections, several
// at once (egress_confirm.go); the console, a terminal and the daemon's
// clients each show one, so the session lets the next one through only
// when the last is answered or given up.

// asking is the session's line of questions to the person, and the turn
// the proxy's questions are asked in.
type asking struct {
	once sync.Once
	line chan struct{} // holds a token while a question is out

	mu   sync.Mutex
	turn context.Context // the running turn's (Run, Continue); done between turns
	wait time.Duration   // how long a connection waits for an answer; 0: netConfirmWait
}

func (a *asking) init() { a.once.Do(func() { a.line = make(chan struct{}, 1) }) }

// setTurn records the context of the turn that starts (Run, Continue):
// the proxy's questions are asked while it runs, and end with it.
func (a *asking) setTurn(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.turn = ctx
}

// running is the running turn's context, or nil between turns.
func (a *asking) running() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.turn == nil || a.turn.Err() != nil {
		return nil
	}
	return a.turn
}

// answer is a person's answer, as a Confirm or ConfirmNote callback gave
// it; unanswered is what ConfirmUnanswered said.
type answer struct {
	yes, always      bool
	note, unanswered string
}

// ask puts a question to the person through Options.ConfirmNote or
// Confirm, once no other question is out; false when there is no one to
// ask. It gives up (no) when ctx ends first, while it waits its turn too.
func (s *Session) ask(ctx context.Context, req guard.Request, d guard.Decision) (answer, bool) {
	if s.opts.ConfirmNote == nil && s.opts.Confirm == nil {
		return answer{}, false
	}
	s.asking.init()
	select {
	case s.asking.line <- struct{}{}:
	case <-ctx.Done():
		return answer{}, true
	}
	defer func() { <-s.asking.line }()
	var a answer
	actx := context.WithValue(ctx, unansweredKey{}, &a.unanswered) // ConfirmUnanswered
	if s.opts.ConfirmNote != nil {
		a.yes, a.always, a.note = s.opts.ConfirmNote(actx, req, d)
	} else {
		a.yes, a.always = s.opts.Confirm(actx, req, d)
	}
	return a, true
}
