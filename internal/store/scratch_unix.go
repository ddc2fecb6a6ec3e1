//go:build unix

package store

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUs reports whether the file's owner is this process's user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
