//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// tryLockFile takes an exclusive flock without waiting; held reports that
// another open file holds it. A lock taken is released when f is closed.
func tryLockFile(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
