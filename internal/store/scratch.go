package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ScratchPrefix begins the name of every scratch directory.
const ScratchPrefix = "nodwyn-scratch-"

// ScratchMaxAge is how long a scratch directory may stay untouched before
// SweepScratch removes it.
const ScratchMaxAge = 7 * 24 * time.Hour

// MakeScratch makes a session's scratch directory in the system's temporary
// directory: os.MkdirTemp(os.TempDir(), "nodwyn-scratch-<session>-"), mode
// 0700. MkdirTemp makes the directory itself under a name no one can guess and
// tries another name when one exists, so a directory or link someone else
// made first is never taken. A resumed session gets a new, empty one.
func MakeScratch(sessionID string) (string, error) {
	dir, err := os.MkdirTemp(os.TempDir(), ScratchPrefix+safeName(sessionID)+"-")
	if err != nil {
		return "", fmt.Errorf("make scratch directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("make scratch directory: %w", err)
	}
	return dir, nil
}

// safeName keeps a session id usable in a file name.
func safeName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// TouchScratch sets the directory's modification time to now, so the sweep
// sees the session is alive. A session calls it every turn.
func TouchScratch(dir string) error {
	now := time.Now()
	if err := os.Chtimes(dir, now, now); err != nil {
		return fmt.Errorf("touch scratch directory: %w", err)
	}
	return nil
}

// RemoveScratch removes a scratch directory and everything in it, including
// read-only directories a command left there (a Go module cache, say), which
// os.RemoveAll alone cannot empty.
func RemoveScratch(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	// Make every directory writable by us, then try again. WalkDir does not
	// follow links, and Chmod on a directory we do not own fails harmlessly.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove scratch directory: %w", err)
	}
	return nil
}

// SweepScratch removes scratch directories that sessions left behind: in
// os.TempDir(), each entry named nodwyn-scratch-* that is a directory (not a
// link: Lstat), is this user's own, and whose modification time is more than
// ScratchMaxAge before now. It also removes <dataDir>/scratch, where scratch
// directories were kept before 2026-10-16, unless the temporary directory is
// itself inside it. It returns what it removed; errors removing one entry do
// not stop the others and are returned joined.
func SweepScratch(dataDir string, now time.Time) (removed []string, err error) {
	tmp := os.TempDir()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("sweep scratch directories in %s: %w", tmp, err)
	}
	var errs []error
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ScratchPrefix) {
			continue
		}
		p := filepath.Join(tmp, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || !ownedByUs(fi) || now.Sub(fi.ModTime()) <= ScratchMaxAge {
			continue
		}
		if err := RemoveScratch(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	if dataDir != "" {
		old := filepath.Join(dataDir, "scratch")
		if _, err := os.Lstat(old); err == nil && !within(tmp, old) {
			if err := RemoveScratch(old); err != nil {
				errs = append(errs, err)
			} else {
				removed = append(removed, old)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// within reports whether path is dir or inside it, comparing both as given
// and with links resolved.
func within(path, dir string) bool {
	in := func(p, d string) bool {
		rel, err := filepath.Rel(d, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	if in(filepath.Clean(path), filepath.Clean(dir)) {
		return true
	}
	rp, err1 := filepath.EvalSymlinks(path)
	rd, err2 := filepath.EvalSymlinks(dir)
	return err1 == nil && err2 == nil && in(rp, rd)
}
