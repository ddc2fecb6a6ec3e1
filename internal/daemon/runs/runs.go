// Package runs is the daemon's runs (as tailscale's ipnlocal is its
// backend): each a launch.Run of its own, the record the daemon keeps of
// it, the clients following its events, and the routing of its confirms
// to them. It knows nothing of the wire's codes: internal/daemon/methods
// answers for it.
package runs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/daemon/wire"
	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
)

// Config is what the daemon's runs share.
type Config struct {
	Dirs       config.Dirs
	Store      *store.Store
	Getenv     func(string) string
	Stderr     io.Writer // the daemon's: what its runs say before they start, and Scheme's display
	Version    string
	NoKeychain bool // nodwyn daemon --no-keychain: no run asks the system keychain
}

// Backend holds the daemon's runs.
type Backend struct {
	cfg Config

	ctx    context.Context // the runs' parent: ends when the daemon stops
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the runs

	mu       sync.Mutex
	runs     map[string]*Run
	order    []string
	stopped  bool
	stopping chan struct{}
}

// ErrStopping is Start's error once the daemon is stopping.
var ErrStopping = errors.New("the daemon is stopping")

// ErrNotFound is State's error for an id that is neither a run the daemon
// holds nor a saved session.
var ErrNotFound = errors.New("no such run or session")

// New is a backend with no run.
func New(cfg Config) *Backend {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Backend{cfg: cfg, ctx: ctx, cancel: cancel, runs: map[string]*Run{}, stopping: make(chan struct{})}
}

// Store is the sessions' store.
func (b *Backend) Store() *store.Store { return b.cfg.Store }

// Stopping is closed once Shutdown is called.
func (b *Backend) Stopping() <-chan struct{} { return b.stopping }

// Shutdown ends every run (they become interrupted, resumable with
// run.resume) and waits for them; it returns false when it had been
// called already.
func (b *Backend) Shutdown(why string) bool {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return false
	}
	b.stopped = true
	close(b.stopping)
	b.mu.Unlock()
	b.cancel(fmt.Errorf("%w: %s", session.ErrInterrupted, why))
	b.wg.Wait()
	return true
}

// Wait waits for every run to end.
func (b *Backend) Wait() { b.wg.Wait() }

// Counts are how many runs the daemon holds, and how many of them run.
func (b *Backend) Counts() (total, running int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.runs {
		if !r.Ended() {
			running++
		}
	}
	return len(b.runs), running
}

// Run is the run id the daemon holds, or nil.
func (b *Backend) Run(id string) *Run {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[id]
}

// Start starts spec as a run of the daemon and returns its id once the
// session exists, or the error that stopped it before (a *launch.Error
// says its kind).
func (b *Backend) Start(ctx context.Context, spec launch.Spec) (string, error) {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return "", ErrStopping
	}
	b.wg.Add(1)
	b.mu.Unlock()
	spec.NoKeychain = spec.NoKeychain || b.cfg.NoKeychain
	rctx, cancel := context.WithCancelCause(b.ctx)
	run := &Run{cancel: cancel, confirms: map[string]*pendingConfirm{}, subs: map[*Subscriber]struct{}{},
		done: make(chan struct{}), profile: spec.Profile}
	startedc := make(chan struct{})
	errc := make(chan error, 1)
	var once sync.Once
	started := func(s *session.Session, folder string) {
		run.mu.Lock()
		run.id, run.folder, run.startedAt, run.status = s.ID, folder, time.Now(), "running"
		m := s.Mode() // as the session resolved the flags
		run.sandbox, run.unattended, run.yolo = m.Sandbox, m.Unattended, m.Yolo
		run.mu.Unlock()
		b.mu.Lock()
		if _, held := b.runs[s.ID]; !held { // a resumed run keeps its place
			b.order = append(b.order, s.ID)
		}
		b.runs[s.ID] = run
		b.mu.Unlock()
		once.Do(func() { close(startedc) })
	}
	hooks := launch.Hooks{Getenv: b.cfg.Getenv, Stderr: b.cfg.Stderr, Version: b.cfg.Version,
		Watch: func() launch.Watch {
			return launch.Watch{Recorder: run.event, Started: started, Confirm: run.confirm}
		}}
	go func() {
		defer b.wg.Done()
		defer cancel(nil)
		var out session.Outcome
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil { // one run's bug never takes the daemon down
					err = fmt.Errorf("the run failed: internal error: %v", p)
					out = session.Outcome{Status: "failed", Text: err.Error()}
				}
			}()
			out, err = launch.Run(rctx, spec, hooks)
		}()
		select {
		case <-startedc:
			run.finish(out, err)
		default:
			if err == nil {
				err = errors.New("the run ended before its session started")
			}
			errc <- err
		}
	}()
	select {
	case <-startedc:
		run.mu.Lock()
		id := run.id
		run.mu.Unlock()
		return id, nil
	case err := <-errc:
		return "", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// State is run.state's answer: the daemon's own record of a run it
// holds, else the session's saved state (a "running" one that no process
// holds was interrupted: its daemon died).
func (b *Backend) State(id string) (map[string]any, error) {
	if run := b.Run(id); run != nil {
		return run.State(), nil
	}
	if !store.ValidID(id) {
		return nil, ErrNotFound
	}
	ss, err := b.cfg.Store.LoadState(id)
	if err != nil {
		return nil, ErrNotFound
	}
	return savedState(b.cfg.Store, ss), nil
}

// List is run.list's runs: those the daemon holds, in the order they
// started, then the newest 20 sessions whose process died while they ran
// (a daemon killed, a run killed): interrupted, resumable with run.resume.
func (b *Backend) List() []map[string]any {
	b.mu.Lock()
	ids := append([]string(nil), b.order...)
	b.mu.Unlock()
	out := []map[string]any{}
	seen := map[string]bool{}
	for _, id := range ids {
		if run := b.Run(id); run != nil {
			out = append(out, run.State())
			seen[id] = true
		}
	}
	if sessions, err := b.cfg.Store.ListSessions(); err == nil {
		n := 0
		for i := range sessions {
			ss := &sessions[i]
			if seen[ss.ID] || ss.Status != "interrupted" || n == 20 {
				continue
			}
			n++
			out = append(out, savedState(b.cfg.Store, ss))
		}
	}
	return out
}

func savedState(st *store.Store, ss *store.SessionState) map[string]any {
	status := ss.Status
	if status == "running" && !st.SessionHeld(ss.ID) {
		status = "interrupted"
	}
	return map[string]any{"id": ss.ID, "status": status, "folder": ss.Folder, "profile": ss.Profile,
		"sandbox": sandboxName(ss.Sandbox), "yolo": ss.Yolo, "unattended": ss.Unattended,
		"tool_calls": ss.ToolCalls, "usage": ss.Usage, "started": ss.Created, "updated": ss.Updated,
		"in_daemon": false, "resumable": status != "finished"}
}

func sandboxName(on bool) any {
	if on {
		return "container"
	}
	return nil
}

// Run is one run the daemon holds.
type Run struct {
	cancel context.CancelCauseFunc
	done   chan struct{}

	mu         sync.Mutex
	id         string
	folder     string
	profile    string
	sandbox    bool
	yolo       bool
	unattended bool
	status     string
	startedAt  time.Time
	endedAt    time.Time
	outcome    string
	toolCalls  int
	usage      map[string]int
	confirmSeq int
	confirms   map[string]*pendingConfirm
	subs       map[*Subscriber]struct{}
}

// Subscriber follows a run's events (and its confirm.ask questions, as
// events of that type) from the moment it subscribed.
type Subscriber struct {
	C       chan store.Event // closed when the run has ended, or the subscriber was dropped
	dropped bool
}

// Dropped says the subscriber read too slowly and was dropped: C was
// closed before the run ended.
func (s *Subscriber) Dropped() bool { return s.dropped }

// Reply is a client's answer to a confirm.
type Reply struct {
	Yes, Always bool
	Note        string
}

type pendingConfirm struct {
	seq   int
	info  wire.ConfirmAsk
	reply chan Reply
}

// Ended says the run has ended.
func (r *Run) Ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Done is closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Cancel stops the run with cause.
func (r *Run) Cancel(cause error) { r.cancel(cause) }

// State is run.state's answer for a run the daemon holds.
func (r *Run) State() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ended any
	if !r.endedAt.IsZero() {
		ended = r.endedAt
	}
	open := r.openConfirms()
	return map[string]any{"id": r.id, "status": r.status, "folder": r.folder, "profile": r.profile,
		"sandbox": sandboxName(r.sandbox), "yolo": r.yolo, "unattended": r.unattended,
		"tool_calls": r.toolCalls, "usage": r.usage, "started": r.startedAt, "ended": ended,
		"outcome": r.outcome, "confirms": open, "in_daemon": true, "resumable": r.status != "finished" && r.status != "running"}
}

// Outcome is how the run ended (its status, its final text); "" while it
// runs.
func (r *Run) Outcome() (status, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.outcome
}

// event is the run's sink: the daemon's record, then every subscriber (a
// subscriber that cannot keep up is dropped and told where to pick up).
func (r *Run) event(ev store.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case "tool.call":
		r.toolCalls++
	case "run.start", "run.end": // the only ones read: others pass on as they are
		d, _ := event.Decode(ev.Type, ev.Data)
		switch e := d.(type) {
		case event.RunStart:
			r.profile = e.Profile
		case event.RunEnd:
			r.usage = map[string]int{"input_tokens": e.InputTokens, "output_tokens": e.OutputTokens}
		}
	}
	r.broadcast(ev)
}

func (r *Run) broadcast(ev store.Event) {
	for s := range r.subs {
		select {
		case s.C <- ev:
		default:
			s.dropped = true
			close(s.C)
			delete(r.subs, s)
		}
	}
}

// Subscribe starts a subscription and returns the confirms open at that
// moment (later ones come on the channel, as confirm.ask events: none is
// in both).
func (r *Run) Subscribe() (*Subscriber, []wire.ConfirmAsk) {
	s := &Subscriber{C: make(chan store.Event, 4096)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Ended() {
		close(s.C)
		return s, nil
	}
	r.subs[s] = struct{}{}
	return s, r.openConfirms()
}

// openConfirms are the confirms waiting for an answer, in the order they
// were asked; r.mu is held.
func (r *Run) openConfirms() []wire.ConfirmAsk {
	pending := make([]*pendingConfirm, 0, len(r.confirms))
	for _, c := range r.confirms {
		pending = append(pending, c)
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].seq < pending[j].seq }) // c2 before c10
	open := make([]wire.ConfirmAsk, len(pending))
	for i, c := range pending {
		open[i] = c.info
	}
	return open
}

// Unsubscribe ends a subscription.
func (r *Run) Unsubscribe(s *Subscriber) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.subs[s]; ok {
		delete(r.subs, s)
		close(s.C)
	}
}

// confirm asks the run's clients: a confirm.ask to every run.events
// subscriber, answered by confirm.answer; nobody answering, the run waits
// (as at a terminal) until it is cancelled or its deadline passes.
func (r *Run) confirm(ctx context.Context, req guard.Request, dec guard.Decision) (bool, bool, string) {
	r.mu.Lock()
	r.confirmSeq++
	id := "c" + strconv.Itoa(r.confirmSeq)
	kind := "ordinary"
	if dec.Verdict == guard.SecurityConfirm {
		kind = "security"
	}
	info := wire.ConfirmAsk{Run: r.id, Confirm: id, Tool: req.Tool, Args: redactedArgs(req), Reason: dec.Reason,
		Checker: dec.Checker, Kind: kind, AlwaysOffered: session.OffersAlways(req, dec)}
	pc := &pendingConfirm{seq: r.confirmSeq, info: info, reply: make(chan Reply, 1)}
	r.confirms[id] = pc
	r.broadcast(store.Event{Type: "confirm.ask", Time: time.Now(), Data: map[string]any{"ask": info}})
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.confirms, id)
		r.mu.Unlock()
	}()
	select {
	case a := <-pc.reply:
		return a.Yes, a.Always && session.OffersAlways(req, dec), a.Note
	case <-ctx.Done():
		return false, false, ""
	}
}

// AskOf is the question a confirm.ask event a subscriber received holds.
func AskOf(ev store.Event) (wire.ConfirmAsk, bool) {
	a, ok := ev.Data["ask"].(wire.ConfirmAsk)
	return a, ok && ev.Type == "confirm.ask"
}

// Answer gives the open confirm id its reply; false when there is no such
// open confirm (answered already, or given up).
func (r *Run) Answer(id string, a Reply) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	pc, ok := r.confirms[id]
	if !ok {
		return false
	}
	delete(r.confirms, id)
	pc.reply <- a
	return true
}

// finish records how the run ended and ends its subscriptions (after the
// last event: the sinks run before launch.Run returns).
func (r *Run) finish(out session.Outcome, err error) {
	r.mu.Lock()
	r.status, r.outcome, r.endedAt = out.Status, out.Text, time.Now()
	if err != nil && r.status == "" {
		r.status, r.outcome = "failed", err.Error()
	}
	for s := range r.subs {
		close(s.C)
		delete(r.subs, s)
	}
	// Ended under the lock Subscribe takes: a subscription cannot come in
	// after the subscribers were closed and before the run says it ended.
	close(r.done)
	r.mu.Unlock()
}

// redactedArgs are a request's arguments as a confirm shows them: strings
// cut to a readable length.
func redactedArgs(req guard.Request) map[string]any {
	out := map[string]any{}
	for k, v := range req.Args {
		if s, ok := v.(string); ok && len(s) > 4000 {
			v = s[:4000] + "…"
		}
		out[k] = v
	}
	return out
}
