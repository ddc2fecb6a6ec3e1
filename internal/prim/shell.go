package prim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// shell-exec {command, timeout}: Options.Shell -c command in the folder, in
// a process group of its own, stdin /dev/null, the scrubbed environment with
// TMPDIR the scratch directory. stdout and stderr share one pipe, so the
// output keeps its order.
//
// The call returns when the command's own program (the shell) exits, whatever
// still holds the pipe: the output is copied until every holder has closed
// it or for procSettle (about a second) more, so what a server started in
// the background prints first (its address) is part of the result. Then the
// writers are cut from the call (dropping) while the pipe stays open and is
// read and dropped until the last holder ends: a background process never
// writes to a closed pipe.
//
// runStopping, the default: what the command left in its process group is
// stopped (SIGTERM, SIGKILL after a grace) as the call returns. With
// Options.Sandbox (piped.release) it is left alone and keeps running.
//
// In every mode a cancelled call is stopped, and so is a command still
// running at its time limit, except with Options.LeaveRunning, where it is left
// running and stopped by Close.

type execProc struct {
	pgid   int
	cmd    *exec.Cmd
	exited chan struct{} // closed when the leader has been waited for
	err    error         // cmd.Wait's error, set before exited is closed
	out    *capture
}

func (t *Tools) shellExec(ctx context.Context, a *argReader) (Result, error) {
	command := a.str("command", true)
	limit := t.opts.Timeout
	if n, ok := a.int("timeout"); ok {
		if n <= 0 {
			a.fail("timeout must be a positive number of seconds, not %d", n)
		}
		limit = min(time.Duration(n)*time.Second, t.opts.MaxTimeout)
	}
	if r, bad := a.result(); bad {
		return r, nil
	}
	if strings.TrimSpace(command) == "" {
		return failf("shell-exec: the command is empty"), nil
	}

	r, w, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("prim: shell-exec: %w", err)
	}
	cmd := t.shellCommand(command, w)
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return failf("shell-exec: could not start %s: %v", t.opts.Shell, err), nil
	}
	p := &execProc{pgid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	p.out = t.startCapture(r, p.pgid)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.mu.Lock()
	t.running[p.pgid] = p
	t.mu.Unlock()

	timer := time.NewTimer(limit)
	defer timer.Stop()
	var trailer string
	var ctxErr error
	select {
	case <-p.exited:
		t.settle(p.out, t.procSettle)
		t.release(p)
		trailer = exitTrailer(p)
	case <-timer.C:
		if t.opts.LeaveRunning {
			t.mu.Lock()
			delete(t.running, p.pgid)
			t.leftovers[p.pgid] = p
			t.mu.Unlock()
			out := p.out.cutOff()
			return Result{
				Output:   withTrailer(out, fmt.Sprintf("[timed out after %v; the command is still running in the background (process group %d) and will be stopped when the session ends]", limit, p.pgid)),
				ExitCode: -1,
			}, nil
		}
		t.abort(p)
		trailer = fmt.Sprintf("[timed out after %v; the process was stopped]", limit)
	case <-ctx.Done():
		t.abort(p)
		trailer = "[cancelled; the process was stopped]"
		ctxErr = ctx.Err()
	}
	t.mu.Lock()
	delete(t.running, p.pgid)
	t.mu.Unlock()
	out := p.out.cutOff()
	res := Result{Output: withTrailer(out, trailer), ExitCode: exitCode(p)}
	if ctxErr != nil {
		res.IsError = true
	}
	return res, ctxErr
}

// settle waits until every holder of the output pipe has closed it, or d.
func (t *Tools) settle(c *capture, d time.Duration) {
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
// program has exited: runStopping stops it, sandbox mode leaves it alone.
func (t *Tools) release(p *execProc) {
	if t.opts.Sandbox {
		return
	}
	if err := syscall.Kill(-p.pgid, 0); errors.Is(err, syscall.ESRCH) {
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		stopGroup(p.pgid, t.stopGrace)
	}()
}

// abort stops a command's whole process group now (cancelled, or at its
// time limit) and waits for its own program to end and the output to settle.
func (t *Tools) abort(p *execProc) {
	stopGroup(p.pgid, t.stopGrace)
	select {
	case <-p.exited:
	case <-time.After(t.stopGrace):
	}
	t.settle(p.out, t.procSettle)
}

func exitCode(p *execProc) int {
	select {
	case <-p.exited:
	default:
		return -1
	}
	st := p.cmd.ProcessState
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
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("[killed by signal %d (%s)]", int(ws.Signal()), signalName(ws.Signal()))
	}
	return fmt.Sprintf("[exit status %d]", st.ExitCode())
}

func signalName(s syscall.Signal) string {
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

func withTrailer(out, trailer string) string {
	if out == "" {
		return trailer
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + trailer
}

// capture reads a command's output pipe to its end. Until cutOff it keeps
// what it reads (head and tail, up to max bytes); after, it drops it.
type capture struct {
	mu    sync.Mutex
	buf   headTail
	cut   bool
	eof   chan struct{} // closed when every writer has closed the pipe
	inode uint64
}

var readBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// startCapture starts the goroutine that reads r until every holder of its
// write end has closed it; t tracks it until then.
func (t *Tools) startCapture(r *os.File, pgid int) *capture {
	c := &capture{buf: headTail{max: t.opts.MaxOutput}, eof: make(chan struct{}), inode: pipeInode(r)}
	t.mu.Lock()
	t.drains[c] = pgid
	t.mu.Unlock()
	t.drainWG.Add(1)
	go func() {
		defer t.drainWG.Done()
		bp := readBufs.Get().(*[]byte)
		for {
			n, err := r.Read(*bp)
			if n > 0 {
				c.mu.Lock()
				if !c.cut {
					c.buf.write((*bp)[:n])
				}
				c.mu.Unlock()
			}
			if err != nil {
				break
			}
		}
		readBufs.Put(bp)
		r.Close()
		t.mu.Lock()
		delete(t.drains, c)
		t.mu.Unlock()
		close(c.eof)
	}()
	return c
}

// cutOff cuts the writers from the call: what was read so far is returned,
// what comes after is read and dropped.
func (c *capture) cutOff() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	return c.buf.String()
}

// headTail keeps the first and last bytes of a stream, max in all, and
// counts what it leaves out.
type headTail struct {
	max     int
	head    []byte
	tail    []byte // the last bytes, possibly more than tailMax until trimmed
	dropped int64
}

func (h *headTail) write(p []byte) {
	headMax := h.max / 2
	if n := min(headMax-len(h.head), len(p)); n > 0 {
		h.head = append(h.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	tailMax := h.max - headMax
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*tailMax {
		extra := len(h.tail) - tailMax
		h.dropped += int64(extra)
		h.tail = append(h.tail[:0], h.tail[extra:]...)
	}
}

func (h *headTail) String() string {
	tailMax := h.max - h.max/2
	tail := h.tail
	dropped := h.dropped
	if len(tail) > tailMax {
		dropped += int64(len(tail) - tailMax)
		tail = tail[len(tail)-tailMax:]
	}
	if dropped == 0 {
		return toValid(string(h.head) + string(tail))
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
	return toValid(string(head)) + fmt.Sprintf("[... %d bytes of output left out ...]\n", dropped) + toValid(string(tail))
}

func toValid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// shellCommand is the shell running command in the folder, with the
// scrubbed environment, stdout and stderr both to out, in a process group of
// its own (so what it leaves behind can be found and stopped).
func (t *Tools) shellCommand(command string, out *os.File) *exec.Cmd {
	cmd := exec.Command(t.opts.Shell, "-c", command)
	cmd.Dir = t.opts.Folder
	cmd.Env = t.env
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.started.Store(true)
	return cmd
}
