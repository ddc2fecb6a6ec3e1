package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// ChatCmd is `nodwyn chat`, and `nodwyn` with no command at a terminal: the
// console, an interactive session.
type ChatCmd struct {
	Folder         string        `short:"C" name:"folder" help:"The folder to work in (default: the current folder; with --resume, the session's)."`
	Resume         string        `help:"Continue this session (an id from 'nodwyn sessions', its start, or 'last') in the console: the first message goes on from its saved conversation."`
	Profile        string        `help:"Loop profile: lean, full, or one a project's init.scm defines (default: [loop] profile, NODWYN_PROFILE, else full)."`
	Provider       string        `help:"Model provider (the help lists config.Providers)."`
	Model          string        `help:"The model's name at the provider."`
	BaseURL        string        `name:"base-url" help:"The provider's endpoint (also OPENAI_BASE_URL / ANTHROPIC_BASE_URL)."`
	Script         string        `type:"existingfile" help:"Use the scripted model with this reply file (implies --provider script; docs/script-provider.md)."`
	RequestTimeout time.Duration `name:"request-timeout" help:"Limit of one request to the model as a whole (default 10m; also [provider] request_timeout)."`
	IdleTimeout    time.Duration `name:"idle-timeout" help:"Cut a request to the model that receives no data for this long (default 2m; also [provider] idle_timeout)."`
	NoKeychain     bool          `name:"no-keychain" help:"Take the provider's key only from the environment, credentials.toml and $CREDENTIALS_DIRECTORY."`
	MaxToolCalls   int           `name:"max-tool-calls" help:"Stop the session after this many tool calls, over all its messages (also [limits] max_tool_calls; exit 3)."`
	Yolo           bool          `help:"Answer ordinary confirms yes. Security confirms are still asked."`
	JSON           bool          `name:"json" help:"Write every event as a JSON line on stdout (what the console prints goes to stderr)."`
	Quiet          bool          `short:"q" help:"No progress on stderr (the answers, confirms and commands are still shown)."`
	TrustProject   bool          `name:"trust-project" help:"Load the project's .nodwyn/ files for this session even though they are not trusted (see 'nodwyn trust')."`
	Contract       string        `type:"existingfile" help:"The contract (as nodwyn run --contract)."`
	NoKernelFloor  bool          `name:"no-kernel-floor" help:"Run this session's commands without the kernel floor (as nodwyn run --no-kernel-floor)."`
	Writable       []string      `name:"writable" placeholder:"DIR" help:"Let this session's commands also write DIR (repeatable; as nodwyn run --writable)."`
}

// Help is shown after the flags of `nodwyn chat --help`.
func (ChatCmd) Help() string {
	return `The person types a task; the run streams as 'nodwyn run' shows it, and the
model's answer is printed when its turn ends. The next message goes into the
same session: the same conversation, guard, scratch directory and log.

` + chatKeys + `

With standard input not a terminal, each line is the next message, given when
the turn before it has ended (a confirm reads its answer from the next line):

    printf 'fix the failing test\nnow add a test for it\n/exit\n' | nodwyn chat

The session is saved like a run's: 'nodwyn log ID' shows it, and
'nodwyn chat --resume ID' or 'nodwyn run --resume ID' continues it. The exit
code is that of the last turn, as 'nodwyn run --help' lists them (0 when no
message was given). A console session has no wall-clock limit ([limits]
timeout is for runs); --max-tool-calls counts the whole session.`
}

// chatKeys is what the console's keys and commands do (its help and /help).
const chatKeys = `A line typed while the model works is queued and given to it at its next
step. Ctrl-C interrupts the model's turn (the model is told, the session goes
on); at the prompt, a second Ctrl-C, Ctrl-D on an empty line, or /exit leaves.
At a confirm, answer y, n, a (always: this command or path, for the rest of
the session), or n and a note for the model: "n use the test database".

  /compact     summarize the older part of the conversation now
  /undo        list the file versions this session kept; /undo N restores one
  /usage       tokens in and out, and tool calls, so far
  /exit        leave (the session is saved)
  /help        this list`

// Run runs the console.
func (c *ChatCmd) Run(e *env) error {
	r := &RunCmd{
		Folder: c.Folder, Resume: c.Resume, Profile: c.Profile,
		Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL, Script: c.Script,
		RequestTimeout: c.RequestTimeout, IdleTimeout: c.IdleTimeout, NoKeychain: c.NoKeychain,
		MaxToolCalls: c.MaxToolCalls, Yolo: c.Yolo, JSON: c.JSON, Quiet: c.Quiet,
		TrustProject: c.TrustProject, Contract: c.Contract, NoKernelFloor: c.NoKernelFloor, Writable: c.Writable,
		// launch.Run takes [limits] timeout when this is 0; a negative one
		// is none (a deadline is set only for a positive Timeout).
		Timeout: -1,
	}
	// SIGTERM and SIGHUP end the console (the turn that runs is
	// interrupted); SIGINT is the console's own (k.signals).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, stopPipe := stdoutClosedContext(ctx, e.stdout)
	defer stopPipe()
	ctx, cancelStart := context.WithCancelCause(ctx)
	defer cancelStart(nil)
	k := newConsole(e, r, cancelStart)
	defer k.stopSignals()
	spec, err := r.spec(e)
	if err != nil {
		return err
	}
	var rend *renderer
	defer func() {
		if rend != nil {
			rend.close()
		}
	}()
	h := e.hooks(launch.Hooks{
		TrustAsk: terminalTrustAsk(e), Steer: k.steer,
		Console: func(ctx context.Context, s *session.Session) session.Outcome { return k.run(ctx, s, rend) },
	})
	h.Watch = func() launch.Watch {
		rend = newRenderer(e.stderr, r.Quiet)
		w := rend.watch()
		if r.JSON {
			w.Sinks = append(w.Sinks, jsonSink(e.stdout))
		}
		w.Sinks = append(w.Sinks, k.answers)
		w.Confirm = k.confirm
		return w
	}
	out, err := launch.Run(ctx, spec, h)
	if err != nil {
		return err
	}
	_, dirs := launch.HomeDirs(e.getenv)
	return exitFor(out, dirs.Data)
}

// console is one nodwyn chat: the session, and the person's side of it.
type console struct {
	e    *env
	r    *RunCmd
	out  io.Writer // what the commands print: stdout (stderr with --json)
	s    *session.Session
	rend *renderer

	sigint    chan os.Signal
	promptInt chan struct{}  // a Ctrl-C (SIGINT) while no work runs
	questions chan *question // confirms, from the session's goroutine

	mu          sync.Mutex
	queue       []string                // typed while the model works: given at its next step
	cancelWork  context.CancelCauseFunc // the turn (or /compact) that runs; at first, the start
	interrupted bool                    // cancelWork was called for this work
	leave       bool                    // /exit while the model worked

	ctrlC bool // the person's last act was a Ctrl-C: another at the prompt leaves
	eof   bool // the input has ended

	held       []string // lines for the prompt before the next one read (standard input not a terminal)
	lastAnswer string   // the last answer printed (answers): the turn's end does not print it again

	tty   *consoleTerm // nil when standard input is not a terminal
	lines chan string  // standard input's lines when it is not; closed at its end
	done  chan struct{}
}

// question is a confirm the session asks, answered on the console's
// goroutine.
type question struct {
	req    guard.Request
	d      guard.Decision
	answer chan answer
}

type answer struct {
	yes, always bool
	note        string
	unanswered  string // no one answered: why (session.ConfirmUnanswered)
}

func newConsole(e *env, r *RunCmd, cancelStart context.CancelCauseFunc) *console {
	k := &console{
		e: e, r: r, out: e.stdout,
		sigint:    make(chan os.Signal, 1),
		promptInt: make(chan struct{}, 1),
		questions: make(chan *question),
		done:      make(chan struct{}),
	}
	if r.JSON {
		k.out = e.stderr
	}
	k.cancelWork = cancelStart // Ctrl-C while the session starts stops it
	signal.Notify(k.sigint, os.Interrupt)
	go k.signals()
	return k
}

// signals handles SIGINT: the work that runs is interrupted; with none, it
// is a Ctrl-C at the prompt.
func (k *console) signals() {
	for {
		select {
		case <-k.done:
			return
		case <-k.sigint:
		}
		k.mu.Lock()
		if k.cancelWork != nil {
			if !k.interrupted {
				k.interrupted = true
				k.cancelWork(session.ErrInterrupted)
			}
		} else {
			select {
			case k.promptInt <- struct{}{}:
			default:
			}
		}
		k.mu.Unlock()
	}
}

func (k *console) stopSignals() {
	signal.Stop(k.sigint)
	select {
	case <-k.done:
	default:
		close(k.done)
	}
}

// steer is Options.Steer: what was typed while the model worked.
func (k *console) steer() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	q := k.queue
	k.queue = nil
	return q
}

// confirm is Options.ConfirmNote: the question goes to the console's
// goroutine, which owns the terminal.
func (k *console) confirm(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool, string) {
	q := &question{req: req, d: d, answer: make(chan answer, 1)}
	select {
	case k.questions <- q:
	case <-ctx.Done():
		return false, false, ""
	}
	select {
	case a := <-q.answer:
		if a.unanswered != "" {
			session.ConfirmUnanswered(ctx, a.unanswered)
		}
		return a.yes, a.always, a.note
	case <-ctx.Done():
		return false, false, ""
	}
}

// answers is a sink of the session's events: the model's answers (its
// replies without tool calls) printed in full on k.out as they come, once
// (the display shows no line of its own for them: renderer.answers).
func (k *console) answers(ev store.Event) {
	if ev.Type != "model.reply" || k.r.JSON {
		return
	}
	d, _ := event.Decode(ev.Type, ev.Data) // built in this process, or through JSON: the same
	reply, _ := d.(event.ModelReply)
	text := reply.Text
	if len(reply.ToolCalls) > 0 || strings.TrimSpace(text) == "" {
		return
	}
	k.mu.Lock()
	k.lastAnswer = text
	k.mu.Unlock()
	if k.rend != nil {
		k.print(text)
	}
}

// say writes a line of the console's own on stderr, as the display does.
func (k *console) say(format string, a ...any) {
	k.rend.mu.Lock()
	defer k.rend.mu.Unlock()
	k.rend.line(format, a...)
}

// print writes what a command shows, or the model's answer, to k.out,
// escaped (termtext.Text): the model's text and the paths its tools wrote
// reach the terminal with no character it would act on.
func (k *console) print(text string) {
	k.idle()
	io.WriteString(k.out, termtext.Text(strings.TrimRight(text, "\n"))+"\n")
}

// idle takes the status line away: nothing runs.
func (k *console) idle() {
	r := k.rend
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status {
		fmt.Fprint(r.w, "\r\033[K")
		r.status = false
	}
	r.activity = ""
}

// run is the console: launch.Hooks.Console, called once the session exists.
func (k *console) run(ctx context.Context, s *session.Session, rend *renderer) session.Outcome {
	k.s, k.rend = s, rend
	if !k.r.JSON {
		rend.answers = true // k.answers prints them
	}
	k.mu.Lock()
	k.cancelWork = nil
	k.mu.Unlock()
	last := session.Outcome{Status: "finished"}
	if err := k.openInput(ctx); err != nil {
		k.say("nodwyn: %v", err)
		return session.Outcome{Status: "failed", Text: err.Error(), Err: err}
	}
	defer k.closeInput()
	if k.tty != nil {
		k.say("nodwyn chat: type a task. Ctrl-C interrupts the model; at the prompt, Ctrl-C twice, Ctrl-D or /exit leaves; /help lists the commands.")
	} else {
		k.say("nodwyn chat: each line of standard input is a message, given when the turn before it has ended; /help lists the commands.")
	}
	next := "" // messages typed while the model worked, given after its turn
	for ctx.Err() == nil && !k.leave {
		text := next
		next = ""
		if text == "" {
			line, ok := k.prompt(ctx)
			if !ok {
				break
			}
			if cmd, arg, isCmd := command(line); isCmd {
				if k.command(ctx, cmd, arg) {
					break
				}
				continue
			}
			text = line
		}
		out := k.work(ctx, func(ctx context.Context) session.Outcome { return s.Continue(ctx, text) })
		last = out
		queued := k.steer()
		switch out.Status {
		case "finished":
			k.mu.Lock()
			printed := k.lastAnswer == out.Text
			k.lastAnswer = ""
			k.mu.Unlock()
			if !k.r.JSON && !printed && strings.TrimSpace(out.Text) != "" {
				k.print(out.Text) // a finish! text no reply said
			}
			if len(queued) > 0 {
				k.say("nodwyn: giving the model what was typed while it worked")
				next = strings.Join(queued, "\n\n")
			}
			continue
		case "interrupted":
			if ctx.Err() != nil || k.leave {
				break
			}
			k.ctrlC = true
			k.say("nodwyn: interrupted; the model is told so. Type the next message, or Ctrl-C again to leave.")
			if len(queued) > 0 { // what was typed for the model goes back to the prompt
				k.toPrompt(queued)
				queued = nil
			}
		case "budget", "deadline":
			k.say("nodwyn: %s; the session ends here", out.Text)
			k.notGiven(queued)
			return k.end(last)
		case "no-progress":
			k.say("nodwyn: %s", out.Text)
		default:
			if errors.Is(out.Err, session.ErrStorage) {
				return k.end(last)
			}
			k.say("nodwyn: the turn failed (%s); the session goes on: type a message to try again, or /exit", oneLine(out.Text, 300))
		}
		k.notGiven(queued)
	}
	if ctx.Err() != nil {
		last = session.Outcome{Status: "interrupted", Text: "stopped: interrupted", Err: context.Cause(ctx)}
	}
	return k.end(last)
}

// toPrompt gives back to the prompt what was queued for the model: at a
// terminal, typed into the next line (Enter gives it); from a pipe, the
// next lines read.
func (k *console) toPrompt(queued []string) {
	if k.tty != nil {
		text := strings.Join(queued, " ")
		k.tty.reader.pending = append([]byte(text), k.tty.reader.pending...)
		k.say("nodwyn: what you typed while the model worked is back at the prompt: Enter gives it")
		return
	}
	k.held = append(append([]string(nil), queued...), k.held...)
	k.say("nodwyn: what was typed while the model worked is the next message")
}

// notGiven says which queued messages the model did not get (the turn
// ended without another step); the up arrow brings them back.
func (k *console) notGiven(queued []string) {
	for _, q := range queued {
		k.say("nodwyn: not given to the model: %q", oneLine(q, 120))
		if k.tty != nil {
			k.tty.lines.t.History.Add(q)
		}
	}
}

// end ends the session and says how to go on with it.
func (k *console) end(last session.Outcome) session.Outcome {
	if !k.s.Begun() {
		k.rend.quiet = true // no finish line: nothing was sent, nothing saved
		return k.s.End(last)
	}
	out := k.s.End(last)
	k.say("nodwyn: the session is saved; continue it with: nodwyn chat --resume %s", k.s.ID)
	return out
}

// command splits a console command: "/undo 3" is ("undo", "3"). A line
// that starts with a path ("/etc/hosts is wrong") is a message.
func command(line string) (cmd, arg string, ok bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	word, rest, _ := strings.Cut(t[1:], " ")
	if word == "" || strings.Contains(word, "/") {
		return "", "", false
	}
	return strings.ToLower(word), strings.TrimSpace(rest), true
}

// command runs a console command at the prompt; true means leave.
func (k *console) command(ctx context.Context, cmd, arg string) bool {
	switch cmd {
	case "exit", "quit":
		return true
	case "help":
		k.print(chatKeys)
	case "usage":
		t := k.s.Totals()
		calls := fmt.Sprintf("%d tool calls", t.ToolCalls)
		if t.ToolCalls == 1 {
			calls = "1 tool call"
		}
		k.print(fmt.Sprintf("tokens: %d in (%d cached), %d out; %s", t.Usage.TotalInput(), t.Usage.CacheReadTokens, t.Usage.OutputTokens, calls))
	case "compact":
		k.compact(ctx)
	case "undo":
		k.undo(arg)
	default:
		k.say("nodwyn: no command /%s; /help lists them (a message may not start with /word)", cmd)
	}
	return false
}

// compact is /compact: (compact-now!) as the session's Scheme has it.
func (k *console) compact(ctx context.Context) {
	if !k.s.Begun() {
		k.print("nothing to compact yet: no message has been given")
		return
	}
	var compacted bool
	var text string
	var err error
	k.work(ctx, func(ctx context.Context) session.Outcome {
		compacted, text, err = k.s.Compact(ctx)
		return session.Outcome{}
	})
	switch {
	case errors.Is(err, session.ErrNoCompaction):
		k.print("compaction is not available in this build")
	case errors.Is(err, session.ErrInterrupted) || errors.Is(err, context.Canceled):
		k.print("compaction interrupted; the conversation is as it was")
	case err != nil:
		k.print("compaction failed: " + err.Error())
	case !compacted:
		k.print("nothing to compact: the conversation is short enough")
	case text != "":
		k.print("compacted: " + text)
	default:
		k.print("compacted: the older part of the conversation is summarized")
	}
}

// undo is /undo [VERSION]: the versions the file tools of this session
// kept before they changed a file, as 'nodwyn undo' lists and restores
// them.
func (k *console) undo(arg string) {
	_, dirs := launch.HomeDirs(k.e.getenv)
	st, err := store.Open(dirs.Data)
	if err != nil {
		k.print("undo: " + err.Error())
		return
	}
	all, err := st.Versions("")
	if err != nil {
		k.print("undo: " + err.Error())
		return
	}
	var vs []store.Version
	for _, v := range all {
		if v.Session == k.s.ID {
			vs = append(vs, v)
		}
	}
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil {
			k.print("undo: give the number of a version, as /undo lists them")
			return
		}
		for _, v := range vs {
			if v.ID == n {
				if err := st.Restore(v); err != nil {
					k.print("undo: " + err.Error())
					return
				}
				k.print(fmt.Sprintf("restored %s to version %d (%s)", termtext.Line(v.Path), v.ID, v.Time.Local().Format("2006-01-02 15:04:05")))
				k.s.Tell(fmt.Sprintf("[the person restored %s to the version before one of your changes; read it again before you change it]", v.Path))
				return
			}
		}
		k.print(fmt.Sprintf("undo: this session kept no version %d; /undo lists them", n))
		return
	}
	if len(vs) == 0 {
		k.print("no versions kept by this session")
		return
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tTIME\tSIZE\tPATH")
	for _, v := range vs {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", v.ID, v.Time.Local().Format("2006-01-02 15:04:05"), v.Size, termtext.Line(v.Path)) // a row each
	}
	tw.Flush()
	b.WriteString("restore one with: /undo VERSION")
	k.print(b.String())
}

// work runs what (a turn, or /compact) on its own goroutine under a
// context Ctrl-C cancels, while this one reads what the person types:
// the answer to a confirm, or a message queued for the model's next step.
func (k *console) work(ctx context.Context, what func(context.Context) session.Outcome) session.Outcome {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	k.mu.Lock()
	k.cancelWork, k.interrupted = cancel, false
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.cancelWork = nil
		k.mu.Unlock()
		k.idle()
	}()
	done := make(chan session.Outcome, 1)
	go func() { done <- what(wctx) }()

	var chunks <-chan []byte
	if k.tty != nil {
		chunks = k.tty.chunks
		k.tty.echo(false) // what is typed shows once it is queued
		defer k.tty.echo(true)
	}
	var partial []byte
	var q *question
	for {
		var lines <-chan string // plain input is read only for a confirm's answer
		if q != nil && k.lines != nil {
			lines = k.lines
		}
		select {
		case out := <-done:
			if k.tty != nil && len(partial) > 0 { // the start of the next line
				k.tty.reader.pending = append(partial, k.tty.reader.pending...)
			}
			return out
		case nq := <-k.questions:
			q = nq
			k.ask(q)
			if k.eof { // no line will come to answer it
				q = k.answer(q, answer{unanswered: "no answer (end of input)"})
			}
		case b, ok := <-chunks:
			if !ok {
				chunks, k.eof = nil, true
				q = k.answer(q, answer{unanswered: "no answer (end of input)"})
				continue
			}
			partial = append(partial, b...)
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				line := strings.TrimRight(string(partial[:i]), "\r")
				partial = partial[i+1:]
				q = k.typed(line, q)
			}
		case line, ok := <-lines:
			if !ok {
				k.lines, k.eof = nil, true
				q = k.answer(q, answer{unanswered: "no answer (end of input)"})
				continue
			}
			q = k.typed(line, q)
		}
	}
}

// typed handles a line typed while the model works; it returns the
// confirm still waiting for its answer.
func (k *console) typed(line string, q *question) *question {
	if q != nil {
		_, _, isCmd := command(line)
		a, ok := parseAnswer(line, !session.OffersAlways(q.req, q.d))
		switch {
		case ok && !isCmd:
			return k.answer(q, a)
		case k.tty == nil:
			// A pipe answers no question but with y or n: another line
			// (a command, the next message) is kept for the prompt, and
			// the question is declined as unanswered.
			k.held = append(k.held, line)
			k.say("nodwyn: %s is not y or n: the question is declined as not answered, and the line is kept for after the turn", oneLine(line, 80))
			return k.answer(q, answer{unanswered: "no answer given (the input is not a terminal, and its next line was not y or n)"})
		case isCmd:
			k.say("nodwyn: answer y or n first; %s waits for the prompt", oneLine(line, 80))
		}
		k.ask(q)
		return q
	}
	if strings.TrimSpace(line) == "" {
		return nil
	}
	if cmd, _, isCmd := command(line); isCmd {
		switch cmd {
		case "exit", "quit":
			k.mu.Lock()
			k.leave = true
			if k.cancelWork != nil && !k.interrupted {
				k.interrupted = true
				k.cancelWork(session.ErrInterrupted)
			}
			k.mu.Unlock()
		case "help":
			k.print(chatKeys)
		default:
			k.say("nodwyn: /%s waits for the prompt: the turn's end, or Ctrl-C to interrupt it", cmd)
		}
		return nil
	}
	k.mu.Lock()
	k.queue = append(k.queue, line)
	k.mu.Unlock()
	k.say("nodwyn: queued for the model's next step: %s", oneLine(line, 160))
	return nil
}

// answer gives q its answer (nil: no question).
func (k *console) answer(q *question, a answer) *question {
	if q == nil {
		return nil
	}
	q.answer <- a
	if k.tty != nil {
		k.tty.echo(false)
	}
	return nil
}

// ask shows a confirm; its answer is the next line typed.
func (k *console) ask(q *question) {
	k.rend.mu.Lock()
	defer k.rend.mu.Unlock()
	kind, what := confirmHeader(q.req, q.d)
	k.rend.line("%s (%s): %s\n  %s", kind, termtext.Line(q.d.Checker), q.d.Reason, what)
	fmt.Fprint(k.rend.w, confirmPrompt(q.req, q.d))
	if k.tty != nil {
		k.tty.echo(true)
	}
}

// parseAnswer reads a confirm's answer: y, n, a (always; not for a
// security confirm), or n followed by a note for the model ("n use the
// test database", "no, not that one"). An empty line is no.
func parseAnswer(line string, security bool) (answer, bool) {
	t := strings.TrimSpace(line)
	i := 0
	for i < len(t) && ('a' <= t[i]|0x20 && t[i]|0x20 <= 'z') {
		i++
	}
	word, note := strings.ToLower(t[:i]), strings.TrimSpace(strings.TrimLeft(t[i:], " ,:;.-—"))
	switch word {
	case "", "n", "no":
		if word == "" && note != "" {
			return answer{}, false
		}
		return answer{note: note}, true
	case "y", "yes":
		return answer{yes: true}, note == ""
	case "a", "always":
		return answer{yes: true, always: true}, !security && note == ""
	}
	return answer{}, false
}

// prompt reads the next message; false means leave (Ctrl-C twice, Ctrl-D,
// the end of the input, or the console's end).
func (k *console) prompt(ctx context.Context) (string, bool) {
	for {
		if len(k.held) > 0 && ctx.Err() == nil {
			line := k.held[0]
			k.held = k.held[1:]
			if strings.TrimSpace(line) == "" {
				continue
			}
			k.ctrlC = false
			return strings.TrimSpace(line), true
		}
		if k.eof || ctx.Err() != nil {
			return "", false
		}
		var line string
		if k.tty != nil {
			l, err := k.tty.lines.ReadLine("> ")
			switch {
			case errors.Is(err, session.ErrLineInterrupted):
				if k.ctrlC {
					return "", false
				}
				k.ctrlC = true
				k.say("nodwyn: (Ctrl-C again, Ctrl-D or /exit leaves)")
				continue
			case err != nil:
				return "", false
			}
			line = l
		} else {
			select {
			case l, ok := <-k.lines:
				if !ok {
					k.eof = true
					return "", false
				}
				line = l
			case <-k.promptInt:
				if k.ctrlC {
					return "", false
				}
				k.ctrlC = true
				k.say("nodwyn: (Ctrl-C again or /exit leaves)")
				continue
			case <-ctx.Done():
				return "", false
			}
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		k.ctrlC = false
		return strings.TrimSpace(line), true
	}
}

// openInput starts reading the person: a terminal's keys, or standard
// input's lines.
func (k *console) openInput(ctx context.Context) error {
	if f, ok := k.e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		t, err := newConsoleTerm(ctx, f, k.editorOut(f), k.promptInt)
		if err != nil {
			return err
		}
		k.tty = t
		return nil
	}
	k.lines = make(chan string)
	go func(lines chan<- string) {
		defer close(lines)
		in := bufio.NewReader(k.e.stdin)
		for {
			s, err := in.ReadString('\n')
			if s != "" {
				select {
				case lines <- strings.TrimRight(s, "\r\n"):
				case <-k.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}(k.lines)
	return nil
}

func (k *console) closeInput() {
	if k.tty != nil {
		k.tty.close()
	}
}

// editorOut is where the line editor draws: the terminal among stdout and
// stderr (stdout not with --json), else the terminal it reads.
func (k *console) editorOut(in *os.File) io.Writer {
	outs := []io.Writer{k.e.stdout, k.e.stderr}
	if k.r.JSON {
		outs = outs[1:]
	}
	for _, w := range outs {
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return f
		}
	}
	return in
}

// consoleTerm is the console at a terminal. One goroutine reads the
// terminal (pump); at the prompt its bytes go to the line editor (raw
// mode, as the Scheme REPL's termLines), while the model works to the
// console, in the terminal's own mode with echo off (Ctrl-C there is
// SIGINT; a line shows once it is queued).
type consoleTerm struct {
	f      *os.File
	fd     int
	normal *term.State
	lines  *termLines
	reader *chunkReader
	chunks chan []byte
	stop   chan struct{}
	pumped chan struct{}
}

func newConsoleTerm(ctx context.Context, f *os.File, out io.Writer, interrupt <-chan struct{}) (*consoleTerm, error) {
	fd := int(f.Fd())
	st, err := term.GetState(fd)
	if err != nil {
		return nil, fmt.Errorf("reading the terminal's mode: %w", err)
	}
	t := &consoleTerm{f: f, fd: fd, normal: st, chunks: make(chan []byte, 16), stop: make(chan struct{}), pumped: make(chan struct{})}
	t.reader = &chunkReader{ch: t.chunks, interrupt: interrupt, done: ctx.Done()}
	in := &ctrlC{r: t.reader}
	t.lines = &termLines{fd: fd, in: in, normal: st, t: term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "> ")}
	t.lines.t.History = &history{}
	go t.pump()
	return t, nil
}

// pump reads the terminal until the console ends. A read of nothing (a
// Ctrl-D while the model works, in the terminal's own mode) is not its
// end.
func (t *consoleTerm) pump() {
	defer close(t.pumped)
	defer close(t.chunks)
	buf := make([]byte, 4096)
	empty := 0
	for {
		n, err := t.f.Read(buf)
		if n > 0 {
			empty = 0
			select {
			case t.chunks <- append([]byte(nil), buf[:n]...):
			case <-t.stop:
				return
			}
		}
		select {
		case <-t.stop:
			return
		default:
		}
		if err == io.EOF && n == 0 && empty < 100 {
			empty++
			continue
		}
		if err != nil {
			return
		}
	}
}

// close stops the pump (a terminal the poller holds gives up its read at
// once) and puts the terminal's mode back.
func (t *consoleTerm) close() {
	close(t.stop)
	if t.f.SetReadDeadline(time.Now()) == nil {
		select {
		case <-t.pumped:
		case <-time.After(time.Second):
		}
		t.f.SetReadDeadline(time.Time{})
	}
	term.Restore(t.fd, t.normal)
}

// echo turns the terminal's echo on or off (its own mode, not raw).
func (t *consoleTerm) echo(on bool) { setEcho(t.fd, on) }

// chunkReader is the line editor's input: the pump's bytes; a Ctrl-C by
// signal at the prompt is a Ctrl-C typed.
type chunkReader struct {
	ch        <-chan []byte
	interrupt <-chan struct{}
	done      <-chan struct{}
	pending   []byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		select {
		case b, ok := <-c.ch:
			if !ok {
				return 0, io.EOF
			}
			c.pending = b
		case <-c.interrupt:
			c.pending = []byte{3}
		case <-c.done:
			return 0, context.Canceled
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
