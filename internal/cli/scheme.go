package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// SchemeCmd is `nodwyn scheme`.
type SchemeCmd struct {
	File     string `arg:"" optional:"" type:"existingfile" help:"A Scheme file to run; without one, an interactive REPL."`
	Folder   string `short:"C" name:"folder" default:"." help:"The folder the session works in."`
	Sandbox  string `help:"Bind (sandbox?) as in a --sandbox container run." placeholder:"container"`
	Profile  string `help:"The profile (current-profile-name) reports."`
	RunTools bool   `name:"run-tools" help:"Run the tool calls the guard allows without asking (its confirms are still asked at the terminal)."`
}

// Help explains the session without a model.
func (SchemeCmd) Help() string {
	return `A session without a model: (model-turn …) raises an error, but every other
procedure a .nodwyn/init.scm uses is bound — (sandbox?), (folder), (scratch-dir),
(tools), (guard-check "shell-exec" "{\"command\":\"cat ~/.ssh/id_rsa\"}") — and
the init chain (embedded init.scm, your config's init.scm, the folder's
.nodwyn/init.scm when it is trusted) is loaded first, so what you define can be
tried here.

(call-tool name args) returns the guard's decision; a call runs only when you
confirm it at the terminal, or with --run-tools (then only the guard's confirms
are asked). With no terminal to ask at, nothing runs.

At a terminal the REPL has line editing and history (the arrow keys). Ctrl-C
stops the evaluation that is running (or drops the line being typed); Ctrl-D on
an empty line, or (exit), ends it.`
}

// Run runs the REPL or a file.
func (c *SchemeCmd) Run(e *env) error {
	folder, err := filepath.Abs(c.Folder)
	if err != nil {
		return usageErr("--folder: %v", err)
	}
	if c.Sandbox != "" && c.Sandbox != "container" {
		return usageErr("--sandbox %q: the only value is 'container'", c.Sandbox)
	}
	home, _ := os.UserHomeDir()
	dirs := config.ResolveDirs(e.getenv, home)
	pt, err := launch.TrustedProject(dirs, folder)
	if err != nil {
		return err
	}
	if pt.Note != "" {
		fmt.Fprintln(e.stderr, "nodwyn scheme: "+pt.Note)
	}
	tty, _ := e.stdin.(*os.File)
	if tty != nil && !term.IsTerminal(int(tty.Fd())) {
		tty = nil
	}

	// Ctrl-C stops the evaluation that runs (the REPL goes on); with no
	// evaluation running and no terminal, it ends nodwyn scheme.
	ctx, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	var mu sync.Mutex
	var cancelEval context.CancelFunc
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		for range sig {
			mu.Lock()
			if cancelEval != nil {
				cancelEval()
			} else if c.File != "" || tty == nil {
				cancelAll()
			}
			mu.Unlock()
		}
	}()
	evalContext := func(parent context.Context) (context.Context, context.CancelFunc) {
		ectx, cancel := context.WithCancel(parent)
		mu.Lock()
		cancelEval = cancel
		mu.Unlock()
		return ectx, func() {
			mu.Lock()
			cancelEval = nil
			mu.Unlock()
			cancel()
		}
	}

	opts := session.Options{
		Folder: folder, Dry: true, RunTools: c.RunTools, Sandbox: c.Sandbox == "container", Profile: c.Profile,
		Dirs: dirs, Getenv: e.getenv, Stdout: schemeOut(e.stdout), ProjectScheme: pt.Scheme,
	}
	if tty != nil {
		opts.Confirm = lineConfirm(tty, tty) // asked and answered where the person types
	}
	lctx, lcancel := evalContext(ctx) // loading the init chain: Ctrl-C stops it
	s, err := session.New(lctx, opts)
	lcancel()
	if err != nil {
		if lctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: err}
		}
		return &exitError{code: ExitUsage, err: err}
	}
	defer s.Close()
	if c.File != "" {
		fctx, fcancel := evalContext(ctx)
		defer fcancel()
		if err := s.EvalFile(fctx, c.File); err != nil {
			var exit *session.ExitError
			if errors.As(err, &exit) {
				return nil
			}
			if fctx.Err() != nil {
				return &exitError{code: ExitInterrupted, err: fmt.Errorf("%s: interrupted", c.File)}
			}
			return &exitError{code: ExitFailed, err: err}
		}
		return nil
	}
	how := "a tool call runs only when you confirm it"
	switch {
	case c.RunTools:
		how = "tool calls the guard allows run (--run-tools)"
	case tty == nil:
		how = "no tool call runs (no terminal to confirm at)"
	}
	fmt.Fprintf(e.stderr, "nodwyn scheme: a session without a model in %s: (model-turn …) raises an error; (call-tool …) is judged by the guard and %s. Ctrl-C stops an evaluation; Ctrl-D or (exit) ends.\n", folder, how)
	ro := session.REPLOptions{Out: opts.Stdout, EvalContext: evalContext}
	if tty != nil {
		lines, restore, err := newTermLines(tty, e.stdout)
		if err != nil {
			return err
		}
		defer restore()
		ro.Lines = lines
	} else {
		ro.Lines = session.ReaderLines(e.stdin, e.stdout)
	}
	err = s.REPL(ctx, ro)
	if errors.Is(err, context.Canceled) {
		return &exitError{code: ExitInterrupted}
	}
	return err
}

// schemeOut is where what Scheme displays (and the REPL's values and
// errors) goes: at a terminal escaped (termtext), since a project's Scheme
// or a string the model wrote can hold escape sequences; to a file or a
// pipe as it is, byte for byte: there it is the program's output. The
// line editor's prompt and echo are nodwyn's own and do not go through it.
func schemeOut(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return termtext.Writer(w)
	}
	return w
}

// termLines is line editing and history at a terminal (golang.org/x/term):
// raw mode while a line is read, the terminal's own mode while it is
// evaluated, so Ctrl-C there is SIGINT and output is as usual.
type termLines struct {
	fd     int
	t      *term.Terminal
	in     *ctrlC
	normal *term.State
}

func newTermLines(tty *os.File, out io.Writer) (*termLines, func(), error) {
	fd := int(tty.Fd())
	st, err := term.GetState(fd)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the terminal's mode: %w", err)
	}
	in := &ctrlC{r: tty}
	l := &termLines{fd: fd, in: in, normal: st, t: term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "> ")}
	l.t.History = &history{}
	return l, func() { term.Restore(fd, st) }, nil
}

// history is the REPL's line history: newest first, without empty lines
// (a line dropped with Ctrl-C) or a line that repeats the one before it.
type history struct{ lines []string }

const historyMax = 1000

func (h *history) Add(line string) {
	if strings.TrimSpace(line) == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == line) {
		return
	}
	h.lines = append(h.lines, line)
	if len(h.lines) > historyMax {
		h.lines = h.lines[len(h.lines)-historyMax:]
	}
}
func (h *history) Len() int        { return len(h.lines) }
func (h *history) At(i int) string { return h.lines[len(h.lines)-1-i] }

func (l *termLines) ReadLine(prompt string) (string, error) {
	if _, err := term.MakeRaw(l.fd); err != nil {
		return "", fmt.Errorf("line editing needs the terminal's raw mode: %w", err)
	}
	defer term.Restore(l.fd, l.normal)
	if w, h, err := term.GetSize(l.fd); err == nil && w > 0 {
		l.t.SetSize(w, h)
	}
	l.t.SetPrompt(prompt)
	l.in.hit = false
	line, err := l.t.ReadLine()
	if l.in.hit {
		fmt.Fprint(l.t, "^C\n")
		return "", session.ErrLineInterrupted
	}
	return line, err
}

// ctrlC turns a Ctrl-C on its way to the line editor into "go to the end
// of the line, erase it, Enter" (^E ^U CR) and notes it: the editor hands
// back an empty line, which the REPL drops (the line editor itself would
// end the input at Ctrl-C, and keep the line for the next prompt).
type ctrlC struct {
	r       io.Reader
	hit     bool
	pending []byte
}

func (c *ctrlC) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		buf := make([]byte, len(p))
		n, err := c.r.Read(buf)
		for _, b := range buf[:n] {
			if b == 3 {
				c.hit = true
				c.pending = append(c.pending, 5, 21, '\r')
			} else {
				c.pending = append(c.pending, b)
			}
		}
		if len(c.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// lineConfirm asks at the terminal, reading one line of the answer from it
// (the REPL's line editor reads only while no evaluation runs).
func lineConfirm(tty *os.File, out io.Writer) func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool) {
	return func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool) {
		kind, what := confirmHeader(req, d)
		fmt.Fprintf(out, "%s (%s): %s\n  %s\n  run it? [y/N]: ", kind, termtext.Line(d.Checker), termtext.Text(d.Reason), termtext.Text(what))
		return readYes(tty), false
	}
}

// readYes reads one line a byte at a time (nothing past it is taken) and
// reports whether it says y or yes.
func readYes(r io.Reader) bool {
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		if err != nil {
			break
		}
	}
	a := strings.ToLower(strings.TrimSpace(string(line)))
	return a == "y" || a == "yes"
}
