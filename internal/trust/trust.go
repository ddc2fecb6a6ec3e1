// Package trust records which project files the person has agreed to load,
// in the manner of direnv. The project files are the ones a run would act
// on: <folder>/.nodwyn/config.toml and every Scheme file (*.scm) under
// <folder>/.nodwyn/ (init.scm and whatever it loads). The record holds, per
// absolute project folder, each file's sha256 and size, in one JSON file
// (0600, written atomically); a copy of each trusted file is kept beside it,
// so that a changed file can be shown as a difference. A file that is
// absent from the record, or whose hash changed, is untrusted, and so is a
// trusted file that is gone (its removal changes what runs).
//
// Check returns the files' contents as they were hashed: a caller loads
// those bytes, never the file again, so what runs is what was checked.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Limits on what a project's .nodwyn/ may hold for trust to read it.
const (
	MaxFiles    = 200
	MaxFileSize = 1 << 20
)

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
	Trusted Status = iota // hash matches the record
	New                   // never trusted
	Changed               // trusted once, content differs now
	Removed               // trusted once, gone now
)

func (s Status) String() string {
	switch s {
	case Trusted:
		return "trusted"
	case New:
		return "new"
	case Changed:
		return "changed since it was trusted"
	case Removed:
		return "removed since it was trusted"
	}
	return "?"
}

// File describes one project file's trust state.
type File struct {
	Path   string // absolute
	Rel    string // relative to the project folder, slash-separated: ".nodwyn/init.scm"
	Size   int64
	SHA256 string
	Data   []byte // the content that was hashed (nil when Removed)
	Status Status
	Was    Entry // the record when Changed or Removed
}

// Project is the state of one folder's project files.
type Project struct {
	Folder string // absolute, physical
	Files  []File // sorted by Rel
}

// Untrusted lists the files that are not trusted as they are.
func (p *Project) Untrusted() []File {
	var out []File
	for _, f := range p.Files {
		if f.Status != Trusted {
			out = append(out, f)
		}
	}
	return out
}

// Config is the content of .nodwyn/config.toml (nil when there is none).
func (p *Project) Config() []byte {
	for _, f := range p.Files {
		if f.Rel == ".nodwyn/config.toml" {
			return f.Data
		}
	}
	return nil
}

// Scheme maps each Scheme file, relative to .nodwyn/ ("init.scm",
// "lib/util.scm"), to its content.
func (p *Project) Scheme() map[string][]byte {
	out := map[string][]byte{}
	for _, f := range p.Files {
		if rel, ok := strings.CutPrefix(f.Rel, ".nodwyn/"); ok && strings.HasSuffix(rel, ".scm") && f.Data != nil {
			out[rel] = f.Data
		}
	}
	return out
}

// Open reads the store at path (missing file = empty store). An unreadable
// or corrupt record is an error naming the file: it is never taken as empty,
// which would only ask again, but it must not be silently rewritten either.
func Open(path string) (*Store, error) {
	s := &Store{path: path, Projects: map[string]map[string]Entry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the trust record: %w", err)
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("the trust record %s cannot be read (%v); remove it to trust projects afresh", path, err)
	}
	if s.Projects == nil {
		s.Projects = map[string]map[string]Entry{}
	}
	return s, nil
}

// Path is where the record is kept.
func (s *Store) Path() string { return s.path }

func (s *Store) copies() string { return filepath.Join(filepath.Dir(s.path), "trusted-files") }

// Abs is the physical absolute form of dir, the key of the record.
func Abs(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// Read reads dir's project files without judging them.
func Read(dir string) (*Project, error) {
	abs, err := Abs(dir)
	if err != nil {
		return nil, err
	}
	p := &Project{Folder: abs}
	base := filepath.Join(abs, ".nodwyn")
	fi, err := os.Lstat(base)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// Its files would be loaded by their physical paths elsewhere; the
		// session refuses to load from outside .nodwyn, so name it here.
		return nil, fmt.Errorf("%s is a symbolic link; a project's .nodwyn must be a folder in the project", base)
	}
	if !fi.IsDir() {
		return p, nil
	}
	n := 0
	err = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(abs, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || (!strings.HasSuffix(rel, ".scm") && rel != ".nodwyn/config.toml") {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link; a project's Scheme and config files must be files in .nodwyn", path)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if n++; n > MaxFiles {
			return fmt.Errorf("%s holds more than %d Scheme or config files", base, MaxFiles)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(data) > MaxFileSize {
			return fmt.Errorf("%s is %d bytes, more than the %d a project file may be", path, len(data), MaxFileSize)
		}
		h := sha256.Sum256(data)
		p.Files = append(p.Files, File{Path: path, Rel: rel, Size: int64(len(data)), SHA256: hex.EncodeToString(h[:]), Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Check reads dir's project files and judges each against the record.
func (s *Store) Check(dir string) (*Project, error) {
	p, err := Read(dir)
	if err != nil {
		return nil, err
	}
	rec := s.Projects[p.Folder]
	seen := map[string]bool{}
	for i := range p.Files {
		f := &p.Files[i]
		seen[f.Rel] = true
		e, had := rec[f.Rel]
		switch {
		case had && e.SHA256 == f.SHA256:
			f.Status = Trusted
		case had:
			f.Status, f.Was = Changed, e
		default:
			f.Status = New
		}
	}
	for rel, e := range rec {
		if !seen[rel] {
			p.Files = append(p.Files, File{Path: filepath.Join(p.Folder, filepath.FromSlash(rel)), Rel: rel, Status: Removed, Was: e})
		}
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Rel < p.Files[j].Rel })
	return p, nil
}

// Trust records p's files as they were read (not as they are on disk now)
// and keeps a copy of each for later differences.
func (s *Store) Trust(p *Project) error {
	m := map[string]Entry{}
	for _, f := range p.Files {
		if f.Status == Removed || f.Data == nil {
			continue
		}
		m[f.Rel] = Entry{SHA256: f.SHA256, Size: f.Size}
		if err := writeAtomic(filepath.Join(s.copies(), f.SHA256), f.Data); err != nil {
			return err
		}
	}
	s.Projects[p.Folder] = m
	return s.save()
}

// Previous is the trusted content of a Changed file, when a copy was kept.
func (s *Store) Previous(f File) ([]byte, bool) {
	if f.Was.SHA256 == "" || strings.ContainsAny(f.Was.SHA256, `/\.`) {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(s.copies(), f.Was.SHA256))
	if err != nil {
		return nil, false
	}
	return b, true
}

// Revoke forgets dir; it reports whether dir was trusted.
func (s *Store) Revoke(dir string) (bool, error) {
	abs, err := Abs(dir)
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
	return writeAtomic(s.path, append(b, '\n'))
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".trust-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
