package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Version is one kept content of a file: what was there before a file tool
// changed it.
type Version struct {
	ID      int       `json:"id"`      // 1, 2, ... in the order kept, over the whole store
	Session string    `json:"session"` // the session whose tool changed the file ("restore" for a Restore)
	Path    string    `json:"path"`    // absolute
	SHA     string    `json:"sha"`     // sha256 of the content, hex; "" when Absent
	Time    time.Time `json:"time"`
	Size    int       `json:"size"`
	Absent  bool      `json:"absent,omitempty"` // the file did not exist: restoring removes it
}

func (s *Store) versionsDir() string { return filepath.Join(s.Root, "versions") }
func (s *Store) blobsDir() string    { return filepath.Join(s.versionsDir(), "blobs") }
func (s *Store) indexPath() string   { return filepath.Join(s.versionsDir(), "index.jsonl") }

func (s *Store) blobPath(sha string) string {
	return filepath.Join(s.blobsDir(), sha[:2], sha)
}

// Backup keeps old, the content of absPath before a file tool overwrites or
// edits it: the content once by its sha256, and an index entry naming the
// time, the session and the path. Call it before the change.
func (s *Store) Backup(sessionID, absPath string, old []byte) error {
	_, err := s.backup(sessionID, absPath, old, false)
	return err
}

// BackupAbsent records that absPath did not exist before a file tool created
// it, so that restoring this version removes the file.
func (s *Store) BackupAbsent(sessionID, absPath string) error {
	_, err := s.backup(sessionID, absPath, nil, true)
	return err
}

func (s *Store) backup(sessionID, absPath string, old []byte, absent bool) (Version, error) {
	if !filepath.IsAbs(absPath) {
		return Version{}, fmt.Errorf("backup %s: the path is not absolute", absPath)
	}
	v := Version{Session: sessionID, Path: filepath.Clean(absPath), Time: time.Now(), Absent: absent}
	if !absent {
		sum := sha256.Sum256(old)
		v.SHA = hex.EncodeToString(sum[:])
		v.Size = len(old)
		if err := s.putBlob(v.SHA, old); err != nil {
			return Version{}, fmt.Errorf("backup %s: %w", absPath, err)
		}
	}
	if err := s.appendIndex(&v); err != nil {
		return Version{}, fmt.Errorf("backup %s: %w", absPath, err)
	}
	return v, nil
}

// putBlob stores content under its sha unless it is there already.
func (s *Store) putBlob(sha string, content []byte) error {
	p := s.blobPath(sha)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return writeAtomic(p, content, 0o600)
}

// appendIndex numbers v and appends it to the index, under a file lock so
// that two sessions never give out the same number.
func (s *Store) appendIndex(v *Version) error {
	if err := os.MkdirAll(s.versionsDir(), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(s.indexPath(), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return err
	}
	defer unlockFile(f)
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	end, err := completeEnd(f, fi.Size())
	if err != nil {
		return err
	}
	if end < fi.Size() {
		// A crash cut the last entry short; it never counted.
		if err := f.Truncate(end); err != nil {
			return err
		}
	}
	if end > 0 {
		last, err := lastLine(f, end)
		if err != nil {
			return err
		}
		var prev Version
		if err := json.Unmarshal(last, &prev); err != nil {
			return fmt.Errorf("version index %s: the last entry does not parse: %v", s.indexPath(), err)
		}
		v.ID = prev.ID + 1
	} else {
		v.ID = 1
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}

// Versions returns the kept versions of path (made absolute), or of every
// file when path is "", newest first.
func (s *Store) Versions(path string) ([]Version, error) {
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("versions of %s: %w", path, err)
		}
		path = abs
	}
	b, err := os.ReadFile(s.indexPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("versions: %w", err)
	}
	var out []Version
	for n, line := range bytes.Split(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v Version
		if err := json.Unmarshal(line, &v); err != nil {
			if n == bytes.Count(b, []byte{'\n'}) {
				break // a last entry cut short
			}
			return nil, fmt.Errorf("version index %s: line %d does not parse: %v", s.indexPath(), n+1, err)
		}
		if path == "" || v.Path == path {
			out = append(out, v)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Content returns the kept content of v, checked against its sha256.
func (s *Store) Content(v Version) ([]byte, error) {
	if v.Absent {
		return nil, fmt.Errorf("version %d of %s: the file did not exist then", v.ID, v.Path)
	}
	if len(v.SHA) != 64 {
		return nil, fmt.Errorf("version %d of %s: no content recorded", v.ID, v.Path)
	}
	b, err := os.ReadFile(s.blobPath(v.SHA))
	if err != nil {
		return nil, fmt.Errorf("version %d of %s: %w", v.ID, v.Path, err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != v.SHA {
		return nil, fmt.Errorf("version %d of %s: the kept content is damaged (sha256 differs); it cannot be restored", v.ID, v.Path)
	}
	return b, nil
}

// Restore puts v back: it writes the kept content to v.Path (atomically,
// keeping the file's mode), or removes the file when v is Absent. What is
// there now is kept first as a version of session "restore", so a restore can
// itself be undone. A path that is now a directory or a symbolic link is
// refused.
func (s *Store) Restore(v Version) error {
	var content []byte
	if !v.Absent {
		var err error
		if content, err = s.Content(v); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	mode := fs.FileMode(0o644)
	fi, err := os.Lstat(v.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if v.Absent {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(v.Path), 0o755); err != nil {
			return fmt.Errorf("restore %s: %w", v.Path, err)
		}
	case err != nil:
		return fmt.Errorf("restore %s: %w", v.Path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("restore %s: it is now %s, not a file; move it away first", v.Path, describeMode(fi.Mode()))
	default:
		mode = fi.Mode().Perm()
		cur, err := os.ReadFile(v.Path)
		if err != nil {
			return fmt.Errorf("restore %s: %w", v.Path, err)
		}
		if !v.Absent && bytes.Equal(cur, content) {
			return nil
		}
		if err := s.Backup("restore", v.Path, cur); err != nil {
			return fmt.Errorf("restore %s: keeping the current content first: %w", v.Path, err)
		}
	}
	if v.Absent {
		if err := os.Remove(v.Path); err != nil {
			return fmt.Errorf("restore %s: %w", v.Path, err)
		}
		return nil
	}
	if err := writeAtomic(v.Path, content, mode); err != nil {
		return fmt.Errorf("restore %s: %w", v.Path, err)
	}
	return nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	}
	return "a " + m.Type().String() + " file"
}
