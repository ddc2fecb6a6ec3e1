package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nodwyn/nodwyn/internal/fsview"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/scheme"
)

// instructionNames are the files of project instructions, in the order
// looked for in each directory: CLAUDE.md only where there is no AGENTS.md.
var instructionNames = []string{"AGENTS.md", "CLAUDE.md"}

// instructionFile is one file of instructions as (instruction-files) gives it.
type instructionFile struct {
	path, text string
	size       int64 // the file's size
	cut        bool  // text is its first max bytes
}

// instructionFiles finds the project instructions a run is given: the
// person's own <config>/AGENTS.md, then AGENTS.md (else CLAUDE.md) in each
// directory from the repository root (the nearest ancestor of the folder
// holding .git; the folder alone when there is none) down to the folder,
// outermost first, so the nearest come last. A project's file is text, not
// code, so it needs no trust; but it is read as a file tool reads: a path
// the guard's denylist protects (a link to ~/.ssh/id_rsa named AGENTS.md)
// is not read, and a note says so; a FIFO or device is not opened. A file
// is read only where it really is inside the repository (the folder when
// there is none), and the person's own inside the configuration
// directory, as the repository pin judges a file tool's path: a cloned
// repository's AGENTS.md that links to ~/.docker/config.json or
// ~/.bash_history would hand them to the provider in the system prompt, so
// a link that leads out is not followed (a note says where it leads), and
// one to another file of the repository is. Each file's text is its first
// max bytes, with secrets redacted as a tool's result is.
func (s *Session) instructionFiles(max int64) []instructionFile {
	var dirs []string
	for d := s.opts.Folder; ; {
		dirs = append([]string{d}, dirs...)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			break
		}
		up := filepath.Dir(d)
		if up == d {
			dirs = []string{s.opts.Folder} // no repository: the folder alone
			break
		}
		d = up
	}
	var out []instructionFile
	if filepath.IsAbs(s.opts.Dirs.Config) {
		// The person's own file, in the directory the denylist keeps from
		// the tools: read by nodwyn for them, not by a tool.
		if f, ok := s.readInstructions(s.opts.Dirs.Config, filepath.Join(s.opts.Dirs.Config, "AGENTS.md"), max, false); ok {
			out = append(out, f)
		}
	}
	for _, d := range dirs {
		for _, name := range instructionNames {
			if f, ok := s.readInstructions(dirs[0], filepath.Join(d, name), max, true); ok {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// readInstructions reads one file of instructions, which must really be
// inside root; ok is false when there is none (or it may not be read: then
// a note says why). A project's file is read as fs-read reads one (prim's
// ReadHead: under the kernel floor, judged again where it really is once
// open, so a name swapped after the denylist said yes is still refused);
// the person's own, in the configuration directory the floor denies, is
// read by nodwyn for them, and refused when its name is credential-shaped
// (a link to credentials.toml beside it). Either is read where its links
// lead, the path that was judged.
func (s *Session) readInstructions(root, path string, max int64, judged bool) (instructionFile, bool) {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return instructionFile{}, false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.Note(fmt.Sprintf("project instructions: %s not read: %v", path, err))
		}
		return instructionFile{}, false
	}
	if judged {
		if denied, why := s.guard.Denylist().Denied(path); denied { // lexically and physically
			s.Note(fmt.Sprintf("project instructions: %s not read: %s", path, why))
			return instructionFile{}, false
		}
	} else if guard.DeniedName(path) || guard.DeniedName(real) {
		s.Note(fmt.Sprintf("project instructions: %s not read: it is %s, which has a credential-shaped name; nodwyn gives the model no credentials, so keep your instructions in a file of their own", path, real))
		return instructionFile{}, false
	}
	if !insideRoot(real, root) {
		where := "the repository " + root
		if !judged {
			where = "nodwyn's configuration directory " + root
		}
		s.Note(fmt.Sprintf("project instructions: %s not read: it is a link to %s, outside %s; instructions are read only from files inside it (a link to another of its files is followed), so replace the link with a copy of the text if it is meant for this run", path, real, where))
		return instructionFile{}, false
	}
	var b []byte
	var size int64
	if judged {
		b, size, err = s.tools.ReadHead(real, max)
	} else {
		b, size, err = readHead(real, max)
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.Note(fmt.Sprintf("project instructions: %s not read: %v", path, err))
		}
		return instructionFile{}, false
	}
	text := strings.TrimRight(s.redact(string(b)), " \t\r\n")
	return instructionFile{path: path, text: text, size: size, cut: size > max}, true
}

// insideRoot reports whether real, a path with its links resolved, is root
// or inside it, as root is named or as it really is (a folder reached
// through a link).
func insideRoot(real, root string) bool {
	within := func(p, dir string) bool {
		return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
	}
	root = filepath.Clean(root)
	if within(real, root) {
		return true
	}
	r, err := filepath.EvalSymlinks(root)
	return err == nil && within(real, r)
}

// readHead is the first max bytes of a regular file and its size, opened
// without waiting on a FIFO.
func readHead(path string, max int64) ([]byte, int64, error) {
	f, fi, err := fsview.OpenRead(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	return b, fi.Size(), err
}

// instructionFilesValue is (instruction-files max-bytes) as Scheme sees it:
// a list of ((path . p) (text . t) (bytes . size) (cut . #t/#f)). The files
// are read once, at the first call, so the prompt stays the same for the
// whole session (and the provider's prompt cache holds).
func (s *Session) instructionFilesValue(max int64) scheme.Value {
	if s.instructions == nil || s.instructionsMax != max {
		files := s.instructionFiles(max)
		s.instructions, s.instructionsMax = &files, max
	}
	out := make([]scheme.Value, 0, len(*s.instructions))
	for _, f := range *s.instructions {
		out = append(out, scheme.List(
			scheme.Cons(scheme.Symbol("path"), scheme.NewString(f.path)),
			scheme.Cons(scheme.Symbol("text"), scheme.NewString(f.text)),
			scheme.Cons(scheme.Symbol("bytes"), int(f.size)),
			scheme.Cons(scheme.Symbol("cut"), f.cut),
		))
	}
	return scheme.List(out...)
}
