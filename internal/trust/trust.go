// Package trust records which project files (.nodwyn/init.scm,
// .nodwyn/config.toml) the person has agreed to load, in the manner of
// direnv: per absolute project folder, each file's sha256 and size, in a
// JSON file (0600, written atomically). A file that is absent from the
// record or whose hash changed is untrusted.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
)

// ProjectFiles are the project files trust covers, relative to the project folder.
var ProjectFiles = []string{".nodwyn/init.scm", ".nodwyn/config.toml"}

// Entry is what was trusted for one file.
type Entry struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Store is the trust record: absolute folder -> relative file -> entry.
type Store struct {
	path     string
	Projects map[string]map[string]Entry `json:"projects"`
}

// Status of one project file.
type Status int

const (
	Absent  Status = iota // file does not exist: nothing to trust
	Trusted               // hash matches the record
	New                   // never trusted
	Changed               // trusted once, content differs now
)

// File describes one project file's trust state.
type File struct {
	Path   string // absolute
	Rel    string
	Size   int64
	SHA256 string
	Status Status
	Was    Entry // previous record when Changed
}

// Open reads the store at path (missing file = empty store).
func Open(path string) (*Store, error) {
	s := &Store{path: path, Projects: map[string]map[string]Entry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, err
	}
	if s.Projects == nil {
		s.Projects = map[string]map[string]Entry{}
	}
	return s, nil
}

func hashFile(p string) (Entry, bool, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	h := sha256.Sum256(b)
	return Entry{SHA256: hex.EncodeToString(h[:]), Size: int64(len(b))}, true, nil
}

// Check reports the state of each project file under dir.
func (s *Store) Check(dir string) ([]File, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, rel := range ProjectFiles {
		p := filepath.Join(abs, rel)
		e, ok, err := hashFile(p)
		if err != nil {
			return nil, err
		}
		f := File{Path: p, Rel: rel, Size: e.Size, SHA256: e.SHA256}
		rec, had := s.Projects[abs][rel]
		switch {
		case !ok:
			f.Status = Absent
		case had && rec.SHA256 == e.SHA256:
			f.Status = Trusted
		case had:
			f.Status, f.Was = Changed, rec
		default:
			f.Status = New
		}
		out = append(out, f)
	}
	return out, nil
}

// Trust records the current hashes of dir's project files and saves.
func (s *Store) Trust(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	m := map[string]Entry{}
	for _, rel := range ProjectFiles {
		e, ok, err := hashFile(filepath.Join(abs, rel))
		if err != nil {
			return err
		}
		if ok {
			m[rel] = e
		}
	}
	s.Projects[abs] = m
	return s.save()
}

// Revoke forgets dir; it reports whether dir was trusted.
func (s *Store) Revoke(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	_, had := s.Projects[abs]
	delete(s.Projects, abs)
	return had, s.save()
}

// List returns the trusted folders, sorted.
func (s *Store) List() []string {
	var out []string
	for d := range s.Projects {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func (s *Store) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".trust-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}
