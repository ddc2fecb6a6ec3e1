//go:build !unix

package store

import "os"

// Without flock the index is numbered under no lock; nodwyn runs on unix.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
