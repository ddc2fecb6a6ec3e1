package scheme

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// LineReader gives a REPL its input one line at a time, showing prompt
// first. It returns io.EOF at the end of the input, and ErrLineInterrupted
// when the person abandoned the line (Ctrl-C at the prompt): the REPL then
// drops what it had and asks again.
type LineReader interface {
	ReadLine(prompt string) (string, error)
}

// ErrLineInterrupted is what a LineReader returns for an abandoned line.
var ErrLineInterrupted = errors.New("line interrupted")

// REPLOptions configures RunREPL.
type REPLOptions struct {
	Lines LineReader
	Out   io.Writer // values, errors, and what display and write print
	// EvalContext makes the context of one evaluation from the REPL's (one
	// that Ctrl-C cancels, say); nil evaluates under the REPL's context.
	// When it is cancelled and the REPL's context is not, the REPL says
	// the evaluation was interrupted and goes on.
	EvalContext func(ctx context.Context) (context.Context, context.CancelFunc)
}

// REPL runs a read-eval-print loop reading r (see RunREPL), with the prompts
// written to w.
func (in *Interp) REPL(ctx context.Context, r io.Reader, w io.Writer) error {
	return in.RunREPL(ctx, REPLOptions{Lines: ReaderLines(r, w), Out: w})
}

// ReaderLines is a LineReader of r with no line editing, writing each
// prompt to w.
func ReaderLines(r io.Reader, w io.Writer) LineReader {
	return &plainLines{r: bufio.NewReader(r), w: w}
}

// plainLines reads lines from a reader, writing the prompt to w.
type plainLines struct {
	r *bufio.Reader
	w io.Writer
}

func (p *plainLines) ReadLine(prompt string) (string, error) {
	fmt.Fprint(p.w, prompt)
	s, err := p.r.ReadString('\n')
	if err != nil && s != "" {
		return s, nil // the last line without its newline; EOF comes next
	}
	return strings.TrimSuffix(s, "\n"), err
}

// RunREPL runs a read-eval-print loop: it reads expressions (one may span
// several lines; the prompt changes to "... " until it is complete),
// evaluates them and writes their values (as write shows them) or their
// errors with the Scheme stack. An error does not end the loop; (exit)
// ends it quietly. RunREPL returns nil at the end of the input, and ctx's
// error when ctx is done.
func (in *Interp) RunREPL(ctx context.Context, o REPLOptions) error {
	w := o.Out
	savedOut := in.Stdout
	in.Stdout = w
	defer func() { in.Stdout = savedOut }()
	var pending strings.Builder
	startLine := 1
	line := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		prompt := "> "
		if pending.Len() > 0 {
			prompt = "... "
		}
		text, rerr := o.Lines.ReadLine(prompt)
		if errors.Is(rerr, ErrLineInterrupted) {
			pending.Reset()
			startLine = line + 1
			continue
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return rerr
		}
		eof := rerr != nil
		if !eof {
			line++
			pending.WriteString(text + "\n")
		}
		src := pending.String()
		if strings.TrimSpace(src) == "" {
			pending.Reset()
			startLine = line + 1
			if eof {
				fmt.Fprintln(w)
				return nil
			}
			continue
		}
		padded := strings.Repeat("\n", startLine-1) + src
		forms, poss, err := readAll(padded, "repl")
		if err != nil && IsIncomplete(err) && !eof {
			continue
		}
		pending.Reset()
		startLine = line + 1
		if err != nil {
			fmt.Fprintln(w, err)
		}
		for i, f := range forms {
			done, err := in.replEval(ctx, o, f, &poss[i])
			if err != nil {
				return err
			}
			if done {
				return nil
			}
		}
		if eof {
			return nil
		}
	}
}

// replEval evaluates one form and prints its value or error; done is true
// after (exit).
func (in *Interp) replEval(ctx context.Context, o REPLOptions, f Value, pos *Pos) (done bool, err error) {
	w := o.Out
	ectx, cancel := ctx, context.CancelFunc(func() {})
	if o.EvalContext != nil {
		ectx, cancel = o.EvalContext(ctx)
	}
	defer cancel()
	v, err := in.run(ectx, func(th *thread) Value { return in.evalTop(th, f, pos) })
	if err == nil {
		if _, void := v.(Unspecified); !void {
			fmt.Fprintln(w, WriteString(v))
		}
		return false, nil
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if ectx.Err() != nil {
		fmt.Fprintln(w, "interrupted")
		return false, nil
	}
	var se *Error
	if errors.As(err, &se) {
		fmt.Fprintln(w, se.Trace())
	} else {
		fmt.Fprintln(w, err)
	}
	return false, nil
}
