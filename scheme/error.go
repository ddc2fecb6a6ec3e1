package scheme

import (
	"errors"
	"fmt"
	"strings"
)

// Error is what Eval, Load, Call and Apply return when Scheme code fails: an
// uncaught raise (including errors from primitives), a syntax or read error,
// cancellation, an exhausted step budget or a too deep recursion. Inspect it
// with errors.As.
type Error struct {
	// Pos is where the error happened: the call of the failing procedure,
	// the form with bad syntax, or the bad token.
	Pos Pos
	// Msg is the message without the position, e.g. "car: not a pair: 5".
	Msg string
	// Value is the raised Scheme object (usually an *ErrorObject); nil for
	// aborts (cancellation, step budget, exit).
	Value Value
	// Stack lists the Scheme call stack, innermost first.
	Stack []Frame
	// Err is the cause of an abort: context.Canceled,
	// context.DeadlineExceeded, ErrStepLimit or an *ExitError.
	Err error

	incomplete bool
	bound      *bound // the CallBounded's bound that ran out (CallBounded)
}

// Frame is one entry of a Scheme stack trace: the procedure called and the
// position of the call.
type Frame struct {
	Pos  Pos
	Proc string
	// Repeat counts identical frames folded into this one (deep recursion).
	// A frame with Proc "..." and no position stands for Repeat frames
	// left out of a deep stack.
	Repeat int
}

func (e *Error) Error() string {
	if e.Pos.IsZero() {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Unwrap returns the cause of an abort (see Err) and, for a raised error
// object that wraps a Go error (ErrorObject.Err), that error.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Err != nil {
		out = append(out, e.Err)
	}
	if eo, ok := e.Value.(*ErrorObject); ok && eo.Err != nil {
		out = append(out, eo.Err)
	}
	return out
}

// Trace returns the message followed by the Scheme stack, one frame a line.
func (e *Error) Trace() string {
	var b strings.Builder
	b.WriteString(e.Error())
	for _, f := range e.Stack {
		if f.Proc == "..." && f.Pos.IsZero() {
			fmt.Fprintf(&b, "\n  ... %d more frames", f.Repeat)
			continue
		}
		fmt.Fprintf(&b, "\n  at %s (%s)", f.Pos, f.Proc)
		if f.Repeat > 0 {
			fmt.Fprintf(&b, " [repeated %d more times]", f.Repeat)
		}
	}
	return b.String()
}

// ErrStepLimit is the cause (errors.Is) of the error returned when the step
// budget set with SetStepLimit, or a CallBounded's, runs out.
var ErrStepLimit = errors.New("scheme: step limit exceeded")

// ErrMemoryLimit is the cause (errors.Is) of the error returned when the
// heap grows past the bound set with SetMemoryLimit, or a CallBounded's.
var ErrMemoryLimit = errors.New("scheme: memory limit exceeded")

// ExitError is the cause of the error returned when a script calls (exit).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("scheme: exit %d", e.Code) }

// Signals carried by Go panics through the evaluator.

// raiseSig is a raised Scheme object travelling to the nearest guard.
type raiseSig struct {
	val   Value
	pos   Pos
	stack []Frame
}

// escapeSig is an escape-only continuation being invoked.
type escapeSig struct {
	k   *Continuation
	val Value
}

// abortSig ends evaluation; Scheme code cannot catch it.
type abortSig struct {
	err *Error
}

// escapeError carries an escape through a primitive that called Apply.
type escapeError struct{ sig *escapeSig }

func (e *escapeError) Error() string {
	return "continuation escape through a primitive (return this error unchanged)"
}

// messageOf renders a raised object as an error message.
func messageOf(v Value) string {
	switch x := v.(type) {
	case *ErrorObject:
		return x.Error()
	case *String:
		return x.S
	}
	return "uncaught exception: " + errString(v)
}

func (s *raiseSig) toError() *Error {
	return &Error{Pos: s.pos, Msg: messageOf(s.val), Value: s.val, Stack: s.stack}
}
