package scheme

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// REPL runs a read-eval-print loop: it reads expressions from r (an
// expression may span several lines; the prompt changes to "... " until it
// is complete), evaluates them under ctx and writes their values (as write
// shows them) or their errors with the Scheme stack to w. An error does not
// end the loop. Output of display and write goes to w too. REPL returns nil
// at the end of r, and ctx's error when ctx is done.
func (in *Interp) REPL(ctx context.Context, r io.Reader, w io.Writer) error {
	savedOut := in.Stdout
	in.Stdout = w
	defer func() { in.Stdout = savedOut }()
	br := bufio.NewReader(r)
	var pending strings.Builder
	startLine := 1
	line := 0
	fmt.Fprint(w, "> ")
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		text, rerr := br.ReadString('\n')
		line++
		pending.WriteString(text)
		src := pending.String()
		if strings.TrimSpace(src) == "" {
			pending.Reset()
			startLine = line + 1
			if rerr != nil {
				fmt.Fprintln(w)
				return nil
			}
			fmt.Fprint(w, "> ")
			continue
		}
		padded := strings.Repeat("\n", startLine-1) + src
		forms, poss, err := readAll(padded, "repl")
		if err != nil && IsIncomplete(err) && rerr == nil {
			fmt.Fprint(w, "... ")
			continue
		}
		pending.Reset()
		startLine = line + 1
		if err != nil {
			fmt.Fprintln(w, err)
		}
		for i, f := range forms {
			v, err := in.run(ctx, func(th *thread) Value { return in.evalTop(th, f, &poss[i]) })
			if err != nil {
				var se *Error
				if errors.As(err, &se) {
					fmt.Fprintln(w, se.Trace())
				} else {
					fmt.Fprintln(w, err)
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				var exit *ExitError
				if errors.As(err, &exit) {
					return nil
				}
				continue
			}
			if _, void := v.(Unspecified); !void {
				fmt.Fprintln(w, WriteString(v))
			}
		}
		if rerr != nil {
			return nil
		}
		fmt.Fprint(w, "> ")
	}
}
