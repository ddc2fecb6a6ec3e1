package scheme

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// Without Files every file procedure raises a file error and touches
// nothing; the host's NoFiles text is what it says.
func TestNoFileAccessByDefault(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("(define leaked 1)"), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := []string{
		`(open-input-file p)`, `(open-output-file (string-append p ".new"))`,
		`(call-with-input-file p read)`, `(call-with-output-file p (lambda (o) (display "x" o)))`,
		`(with-input-from-file p read-line)`, `(with-output-to-file p (lambda () (display "x")))`,
		`(file-exists? p)`, `(delete-file p)`, `(load p)`,
	}
	for _, hostSays := range []string{"", "not here; use the tools"} {
		in := NewWith(Options{NoFiles: hostSays})
		in.Define("p", NewString(victim))
		for _, c := range calls {
			v, err := in.Eval(context.Background(), `(guard (e ((file-error? e) (error-object-message e))) `+c+` 'reached)`, "t")
			if err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			msg, ok := v.(*String)
			want := "this interpreter has no file access"
			if hostSays != "" {
				want = hostSays
			}
			if !ok || !strings.Contains(msg.S, want) {
				t.Errorf("%s: got %s, want a file error saying %q", c, WriteString(v), want)
			}
		}
		if _, ok := in.Lookup("leaked"); ok {
			t.Error("load read the file")
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "(define leaked 1)" {
		t.Errorf("the file changed: %q %v", b, err)
	}
	if _, err := os.Stat(victim + ".new"); err == nil {
		t.Error("open-output-file made a file")
	}
}

// mapFiles is a Files over a map: what the host gives is all there is.
type mapFiles struct{ m fstest.MapFS }

func (f mapFiles) Open(name string) (io.ReadCloser, error) { return f.m.Open(name) }
func (f mapFiles) Create(name string) (io.WriteCloser, error) {
	return &mapWriter{f: f, name: name}, nil
}
func (f mapFiles) Stat(name string) (fs.FileInfo, error) { return f.m.Stat(name) }
func (f mapFiles) Remove(name string) error {
	if _, ok := f.m[name]; !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(f.m, name)
	return nil
}

type mapWriter struct {
	f    mapFiles
	name string
	buf  bytes.Buffer
}

func (w *mapWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }
func (w *mapWriter) Close() error {
	w.f.m[w.name] = &fstest.MapFile{Data: w.buf.Bytes()}
	return nil
}

// The file procedures reach exactly what the host's Files gives.
func TestFilesFromTheHost(t *testing.T) {
	files := mapFiles{fstest.MapFS{"lib.scm": {Data: []byte("(define from-lib 42)")}}}
	in := NewWith(Options{Files: files})
	v, err := in.Eval(context.Background(), `
(load "lib.scm")
(call-with-output-file "out" (lambda (p) (write (list from-lib) p)))
(list (file-exists? "out") (call-with-input-file "out" read) (begin (delete-file "out") (file-exists? "out"))
      (file-exists? "/etc/passwd"))`, "t")
	if err != nil {
		t.Fatal(err)
	}
	if got := WriteString(v); got != "(#t (42) #f #f)" {
		t.Errorf("got %s", got)
	}
}

// Every call of this package's own code that reaches the file system is in
// files.go (OSFiles) or LoadFile (the host's explicit call): a file
// procedure added elsewhere would be a way around a host that gave none.
func TestOnlyFilesReachesTheFileSystem(t *testing.T) {
	reach := map[string]bool{"Open": true, "OpenFile": true, "Create": true, "ReadFile": true, "WriteFile": true,
		"Remove": true, "RemoveAll": true, "Stat": true, "Lstat": true, "ReadDir": true, "Mkdir": true, "MkdirAll": true,
		"Rename": true, "Symlink": true, "Link": true, "Chmod": true, "Truncate": true, "DirFS": true, "CreateTemp": true, "MkdirTemp": true}
	names, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if ok && name == "interp.go" && fn.Name.Name == "LoadFile" {
				return false
			}
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if ok && (pkg.Name == "os" || pkg.Name == "ioutil") && reach[sel.Sel.Name] && name != "files.go" {
				t.Errorf("%s: os.%s reaches the file system outside Files", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
