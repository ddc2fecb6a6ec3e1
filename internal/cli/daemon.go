package cli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/rpc"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
)

// DaemonCmd is `nodwyn daemon`.
type DaemonCmd struct {
	Socket     string `help:"The socket to serve on (default: $XDG_RUNTIME_DIR/nodwyn/daemon.sock, else daemon.sock in nodwyn's data directory)."`
	NoKeychain bool   `name:"no-keychain" help:"The daemon's runs take provider keys only from its environment, credentials.toml and $CREDENTIALS_DIRECTORY, and never ask the system keychain (where 'nodwyn login' stores keys; 'nodwyn login --help' has the order). Without it a run asks the keychain, with a 2 s deadline, when those have no key."`

	NoKernelFloor bool `name:"no-kernel-floor" help:"Serve even where the kernel floor cannot be had, and let run.start ask for no_kernel_floor. Without the floor nothing but the guard's reading of command lines keeps the daemon's token from a run's commands: one that reads it can answer its own confirms, start runs and send the provider's key where it likes."`
}

// Help is shown after the flags of `nodwyn daemon --help`.
func (DaemonCmd) Help() string {
	return `Serves runs over JSON-RPC 2.0 on a unix socket, one JSON message per line
(docs/rpc.md): run.start, run.resume, run.state, run.list, run.cancel,
run.events, confirm.answer, daemon.status, daemon.stop.

Only the daemon's own user (or root) is served, checked with SO_PEERCRED,
and only after daemon.hello with the token the daemon writes to its data
directory, which no command of a run can read (the guard's denylist and the
kernel floor cover it): a program a run started cannot drive the daemon.

Each run is a session of its own, with its own Scheme environment and guard,
taking the same path as 'nodwyn run' with the same options. Sandbox mode is a
run's: run.start's "sandbox": "container" is the only way to it.`
}

// defaultSocket is where a daemon listens and clients look by default.
func defaultSocket(getenv func(string) string, dirs config.Dirs) string {
	if rd := getenv("XDG_RUNTIME_DIR"); rd != "" && filepath.IsAbs(rd) {
		return filepath.Join(rd, "nodwyn", "daemon.sock")
	}
	return filepath.Join(dirs.Data, "daemon.sock")
}

// tokenPath is where the daemon on sock keeps its token: in the data
// directory, which the guard's denylist and the kernel floor keep from
// every command a run starts.
func tokenPath(dataDir, sock string) string {
	h := sha256.Sum256([]byte(sock))
	return filepath.Join(dataDir, "daemon", hex.EncodeToString(h[:8])+".token")
}

func (c *DaemonCmd) Run(e *env) error {
	_, dirs := launch.HomeDirs(e.getenv)
	// A socket a service manager passed (a systemd .socket unit) is served
	// instead of one of our own; the service manager keeps its file.
	activated, asock, err := rpc.Activated()
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	sock := c.Socket
	if activated != nil {
		if sock != "" && filepath.Clean(sock) != asock {
			activated.Close()
			return usageErr("--socket %s: the service manager passed the socket %s; leave out --socket or make them the same", sock, asock)
		}
		sock = asock
	}
	if sock == "" {
		sock = defaultSocket(e.getenv, dirs)
	}
	sock, err = filepath.Abs(sock)
	if err != nil {
		return usageErr("--socket: %v", err)
	}
	st, err := store.Open(dirs.Data)
	if err != nil {
		return err
	}
	// The token is kept from the runs' commands by the kernel floor: where
	// it cannot be had, the daemon does not serve unless the person says so.
	if _, err := sandbox.NewFloor([]string{filepath.Dir(tokenPath(dirs.Data, sock))}, nil); err != nil && !c.NoKernelFloor {
		return &exitError{code: ExitUsage, err: fmt.Errorf("the kernel floor cannot be had here (%v): without it a command of a run could read the daemon's token, answer its own confirms, start runs and send the provider's key elsewhere\n(run nodwyn run in process instead, or give nodwyn daemon --no-kernel-floor to serve anyway)", err)}
	}
	ln := activated
	if ln == nil {
		ln, err = rpc.Listen(sock)
		if err != nil {
			if errors.Is(err, rpc.ErrInUse) {
				return &exitError{code: ExitUsage, err: fmt.Errorf("%w\n(stop it with daemon.stop, or give another --socket)", err)}
			}
			return &exitError{code: ExitUsage, err: err}
		}
	}
	token, tpath, err := writeToken(dirs.Data, sock)
	if err != nil {
		ln.Close()
		return err
	}
	d := newDaemon(e, dirs, st, sock)
	d.allowNoFloor = c.NoKernelFloor
	d.noKeychain = c.NoKeychain
	srv := rpc.NewServer(d.methods())
	srv.Hello = d.hello(token)
	srv.Admit = d.admit
	srv.Logf = func(format string, a ...any) { fmt.Fprintf(e.stderr, "nodwyn daemon: "+format+"\n", a...) }
	d.srv = srv

	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
			d.shutdown("the daemon was stopped by a signal")
		case <-d.stopping:
		}
	}()
	how := ""
	if activated != nil {
		how = ", passed by the service manager"
	}
	fmt.Fprintf(e.stderr, "nodwyn daemon: serving on %s%s (pid %d); stop it with daemon.stop or Ctrl-C\n", sock, how, os.Getpid())
	serr := srv.Serve(ln)
	d.shutdown("the daemon stopped")
	d.wg.Wait()
	os.Remove(tpath)
	if activated == nil { // the service manager's socket is its own
		os.Remove(sock)
	}
	return serr
}

// writeToken makes the daemon's token (32 random bytes, hex) and writes it
// 0600 in a 0700 directory of the data directory.
func writeToken(dataDir, sock string) (string, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	tok := hex.EncodeToString(b)
	p := tokenPath(dataDir, sock)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", "", fmt.Errorf("the daemon's token: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("the daemon's token: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", "", fmt.Errorf("the daemon's token: %w", err)
	}
	return tok, p, nil
}

// dialDaemon connects to the daemon on sock and says hello with the token
// it left in dataDir.
// A daemon that is starting (or was just restarted over a stale socket
// and token) is waited for this long.
func dialDaemon(ctx context.Context, dataDir, sock string, onNotify func(string, json.RawMessage)) (*rpc.Client, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		c, again, err := helloDaemon(ctx, dataDir, sock, onNotify)
		if err == nil || !again || time.Now().After(deadline) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func helloDaemon(ctx context.Context, dataDir, sock string, onNotify func(string, json.RawMessage)) (*rpc.Client, bool, error) {
	// Connect first: on a socket a service manager holds, the connection
	// is what starts the daemon, which then writes its token.
	c, err := rpc.Dial(ctx, sock, onNotify)
	if err != nil {
		return nil, true, fmt.Errorf("connecting to the daemon on %s: %w (start one with: nodwyn daemon --socket %s)", sock, err, sock)
	}
	b, err := os.ReadFile(tokenPath(dataDir, sock))
	if err != nil {
		c.Close()
		return nil, true, fmt.Errorf("no daemon's token for %s in %s (%v): is a daemon running there, with this XDG_DATA_HOME? (start one with: nodwyn daemon --socket %s)", sock, filepath.Join(dataDir, "daemon"), err, sock)
	}
	if err := c.Call(ctx, rpc.HelloMethod, map[string]string{"token": strings.TrimSpace(string(b))}, nil); err != nil {
		c.Close()
		var re *rpc.Error
		return nil, errors.As(err, &re) && re.Message == "wrong token", fmt.Errorf("the daemon on %s: %w", sock, err)
	}
	return c, false, nil
}

type daemon struct {
	e       *env
	dirs    config.Dirs
	st      *store.Store
	sock    string
	started time.Time
	srv     *rpc.Server

	ctx    context.Context // the runs' parent: ends when the daemon stops
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the runs

	allowNoFloor bool // nodwyn daemon --no-kernel-floor
	noKeychain   bool // nodwyn daemon --no-keychain: no run asks the system keychain

	mu       sync.Mutex
	runs     map[string]*daemonRun
	order    []string
	stopped  bool
	stopping chan struct{}
}

func newDaemon(e *env, dirs config.Dirs, st *store.Store, sock string) *daemon {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &daemon{e: e, dirs: dirs, st: st, sock: sock, started: time.Now(), ctx: ctx, cancel: cancel,
		runs: map[string]*daemonRun{}, stopping: make(chan struct{})}
}

func (d *daemon) hello(token string) rpc.Handler {
	return func(ctx context.Context, call *rpc.Call) (any, error) {
		var p struct {
			Token string `json:"token"`
		}
		if err := rpc.DecodeParams(call.Params, &p); err != nil {
			return nil, err
		}
		if subtle.ConstantTimeCompare([]byte(p.Token), []byte(token)) != 1 {
			return nil, rpc.Errorf(rpc.CodeRefused, "read the token from "+filepath.Join(d.dirs.Data, "daemon")+" as nodwyn's clients do", "wrong token")
		}
		return map[string]any{"daemon": "nodwyn", "version": Version, "pid": os.Getpid()}, nil
	}
}

// admit refuses a peer that a run of this daemon started (it descends from
// the daemon, or carries a run's process mark): the model's commands must
// not answer their own confirms or start runs of their own.
func (d *daemon) admit(p rpc.Peer) error {
	me := os.Getpid()
	if p.PID == me {
		return nil // the daemon's own process (a client in it, as in its tests)
	}
	// The peer's ancestors, to pid 1: a process gone before it is looked at
	// (it connected and left the socket to a child) is refused. This is a
	// first line only: a process that double-forks is reparented away from
	// the daemon and may drop the mark, so the token (which the kernel
	// floor keeps from every command) is what holds.
	pid := p.PID
	for i := 0; ; i++ {
		parent := parentOf(pid)
		if parent < 0 || i > 1<<16 {
			return fmt.Errorf("the peer (pid %d) could not be looked at in /proc; connect from a process that stays while it talks", p.PID)
		}
		if parent == me {
			return errors.New("a process started by one of this daemon's runs cannot drive the daemon")
		}
		if parent <= 1 {
			break
		}
		pid = parent
	}
	if env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "environ")); err == nil &&
		strings.Contains("\x00"+string(env), "\x00"+sandbox.MarkEnv+"=") {
		return errors.New("a process started by a nodwyn run cannot drive the daemon")
	}
	return nil
}

// parentOf is pid's parent from /proc (-1 when it cannot be read).
func parentOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return -1
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return n
}

// shutdown ends every run (they become interrupted, resumable with
// run.resume) and stops serving.
func (d *daemon) shutdown(why string) {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	d.stopped = true
	close(d.stopping)
	d.mu.Unlock()
	d.cancel(fmt.Errorf("%w: %s", session.ErrInterrupted, why))
	d.wg.Wait()
	if d.srv != nil {
		// The clients following a run get its last events and the answer
		// that says it ended before their connections close.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d.srv.Shutdown(ctx)
		cancel()
	}
}

func (d *daemon) methods() map[string]rpc.Handler {
	return map[string]rpc.Handler{
		"run.start":      d.runStart,
		"run.resume":     d.runResume,
		"run.state":      d.runState,
		"run.list":       d.runList,
		"run.cancel":     d.runCancel,
		"run.events":     d.runEvents,
		"confirm.answer": d.confirmAnswer,
		"daemon.status":  d.status,
		"daemon.stop":    d.stop,
	}
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

// run.start's parameters are launch.Spec's but id (run.resume's);
// run.resume's are all but folder and contract (a resumed session works
// in its own).
var (
	startUnlisted  = []string{"id"}
	resumeUnlisted = []string{"folder", "contract"}
)

func (d *daemon) runStart(ctx context.Context, call *rpc.Call) (any, error) {
	var p launch.Spec
	if err := rpc.DecodeParams(call.Params, &p, startUnlisted...); err != nil {
		return nil, err
	}
	if p.Resume != "" {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown parameter id", Data: map[string]any{"param": "id", "known": rpc.Params(&p, startUnlisted...), "fix": "continue a session with run.resume"}}
	}
	if p.Folder == "" {
		return nil, rpc.Required("folder", &p, startUnlisted...)
	}
	if p.Instruction == "" {
		return nil, rpc.Required("instruction", &p, startUnlisted...)
	}
	if err := checkSpec(&p); err != nil {
		return nil, err
	}
	return d.launch(ctx, p)
}

func (d *daemon) runResume(ctx context.Context, call *rpc.Call) (any, error) {
	var p launch.Spec
	if err := rpc.DecodeParams(call.Params, &p, resumeUnlisted...); err != nil {
		return nil, err
	}
	if p.Resume == "" {
		return nil, rpc.Required("id", &p, resumeUnlisted...)
	}
	if p.Folder != "" || p.Contract != "" {
		name := "folder"
		if p.Folder == "" {
			name = "contract"
		}
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown parameter " + name,
			Data: map[string]any{"param": name, "known": rpc.Params(&p, resumeUnlisted...), "fix": "a resumed session works in its own folder; leave " + name + " out"}}
	}
	if run := d.run(p.Resume); run != nil && !run.ended() {
		return nil, rpc.Errorf(rpc.CodeConflict, "wait for it to end, or run.cancel it first", "run %s is still running in this daemon", p.Resume)
	}
	if err := checkSpec(&p); err != nil {
		return nil, err
	}
	return d.launch(ctx, p)
}

// launch starts spec as a run of the daemon and returns its id once the
// session exists (or the error that stopped it before).
func (d *daemon) launch(ctx context.Context, spec launch.Spec) (any, error) {
	if spec.NoKernelFloor && !d.allowNoFloor {
		return nil, &rpc.Error{Code: rpc.CodeRefused, Message: "no_kernel_floor: a run of the daemon without the kernel floor could read the daemon's token (and with it answer its own confirms, start runs, send the provider's key elsewhere)",
			Data: map[string]any{"param": "no_kernel_floor", "fix": "run it in process (nodwyn run --no-kernel-floor), or start the daemon with --no-kernel-floor if you accept that"}}
	}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil, rpc.Errorf(rpc.CodeShuttingDown, "start a daemon again, then the run", "the daemon is stopping")
	}
	d.wg.Add(1)
	d.mu.Unlock()
	spec.NoKeychain = spec.NoKeychain || d.noKeychain
	rctx, cancel := context.WithCancelCause(d.ctx)
	run := &daemonRun{d: d, cancel: cancel, confirms: map[string]*pendingConfirm{}, subs: map[*subscriber]struct{}{},
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
		d.mu.Lock()
		if _, held := d.runs[s.ID]; !held { // a resumed run keeps its place
			d.order = append(d.order, s.ID)
		}
		d.runs[s.ID] = run
		d.mu.Unlock()
		once.Do(func() { close(startedc) })
	}
	hooks := launch.Hooks{Getenv: d.e.getenv, Stderr: d.e.stderr, Version: Version,
		Watch: func() launch.Watch {
			return launch.Watch{Recorder: run.event, Started: started, Confirm: run.confirm}
		}}
	go func() {
		defer d.wg.Done()
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
		return map[string]any{"id": id}, nil
	case err := <-errc:
		return nil, startError(err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
	if code == ExitUsage {
		rc = rpc.CodeInvalidParams
	}
	return &rpc.Error{Code: rc, Message: err.Error(), Data: map[string]any{"exit_code": code,
		"fix": "the message says what to change; the same run with nodwyn run would have stopped the same way"}}
}

func (d *daemon) run(id string) *daemonRun {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.runs[id]
}

type idParams struct {
	ID    string `json:"id"`
	Since int    `json:"since"`
}

func (d *daemon) runState(ctx context.Context, call *rpc.Call) (any, error) {
	var p idParams
	if err := rpc.DecodeParams(call.Params, &p, "since"); err != nil {
		return nil, err
	}
	if p.Since != 0 {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown parameter since", Data: map[string]any{"param": "since", "known": rpc.Params(&p, "since"), "fix": "leave since out"}}
	}
	if p.ID == "" {
		return nil, rpc.Required("id", &p, "since")
	}
	return d.state(p.ID)
}

// state is run.state's answer: the daemon's own record of a run it holds,
// else the session's saved state (a "running" one that no process holds
// was interrupted: its daemon died).
func (d *daemon) state(id string) (map[string]any, error) {
	if run := d.run(id); run != nil {
		return run.state(), nil
	}
	if !store.ValidID(id) {
		return nil, notFound(id)
	}
	ss, err := d.st.LoadState(id)
	if err != nil {
		return nil, notFound(id)
	}
	return savedState(d.st, ss), nil
}

func notFound(id string) *rpc.Error {
	return rpc.Errorf(rpc.CodeNotFound, "list the runs with run.list, or the sessions with nodwyn sessions", "no run or session %q", id)
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

func (d *daemon) runList(ctx context.Context, call *rpc.Call) (any, error) {
	if err := rpc.DecodeParams(call.Params, &struct{}{}); err != nil {
		return nil, err
	}
	d.mu.Lock()
	ids := append([]string(nil), d.order...)
	d.mu.Unlock()
	out := []map[string]any{}
	seen := map[string]bool{}
	for _, id := range ids {
		if run := d.run(id); run != nil {
			out = append(out, run.state())
			seen[id] = true
		}
	}
	// Sessions whose process died while they ran (a daemon killed, a run
	// killed): interrupted, resumable with run.resume; the newest 20.
	if sessions, err := d.st.ListSessions(); err == nil {
		n := 0
		for i := range sessions {
			ss := &sessions[i]
			if seen[ss.ID] || ss.Status != "interrupted" || n == 20 {
				continue
			}
			n++
			out = append(out, savedState(d.st, ss))
		}
	}
	return map[string]any{"runs": out}, nil
}

func (d *daemon) runCancel(ctx context.Context, call *rpc.Call) (any, error) {
	var p idParams
	if err := rpc.DecodeParams(call.Params, &p, "since"); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, rpc.Required("id", &p, "since")
	}
	run := d.run(p.ID)
	if run == nil {
		return nil, notFound(p.ID)
	}
	if run.ended() {
		return nil, rpc.Errorf(rpc.CodeConflict, "look at its outcome with run.state", "run %s has already ended", p.ID)
	}
	run.cancel(fmt.Errorf("%w (run.cancel)", session.ErrInterrupted))
	<-run.done
	return run.state(), nil
}

// runEvents replays the run's events from since out of its log, then
// sends them live as run.event notifications until the run ends; the
// answer says where it stopped, so a client that reconnects asks again
// from there and misses nothing.
func (d *daemon) runEvents(ctx context.Context, call *rpc.Call) (any, error) {
	var p idParams
	if err := rpc.DecodeParams(call.Params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, rpc.Required("id", &p)
	}
	run := d.run(p.ID)
	if run == nil {
		if _, err := d.state(p.ID); err != nil {
			return nil, err
		}
	}
	var sub *subscriber
	var open []map[string]any
	if run != nil {
		sub, open = run.subscribe()
		defer run.unsubscribe(sub)
	}
	last := p.Since - 1
	evs, _, err := store.ReadLogSkipping(d.st.LogPath(p.ID))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, rpc.Errorf(rpc.CodeInternalError, "", "reading the log of %s: %v", p.ID, err)
	}
	send := func(ev store.Event) error {
		if ev.Seq <= last {
			return nil
		}
		last = ev.Seq
		return call.Notify("run.event", map[string]any{"run": p.ID, "event": ev})
	}
	for _, ev := range evs {
		if err := send(ev); err != nil {
			return nil, err
		}
	}
	if run == nil {
		st, _ := d.state(p.ID)
		return map[string]any{"run": p.ID, "next": last + 1, "status": st["status"], "outcome": st["outcome"], "ended": true}, nil
	}
	for _, c := range open { // a client that reconnects sees the questions still open
		call.Notify("confirm.ask", c)
	}
	for {
		select {
		case ev, ok := <-sub.ch:
			if !ok {
				if sub.dropped {
					return nil, rpc.Errorf(rpc.CodeConflict, "ask again with since = next", "the client read too slowly; events from %d on were not sent", last+1)
				}
				// Everything the run emitted has been sent.
				st := run.state()
				return map[string]any{"run": p.ID, "next": last + 1, "status": st["status"], "outcome": st["outcome"], "ended": true}, nil
			}
			if ev.Type == "confirm.ask" {
				call.Notify("confirm.ask", ev.Data)
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

type answerParams struct {
	Run     string `json:"run"`
	Confirm string `json:"confirm"`
	Answer  string `json:"answer"`
	Note    string `json:"note"`
}

func (d *daemon) confirmAnswer(ctx context.Context, call *rpc.Call) (any, error) {
	var p answerParams
	if err := rpc.DecodeParams(call.Params, &p); err != nil {
		return nil, err
	}
	for name, v := range map[string]string{"run": p.Run, "confirm": p.Confirm, "answer": p.Answer} {
		if v == "" {
			return nil, rpc.Required(name, &p)
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
	run := d.run(p.Run)
	if run == nil {
		return nil, notFound(p.Run)
	}
	if !run.answer(p.Confirm, confirmReply{yes: p.Answer != "no", always: p.Answer == "always", note: p.Note}) {
		return nil, rpc.Errorf(rpc.CodeNotFound, "see the open questions in run.state's confirms", "run %s has no open confirm %q (answered already, or given up)", p.Run, p.Confirm)
	}
	return map[string]any{"run": p.Run, "confirm": p.Confirm, "answer": p.Answer}, nil
}

func (d *daemon) status(ctx context.Context, call *rpc.Call) (any, error) {
	if err := rpc.DecodeParams(call.Params, &struct{}{}); err != nil {
		return nil, err
	}
	d.mu.Lock()
	running, total := 0, len(d.runs)
	for _, r := range d.runs {
		if !r.ended() {
			running++
		}
	}
	d.mu.Unlock()
	return map[string]any{"pid": os.Getpid(), "socket": d.sock, "version": Version, "started": d.started,
		"runs": total, "running": running, "data": d.dirs.Data, "methods": d.srv.Methods()}, nil
}

func (d *daemon) stop(ctx context.Context, call *rpc.Call) (any, error) {
	if err := rpc.DecodeParams(call.Params, &struct{}{}); err != nil {
		return nil, err
	}
	d.mu.Lock()
	running := 0
	for _, r := range d.runs {
		if !r.ended() {
			running++
		}
	}
	d.mu.Unlock()
	// After this answer is written: the server's Close waits for handlers.
	go d.shutdown("daemon.stop")
	return map[string]any{"stopping": true, "interrupted": running}, nil
}

// daemonRun is one run the daemon holds.
type daemonRun struct {
	d      *daemon
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
	subs       map[*subscriber]struct{}
}

type subscriber struct {
	ch      chan store.Event
	dropped bool
}

type confirmReply struct {
	yes, always bool
	note        string
}

type pendingConfirm struct {
	seq   int
	info  map[string]any
	reply chan confirmReply
}

func (r *daemonRun) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *daemonRun) state() map[string]any {
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

// event is the run's sink: the daemon's record, then every subscriber (a
// subscriber that cannot keep up is dropped and told where to pick up).
func (r *daemonRun) event(ev store.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case "tool.call":
		r.toolCalls++
	case "run.start":
		if p, ok := ev.Data["profile"].(string); ok {
			r.profile = p
		}
	case "run.end":
		usage := map[string]int{}
		for _, k := range []string{"input_tokens", "output_tokens"} {
			if n, ok := intOf(ev.Data[k]); ok {
				usage[k] = n
			}
		}
		r.usage = usage
	}
	r.broadcast(ev)
}

func (r *daemonRun) broadcast(ev store.Event) {
	for s := range r.subs {
		select {
		case s.ch <- ev:
		default:
			s.dropped = true
			close(s.ch)
			delete(r.subs, s)
		}
	}
}

// subscribe starts a subscription and returns the confirms open at that
// moment (later ones come on the channel: none is in both).
func (r *daemonRun) subscribe() (*subscriber, []map[string]any) {
	s := &subscriber{ch: make(chan store.Event, 4096)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended() {
		close(s.ch)
		return s, nil
	}
	r.subs[s] = struct{}{}
	return s, r.openConfirms()
}

// openConfirms are the confirms waiting for an answer, in the order they
// were asked; r.mu is held.
func (r *daemonRun) openConfirms() []map[string]any {
	pending := make([]*pendingConfirm, 0, len(r.confirms))
	for _, c := range r.confirms {
		pending = append(pending, c)
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].seq < pending[j].seq }) // c2 before c10
	open := make([]map[string]any, len(pending))
	for i, c := range pending {
		open[i] = c.info
	}
	return open
}

func (r *daemonRun) unsubscribe(s *subscriber) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.subs[s]; ok {
		delete(r.subs, s)
		close(s.ch)
	}
}

// confirm asks the run's clients: a confirm.ask to every run.events
// subscriber, answered by confirm.answer; nobody answering, the run waits
// (as at a terminal) until it is cancelled or its deadline passes.
func (r *daemonRun) confirm(ctx context.Context, req guard.Request, dec guard.Decision) (bool, bool, string) {
	r.mu.Lock()
	r.confirmSeq++
	id := "c" + strconv.Itoa(r.confirmSeq)
	kind := "ordinary"
	if dec.Verdict == guard.SecurityConfirm {
		kind = "security"
	}
	info := map[string]any{"run": r.id, "confirm": id, "tool": req.Tool, "args": redactedArgs(req), "reason": dec.Reason,
		"checker": dec.Checker, "kind": kind, "always_offered": session.OffersAlways(req, dec)}
	pc := &pendingConfirm{seq: r.confirmSeq, info: info, reply: make(chan confirmReply, 1)}
	r.confirms[id] = pc
	r.broadcast(store.Event{Type: "confirm.ask", Time: time.Now(), Data: info})
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.confirms, id)
		r.mu.Unlock()
	}()
	select {
	case a := <-pc.reply:
		return a.yes, a.always && session.OffersAlways(req, dec), a.note
	case <-ctx.Done():
		return false, false, ""
	}
}

func (r *daemonRun) answer(id string, a confirmReply) bool {
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
// last event: the sinks run before execute returns).
func (r *daemonRun) finish(out session.Outcome, err error) {
	r.mu.Lock()
	r.status, r.outcome, r.endedAt = out.Status, out.Text, time.Now()
	if err != nil && r.status == "" {
		r.status, r.outcome = "failed", err.Error()
	}
	for s := range r.subs {
		close(s.ch)
		delete(r.subs, s)
	}
	// Ended under the lock subscribe takes: a subscription cannot come in
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
