package session

import (
	"context"
	"io"

	"github.com/nodwyn/nodwyn/scheme"
)

// What `nodwyn scheme` needs of the interpreter, through the session: the
// CLI imports no scheme (session is the one package that joins the
// interpreter and the domain packages; deps_test.go holds that).

// REPLOptions configures REPL (scheme.REPLOptions).
type REPLOptions = scheme.REPLOptions

// LineReader reads the REPL's lines (scheme.LineReader).
type LineReader = scheme.LineReader

// ExitError is what (exit n) returns from an evaluation.
type ExitError = scheme.ExitError

// ErrLineInterrupted is what a LineReader returns when Ctrl-C drops the
// line being typed.
var ErrLineInterrupted = scheme.ErrLineInterrupted

// ReaderLines reads lines from r, writing the prompts to w.
func ReaderLines(r io.Reader, w io.Writer) LineReader { return scheme.ReaderLines(r, w) }

// REPL runs a read-eval-print loop in the session's interpreter: the
// session's procedures, the guard on every (call-tool …).
func (s *Session) REPL(ctx context.Context, ro REPLOptions) error { return s.interp.RunREPL(ctx, ro) }

// EvalFile evaluates the file at path (the person named it on the command
// line) in the session's interpreter.
func (s *Session) EvalFile(ctx context.Context, path string) error {
	return s.interp.LoadFile(ctx, path)
}
