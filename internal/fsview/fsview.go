// Package fsview is one reading of a path for those that look at files
// without being asked to run anything: the guard's analysis of a command
// line and the file tools. Opening never waits (O_NONBLOCK: a FIFO with no
// writer, a terminal or a device opens at once), and only a regular file's
// content is read, up to a cap.
//
// FS is the seam the analysis reads the file system through (the idea of
// mvdan.cc/sh's interp StatHandler, ReadDirHandler2 and OpenHandler); OS is
// the real one. Paths are absolute.
package fsview

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// FS is what an analysis may ask of a file system.
type FS interface {
	// Lstat describes name without following a final link.
	Lstat(name string) (fs.FileInfo, error)
	// ReadLink returns a link's target as written.
	ReadLink(name string) (string, error)
	// ReadDir lists a directory, sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// ReadSmallFile returns a regular file's content (links followed),
	// failing with ErrNotRegular or ErrTooLarge for anything else.
	ReadSmallFile(name string, max int64) ([]byte, error)
}

// ErrNotRegular: the path is a directory, a FIFO, a device or a socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge: the file holds more than the cap.
var ErrTooLarge = errors.New("file too large")

// OS is the operating system's file system.
type OS struct{}

// Lstat is os.Lstat.
func (OS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// ReadLink is os.Readlink.
func (OS) ReadLink(name string) (string, error) { return os.Readlink(name) }

// ReadDir is os.ReadDir (which opens with O_DIRECTORY: a FIFO fails at
// once).
func (OS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// ReadSmallFile is the package's ReadSmallFile.
func (OS) ReadSmallFile(name string, max int64) ([]byte, error) { return ReadSmallFile(name, max) }

// OpenRead opens name for reading without waiting (O_NONBLOCK) and returns
// the file with what fstat says of it (the file opened, not the name, so a
// name swapped for a FIFO in between is seen as one). The caller closes
// the file; a caller that wants content checks fi.Mode().IsRegular().
func OpenRead(name string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadSmallFile returns the content of the regular file name (links
// followed), at most max bytes. A name that is not a regular file by
// stat is not opened at all (a device's open can have effects); one that
// is swapped for something else before the open is refused after it.
func ReadSmallFile(name string, max int64) ([]byte, error) {
	if fi, err := os.Stat(name); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	f, fi, err := OpenRead(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCapped(f, name, fi, max)
}

// ReadCapped reads what OpenRead opened (fi is what it said of it): a
// regular file's content, at most max bytes.
func ReadCapped(r io.Reader, name string, fi fs.FileInfo, max int64) ([]byte, error) {
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (%d bytes, at most %d)", ErrTooLarge, fi.Size(), max)}
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	return b, nil
}

// FromFS is an FS over fsys (a testing/fstest.MapFS in tests), with
// absolute paths: "/a/b" is fsys's "a/b".
func FromFS(fsys fs.ReadLinkFS) FS { return ioFS{fsys} }

type ioFS struct{ fsys fs.ReadLinkFS }

func rel(name string) string {
	if name == "/" {
		return "."
	}
	if len(name) > 0 && name[0] == '/' {
		return name[1:]
	}
	return name
}

func (f ioFS) Lstat(name string) (fs.FileInfo, error)     { return f.fsys.Lstat(rel(name)) }
func (f ioFS) ReadLink(name string) (string, error)       { return f.fsys.ReadLink(rel(name)) }
func (f ioFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(f.fsys, rel(name)) }

func (f ioFS) ReadSmallFile(name string, max int64) ([]byte, error) {
	fi, err := fs.Stat(f.fsys, rel(name))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	r, err := f.fsys.Open(rel(name))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ReadCapped(r, name, fi, max)
}
