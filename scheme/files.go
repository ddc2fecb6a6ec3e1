package scheme

import (
	"io"
	"io/fs"
	"os"
)

// Files is the file access an interpreter's own procedures have: the file
// ports (open-input-file, open-output-file, call-with-input-file,
// call-with-output-file, with-input-from-file, with-output-to-file),
// file-exists?, delete-file and (load path) outside a file system given to
// Load. The host supplies it (Options.Files); with none, every one of them
// raises a file error and touches nothing. Every procedure of this package
// that reaches a file goes through Files, so a procedure added here later is
// no way around a host that gave none.
type Files interface {
	Open(name string) (io.ReadCloser, error)
	Create(name string) (io.WriteCloser, error)
	Stat(name string) (fs.FileInfo, error)
	Remove(name string) error
}

// OSFiles is the host's file system, as the process sees it: for a REPL or
// a script runner that wants R7RS file procedures to work.
type OSFiles struct{}

func (OSFiles) Open(name string) (io.ReadCloser, error)    { return os.Open(name) }
func (OSFiles) Create(name string) (io.WriteCloser, error) { return os.Create(name) }
func (OSFiles) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (OSFiles) Remove(name string) error                   { return os.Remove(name) }

// Options are what the host gives an interpreter (NewWith).
type Options struct {
	// Files is the file access of the interpreter's file procedures; nil:
	// none (New's default).
	Files Files
	// NoFiles is what a file procedure says when Files is nil, after its
	// name (default: "this interpreter has no file access (its host gave it
	// none)"). A host says where files are to be had instead.
	NoFiles string
}

// noFiles is the error of a file procedure in an interpreter without Files:
// a file error (file-error? is #t) that names what the host said.
type noFiles struct{ why string }

func (e *noFiles) Error() string { return e.why }
func (e *noFiles) Unwrap() error { return fs.ErrPermission }

// files returns the interpreter's Files, or a Files whose every call fails
// with the host's NoFiles text.
func (in *Interp) files() Files {
	if in.opts.Files != nil {
		return in.opts.Files
	}
	why := in.opts.NoFiles
	if why == "" {
		why = "this interpreter has no file access (its host gave it none)"
	}
	return refuseFiles{&noFiles{why}}
}

type refuseFiles struct{ err error }

func (r refuseFiles) Open(string) (io.ReadCloser, error)    { return nil, r.err }
func (r refuseFiles) Create(string) (io.WriteCloser, error) { return nil, r.err }
func (r refuseFiles) Stat(string) (fs.FileInfo, error)      { return nil, r.err }
func (r refuseFiles) Remove(string) error                   { return r.err }

// readFiles reads the whole of name through f.
func readFiles(f Files, name string) ([]byte, error) {
	r, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
