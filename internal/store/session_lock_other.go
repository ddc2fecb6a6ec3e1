//go:build !unix

package store

import "os"

// Without flock a session is not locked; nodwyn runs on unix.
func tryLockFile(*os.File) (bool, error) { return false, nil }
