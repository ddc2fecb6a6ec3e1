package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrSessionHeld is returned by LockSession when another process holds the
// session.
var ErrSessionHeld = errors.New("the session is held by another process")

// SessionLock is a session held by this process: an exclusive flock on
// <data>/sessions/<id>/lock, which holds the holder's pid. The kernel drops
// the lock when the process dies, so a dead holder never keeps it.
type SessionLock struct{ f *os.File }

// LockPath is the session's lock file.
func (s *Store) LockPath(id string) string { return filepath.Join(s.SessionDir(id), "lock") }

// LockSession takes the session's lock without waiting. When another process
// holds it, the error wraps ErrSessionHeld and names that process's pid.
func (s *Store) LockSession(id string) (*SessionLock, error) {
	if !ValidID(id) {
		return nil, badID(id)
	}
	if err := os.MkdirAll(s.SessionDir(id), 0o700); err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	f, err := os.OpenFile(s.LockPath(id), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	held, err := tryLockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	if held {
		pid := readPid(f)
		f.Close()
		who := "another process"
		if pid > 0 {
			who = fmt.Sprintf("process %d", pid)
		}
		return nil, fmt.Errorf("session %s is in use by %s (%w); wait for it to end or stop it first", id, who, ErrSessionHeld)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &SessionLock{f: f}, nil
}

// Unlock releases the session.
func (l *SessionLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing drops the flock
	l.f = nil
	return err
}

// SessionHeld reports whether a live process holds the session's lock.
func (s *Store) SessionHeld(id string) bool {
	f, err := os.OpenFile(s.LockPath(id), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := tryLockFile(f)
	return err == nil && held
}

func readPid(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid
}
