package scheme

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
)

// Interp is one Scheme interpreter: a global environment and the state of
// the evaluation running in it. Use one goroutine at a time per interpreter;
// any number of interpreters may run in parallel.
type Interp struct {
	// Stdout is where display and write go while the current output port
	// is the default one. New sets it to os.Stdout.
	Stdout io.Writer

	globals  map[Symbol]*global
	macros   map[Symbol]*macro
	shadowed map[Symbol]bool
	th       *thread
	loadFS   fs.FS
	opts     Options
	forward  map[*global]Pos // see noteRef
}

type global struct {
	name  Symbol
	value Value // nil while unbound
}

// New returns a fresh interpreter with the standard library installed and
// no file access: NewWith(Options{}).
func New() *Interp { return NewWith(Options{}) }

// NewWith returns a fresh interpreter with the standard library installed
// and what opts gives it (file access: Options.Files).
func NewWith(opts Options) *Interp {
	std := stdlibPrimitives()
	in := &Interp{Stdout: os.Stdout, opts: opts, globals: make(map[Symbol]*global, len(std)+len(corePrimitives)+64)}
	in.th = &thread{in: in, maxDepth: DefaultMaxDepth, tick: tickInterval}
	for _, p := range std {
		in.Register(p)
	}
	installPorts(in)
	for _, g := range in.globals {
		// the per-interpreter library procedures made by installPorts
		if p, ok := g.value.(*Primitive); ok && !p.borrow && p.tail == nil {
			p.borrow = true
		}
	}
	for _, p := range corePrimitives {
		in.Register(p)
	}
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

// Define binds name to v in the global environment (a Go nil becomes the
// unspecified value).
func (in *Interp) Define(name string, v Value) {
	if v == nil {
		v = Void
	}
	in.defineCell(Symbol(name)).value = v
}

// Lookup returns the global value bound to name.
func (in *Interp) Lookup(name string) (Value, bool) {
	g := in.globals[Symbol(name)]
	if g == nil || g.value == nil {
		return nil, false
	}
	return g.value, true
}

// Register binds a Go primitive in the global environment under its name.
func (in *Interp) Register(p *Primitive) { in.Define(p.Name, p) }

// SetStepLimit sets a budget of procedure calls for each later outer Eval,
// Load or Call (counted in batches of about a thousand calls); 0 removes
// it. Running out ends evaluation with an error wrapping ErrStepLimit.
// CallBounded gives a nested call a budget of its own besides.
func (in *Interp) SetStepLimit(n int64) {
	if n < 0 {
		n = 0
	}
	in.th.stepLimit = n
	in.th.setCaps()
}

// SetMaxDepth sets the cap on nested non-tail calls (DefaultMaxDepth by
// default). Exceeding it raises a Scheme error instead of overflowing the
// Go stack.
func (in *Interp) SetMaxDepth(n int) {
	if n < 1 {
		n = 1
	}
	in.th.maxDepth = n
}

// CurrentPos returns the position of the call being evaluated: inside a
// Primitive's Fn, the position of the call of that primitive.
func (in *Interp) CurrentPos() Pos { return posOf(in.th.curPos) }

type ctxEntry struct{ ctx context.Context }

// Context returns the context of the evaluation running now (the innermost
// one given to Eval, Load or Call), for Go code a primitive calls; nil when
// nothing is being evaluated.
func (in *Interp) Context() context.Context {
	th := in.th
	if th.active == 0 {
		return nil
	}
	for i := len(th.ctxs) - 1; i >= 0; i-- {
		if c := th.ctxs[i].ctx; c != nil {
			return c
		}
	}
	return nil
}

// run is the boundary between Go and Scheme: it installs ctx, recovers every
// panic and turns it into an error. A nil ctx means "nested call, keep the
// current context".
func (in *Interp) run(ctx context.Context, f func(th *thread) Value) (v Value, err error) {
	th := in.th
	st := th.save()
	outer := th.active == 0
	if outer {
		th.steps = 0
		th.tick = tickInterval
		th.bounds = th.bounds[:0]
		th.cancelled.Store(false)
		th.memStart() // and setCaps
	}
	th.active++
	if ctx != nil {
		if ctx.Err() != nil {
			th.active--
			return nil, &Error{Msg: "evaluation cancelled: " + context.Cause(ctx).Error(), Err: ctx.Err()}
		}
		stop := context.AfterFunc(ctx, func() { th.cancelled.Store(true) })
		th.ctxs = append(th.ctxs, ctxEntry{ctx})
		defer func() {
			stop()
			th.ctxs = th.ctxs[:len(th.ctxs)-1]
		}()
	}
	defer func() {
		th.active--
		if r := recover(); r != nil {
			if _, ok := r.(*abortSig); ok {
				// The frames a normal return left in the pool hold the
				// values they had; after an abort (a bound that ran out
				// while data was being built) they must not keep it.
				th.dropPool()
			}
			th.restore(st)
			th.aborting = false // stopped here; re-raised if returned from a primitive
			th.unwinding, th.escapeK = unwindNone, nil
			err = th.toError(r)
			v = nil
		}
		if th.active == 0 {
			th.cancelled.Store(false)
			th.aborting = false
		}
	}()
	return f(th), nil
}

func (th *thread) toError(r any) error {
	switch s := r.(type) {
	case *raiseSig:
		return s.toError()
	case *abortSig:
		return s.err
	case *escapeSig:
		return &escapeError{sig: s}
	case *Error:
		return s
	}
	return &Error{Msg: fmt.Sprintf("internal error: %v\n%s", r, debug.Stack()), Value: Errorf("internal error: %v", r)}
}

// Apply calls proc with args and returns its value. Inside a Primitive's Fn
// it runs in the current evaluation; return any error it gives unchanged so
// that raises, escapes and cancellation keep their meaning.
func (in *Interp) Apply(proc Value, args []Value) (Value, error) {
	var ctx context.Context
	if in.th.active == 0 {
		ctx = context.Background()
	}
	v, err := in.run(ctx, func(th *thread) Value { return th.apply(proc, args, th.curPos) })
	if _, ok := err.(*escapeError); ok && ctx != nil {
		return nil, &Error{Msg: "continuation called after its extent ended: continuations are escape-only"}
	}
	return v, err
}

// Eval reads and evaluates every expression in src; file names the source in
// positions. It returns the value of the last expression.
func (in *Interp) Eval(ctx context.Context, src, file string) (Value, error) {
	forms, poss, err := readAll(src, file)
	if err != nil {
		return nil, err
	}
	return in.run(ctx, func(th *thread) Value {
		var v Value = Void
		for i, f := range forms {
			v = in.evalTop(th, f, &poss[i])
		}
		return v
	})
}

// EvalValue evaluates one datum (already read) in the global environment.
func (in *Interp) EvalValue(ctx context.Context, form Value) (Value, error) {
	return in.run(ctx, func(th *thread) Value { return in.evalTop(th, form, nil) })
}

func readFS(fsys fs.FS, name string) ([]byte, error) { return fs.ReadFile(fsys, name) }

// Load evaluates the file name from fsys (for example an embed.FS).
// Positions name the file; (load "other.scm") inside it reads from fsys too.
func (in *Interp) Load(ctx context.Context, fsys fs.FS, name string) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("scheme: load %s: %w", name, err)
	}
	saved := in.loadFS
	in.loadFS = fsys
	defer func() { in.loadFS = saved }()
	_, err = in.Eval(ctx, string(data), name)
	return err
}

// LoadFile evaluates the file at path on disk.
func (in *Interp) LoadFile(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("scheme: load %s: %w", path, err)
	}
	return in.LoadSource(ctx, data, path)
}

// LoadSource evaluates data as the file name (positions name it), with no
// file system for a (load …) inside it: the host binds its own load.
func (in *Interp) LoadSource(ctx context.Context, data []byte, name string) error {
	saved := in.loadFS
	in.loadFS = nil
	defer func() { in.loadFS = saved }()
	_, err := in.Eval(ctx, string(data), name)
	return err
}

// Call applies proc to args under ctx.
func (in *Interp) Call(ctx context.Context, proc Value, args ...Value) (Value, error) {
	return in.run(ctx, func(th *thread) Value { return th.apply(proc, args, nil) })
}

// CallByName applies the global procedure name to args under ctx.
func (in *Interp) CallByName(ctx context.Context, name string, args ...Value) (Value, error) {
	proc, ok := in.Lookup(name)
	if !ok {
		return nil, &Error{Msg: "unbound variable: " + name, Value: Errorf("unbound variable: %s", name)}
	}
	return in.Call(ctx, proc, args...)
}

// IsTrue reports whether v counts as true: everything but #f.
func IsTrue(v Value) bool { return v != false }

// evalTop expands and evaluates one top-level form.
func (in *Interp) evalTop(th *thread, x Value, pos *Pos) Value {
	c := &compiler{in: in, th: th}
	return c.top(x, 0, pos)
}

func (c *compiler) top(x Value, depth int, pos *Pos) Value {
	if depth > maxCompileDepth {
		c.syntaxErr(pairPos(x, nil), "begin nested too deeply")
	}
	x = c.expandHead(x, nil)
	if p, ok := x.(*Pair); ok {
		if sp := c.headSpecial(p, nil); sp != nil && sp.name == "begin" {
			var v Value = Void
			for _, f := range c.list(p.Cdr, p.Pos, "begin") {
				v = c.top(f, depth+1, pairPos(f, pos))
			}
			return v
		}
	}
	info := &lambdaInfo{name: "top-level"}
	sc := &scope{lam: info, top: true}
	c.lam = info
	pos = pairPos(x, pos)
	info.body = c.comp(x, sc, true, pos)
	fr := c.th.newFrame(info, nil)
	return c.th.run(&Closure{info: info}, fr, pos)
}
