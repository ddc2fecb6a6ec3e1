package scheme

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
)

// Interp is one Scheme interpreter. It is not safe for concurrent use; use one
// goroutine at a time per interpreter (many interpreters may run in parallel).
type Interp struct {
	// Stdout is where display and write go by default.
	Stdout io.Writer

	globals map[Symbol]*global
}

type global struct {
	name  Symbol
	value Value
	set   bool
}

// New returns a fresh interpreter with the standard library installed.
func New() *Interp {
	in := &Interp{Stdout: os.Stdout, globals: map[Symbol]*global{}}
	for _, p := range stdlibPrimitives() {
		in.Register(p)
	}
	installPorts(in)
	return in
}

func (in *Interp) cell(name Symbol) *global {
	g := in.globals[name]
	if g == nil {
		g = &global{name: name}
		in.globals[name] = g
	}
	return g
}

// Define binds name to v in the global environment.
func (in *Interp) Define(name string, v Value) {
	g := in.cell(Symbol(name))
	g.value, g.set = v, true
}

// Lookup returns the global value bound to name.
func (in *Interp) Lookup(name string) (Value, bool) {
	g := in.globals[Symbol(name)]
	if g == nil || !g.set {
		return nil, false
	}
	return g.value, true
}

// Register binds a Go primitive under its name.
func (in *Interp) Register(p *Primitive) { in.Define(p.Name, p) }

var errNotYet = errors.New("scheme: not implemented yet")

// Apply calls proc with args. It may be called from inside a Primitive.
func (in *Interp) Apply(proc Value, args []Value) (Value, error) { return nil, errNotYet }

// Eval reads and evaluates every expression in src; file names the source in
// positions. It returns the value of the last expression.
func (in *Interp) Eval(ctx context.Context, src, file string) (Value, error) { return nil, errNotYet }

// Load evaluates the file name from fsys.
func (in *Interp) Load(ctx context.Context, fsys fs.FS, name string) error { return errNotYet }

// LoadFile evaluates the file at path on disk.
func (in *Interp) LoadFile(ctx context.Context, path string) error { return errNotYet }

// Call applies proc to args under ctx.
func (in *Interp) Call(ctx context.Context, proc Value, args ...Value) (Value, error) {
	return nil, errNotYet
}

// CallByName applies the global procedure name to args under ctx.
func (in *Interp) CallByName(ctx context.Context, name string, args ...Value) (Value, error) {
	return nil, errNotYet
}

// REPL runs a read-eval-print loop.
func (in *Interp) REPL(ctx context.Context, r io.Reader, w io.Writer) error { return errNotYet }

// Read parses every datum in src.
func Read(src, file string) ([]Value, error) { return nil, errNotYet }

// IsTrue reports whether v counts as true (everything but #f).
func IsTrue(v Value) bool { b, ok := v.(bool); return !ok || b }
