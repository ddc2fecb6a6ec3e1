package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/daemon"
	"github.com/nodwyn/nodwyn/internal/daemon/wire"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/rpc"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// daemonSocket is the daemon a run is submitted to: --daemon, else
// NODWYN_SOCKET, else [daemon] socket in the person's own config.toml
// (never a project's), else none (the run is in this process).
func (r *RunCmd) daemonSocket(getenv func(string) string) (string, error) {
	if r.Daemon != "" {
		return r.Daemon, nil
	}
	if s := getenv("NODWYN_SOCKET"); s != "" {
		return s, nil
	}
	_, dirs := launch.HomeDirs(getenv)
	cfg, err := config.LoadWith(dirs, "", nil, getenv)
	if err != nil {
		return "", &exitError{code: ExitUsage, err: err}
	}
	if s := cfg.Daemon.Socket; s != "" && !filepath.IsAbs(s) {
		return "", usageErr("%s: [daemon] socket %q must be an absolute path", cfg.Origin["daemon.socket"], s)
	}
	return cfg.Daemon.Socket, nil
}

// viaDaemon is nodwyn run submitted to the daemon on sock: the same flags
// become run.start's (or run.resume's) parameters, the run's events are
// shown as an in-process run shows them, its confirms are asked here, and
// the exit code is the one the run would have had in this process.
func (r *RunCmd) viaDaemon(e *env, sock string) error {
	_, dirs := launch.HomeDirs(e.getenv)
	sock, err := filepath.Abs(sock)
	if err != nil {
		return usageErr("--daemon: %v", err)
	}
	spec, err := r.spec(e)
	if err != nil {
		return err
	}
	if spec.Instruction == "" && spec.Resume == "" {
		return usageErr("no task given: write it as arguments, '-' to read standard input, or --instruction-file FILE")
	}
	method := "run.start"
	if r.Resume != "" {
		method = "run.resume"
		if r.Folder != "" || r.Contract != "" {
			return usageErr("--resume continues a session in its own folder with its own contract: leave out -C and --contract")
		}
		if st, err := store.Open(dirs.Data); err == nil {
			if resolved, err := st.ResolveID(r.Resume); err == nil {
				spec.Resume = resolved
			}
		}
	} else {
		folder := r.Folder
		if folder == "" {
			folder = "."
		}
		spec.Folder = launch.Physical(absPath(folder))
		spec.Contract = absPath(r.Contract)
	}
	forDaemon(&spec)

	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	rend := newRenderer(e.stderr, r.Quiet)
	defer rend.close()
	f := &followed{e: e, rend: rend}
	if r.JSON {
		f.json = jsonSink(e.stdout)
	}
	if !r.Unattended && !r.NoConfirm && r.Sandbox == "" {
		f.ask = terminalConfirm(e, rend)
		if f.ask == nil && !r.Detach {
			// No terminal here to answer at: unattended, as in process,
			// rather than waiting on an answer nobody will give.
			spec.Unattended = true
		}
	}
	c, err := daemon.Dial(context.Background(), dirs.Data, sock, f.notify)
	if err != nil {
		return &exitError{code: ExitFailed, err: err}
	}
	defer c.Close()
	f.c = c
	var started wire.Started
	if err := c.Call(ctx, method, spec, &started); err != nil {
		return daemonError(err)
	}
	if r.Detach {
		fmt.Fprintln(e.stdout, started.ID)
		return nil
	}
	rend.start(started.ID)
	out, err := f.follow(ctx, started.ID, true)
	if err != nil {
		return err
	}
	rend.finish(out)
	if !r.JSON && out.Text != "" && out.Status == "finished" {
		fmt.Fprintln(e.stdout, termtext.Text(out.Text))
	}
	return exitFor(out, dirs.Data)
}

// daemonError is the exit of a call the daemon refused: a run that stopped
// before it started carries nodwyn run's exit code.
func daemonError(err error) error {
	var e *rpc.Error
	if errors.As(err, &e) {
		code := ExitFailed
		if n, ok := intOf(e.Data["exit_code"]); ok {
			code = n
		} else if e.Code == rpc.CodeInvalidParams {
			code = ExitUsage
		}
		return &exitError{code: code, err: errors.New(e.Message)}
	}
	return &exitError{code: ExitFailed, err: err}
}

// followed is a run followed from a client: its events rendered (and
// written as JSON lines with --json), its confirms asked at the terminal.
type followed struct {
	e    *env
	rend *renderer
	json func(store.Event)
	ask  func(context.Context, guard.Request, guard.Decision) (bool, bool, string)
	c    *rpc.Client

	mu     sync.Mutex
	asking map[string]bool
	ctx    context.Context
}

func (f *followed) notify(method string, params json.RawMessage) {
	switch method {
	case "run.event":
		var p wire.RunEvent
		if json.Unmarshal(params, &p) != nil {
			return
		}
		f.rend.event(p.Event)
		if f.json != nil {
			f.json(p.Event)
		}
	case "confirm.ask":
		var q wire.ConfirmAsk
		if json.Unmarshal(params, &q) != nil {
			return
		}
		f.mu.Lock()
		if f.ask == nil || f.asking[q.Confirm] || f.ctx == nil {
			f.mu.Unlock()
			return // nobody here answers: another client may
		}
		if f.asking == nil {
			f.asking = map[string]bool{}
		}
		f.asking[q.Confirm] = true
		ctx := f.ctx
		f.mu.Unlock()
		verdict := guard.Confirm
		if q.Kind == "security" {
			verdict = guard.SecurityConfirm
		}
		// Not on the connection's reading goroutine: the answer is a call.
		go func() {
			yes, always, note := f.ask(ctx, guard.Request{Tool: q.Tool, Args: q.Args}, guard.Decision{Verdict: verdict, Checker: q.Checker, Reason: q.Reason})
			a := wire.AnswerParams{Run: q.Run, Confirm: q.Confirm, Answer: "no"}
			switch {
			case yes && always:
				a.Answer = "always"
			case yes:
				a.Answer = "yes"
			case note != "":
				a.Note = note // the model reads it with the decline
			}
			actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f.c.Call(actx, "confirm.answer", a, nil)
		}()
	}
}

// follow shows the run's events until it ends and returns its outcome.
// With cancelOnStop, Ctrl-C (or SIGTERM, SIGHUP) cancels the run, as it
// would stop a run in this process; else it only stops following.
func (f *followed) follow(ctx context.Context, id string, cancelOnStop bool) (session.Outcome, error) {
	askCtx, stopAsking := context.WithCancel(context.Background())
	defer stopAsking()
	f.mu.Lock()
	f.ctx = askCtx
	f.mu.Unlock()
	done := make(chan error, 1)
	var res wire.EventsEnd
	go func() { done <- f.c.Call(context.Background(), "run.events", wire.IDParams{ID: id}, &res) }()
	select {
	case err := <-done:
		if errors.Is(err, rpc.ErrClosed) {
			return session.Outcome{}, &exitError{code: ExitInterrupted, err: fmt.Errorf("the daemon closed the connection before run %s ended (it stopped, or died): the run is interrupted; continue it with: nodwyn run --daemon SOCKET --resume %s", id, id)}
		}
		if err != nil {
			return session.Outcome{}, daemonError(err)
		}
	case <-ctx.Done():
		stopAsking()
		if !cancelOnStop {
			return session.Outcome{Status: "interrupted"}, &exitError{code: ExitInterrupted, err: fmt.Errorf("stopped following %s; it goes on in the daemon ('nodwyn attach %s' follows it again)", id, id)}
		}
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.c.Call(cctx, "run.cancel", wire.IDParams{ID: id}, nil); err != nil {
			var re *rpc.Error
			if !errors.As(err, &re) || re.Code != rpc.CodeConflict {
				return session.Outcome{}, daemonError(err)
			}
		}
		select {
		case err := <-done:
			if err != nil {
				return session.Outcome{}, daemonError(err)
			}
		case <-cctx.Done():
			return session.Outcome{}, &exitError{code: ExitInterrupted, err: errors.New("the daemon did not stop the run in time")}
		}
	}
	// run.events' answer says how the run ended: a daemon that is stopping
	// may close the connection right after it. A run the daemon no longer
	// holds (one that ended before it restarted) is told by its run.end.
	text, _ := res.Outcome.(string)
	out := session.Outcome{Status: res.Status, Text: text}
	if status, text := f.rend.endOf(); out.Text == "" && status != "" && (out.Status == "" || out.Status == status) {
		out.Status, out.Text = status, text
	}
	return out, nil
}

// AttachCmd is `nodwyn attach`.
type AttachCmd struct {
	ID     string `arg:"" help:"The run's id (run.list, or what nodwyn run --detach printed)."`
	Daemon string `help:"The daemon's socket (default: NODWYN_SOCKET, else the default socket)." placeholder:"SOCKET"`
	JSON   bool   `name:"json" help:"Write every event as a JSON line on stdout."`
	Quiet  bool   `short:"q" help:"No progress on stderr."`
}

// Help is shown after the flags of `nodwyn attach --help`.
func (AttachCmd) Help() string {
	return `Follows a run the daemon holds from its first event: shows them as nodwyn run
does and asks its confirms at this terminal. Ctrl-C stops following and
leaves the run going (run.cancel, or Ctrl-C in the 'nodwyn run --daemon' that
started it, stops it). The exit code is the run's, as nodwyn run's would be.`
}

func (a *AttachCmd) Run(e *env) error {
	_, dirs := launch.HomeDirs(e.getenv)
	sock := a.Daemon
	if sock == "" {
		sock = e.getenv("NODWYN_SOCKET")
	}
	if sock == "" {
		sock = daemon.DefaultSocket(e.getenv, dirs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	rend := newRenderer(e.stderr, a.Quiet)
	defer rend.close()
	f := &followed{e: e, rend: rend, ask: terminalConfirm(e, rend)}
	if a.JSON {
		f.json = jsonSink(e.stdout)
	}
	c, err := daemon.Dial(context.Background(), dirs.Data, sock, f.notify)
	if err != nil {
		return &exitError{code: ExitFailed, err: err}
	}
	defer c.Close()
	f.c = c
	rend.start(a.ID)
	out, err := f.follow(ctx, a.ID, false)
	if err != nil {
		return err
	}
	rend.finish(out)
	if !a.JSON && out.Text != "" && out.Status == "finished" { // the final answer, as nodwyn run prints it
		fmt.Fprintln(e.stdout, termtext.Text(out.Text))
	}
	return exitFor(out, dirs.Data)
}

// forDaemon makes spec's paths absolute, as the daemon takes them (its
// folder is not the client's), and leaves out what the daemon would refuse
// that a run here ignores: a duration that is not positive.
func forDaemon(spec *launch.Spec) {
	spec.Script, spec.Trajectory = absPath(spec.Script), absPath(spec.Trajectory)
	for _, d := range []*launch.Duration{&spec.Timeout, &spec.RequestTimeout, &spec.IdleTimeout} {
		if *d < 0 {
			*d = 0
		}
	}
	if len(spec.Writable) > 0 {
		// ~/ stays: the daemon is the same person's.
		var w []string
		for _, p := range spec.Writable {
			if !strings.HasPrefix(p, "~") {
				p = absPath(p)
			}
			w = append(w, p)
		}
		spec.Writable = w
	}
}

// absPath is p made absolute ("" stays "").
func absPath(p string) string {
	if p == "" {
		return ""
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
