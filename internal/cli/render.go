package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// renderer shows a run's progress on stderr: one line per tool call and
// model reply, with the step and the elapsed time. On a terminal a status
// line shows what is running while it runs.
type renderer struct {
	mu      sync.Mutex
	w       io.Writer
	quiet   bool
	tty     bool
	start0  time.Time // when the run started: its run.start event's time
	timed   bool      // an event with a time has been shown
	steps   int
	status  bool // a status line is on screen
	session string

	activity      string    // what the status line says is going on
	activityStart time.Time // since when
	stop          chan struct{}
	stopOnce      sync.Once

	modelData atomic.Int64 // unix ns of the model's last data (waiting.go)

	call   string          // the tool call running: "shell-exec: sh test.sh" (callText)
	notRun map[string]bool // the calls a tool.decision line said did not run (callKey)

	answers bool // the console prints the model's answers (replies without tool calls) in full: no line here

	end   event.RunEnd // the run.end event: its totals for the finish line
	ended time.Time    // when the run.end event says the run ended
}

// close stops the ticker; safe to call more than once.
func (r *renderer) close() {
	r.stopOnce.Do(func() {
		if r.stop != nil {
			close(r.stop)
		}
	})
}

func newRenderer(w io.Writer, quiet bool) *renderer {
	r := &renderer{w: w, quiet: quiet, start0: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !quiet {
		r.tty = true
		r.stop = make(chan struct{})
		go r.tick()
	}
	return r
}

// tick redraws the status line every second, so a long command or a slow
// model shows how long it has been going.
func (r *renderer) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if r.status && r.activity != "" {
				r.draw()
			}
			r.mu.Unlock()
		}
	}
}

func (r *renderer) draw() {
	fmt.Fprintf(r.w, "\r\033[K[%s] %s…", r.elapsed(), r.activityText(time.Now()))
	r.status = true
}

func (r *renderer) start(id string) {
	r.session = id
}

// elapsed is the time since the run started, as the lines show it.
func (r *renderer) elapsed() string { return r.elapsedAt(time.Now()) }

// elapsedAt is t's time since the run started: the run.start event's time
// (a run followed from the daemon, or replayed by attach, is shown by its
// events' own times, never the time they reached this process).
func (r *renderer) elapsedAt(t time.Time) string {
	d := t.Sub(r.start0)
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}

// line writes one line of the display. What it shows may come from the
// model or a tool, so control characters are escaped (termtext.Text, as
// 'nodwyn log' shows them), on a terminal and off it.
func (r *renderer) line(format string, a ...any) {
	if r.status {
		fmt.Fprint(r.w, "\r\033[K")
		r.status = false
	}
	io.WriteString(r.w, termtext.Text(fmt.Sprintf(format, a...))+"\n")
}

func (r *renderer) statusLine(format string, a ...any) {
	if !r.tty {
		return
	}
	r.activity, r.activityStart = termtext.Text(fmt.Sprintf(format, a...)), time.Now()
	r.draw()
}

func (r *renderer) event(ev store.Event) {
	if r.quiet {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	at := time.Now() // when it happened: the event's own time, when it has one
	if !ev.Time.IsZero() {
		at = ev.Time
		if !r.timed && at.Before(r.start0) { // the first event of a run that began before this display
			r.start0 = at
		}
		r.timed = true
	}
	// A field of another JSON type than its own (a log older than the
	// schema: docs/events.md, Changes) is left zero; the rest is shown.
	d, _ := event.Decode(ev.Type, ev.Data)
	switch e := d.(type) {
	case event.RunStart:
		if !ev.Time.IsZero() {
			r.start0 = ev.Time // times count from the run's start (a resumed session's too)
		}
		r.line("nodwyn: session %s in %s (profile %s%s)", e.Session, e.Folder, e.Profile, modeText(e))
		if e.KernelFloor != "" {
			r.line("nodwyn: kernel floor: %s", e.KernelFloor)
		}
		c := e.Confinement
		for _, l := range [][2]string{{"reads", c.Reads}, {"writes", c.Writes}, {"processes", c.Processes}, {"network", c.Network}} {
			if l[1] != "" {
				r.line("nodwyn:   %s: %s", l[0], l[1])
			}
		}
	case event.ModelRequest:
		r.steps++
		r.statusLine("step %d: waiting for the model", r.steps)
	case event.ModelReply:
		if r.answers && len(e.ToolCalls) == 0 {
			break // the console prints it (console.answers)
		}
		if strings.TrimSpace(e.Text) != "" {
			r.line("[%s] model: %s", r.elapsedAt(at), oneLine(e.Text, 200))
		}
	case event.ToolCall:
		r.call = callText(e.Name, e.Arguments)
		r.statusLine("step %d: running %s", r.steps, r.call)
	case event.ToolDecision:
		if !e.Allowed {
			how := "" // who declined it, and their note; a refusal is the guard's
			if e.Answer != "" && e.Answer != "refused" {
				how = "; " + oneLine(e.Answer, 200)
			}
			r.line("[%s] %s not run: %s (%s) %s%s", r.elapsedAt(at), r.callOf(e.Name), e.Decision, e.Checker, oneLine(e.Reason, 160), how)
			if r.notRun == nil {
				r.notRun = map[string]bool{}
			}
			r.notRun[callKey(e.ID, e.Name)] = true
		}
	case event.ToolResult:
		if key := callKey(e.ID, e.Name); r.notRun[key] { // the decision's line said it: its result is the refusal again
			delete(r.notRun, key)
			r.call = ""
			break
		}
		status := "ok"
		if e.Error {
			status = "error"
		} else if e.Exit != 0 {
			status = fmt.Sprintf("exit %d", e.Exit)
		}
		r.line("[%s] %s → %s %s", r.elapsedAt(at), r.callOf(e.Name), status, oneLine(e.Output, 120))
		r.call = ""
	case event.SelfValidation:
		where := fmt.Sprintf("journal entry %d", e.JournalSeq)
		if e.JournalError != "" {
			where = "not in the journal: " + e.JournalError
		}
		r.line("[%s] evidence (%s): %s [%s]", r.elapsedAt(at), e.Tool, oneLine(e.Summary, 120), where)
	case event.RunEnd:
		r.end, r.ended = e, at
	case event.Judge:
		r.line("[%s] judge (%s): %s, %s", r.elapsedAt(at), e.Model, e.Answer, oneLine(e.Reason, 160))
	case event.Note:
		r.line("[%s] note: %s", r.elapsedAt(at), e.Text)
	case event.Error:
		r.line("[%s] error: %s", r.elapsedAt(at), e.Text)
	}
}

func (r *renderer) finish(out session.Outcome) {
	r.close()
	if r.quiet {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	end := time.Now()
	if !r.ended.IsZero() {
		end = r.ended // a run followed or replayed ended when its run.end says
	}
	r.line("nodwyn: %s after %s%s (session %s; 'nodwyn log %s' shows it)", out.Status, r.elapsedAt(end), usageText(r.end.Usage), r.session, r.session)
}

// endOf is what the run.end event said: the run's status and last words
// ("" before one came).
func (r *renderer) endOf() (status, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end.Status, r.end.Text
}

// callKey names a call across its events: its id, and its tool (a call
// no model asked for has the id "").
func callKey(id, name string) string { return id + "\x00" + name }

// usageText is a run's totals as the finish line says them:
// " · 41k tokens in (30k cached) · 3k out · $0.07"; "" with no request.
func usageText(u event.Usage) string {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return ""
	}
	t := " · " + tokens(u.InputTokens) + " tokens in"
	if u.CachedTokens > 0 {
		t += " (" + tokens(u.CachedTokens) + " cached)"
	}
	t += " · " + tokens(u.OutputTokens) + " out"
	if u.CostUSD != nil {
		t += fmt.Sprintf(" · $%.2f", *u.CostUSD)
	}
	return t
}

// intOf reads an integer from JSON decoded into any (an RPC error's
// data): a float64 without a fraction, or a json.Number. Events need
// none: event.Decode gives their numbers their types.
func intOf(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		return int(x), x == float64(int(x))
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	}
	return 0, false
}

// tokens is a count as people read it: 812, 41k, 1.2M.
func tokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// callText is a tool call on one line: its name and what it acts on, the
// command of a shell call, else the path, pattern or id its arguments name,
// else its arguments as compact JSON; long text is cut with "…":
//
//	shell-exec: sh test.sh
//	fs-edit: greet.sh
//	fs-find: *.go in internal
func callText(name string, args map[string]any) string {
	str := func(k string) string { v, _ := args[k].(string); return v }
	var what string
	switch {
	case str("command") != "":
		what = str("command")
	case str("pattern") != "" && str("path") != "":
		what = str("pattern") + " in " + str("path")
	case str("path") != "":
		what = str("path")
	case str("pattern") != "":
		what = str("pattern")
	case str("id") != "":
		what = str("id")
	case len(args) > 0:
		b, _ := json.Marshal(args)
		what = string(b)
	default:
		return name
	}
	return name + ": " + oneLine(what, callShown)
}

// callShown is how many characters of a call's command or arguments the
// display shows.
const callShown = 80

// callOf is the call an event of it belongs to: the one callText last
// described, if it has the same name.
func (r *renderer) callOf(name string) string {
	if r.call == name || strings.HasPrefix(r.call, name+": ") {
		return r.call
	}
	return name
}

func modeText(e event.RunStart) string {
	var m []string
	for _, k := range []struct {
		name string
		on   bool
	}{{"sandbox", e.Sandbox}, {"unattended", e.Unattended}, {"yolo", e.Yolo}, {"resumed", e.Resumed}} {
		if k.on {
			m = append(m, k.name)
		}
	}
	if len(m) == 0 {
		return ""
	}
	return ", " + strings.Join(m, ", ")
}

// oneLine folds white space to single spaces and cuts the text to n runes,
// marking the cut with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// jsonSink writes each event as one JSON line.
func jsonSink(w io.Writer) func(store.Event) {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	return func(ev store.Event) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(ev)
	}
}

// terminalConfirm asks a person at the terminal (Options.ConfirmNote: a
// decline may carry a note for the model); with no terminal on stdin it is
// nil, and nobody is asked.
func terminalConfirm(e *env, r *renderer) func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool, string) {
	f, ok := e.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	// One reader of the terminal for the whole run, started at the first
	// question: a question given up (the run was cancelled) must not leave a
	// second reader racing the next one for the person's answer.
	var answers chan string
	return func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool, string) {
		if answers == nil {
			answers = make(chan string)
			go func() {
				in := bufio.NewReader(f)
				for {
					s, err := in.ReadString('\n')
					if err != nil && s == "" {
						close(answers)
						return
					}
					answers <- s
				}
			}()
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		kind, what := confirmHeader(req, d)
		r.line("%s (%s): %s\n  %s", kind, termtext.Line(d.Checker), d.Reason, what)
		for {
			fmt.Fprint(r.w, confirmPrompt(req, d))
			select {
			case <-ctx.Done():
				return false, false, ""
			case line, ok := <-answers:
				if !ok { // the terminal closed: nobody to answer
					return false, false, ""
				}
				if a, ok := parseAnswer(line, !session.OffersAlways(req, d)); ok {
					return a.yes, a.always, a.note
				}
			}
		}
	}
}

// confirmPrompt is the question under a confirm, the same wherever a person
// answers one (nodwyn run at a terminal, a run followed from the daemon,
// the console); parseAnswer reads the answer.
func confirmPrompt(req guard.Request, d guard.Decision) string {
	if session.NetConfirm(req, d) { // the egress proxy's question about a host
		return "  allow it? [y]es (this connection) / [n]o, or n and a note for the model / [a]lways (this host, for the rest of the session): "
	}
	if d.Verdict == guard.SecurityConfirm {
		return "  allow it? [y]es / [n]o, or n and a note for the model: "
	}
	return "  allow it? [y]es / [n]o, or n and a note for the model / [a]lways (this command or path, for the rest of the session): "
}

// confirmHeader is what a confirm question names: its kind and the call
// ("shell-exec: rm -rf build", "fs-write Makefile").
func confirmHeader(req guard.Request, d guard.Decision) (kind, what string) {
	what = req.Tool
	if c, ok := req.Args["command"].(string); ok {
		what += ": " + c
	} else if p, ok := req.Args["path"].(string); ok {
		what += " " + p
	} else if a, ok := req.Args["address"].(string); ok {
		what += " " + a // the egress proxy's question
	}
	kind = "confirm"
	if d.Verdict == guard.SecurityConfirm {
		kind = "SECURITY confirm"
	}
	return kind, what
}
