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

	usage map[string]any // the run.end event's totals, for the finish line
	ended time.Time      // when the run.end event says the run ended
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
	d := ev.Data
	at := time.Now() // when it happened: the event's own time, when it has one
	if !ev.Time.IsZero() {
		at = ev.Time
		if !r.timed && at.Before(r.start0) { // the first event of a run that began before this display
			r.start0 = at
		}
		r.timed = true
	}
	switch ev.Type {
	case "run.start":
		if !ev.Time.IsZero() {
			r.start0 = ev.Time // times count from the run's start (a resumed session's too)
		}
		r.line("nodwyn: session %v in %v (profile %v%s)", d["session"], d["folder"], d["profile"], modeText(d))
		if f, _ := d["kernel_floor"].(string); f != "" {
			r.line("nodwyn: kernel floor: %s", f)
		}
		if c, _ := d["confinement"].(map[string]any); c != nil {
			for _, k := range []string{"reads", "writes", "processes", "network"} {
				if v, _ := c[k].(string); v != "" {
					r.line("nodwyn:   %s: %s", k, v)
				}
			}
		}
	case "model.request":
		r.steps++
		r.statusLine("step %d: waiting for the model", r.steps)
	case "model.reply":
		if calls, _ := d["tool_calls"].([]map[string]any); r.answers && len(calls) == 0 {
			if calls, _ := d["tool_calls"].([]any); len(calls) == 0 {
				break // the console prints it (console.answers)
			}
		}
		if t, _ := d["text"].(string); strings.TrimSpace(t) != "" {
			r.line("[%s] model: %s", r.elapsedAt(at), oneLine(t, 200))
		}
	case "tool.call":
		r.call = callText(d)
		r.statusLine("step %d: running %s", r.steps, r.call)
	case "tool.decision":
		if a, _ := d["allowed"].(bool); !a {
			how := "" // who declined it, and their note; a refusal is the guard's
			if a, _ := d["answer"].(string); a != "" && a != "refused" {
				how = "; " + oneLine(a, 200)
			}
			r.line("[%s] %s not run: %v (%v) %v%s", r.elapsedAt(at), r.callOf(d), d["decision"], d["checker"], oneLine(fmt.Sprint(d["reason"]), 160), how)
			if r.notRun == nil {
				r.notRun = map[string]bool{}
			}
			r.notRun[callKey(d)] = true
		}
	case "tool.result":
		if r.notRun[callKey(d)] { // the decision's line said it: its result is the refusal again
			delete(r.notRun, callKey(d))
			r.call = ""
			break
		}
		status := "ok"
		if e, _ := d["error"].(bool); e {
			status = "error"
		} else if x, ok := intOf(d["exit"]); ok && x != 0 {
			status = fmt.Sprintf("exit %d", x)
		}
		r.line("[%s] %s → %s %s", r.elapsedAt(at), r.callOf(d), status, oneLine(fmt.Sprint(d["output"]), 120))
		r.call = ""
	case "self_validation":
		where := fmt.Sprintf("journal entry %v", d["journal_seq"])
		if e, ok := d["journal_error"]; ok {
			where = fmt.Sprintf("not in the journal: %v", e)
		}
		r.line("[%s] evidence (%v): %s [%s]", r.elapsedAt(at), d["tool"], oneLine(fmt.Sprint(d["summary"]), 120), where)
	case "run.end":
		r.usage, r.ended = d, at
	case "judge":
		r.line("[%s] judge (%v): %v, %s", r.elapsedAt(at), d["model"], d["answer"], oneLine(fmt.Sprint(d["reason"]), 160))
	case "note":
		r.line("[%s] note: %v", r.elapsedAt(at), d["text"])
	case "error":
		r.line("[%s] error: %v", r.elapsedAt(at), d["text"])
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
	r.line("nodwyn: %s after %s%s (session %s; 'nodwyn log %s' shows it)", out.Status, r.elapsedAt(end), usageText(r.usage), r.session, r.session)
}

// endOf is what the run.end event said: the run's status and last words
// ("" before one came).
func (r *renderer) endOf() (status, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	status, _ = r.usage["status"].(string)
	text, _ = r.usage["text"].(string)
	return status, text
}

// callKey names a call across its events: its id, and its tool (a call
// no model asked for has the id "").
func callKey(d map[string]any) string { return fmt.Sprint(d["id"], "\x00", d["name"]) }

// usageText is a run's totals as the finish line says them:
// " · 41k tokens in (30k cached) · 3k out · $0.07"; "" with no request.
func usageText(d map[string]any) string {
	in, _ := number(d["input_tokens"])
	out, _ := number(d["output_tokens"])
	if in == 0 && out == 0 {
		return ""
	}
	t := " · " + tokens(int(in)) + " tokens in"
	if c, _ := number(d["cached_tokens"]); c > 0 {
		t += " (" + tokens(int(c)) + " cached)"
	}
	t += " · " + tokens(int(out)) + " out"
	if c, ok := number(d["cost_usd"]); ok {
		t += fmt.Sprintf(" · $%.2f", c)
	}
	return t
}

// number reads a number an event carries: an int in process, a float64
// once it has come through JSON (the daemon's events, attach, a log read
// back), a json.Number from a decoder that keeps them.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// intOf is number as an int: an exit status, a count. A float64 with a
// fraction is not one.
func intOf(v any) (int, bool) {
	if x, ok := v.(json.Number); ok {
		n, err := x.Int64()
		return int(n), err == nil
	}
	f, ok := number(v)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
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
func callText(d map[string]any) string {
	name := fmt.Sprint(d["name"])
	args, _ := d["arguments"].(map[string]any)
	if args == nil {
		if raw, ok := d["arguments"].(string); ok {
			if json.Unmarshal([]byte(raw), &args) != nil {
				return name + ": " + oneLine(raw, callShown)
			}
		}
	}
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
func (r *renderer) callOf(d map[string]any) string {
	name := fmt.Sprint(d["name"])
	if r.call == name || strings.HasPrefix(r.call, name+": ") {
		return r.call
	}
	return name
}

func modeText(d map[string]any) string {
	var m []string
	for _, k := range []string{"sandbox", "unattended", "yolo", "resumed"} {
		if b, _ := d[k].(bool); b {
			m = append(m, k)
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
