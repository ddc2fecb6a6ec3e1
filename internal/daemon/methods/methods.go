// Package methods is the daemon's method table and its handlers (as
// tailscale's localapi is): each method's parameters decoded from the
// wire types (internal/daemon/wire), answered from the runs
// (internal/daemon/runs), their errors given the RPC codes docs/rpc.md
// lists. Adding a method is a line of Table, its handler, its wire types
// and its section of docs/rpc.md.
package methods

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/nodwyn/nodwyn/internal/daemon/runs"
	"github.com/nodwyn/nodwyn/internal/daemon/wire"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/rpc"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
)

// Table is the daemon's methods, in the order its help lists them
// (daemon.hello, the first call of every connection, is rpc's).
var Table = []struct {
	Name    string
	Handler func(*Handlers, context.Context, *rpc.Call) (any, error)
}{
	{"run.start", (*Handlers).runStart},
	{"run.resume", (*Handlers).runResume},
	{"run.state", (*Handlers).runState},
	{"run.list", (*Handlers).runList},
	{"run.cancel", (*Handlers).runCancel},
	{"run.events", (*Handlers).runEvents},
	{"confirm.answer", (*Handlers).confirmAnswer},
	{"daemon.status", (*Handlers).status},
	{"daemon.stop", (*Handlers).stop},
}

// Names are the methods' names, in Table's order.
func Names() []string {
	out := make([]string, len(Table))
	for i, m := range Table {
		out[i] = m.Name
	}
	return out
}

// Info is what the daemon says of itself (daemon.status), and what it
// allows its runs.
type Info struct {
	Socket, Data string
	Version      string
	Started      time.Time
	AllowNoFloor bool             // nodwyn daemon --no-kernel-floor: run.start may ask for no_kernel_floor
	Stop         func(why string) // daemon.stop: called after its answer is written
}

// Handlers answer the methods from the runs.
type Handlers struct {
	runs  *runs.Backend
	info  Info
	names []string // the methods, sorted: daemon.status lists them
}

// Methods are the handlers of Table, for rpc.NewServer.
func Methods(b *runs.Backend, info Info) map[string]rpc.Handler {
	h := &Handlers{runs: b, info: info, names: Names()}
	sort.Strings(h.names)
	m := map[string]rpc.Handler{}
	for _, t := range Table {
		f := t.Handler
		m[t.Name] = func(ctx context.Context, call *rpc.Call) (any, error) { return f(h, ctx, call) }
	}
	return m
}

// checkSpec refuses what a run of the daemon may not be given: relative
// paths (the daemon's folder is not the client's), a negative number of
// tool calls.
func checkSpec(p *launch.Spec) error {
	for name, v := range map[string]string{"folder": p.Folder, "script": p.Script, "trajectory": p.Trajectory, "contract": p.Contract} {
		if v != "" && !filepath.IsAbs(v) {
			return &rpc.Error{Code: rpc.CodeInvalidParams, Message: name + " must be an absolute path: the daemon's folder is not the client's",
				Data: map[string]any{"param": name, "fix": "give " + name + " as an absolute path"}}
		}
	}
	if p.MaxToolCalls < 0 {
		return &rpc.Error{Code: rpc.CodeInvalidParams, Message: "max_tool_calls must not be negative",
			Data: map[string]any{"param": "max_tool_calls", "fix": "give a number of tool calls, or leave it out"}}
	}
	return nil
}

func (h *Handlers) runStart(ctx context.Context, call *rpc.Call) (any, error) {
	var p wire.StartParams
	if err := rpc.DecodeParams(call.Params, &p, wire.StartUnlisted...); err != nil {
		return nil, err
	}
	if p.Resume != "" {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown parameter id", Data: map[string]any{"param": "id", "known": rpc.Params(&p, wire.StartUnlisted...), "fix": "continue a session with run.resume"}}
	}
	if p.Folder == "" {
		return nil, rpc.Required("folder", &p, wire.StartUnlisted...)
	}
	if p.Instruction == "" {
		return nil, rpc.Required("instruction", &p, wire.StartUnlisted...)
	}
	if err := checkSpec(&p); err != nil {
		return nil, err
	}
	return h.start(ctx, p)
}

func (h *Handlers) runResume(ctx context.Context, call *rpc.Call) (any, error) {
	var p wire.StartParams
	if err := rpc.DecodeParams(call.Params, &p, wire.ResumeUnlisted...); err != nil {
		return nil, err
	}
	if p.Resume == "" {
		return nil, rpc.Required("id", &p, wire.ResumeUnlisted...)
	}
	if p.Folder != "" || p.Contract != "" {
		name := "folder"
		if p.Folder == "" {
			name = "contract"
		}
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown parameter " + name,
			Data: map[string]any{"param": name, "known": rpc.Params(&p, wire.ResumeUnlisted...), "fix": "a resumed session works in its own folder; leave " + name + " out"}}
	}
	if run := h.runs.Run(p.Resume); run != nil && !run.Ended() {
		return nil, rpc.Errorf(rpc.CodeConflict, "wait for it to end, or run.cancel it first", "run %s is still running in this daemon", p.Resume)
	}
	if err := checkSpec(&p); err != nil {
		return nil, err
	}
	return h.start(ctx, p)
}

// start starts spec as a run of the daemon and answers its id once the
// session exists (or the error that stopped it before).
func (h *Handlers) start(ctx context.Context, spec launch.Spec) (any, error) {
	if spec.NoKernelFloor && !h.info.AllowNoFloor {
		return nil, &rpc.Error{Code: rpc.CodeRefused, Message: "no_kernel_floor: a run of the daemon without the kernel floor could read the daemon's token (and with it answer its own confirms, start runs, send the provider's key elsewhere)",
			Data: map[string]any{"param": "no_kernel_floor", "fix": "run it in process (nodwyn run --no-kernel-floor), or start the daemon with --no-kernel-floor if you accept that"}}
	}
	id, err := h.runs.Start(ctx, spec)
	switch {
	case errors.Is(err, runs.ErrStopping):
		return nil, rpc.Errorf(rpc.CodeShuttingDown, "start a daemon again, then the run", "the daemon is stopping")
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, startError(err)
	}
	return wire.Started{ID: id}, nil
}

// startError is the RPC error of a run that stopped before it started:
// the same words nodwyn run would print, and its exit code in data.
func startError(err error) error {
	code := launch.KindOf(err).ExitCode()
	var le *launch.Error
	if errors.As(err, &le) && le.Err != nil {
		err = le.Err
	}
	rc := rpc.CodeRefused
	if code == launch.Usage.ExitCode() {
		rc = rpc.CodeInvalidParams
	}
	return &rpc.Error{Code: rc, Message: err.Error(), Data: map[string]any{"exit_code": code,
		"fix": "the message says what to change; the same run with nodwyn run would have stopped the same way"}}
}

func notFound(id string) *rpc.Error {
	return rpc.Errorf(rpc.CodeNotFound, "list the runs with run.list, or the sessions with nodwyn sessions", "no run or session %q", id)
}

func (h *Handlers) state(id string) (map[string]any, error) {
	st, err := h.runs.State(id)
	if err != nil {
		return nil, notFound(id)
	}
	return st, nil
}

func (h *Handlers) runState(ctx context.Context, call *rpc.Call) (any, error) {
	var p wire.IDParams
	if err := rpc.DecodeParams(call.Params, &p, "since"); err != nil {
		return nil, err
	}
	if p.Since != 0 {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown parameter since", Data: map[string]any{"param": "since", "known": rpc.Params(&p, "since"), "fix": "leave since out"}}
	}
	if p.ID == "" {
		return nil, rpc.Required("id", &p, "since")
	}
	return h.state(p.ID)
}

func (h *Handlers) runList(ctx context.Context, call *rpc.Call) (any, error) {
	if err := rpc.DecodeParams(call.Params, &struct{}{}); err != nil {
		return nil, err
	}
	return map[string]any{"runs": h.runs.List()}, nil
}

func (h *Handlers) runCancel(ctx context.Context, call *rpc.Call) (any, error) {
	var p wire.IDParams
	if err := rpc.DecodeParams(call.Params, &p, "since"); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, rpc.Required("id", &p, "since")
	}
	run := h.runs.Run(p.ID)
	if run == nil {
		return nil, notFound(p.ID)
	}
	if run.Ended() {
		return nil, rpc.Errorf(rpc.CodeConflict, "look at its outcome with run.state", "run %s has already ended", p.ID)
	}
	run.Cancel(fmt.Errorf("%w (run.cancel)", session.ErrInterrupted))
	<-run.Done()
	return run.State(), nil
}

// runEvents replays the run's events from since out of its log, then
// sends them live as run.event notifications until the run ends; the
// answer says where it stopped, so a client that reconnects asks again
// from there and misses nothing.
func (h *Handlers) runEvents(ctx context.Context, call *rpc.Call) (any, error) {
	var p wire.IDParams
	if err := rpc.DecodeParams(call.Params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, rpc.Required("id", &p)
	}
	run := h.runs.Run(p.ID)
	if run == nil {
		if _, err := h.state(p.ID); err != nil {
			return nil, err
		}
	}
	var sub *runs.Subscriber
	var open []wire.ConfirmAsk
	if run != nil {
		sub, open = run.Subscribe()
		defer run.Unsubscribe(sub)
	}
	last := p.Since - 1
	st := h.runs.Store()
	evs, _, err := store.ReadLogSkipping(st.LogPath(p.ID))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, rpc.Errorf(rpc.CodeInternalError, "", "reading the log of %s: %v", p.ID, err)
	}
	send := func(ev store.Event) error {
		if ev.Seq <= last {
			return nil
		}
		last = ev.Seq
		return call.Notify("run.event", wire.RunEvent{Run: p.ID, Event: ev})
	}
	for _, ev := range evs {
		if err := send(ev); err != nil {
			return nil, err
		}
	}
	end := func(state map[string]any) wire.EventsEnd {
		status, _ := state["status"].(string)
		return wire.EventsEnd{Run: p.ID, Next: last + 1, Status: status, Outcome: state["outcome"], Ended: true}
	}
	if run == nil {
		state, _ := h.state(p.ID)
		return end(state), nil
	}
	for _, c := range open { // a client that reconnects sees the questions still open
		call.Notify("confirm.ask", c)
	}
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				if sub.Dropped() {
					return nil, rpc.Errorf(rpc.CodeConflict, "ask again with since = next", "the client read too slowly; events from %d on were not sent", last+1)
				}
				// Everything the run emitted has been sent.
				return end(run.State()), nil
			}
			if ask, ok := runs.AskOf(ev); ok {
				call.Notify("confirm.ask", ask)
				continue
			}
			if err := send(ev); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (h *Handlers) confirmAnswer(ctx context.Context, call *rpc.Call) (any, error) {
	var p wire.AnswerParams
	if err := rpc.DecodeParams(call.Params, &p); err != nil {
		return nil, err
	}
	for _, r := range []struct{ name, v string }{{"run", p.Run}, {"confirm", p.Confirm}, {"answer", p.Answer}} {
		if r.v == "" {
			return nil, rpc.Required(r.name, &p)
		}
	}
	if p.Answer != "yes" && p.Answer != "no" && p.Answer != "always" {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "answer must be \"yes\", \"no\" or \"always\", not " + strconv.Quote(p.Answer),
			Data: map[string]any{"param": "answer", "fix": `answer "yes", "no" (with a note for the model, if you like) or "always"`}}
	}
	if p.Note != "" && p.Answer != "no" {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "a note goes with a decline",
			Data: map[string]any{"param": "note", "fix": `answer "no" with the note, or leave the note out`}}
	}
	run := h.runs.Run(p.Run)
	if run == nil {
		return nil, notFound(p.Run)
	}
	if !run.Answer(p.Confirm, runs.Reply{Yes: p.Answer != "no", Always: p.Answer == "always", Note: p.Note}) {
		return nil, rpc.Errorf(rpc.CodeNotFound, "see the open questions in run.state's confirms", "run %s has no open confirm %q (answered already, or given up)", p.Run, p.Confirm)
	}
	return map[string]any{"run": p.Run, "confirm": p.Confirm, "answer": p.Answer}, nil
}

func (h *Handlers) status(ctx context.Context, call *rpc.Call) (any, error) {
	if err := rpc.DecodeParams(call.Params, &struct{}{}); err != nil {
		return nil, err
	}
	total, running := h.runs.Counts()
	return map[string]any{"pid": os.Getpid(), "socket": h.info.Socket, "version": h.info.Version, "started": h.info.Started,
		"runs": total, "running": running, "data": h.info.Data, "methods": h.names}, nil
}

func (h *Handlers) stop(ctx context.Context, call *rpc.Call) (any, error) {
	if err := rpc.DecodeParams(call.Params, &struct{}{}); err != nil {
		return nil, err
	}
	_, running := h.runs.Counts()
	// After this answer is written: the server's Close waits for handlers.
	go h.info.Stop("daemon.stop")
	return map[string]any{"stopping": true, "interrupted": running}, nil
}
