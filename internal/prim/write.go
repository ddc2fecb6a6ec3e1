package prim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/nodwyn/nodwyn/internal/fsview"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nodwyn/nodwyn/internal/roles"
	"golang.org/x/sys/unix"
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

func init() {
	Register(Tool{Name: "fs-write", Order: 31, Run: (*Tools).fsWrite, Params: []Param{
		{Name: "path", Type: String, Role: roles.PathWrite, Required: true},
		{Name: "content", Type: String, Role: roles.Content, Required: true},
	}})
}

func (t *Tools) fsWrite(_ context.Context, a Args) (Result, error) {
	p := a.Str("path")
	content := a.Str("content")
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
		f, fi, err := fsview.OpenRead(abs)
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
		switch {
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
	if !existed {
		// Its own floored step: the floor grants a directory it makes in
		// full only from the next ruleset on.
		r := t.floored(tool, func() Result {
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				return failf("%s: could not make the directory: %s", tool, cleanErr(err))
			}
			return Result{}
		})
		if r.IsError {
			return &r
		}
	}
	var openErr error
	r := t.floored(tool, func() Result {
		var f *os.File
		var real string
		if existed {
			f, openErr = os.OpenFile(abs, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		} else if f, real, openErr = t.createNew(abs, mode); errors.Is(openErr, fs.ErrExist) {
			// A file made since, or a link, written through as before;
			// only a dangling link is followed to make its target (where
			// the floor is off, a name swapped just then can make an
			// empty file elsewhere, which is then refused).
			f, openErr = os.OpenFile(abs, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if errors.Is(openErr, fs.ErrNotExist) {
				f, openErr = os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, mode)
			}
		}
		if real != "" {
			return t.deniedResult(tool, abs, real)
		}
		if openErr != nil {
			return failf("%s: %s", tool, cleanErr(openErr))
		}
		return t.writeFile(tool, abs, f, data)
	})
	if !existed && errors.Is(openErr, fs.ErrPermission) && t.opts.Floor != nil && t.opts.Deny != nil {
		// The floor lets no file be made directly in a directory that
		// holds a denied one (the home directory): make it there without
		// the floor, but only as a new file in the directory judged where
		// it really is (createNew), never through a link.
		f, real, err := t.createNew(abs, mode)
		switch {
		case real != "":
			r = t.deniedResult(tool, abs, real)
		case err != nil:
			r = failf("%s: %s", tool, cleanErr(err))
		default:
			r = t.writeFile(tool, abs, f, data)
		}
	}
	if r.IsError {
		return &r
	}
	return nil
}

// createNew makes abs as a new file in its directory, opened by name and
// judged (Options.Deny) where it really is (/proc/thread-self/fd), with
// O_CREAT|O_EXCL|O_NOFOLLOW: no link is followed and no existing file
// opened (fs.ErrExist then). real is where it would have been made when
// that is denied.
func (t *Tools) createNew(abs string, mode fs.FileMode) (f *os.File, real string, err error) {
	dir, err := os.OpenFile(filepath.Dir(abs), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", err
	}
	defer dir.Close()
	base := filepath.Base(abs)
	if t.opts.Deny != nil {
		at, err := fdPath(dir)
		if err != nil {
			return nil, "", fmt.Errorf("%s: where its directory really is: %w", abs, err)
		}
		if p := filepath.Join(at, base); t.opts.Deny(at) || t.opts.Deny(p) {
			return nil, p, nil
		}
	}
	fd, err := unix.Openat(int(dir.Fd()), base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return nil, "", &os.PathError{Op: "open", Path: abs, Err: err}
	}
	return os.NewFile(uintptr(fd), abs), "", nil
}

// writeFile writes data to f, abs opened for writing (through a link), and
// closes it; it truncates only once the file is judged not denied where it
// really is.
func (t *Tools) writeFile(tool, abs string, f *os.File, data []byte) Result {
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
