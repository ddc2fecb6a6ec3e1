package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// NoSandbox runs commands on the host, in the folder they name: seed 000's
// execution and reaping discipline, which every other implementation is
// built on.
//
// A command runs in a process group of its own, stdin /dev/null (or
// Command.Stdin), stdout and stderr sharing one pipe so the output keeps its
// order. Run returns when the command's own program exits, whatever still
// holds the pipe: the output is copied until every holder has closed it or
// for Settle (about a second) more, so what a server started in the
// background prints first (its address) is part of the result. Then the
// writers are cut from the call while the pipe stays open and is read and
// dropped until the last holder ends: a background process never writes to a
// closed pipe. What the command left in its group then goes as its Handling
// says. A cancelled call is stopped, and so is a command still running at its
// time limit, except with LeaveRunning.
type NoSandbox struct {
	opts HostOptions

	mu         sync.Mutex
	closed     bool
	running    map[int]*execProc // Run calls in progress, by pgid
	leftovers  map[int]*execProc // commands left running at their time limit, stopped at Close
	drains     map[*capture]int  // pipes still read and dropped after their call returned, with the pgid
	bg         []*Process        // Start's processes
	wg         sync.WaitGroup    // escalations and waits that Close waits for
	drainWG    sync.WaitGroup    // drain goroutines (not waited for by Close with Release)
	started    atomic.Bool       // a command was started (Close looks for marked processes)
	firstStart sync.Once         // BeforeFirstStart
	conf       *confine          // the session's cgroup, or its part in the subreaper (reap.go)
}

// HostOptions configure a NoSandbox.
type HostOptions struct {
	// Mark is the value of MarkEnv in the commands' environment: Close
	// stops what carries it (a double-forked setsid daemon) unless Release.
	Mark string
	// Release is sandbox mode: Close leaves alone what commands started in
	// the background (Start's processes are stopped in every mode).
	Release   bool
	StopGrace time.Duration // SIGTERM to SIGKILL; default 2 s
	Settle    time.Duration // output copied this long after a command exits, at most; default 1 s
	// Floor, when set, is the kernel floor every command starts under
	// (NewFloor); a WorkingCopySandbox over this host has it too.
	Floor *Floor
	// BeforeFirstStart, when set, is called once, before the first command
	// starts (nodwyn run's watchdog: a run that starts none needs none).
	BeforeFirstStart func()
}

// NewHost returns a NoSandbox.
func NewHost(opts HostOptions) *NoSandbox {
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	if opts.Settle <= 0 {
		opts.Settle = time.Second
	}
	return &NoSandbox{
		opts:      opts,
		running:   map[int]*execProc{},
		leftovers: map[int]*execProc{},
		drains:    map[*capture]int{},
		conf:      newConfine(opts.Release),
	}
}

// Capabilities: host execution, nothing contained but the kernel floor
// when there is one.
func (h *NoSandbox) Capabilities() Caps {
	c := CapsOf(ModeNoSandbox)
	c.KernelFloor = h.opts.Floor != nil
	return c
}

// Floor is the kernel floor commands start under; nil when there is none.
func (h *NoSandbox) Floor() *Floor { return h.opts.Floor }

// Starting is to be called before a program nodwyn starts on its own
// account with the commands' environment (git status, which a filter
// driver the model configured can make start others): the watchdog's hook
// runs if it has not (BeforeFirstStart), and Close looks for what carries
// the mark.
func (h *NoSandbox) Starting() {
	if h.opts.BeforeFirstStart != nil {
		h.firstStart.Do(h.opts.BeforeFirstStart)
	}
	h.started.Store(true)
	if done, err := h.conf.prepare(nil); err == nil {
		done() // the subreaper counts what it starts in the session's time
	}
}

// startCmd starts cmd, under the floor when there is one.
func (h *NoSandbox) startCmd(cmd *exec.Cmd) (*floorStart, error) {
	if h.opts.BeforeFirstStart != nil {
		h.firstStart.Do(h.opts.BeforeFirstStart)
	}
	done, err := h.conf.prepare(cmd) // into the session's cgroup
	if err != nil {
		return nil, err
	}
	defer done()
	if h.opts.Floor == nil {
		return nil, cmd.Start()
	}
	return h.opts.Floor.start(cmd)
}

// Materialize returns the checkout itself: commands run in the folder.
// Removing it removes nothing.
func (h *NoSandbox) Materialize(ctx context.Context, checkout string) (*WorkDir, error) {
	if _, err := os.Stat(checkout); err != nil {
		return nil, err
	}
	return &WorkDir{Path: checkout, Checkout: checkout, inPlace: true}, nil
}

// StopGrace is the time from SIGTERM to SIGKILL.
func (h *NoSandbox) StopGrace() time.Duration { return h.opts.StopGrace }

type execProc struct {
	pgid   int
	cmd    *exec.Cmd
	exited chan struct{} // closed when the leader has been waited for
	err    error         // cmd.Wait's error, set before exited is closed
	out    *capture
}

// Run runs c to its end; see NoSandbox.
func (h *NoSandbox) Run(ctx context.Context, c Command) (Output, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return Output{ExitCode: -1}, &StartError{Program: c.program(), Err: errors.New("the sandbox is closed")}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Output{ExitCode: -1}, &StartError{Program: c.program(), Err: err}
	}
	cmd := h.command(c, w)
	fs, err := h.startCmd(cmd)
	w.Close()
	if err != nil {
		r.Close()
		return Output{ExitCode: -1}, &StartError{Program: c.program(), Err: err}
	}
	p := &execProc{pgid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	max := c.MaxOutput
	if max <= 0 {
		max = 1 << 20
	}
	p.out = h.startCapture(r, p.pgid, max)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	h.mu.Lock()
	h.running[p.pgid] = p
	h.mu.Unlock()

	var limit <-chan time.Time
	if c.Timeout > 0 {
		timer := time.NewTimer(c.Timeout)
		defer timer.Stop()
		limit = timer.C
	}
	o := Output{Pgid: p.pgid}
	var ctxErr error
	select {
	case <-p.exited:
		h.settle(p.out, h.opts.Settle)
		h.release(p, c.Handling)
		o.Trailer = exitTrailer(p)
		if fs != nil && exitCode(p) != 0 {
			if note := floorNote(fs, fs.created(), p.out.peek()); note != "" {
				o.Trailer += "\n" + note
			}
		}
	case <-limit:
		o.TimedOut = true
		if c.LeaveRunning && c.Handling != KillOnDrop {
			h.mu.Lock()
			delete(h.running, p.pgid)
			h.leftovers[p.pgid] = p
			h.mu.Unlock()
			o.Out = p.out.cutOff()
			o.Trailer = fmt.Sprintf("[timed out after %v; the command is still running in the background (process group %d) and will be stopped when the session ends]", c.Timeout, p.pgid)
			o.ExitCode, o.LeftRunning = -1, true
			return o, nil
		}
		h.abort(p, c.Handling)
		o.Trailer = fmt.Sprintf("[timed out after %v; the process was stopped]", c.Timeout)
	case <-ctx.Done():
		h.abort(p, c.Handling)
		o.Trailer = "[cancelled; the process was stopped]"
		o.Cancelled = true
		ctxErr = ctx.Err()
	}
	h.mu.Lock()
	delete(h.running, p.pgid)
	h.mu.Unlock()
	o.Out = p.out.cutOff()
	o.ExitCode = exitCode(p)
	return o, ctxErr
}

// settle waits until every holder of the output pipe has closed it, or d.
func (h *NoSandbox) settle(c *capture, d time.Duration) {
	select {
	case <-c.eof:
		return
	default:
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-c.eof:
	case <-tm.C:
	}
}

// release is what happens to the process group when the command's own
// program has exited: Stop stops it in the background, Release leaves it
// alone, KillOnDrop stops it, and whatever holds the pipe, before returning.
func (h *NoSandbox) release(p *execProc, how Handling) {
	switch how {
	case Release:
		return
	case KillOnDrop:
		h.drop(p)
		return
	}
	if err := syscall.Kill(-p.pgid, 0); errors.Is(err, syscall.ESRCH) {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		StopGroup(p.pgid, h.opts.StopGrace)
	}()
}

// drop stops p's group and every other holder of its output pipe, and
// waits for the pipe to be closed by all of them.
func (h *NoSandbox) drop(p *execProc) {
	StopGroup(p.pgid, h.opts.StopGrace)
	select {
	case <-p.out.eof:
		return
	default:
	}
	killPipeHolders(p.out.inode)
	select {
	case <-p.out.eof:
	case <-time.After(h.opts.StopGrace):
	}
}

// abort stops a command's whole process group now (cancelled, or at its
// time limit) and waits for its own program to end and the output to settle.
func (h *NoSandbox) abort(p *execProc, how Handling) {
	StopGroup(p.pgid, h.opts.StopGrace)
	select {
	case <-p.exited:
	case <-time.After(h.opts.StopGrace):
	}
	if how == KillOnDrop {
		h.drop(p)
		return
	}
	h.settle(p.out, h.opts.Settle)
}

func exitCode(p *execProc) int {
	select {
	case <-p.exited:
	default:
		return -1
	}
	return ExitCode(p.cmd.ProcessState)
}

// ExitCode is a process's exit status as a shell reports it: 128+n for a
// signal, -1 when there is none.
func ExitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

func exitTrailer(p *execProc) string {
	st := p.cmd.ProcessState
	if st == nil {
		return fmt.Sprintf("[could not run the command: %v]", p.err)
	}
	return "[" + ExitText(st) + "]"
}

// ExitText says how a process ended: "exit status 1", "killed by signal 9
// (SIGKILL)".
func ExitText(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), SignalName(ws.Signal()))
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

// SignalName is a signal's name ("SIGKILL").
func SignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// capture reads a command's output pipe to its end. Until cutOff it keeps
// what it reads (head and tail, up to max bytes); after, it drops it.
type capture struct {
	mu    sync.Mutex
	buf   HeadTail
	cut   bool
	eof   chan struct{} // closed when every writer has closed the pipe
	inode uint64
}

var readBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// startCapture starts the goroutine that reads r until every holder of its
// write end has closed it; h tracks it until then.
func (h *NoSandbox) startCapture(r *os.File, pgid, max int) *capture {
	c := &capture{buf: HeadTail{Max: max}, eof: make(chan struct{}), inode: pipeInode(r)}
	h.mu.Lock()
	h.drains[c] = pgid
	h.mu.Unlock()
	h.drainWG.Add(1)
	go func() {
		defer h.drainWG.Done()
		bp := readBufs.Get().(*[]byte)
		for {
			n, err := r.Read(*bp)
			if n > 0 {
				c.mu.Lock()
				if !c.cut {
					c.buf.Write((*bp)[:n])
				}
				c.mu.Unlock()
			}
			if err != nil {
				break
			}
		}
		readBufs.Put(bp)
		r.Close()
		h.mu.Lock()
		delete(h.drains, c)
		h.mu.Unlock()
		close(c.eof)
	}()
	return c
}

// peek is what was read so far (head and tail).
func (c *capture) peek() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// cutOff cuts the writers from the call: what was read so far is returned,
// what comes after is read and dropped.
func (c *capture) cutOff() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	return c.buf.String()
}

// HeadTail keeps the first and last bytes of a stream, Max in all, and
// counts what it leaves out. It is an io.Writer that never fails.
type HeadTail struct {
	Max     int
	head    []byte
	tail    []byte // the last bytes, possibly more than tailMax until trimmed
	dropped int64
}

// Write keeps what fits in the head, and the tail.
func (h *HeadTail) Write(p []byte) (int, error) {
	n := len(p)
	headMax := h.Max / 2
	if k := min(headMax-len(h.head), len(p)); k > 0 {
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	tailMax := h.Max - headMax
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*tailMax {
		extra := len(h.tail) - tailMax
		h.dropped += int64(extra)
		h.tail = append(h.tail[:0], h.tail[extra:]...)
	}
	return n, nil
}

// String is the head, a marker that says how many bytes were left out, and
// the tail, as valid UTF-8.
func (h *HeadTail) String() string {
	tailMax := h.Max - h.Max/2
	tail := h.tail
	dropped := h.dropped
	if len(tail) > tailMax {
		dropped += int64(len(tail) - tailMax)
		tail = tail[len(tail)-tailMax:]
	}
	if dropped == 0 {
		return ToValid(string(h.head) + string(tail))
	}
	// Keep whole lines at the seams where that costs little.
	head := h.head
	if i := strings.LastIndexByte(string(head), '\n'); i >= len(head)/2 {
		dropped += int64(len(head) - i - 1)
		head = head[:i+1]
	}
	if i := strings.IndexByte(string(tail), '\n'); i >= 0 && i < len(tail)/2 {
		dropped += int64(i + 1)
		tail = tail[i+1:]
	}
	return ToValid(string(head)) + fmt.Sprintf("[... %d bytes of output left out ...]\n", dropped) + ToValid(string(tail))
}

// ToValid replaces what is not UTF-8 in s with U+FFFD.
func ToValid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// command is c as an exec.Cmd: in its folder, with its environment, stdout
// and stderr both to out, in a process group of its own (so what it leaves
// behind can be found and stopped).
func (h *NoSandbox) command(c Command, out *os.File) *exec.Cmd {
	var cmd *exec.Cmd
	if len(c.Argv) > 0 {
		cmd = exec.Command(c.Argv[0], c.Argv[1:]...)
	} else {
		cmd = exec.Command(c.Shell, "-c", c.Line)
	}
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.Stdin = c.Stdin
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h.started.Store(true)
	return cmd
}

// Process is a command started in the background by Start.
type Process struct {
	Pgid    int
	Started time.Time
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped atomic.Bool // by Stop or Close
	grace   time.Duration
	onEnd   func() // after the process has ended and its group been stopped (the working copy's removal)
	endOnce sync.Once
}

// Exited is closed when the process's own program has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// State is how the process ended; nil while it runs.
func (p *Process) State() *os.ProcessState {
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// StoppedByUs reports whether Stop (or Close) stopped it.
func (p *Process) StoppedByUs() bool { return p.stopped.Load() }

// Stop stops the process's group and waits for its own program to end.
func (p *Process) Stop() {
	select {
	case <-p.exited:
		// Its own program has ended; what it left in its group has not.
		if GroupAlive(p.Pgid) {
			StopGroup(p.Pgid, p.grace)
		}
		p.end()
		return
	default:
	}
	p.stopped.Store(true)
	StopGroup(p.Pgid, p.grace)
	select {
	case <-p.exited:
	case <-time.After(p.grace + time.Second):
	}
	p.end()
}

func (p *Process) end() {
	if p.onEnd != nil {
		p.endOnce.Do(p.onEnd)
	}
}

// Start starts c in the background with its output going to out; see
// Sandbox.Start. Close stops it in every mode.
func (h *NoSandbox) Start(c Command, out *os.File) (*Process, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, &StartError{Program: c.program(), Err: errors.New("the sandbox is closed")}
	}
	cmd := h.command(c, out)
	if _, err := h.startCmd(cmd); err != nil {
		return nil, &StartError{Program: c.program(), Err: err}
	}
	p := &Process{Pgid: cmd.Process.Pid, Started: time.Now(), cmd: cmd, exited: make(chan struct{}), grace: h.opts.StopGrace}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	h.mu.Lock()
	h.bg = append(h.bg, p)
	h.mu.Unlock()
	return p, nil
}

// Close stops Start's processes, Run calls still in progress, and the
// commands left running at their time limit. Without Release it also stops
// whatever still holds the output pipes of earlier calls, and every process
// that carries the mark (MarkEnv): what left its process group and holds no
// pipe, such as a double-forked setsid daemon; and what is still in the
// session's cgroup, or adopted by the subreaper and the session's, which
// finds a daemon that also cleared its environment (reap.go). With Release
// what commands started in the background is left alone.
func (h *NoSandbox) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	bg := h.bg
	var left []*execProc
	for _, p := range h.leftovers {
		left = append(left, p)
	}
	for _, p := range h.running { // calls still in progress are aborted
		left = append(left, p)
	}
	var holders []*capture
	if !h.opts.Release {
		for c := range h.drains {
			holders = append(holders, c)
		}
	}
	h.mu.Unlock()

	var wg sync.WaitGroup
	for _, b := range bg {
		wg.Add(1)
		go func() { defer wg.Done(); b.Stop() }()
	}
	for _, p := range left {
		wg.Add(1)
		go func() {
			defer wg.Done()
			StopGroup(p.pgid, h.opts.StopGrace)
			<-p.exited
		}()
	}
	wg.Wait()
	for _, c := range holders {
		killPipeHolders(c.inode)
	}
	h.wg.Wait()
	// What is still in the session's cgroup, or adopted by the subreaper and
	// the session's (reap.go); with Release nothing.
	h.conf.teardown(h.opts.StopGrace)
	if !h.opts.Release && h.started.Load() {
		// What left its process group and the output pipe (a double-forked
		// setsid daemon) still has the session's mark.
		StopMarked(h.opts.Mark, h.opts.StopGrace)
	}
	if !h.opts.Release {
		WaitTimeout(&h.drainWG, 2*h.opts.StopGrace)
	}
	return nil
}

// WaitDrains waits up to d for every output pipe to be closed by all its
// holders; false if some still are.
func (h *NoSandbox) WaitDrains(d time.Duration) bool { return WaitTimeout(&h.drainWG, d) }

// WaitTimeout waits for wg up to d; false when d passed first.
func WaitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
