package prim

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// fs-write {path, content}: writes a whole file, making its parent
// directories. An existing file keeps its mode, and its previous content
// goes to Options.Backup first; when Backup fails nothing is written.
//
// A symbolic link is written through, as a shell's redirection writes it:
// its target gets the content and the link stays. That is the safe choice
// because it is the one the guard judges: it reads a path with its links
// followed (physical), so a link pointing out of the folder is judged where
// it points, and replacing the link instead would silently cut a file the
// project links to (a dotfile kept elsewhere) from its target.

func (t *Tools) fsWrite(a *argReader) (Result, error) {
	p := a.str("path", true)
	content := a.str("content", true)
	if r, bad := a.result(); bad {
		return r, nil
	}
	if p == "" {
		return failf("fs-write: the path is empty"), nil
	}
	abs := Resolve(t.opts.Folder, p)
	rel := t.rel(abs)
	old, mode, existed, res := t.readForChange("fs-write", abs)
	if res != nil {
		return *res, nil
	}
	if existed && bytes.Equal(old, []byte(content)) {
		return Result{Output: fmt.Sprintf("%s already has this content (%s); nothing written", rel, sizeLines(content))}, nil
	}
	if r := t.commit("fs-write", abs, old, existed, mode, []byte(content)); r != nil {
		return *r, nil
	}
	what := "created"
	if existed {
		what = fmt.Sprintf("replaced its previous %s", sizeLines(string(old)))
	}
	return Result{Output: fmt.Sprintf("wrote %s: %s (%s)", rel, sizeLines(content), what), Changed: []string{abs}}, nil
}

// readForChange reads the file a tool is about to change, under the kernel
// floor. existed is false for a file that does not exist yet; res is set
// when the tool must stop.
func (t *Tools) readForChange(tool, abs string) (old []byte, mode fs.FileMode, existed bool, res *Result) {
	r := t.floored(tool, func() Result {
		f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		switch {
		case os.IsNotExist(err):
			mode = 0o644
			return Result{}
		case err != nil:
			return failf("%s: %s", tool, cleanErr(err))
		}
		defer f.Close()
		if real := t.deniedOpen(f); real != "" {
			return t.deniedResult(tool, abs, real)
		}
		fi, err := f.Stat()
		switch {
		case err != nil:
			return failf("%s: %s", tool, cleanErr(err))
		case fi.IsDir():
			return failf("%s: %s is a directory; give a file's path", tool, t.rel(abs))
		case !fi.Mode().IsRegular():
			return failf("%s: %s is not a regular file (%s)", tool, t.rel(abs), fi.Mode().Type())
		}
		if old, err = io.ReadAll(f); err != nil {
			return failf("%s: %s", tool, cleanErr(err))
		}
		mode, existed = fi.Mode().Perm(), true
		return Result{}
	})
	if r.IsError {
		return nil, 0, false, &r
	}
	return old, mode, existed, nil
}

// commit keeps the previous content (Backup, outside the kernel floor: the
// version store is in nodwyn's data directory) and writes the new, under
// the floor.
func (t *Tools) commit(tool, abs string, old []byte, existed bool, mode fs.FileMode, data []byte) *Result {
	if existed && t.opts.Backup != nil {
		if err := t.opts.Backup(abs, old); err != nil {
			r := failf("%s: could not keep the previous version of %s, so nothing was written: %v", tool, t.rel(abs), err)
			return &r
		}
	}
	r := t.floored(tool, func() Result { return t.writeFile(tool, abs, existed, mode, data) })
	if r.IsError {
		return &r
	}
	return nil
}

// writeFile writes data to abs (through a link), as os.WriteFile does, but
// truncates only once the file it opened is judged not denied where it
// really is.
func (t *Tools) writeFile(tool, abs string, existed bool, mode fs.FileMode, data []byte) Result {
	if !existed {
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return failf("%s: could not make the directory: %s", tool, cleanErr(err))
		}
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, mode)
	if err != nil {
		return failf("%s: %s", tool, cleanErr(err))
	}
	defer f.Close()
	if real := t.deniedOpen(f); real != "" {
		return t.deniedResult(tool, abs, real)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return failf("%s: %s is no longer a regular file; nothing was written", tool, t.rel(abs))
	}
	if err := f.Truncate(0); err != nil {
		return failf("%s: %s", tool, cleanErr(err))
	}
	if _, err := f.Write(data); err != nil {
		return failf("%s: %s", tool, cleanErr(err))
	}
	if err := f.Close(); err != nil {
		return failf("%s: %s", tool, cleanErr(err))
	}
	return Result{}
}

// sizeLines says "12 bytes, 2 lines".
func sizeLines(s string) string {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	unit := "lines"
	if n == 1 {
		unit = "line"
	}
	return fmt.Sprintf("%d bytes, %d %s", len(s), n, unit)
}
