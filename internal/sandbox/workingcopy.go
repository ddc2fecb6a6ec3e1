package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// WorkingCopySandbox runs each command in an ephemeral copy of the checkout
// (CopyCheckout), in the command's place in it, on a NoSandbox with
// KillOnDrop: the command's process group, and whatever else holds its
// output, is stopped as the call ends, whatever the run's mode. The copy's
// hash (HashDir) is taken after that, and the copy removed. A background
// command (Start) gets a copy of its own, removed once it has ended and its
// group been stopped.
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

// Materialize makes a fresh copy of checkout (which must be the sandbox's
// checkout or inside it); Close removes it if the caller has not.
func (w *WorkingCopySandbox) Materialize(ctx context.Context, checkout string) (*WorkDir, error) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("sandbox: closed")
	}
	wd, err := CopyCheckout(ctx, checkout, w.base, w.env, w.skip)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.live[wd] = true
	w.mu.Unlock()
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

// Run runs c in a fresh copy of the checkout, kill-on-drop, and reports
// the copy's hash after it.
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
	out, err := w.host.Run(ctx, c)
	if note := unreadableNote(wd); note != "" {
		out.Trailer = WithTrailer(out.Trailer, note)
	}
	if h, herr := HashDir(wd.Path); herr == nil {
		out.WorkDirHash = h
	} else {
		out.Trailer = WithTrailer(out.Trailer, "[the working copy could not be hashed: "+herr.Error()+"]")
	}
	return out, err
}

// Start starts c in the background in a copy of its own, removed once the
// process has ended (or been stopped) and its group been stopped.
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
	p, err := w.host.Start(c, out)
	if err != nil {
		w.remove(wd)
		return nil, err
	}
	p.onEnd = func() { w.remove(wd) }
	w.host.wg.Add(1)
	go func() {
		defer w.host.wg.Done()
		<-p.exited
		if GroupAlive(p.Pgid) {
			StopGroup(p.Pgid, p.grace)
		}
		p.end()
	}()
	return p, nil
}

// Close stops everything through the NoSandbox beneath and removes the
// copies still there.
func (w *WorkingCopySandbox) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	err := w.host.Close()
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
