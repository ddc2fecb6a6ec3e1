package mcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a stdio server's process and our ends of its pipes.
type process struct {
	cmd    *exec.Cmd
	pid    int
	pgid   int           // its own process group (Setpgid), or 0 when the caller's start put it elsewhere
	stdin  *os.File      // we write
	stdout *os.File      // we read
	stderr *tailBuf      // its last lines
	exited chan struct{} // closed once Wait has returned
	err    error         // Wait's, set before exited is closed
}

// startProcess starts s's command through start with its pipes, in a
// process group of its own.
func startProcess(s Server, opts *Options) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = slices.Clone(opts.Environ)
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	for _, k := range sortedKeys(s.Env) {
		cmd.Env = append(cmd.Env, k+"="+s.Env[k])
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW

	start := opts.Start
	if start == nil {
		start = (*exec.Cmd).Start
	}
	err = start(cmd)
	// The child's ends are the child's now (or nobody's).
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", s.Command, err)
	}
	p := &process{
		cmd:    cmd,
		pid:    cmd.Process.Pid,
		stdin:  inW,
		stdout: outR,
		stderr: &tailBuf{max: 4096, copy: opts.Stderr},
		exited: make(chan struct{}),
	}
	if g, err := syscall.Getpgid(p.pid); err == nil && g == p.pid {
		p.pgid = g
	}
	stderrDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(p.stderr, errR)
		errR.Close()
		close(stderrDone)
	}()
	go func() {
		p.err = cmd.Wait()
		// What it wrote last before it ended is worth waiting a moment for
		// (its descendants may hold the pipe; they do not hold us up).
		select {
		case <-stderrDone:
		case <-time.After(100 * time.Millisecond):
		}
		close(p.exited)
		// Its answers end here: a call in flight fails now rather than wait
		// for descendants that still hold the pipe.
		p.stdout.Close()
	}()
	return p, nil
}

// stop ends the process: its stdin is closed (the MCP way to ask a stdio
// server to leave); after grace its group gets SIGTERM, after another grace
// SIGKILL. It returns once the process has been waited for and the group
// (when it has its own) has no live member left, or, if the group has a
// process that does not die even of SIGKILL, after a last grace.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
	if p.groupAlive() {
		p.signal(syscall.SIGTERM)
		_ = p.signal(syscall.SIGCONT)
		waitFor(grace, func() bool { return !p.groupAlive() })
	}
	if p.groupAlive() {
		p.signal(syscall.SIGKILL)
		waitFor(grace, func() bool { return !p.groupAlive() })
	}
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
}

// groupAlive reports whether the server or, when it leads a group, a
// member of its group is running (not a zombie).
func (p *process) groupAlive() bool {
	select {
	case <-p.exited:
		if p.pgid == 0 {
			return false
		}
		return groupHasLive(p.pgid)
	default:
		return true
	}
}

func (p *process) signal(sig syscall.Signal) error {
	if p.pgid != 0 {
		return syscall.Kill(-p.pgid, sig)
	}
	select {
	case <-p.exited:
		return nil
	default:
		return p.cmd.Process.Signal(sig)
	}
}

// groupHasLive reports whether process group pgid has a member that is not
// a zombie (a zombie nobody reaps, where init does not wait, counts as
// gone).
func groupHasLive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		state, g, ok := parseStat(string(b))
		if ok && g == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseStat reads the state and process group from /proc/pid/stat.
func parseStat(s string) (state byte, pgid int, ok bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, 0, false
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 3 {
		return 0, 0, false
	}
	var g int
	if _, err := fmt.Sscan(f[2], &g); err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}

func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for wait := 2 * time.Millisecond; ; wait = min(wait*2, 50*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}

// exitError describes how the process ended, with the last of its stderr.
func (p *process) exitError() error {
	msg := "exited"
	if p.err != nil {
		msg = "exited: " + p.err.Error()
	}
	if t := p.stderr.Tail(); t != "" {
		msg += "; its stderr ended: " + t
	}
	return errors.New(msg)
}

// tailBuf keeps the last max bytes written to it, and copies them on to
// copy when set.
type tailBuf struct {
	mu   sync.Mutex
	max  int
	b    []byte
	copy io.Writer
}

func (t *tailBuf) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	t.mu.Unlock()
	if t.copy != nil {
		_, _ = t.copy.Write(p)
	}
	return len(p), nil
}

// Tail is the last few lines written, on one line ("a | b").
func (t *tailBuf) Tail() string {
	t.mu.Lock()
	s := string(t.b)
	t.mu.Unlock()
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	for i := range lines {
		lines[i] = oneLine(lines[i])
	}
	out := strings.Join(lines, " | ")
	if len(out) > 300 {
		out = "…" + out[len(out)-300:]
	}
	return out
}
