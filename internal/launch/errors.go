package launch

import (
	"errors"
	"fmt"
)

// Kind is what stopped a run before (or as) it started. Each is one of
// nodwyn run's exit codes; the CLI exits with it, and the daemon answers
// run.start with an RPC error that carries it (docs/rpc.md).
type Kind int

// The kinds, as nodwyn run --help lists its exit codes.
const (
	Failed      Kind = 1   // the run failed (a trust record that cannot be written, a provider error)
	Usage       Kind = 2   // a usage or configuration error: nothing ran
	Budget      Kind = 3   // a budget or the deadline ran out
	Interrupted Kind = 130 // interrupted (SIGINT/SIGTERM, run.cancel)
)

// ExitCode is nodwyn run's exit code for k.
func (k Kind) ExitCode() int { return int(k) }

// Error is an error of Run with its kind.
type Error struct {
	Kind Kind
	Err  error // nil: the kind says it all
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Kind.ExitCode())
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf is err's kind: an *Error's, else Failed.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Failed
}

func usageErr(format string, a ...any) error {
	return &Error{Kind: Usage, Err: fmt.Errorf(format, a...)}
}
