package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// WorkingCopySandbox runs each command in an ephemeral copy of the checkout
// (CopyCheckout), in the command's place in it, on a NoSandbox with
// KillOnDrop: the command's process group, whatever else holds its output,
// and every process that carries the call's own mark (CallMarkEnv, a
// double-forked setsid daemon that holds no pipe) are stopped as the call
// ends, whatever the run's mode. The copy's hash (HashDir) is taken after
// that when the command asks for it (Command.Hash), and the copy removed. A
// background command (Start) gets a copy and a mark of its own, its
// processes stopped and its copy removed once it has ended or been stopped.
//
// What a command writes under the copy, through the copy's links into the
// checkout included (CopyCheckout makes them point into the copy), never
// reaches the checkout. It is not a security boundary: an absolute path (or
// ../ out of the copy, or a link whose target is outside the checkout)
// reaches the host's files with the host's permissions, and the network is
// the host's.
type WorkingCopySandbox struct {
	host     *NoSandbox
	checkout string   // absolute, cleaned
	base     string   // where copies are made (the session's scratch directory)
	env      []string // git's environment for listing the checkout
	skip     func(rel string) bool

	mu     sync.Mutex
	live   map[*WorkDir]bool // copies not yet removed
	closed bool
	wg     sync.WaitGroup // Start's watchers, added to under mu while not closed
}

// CallMarkEnv is the variable a working-copy command gets, besides the
// session's MarkEnv (left as it is), with a value of the call's own: what
// the command started, wherever it went, is found by it and stopped as the
// call ends.
const CallMarkEnv = "NODWYN_CALL"

// callMark gives c a fresh call mark in its environment (c.Env nil is this
// process's environment) and returns the entry to look for.
func callMark(c *Command) string {
	entry := CallMarkEnv + "=" + NewMark()
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, CallMarkEnv+"=") {
			out = append(out, kv)
		}
	}
	c.Env = append(out, entry)
	return entry
}

// NewWorkingCopy returns a WorkingCopySandbox over host for checkout;
// copies are made under base. env is the environment git lists the
// checkout with. skip, when set, leaves out of every copy the paths
// (relative to the checkout) it is true for: the guard's denylist.
func NewWorkingCopy(host *NoSandbox, checkout, base string, env []string, skip func(rel string) bool) (*WorkingCopySandbox, error) {
	if !filepath.IsAbs(checkout) {
		return nil, fmt.Errorf("sandbox: the checkout %q must be an absolute path", checkout)
	}
	fi, err := os.Stat(checkout)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the checkout: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: the checkout %s is not a directory", checkout)
	}
	if base == "" {
		base = os.TempDir()
	}
	return &WorkingCopySandbox{host: host, checkout: filepath.Clean(checkout), base: base, env: env, skip: skip, live: map[*WorkDir]bool{}}, nil
}

// Checkout is the folder the copies are made of.
func (w *WorkingCopySandbox) Checkout() string { return w.checkout }

// Capabilities: a copy per command, kill-on-drop; host paths and the
// network are still reached.
func (w *WorkingCopySandbox) Capabilities() Caps {
	c := CapsOf(ModeWorkingCopy)
	c.KernelFloor = w.host.Floor() != nil
	return c
}

// Materialize makes a fresh copy of checkout, which must be the sandbox's
// checkout or inside it (an error otherwise); Close removes it if the
// caller has not.
func (w *WorkingCopySandbox) Materialize(ctx context.Context, checkout string) (*WorkDir, error) {
	abs, err := filepath.Abs(checkout)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the checkout %q: %w", checkout, err)
	}
	if rel, err := filepath.Rel(w.checkout, abs); err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("sandbox: %s is not inside the working copy's checkout %s", abs, w.checkout)
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("sandbox: closed")
	}
	wd, err := copyCheckout(ctx, abs, w.base, w.env, w.skip, w.host.Floor())
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	closed = w.closed
	if !closed {
		w.live[wd] = true
	}
	w.mu.Unlock()
	if closed { // Close ran while the copy was made
		_ = wd.Remove()
		return nil, fmt.Errorf("sandbox: closed")
	}
	return wd, nil
}

func (w *WorkingCopySandbox) remove(wd *WorkDir) {
	_ = wd.Remove()
	w.mu.Lock()
	delete(w.live, wd)
	w.mu.Unlock()
}

// inCopy is dir's place in the copy wd: dir must be the checkout or under it.
func (w *WorkingCopySandbox) inCopy(wd *WorkDir, dir string) (string, error) {
	if dir == "" {
		dir = w.checkout
	}
	rel, err := filepath.Rel(w.checkout, filepath.Clean(dir))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("the command's folder %s is not inside the checkout %s", dir, w.checkout)
	}
	return filepath.Join(wd.Path, rel), nil
}

// copyError is the StartError for a copy that could not be made: it is
// the copy's fault, not the program's (no "could not start bash").
func (w *WorkingCopySandbox) copyError(err error) error {
	return &StartError{Err: fmt.Errorf("making the working copy of %s: %w", w.checkout, err)}
}

// unreadableNote is the trailer line that names what the copy wd left out
// because it could not be read; "" when nothing was.
func unreadableNote(wd *WorkDir) string {
	if wd.Unreadable == 0 {
		return ""
	}
	names := strings.Join(wd.UnreadablePaths, ", ")
	if more := wd.Unreadable - len(wd.UnreadablePaths); more > 0 {
		names += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("[the working copy left out %d path(s) it was not permitted to read: %s]", wd.Unreadable, names)
}

// Run runs c in a fresh copy of the checkout, kill-on-drop (its group, the
// holders of its output and what carries its call mark), and with c.Hash
// reports the copy's hash after it.
func (w *WorkingCopySandbox) Run(ctx context.Context, c Command) (Output, error) {
	wd, err := w.Materialize(ctx, w.checkout)
	if err != nil {
		return Output{ExitCode: -1}, w.copyError(err)
	}
	defer w.remove(wd)
	dir, err := w.inCopy(wd, c.Dir)
	if err != nil {
		return Output{ExitCode: -1}, &StartError{Program: c.program(), Err: err}
	}
	c.Dir = dir
	c.Handling, c.LeaveRunning = KillOnDrop, false
	entry := callMark(&c)
	out, err := w.host.Run(ctx, c)
	stopCarrying(entry, w.host.StopGrace())
	if note := unreadableNote(wd); note != "" {
		out.Trailer = WithTrailer(out.Trailer, note)
	}
	if !c.Hash {
		return out, err
	}
	if h, herr := HashDir(wd.Path); herr == nil {
		out.WorkDirHash = h
	} else {
		out.Trailer = WithTrailer(out.Trailer, "[the working copy could not be hashed: "+herr.Error()+"]")
	}
	return out, err
}

// Start starts c in the background in a copy of its own, with a call mark
// of its own: once the process has ended (or been stopped), its group and
// what carries its mark are stopped and the copy removed. It starts and
// registers the process under the lock Close takes first, so a concurrent
// Close either refuses it or stops it.
func (w *WorkingCopySandbox) Start(c Command, out *os.File) (*Process, error) {
	wd, err := w.Materialize(context.Background(), w.checkout)
	if err != nil {
		return nil, w.copyError(err)
	}
	dir, err := w.inCopy(wd, c.Dir)
	if err != nil {
		w.remove(wd)
		return nil, &StartError{Program: c.program(), Err: err}
	}
	c.Dir = dir
	entry := callMark(&c)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.remove(wd)
		return nil, &StartError{Program: c.program(), Err: errors.New("the sandbox is closed")}
	}
	p, err := w.host.Start(c, out)
	if err != nil {
		w.mu.Unlock()
		w.remove(wd)
		return nil, err
	}
	p.onEnd = func() {
		stopCarrying(entry, p.grace)
		w.remove(wd)
	}
	w.wg.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.wg.Done()
		<-p.exited
		if GroupAlive(p.Pgid) {
			StopGroup(p.Pgid, p.grace)
		}
		p.end()
	}()
	return p, nil
}

// Close stops everything through the NoSandbox beneath, waits for Start's
// processes to be dealt with, and removes the copies still there.
func (w *WorkingCopySandbox) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	err := w.host.Close()
	w.wg.Wait()
	w.mu.Lock()
	var left []*WorkDir
	for wd := range w.live {
		left = append(left, wd)
	}
	w.mu.Unlock()
	for _, wd := range left {
		w.remove(wd)
	}
	return err
}
