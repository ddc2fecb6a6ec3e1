package scheme

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/metrics"
	"strings"
	"sync/atomic"
)

// code is a compiled expression: a Go closure run with the current thread and
// the frame of the procedure it belongs to.
type code func(th *thread, fr *frame) Value

// frame holds the variables of one procedure activation (its parameters and
// every let/define inside its body). up is the frame of the enclosing
// procedure. Procedures that create no closures get their frames from a pool
// on the thread, so calling them allocates nothing.
type frame struct {
	up    *frame
	vals  []Value
	small [3]Value
}

// lambdaInfo is the compiled form of one lambda.
type lambdaInfo struct {
	name     string
	nreq     int
	rest     bool
	nslots   int
	heap     bool // frames must live on the heap: an inner closure holds them
	captures bool // the closure reads variables of enclosing frames
	body     code
	parent   *lambdaInfo
	pos      Pos
}

// Closure is a procedure written in Scheme.
type Closure struct {
	info *lambdaInfo
	env  *frame
}

// Name returns the procedure's name ("" for an anonymous lambda).
func (c *Closure) Name() string { return c.info.name }

// SchemeString implements the printer hook.
func (c *Closure) SchemeString(bool) string {
	if c.info.name == "" {
		return "#<procedure>"
	}
	return "#<procedure " + c.info.name + ">"
}

// caseLambda is what case-lambda makes.
type caseLambda struct {
	name    string
	clauses []*Closure
}

func (c *caseLambda) SchemeString(bool) string { return "#<procedure " + c.name + ">" }

// Continuation is an escape-only continuation made by call/cc. It can be
// invoked only while the call/cc that made it is still running.
type Continuation struct {
	active bool
}

// SchemeString implements the printer hook.
func (k *Continuation) SchemeString(bool) string { return "#<continuation>" }

type tailMark struct{}
type guardMark struct{}

// callRec is one entry of the shadow stack used for traces and the depth cap.
type callRec struct {
	pos  *Pos
	name string
}

// tickInterval is how many procedure calls pass between checks of the
// cancellation flag and the step budget.
const tickInterval = 1024

// DefaultMaxDepth is the default cap on nested (non-tail) calls.
const DefaultMaxDepth = 10000

// thread is the evaluation state of an interpreter.
type thread struct {
	in        *Interp
	pool      []*frame
	tc        Value // pending tail call: callee
	tf        *frame
	targs     []Value
	tpos      *Pos
	calls     []callRec
	handlers  []Value
	tick      int
	argstack  []Value
	aborting  bool // an abort is unwinding: dynamic-wind after thunks do not run
	unwinding int  // what the Go panic in flight carries (unwindRaise, ...)
	escapeK   *Continuation

	maxDepth  int
	stepLimit int64
	steps     int64
	memLimit  int64 // bytes the heap may grow by; 0 = no bound
	memBase   memFrom
	bounds    []*bound // CallBounded's, innermost last
	// stepCap and memCap are where the first budget runs out: the least
	// of the evaluation's own (stepLimit; memBase+memLimit) and the
	// bounds' (setCaps); 0 = no budget. poll compares against them only.
	stepCap   int64
	memCap    uint64
	charged   int64 // bytes of large objects asked for since the last look
	memSample []metrics.Sample
	cancelled atomic.Bool
	ctxs      []ctxEntry
	active    int
	curPos    *Pos
}

func (th *thread) poll() {
	th.steps += int64(tickInterval - th.tick)
	th.tick = tickInterval
	if th.cancelled.Load() {
		th.abortCancelled()
	}
	if th.stepCap > 0 && th.steps > th.stepCap {
		th.stepsOut()
	}
	if th.memCap > 0 {
		th.checkMemory(0)
	}
}

func (th *thread) abortCancelled() {
	for i := len(th.ctxs) - 1; i >= 0; i-- {
		c := th.ctxs[i].ctx
		if c != nil && c.Err() != nil {
			cause := c.Err()
			msg := "evaluation cancelled: " + cause.Error()
			if cc := context.Cause(c); cc != nil && cc != cause {
				msg = "evaluation cancelled: " + cc.Error()
			}
			th.panicAbort(&abortSig{err: &Error{Msg: msg, Err: cause, Stack: th.snapshot(nil, "")}})
		}
	}
	th.cancelled.Store(false)
}

// newFrame makes the frame for a call of c.
func (th *thread) newFrame(info *lambdaInfo, env *frame) *frame {
	n := info.nslots
	var f *frame
	if !info.heap {
		if k := len(th.pool); k > 0 {
			f = th.pool[k-1]
			th.pool = th.pool[:k-1]
			if cap(f.vals) >= n {
				f.vals = f.vals[:n]
			} else {
				f.vals = make([]Value, n)
			}
			f.up = env
			return f
		}
	}
	f = &frame{up: env}
	if n <= len(f.small) {
		f.vals = f.small[:n]
	} else {
		f.vals = make([]Value, n)
	}
	return f
}

// dropPool empties the pool of frames, so that nothing they held stays
// reachable.
func (th *thread) dropPool() {
	clear(th.pool)
	th.pool = th.pool[:0]
}

func (th *thread) release(f *frame) {
	if len(th.pool) < 512 {
		f.up = nil
		th.pool = append(th.pool, f)
	}
}

// run calls closure c whose frame fr is filled in, running tail calls in a
// loop so they take no Go stack.
func (th *thread) run(c *Closure, fr *frame, pos *Pos) Value {
	if len(th.calls) >= th.maxDepth {
		th.raise(Errorf("%s: call depth exceeded %d (recursion too deep; make the call a tail call)", nameOf(c), th.maxDepth), false, pos, nameOf(c))
	}
	th.calls = append(th.calls, callRec{pos, c.info.name})
	if th.tick--; th.tick <= 0 {
		th.poll()
	}
	info := c.info
	for {
		v := info.body(th, fr)
		if !info.heap {
			th.release(fr)
		}
		if _, ok := v.(tailMark); !ok {
			th.calls = th.calls[:len(th.calls)-1]
			return v
		}
		if th.tick--; th.tick <= 0 {
			th.poll()
		}
		next, ok := th.tc.(*Closure)
		if ok && th.tf != nil {
			fr = th.tf
			th.tf = nil
		} else {
			// tail call of something that is not a simple closure call
			proc, args, p := th.tc, th.targs, th.tpos
			th.tc, th.targs = nil, nil
			v = th.tailDispatch(proc, args, p)
			if _, ok := v.(tailMark); ok {
				next = th.tc.(*Closure)
				fr = th.tf
				th.tf = nil
			} else {
				th.calls = th.calls[:len(th.calls)-1]
				return v
			}
		}
		info = next.info
		th.calls[len(th.calls)-1] = callRec{th.tpos, info.name}
		th.tc = nil
	}
}

// tailDispatch performs a tail call of proc: closures are bound and returned
// as a pending tail call (tailMark); other procedures run now.
func (th *thread) tailDispatch(proc Value, args []Value, pos *Pos) Value {
	switch p := proc.(type) {
	case *Closure:
		fr := th.bind(p, args, pos)
		th.tc, th.tf, th.tpos = p, fr, pos
		return tailMark{}
	case *caseLambda:
		c := th.pickCase(p, len(args), pos)
		fr := th.bind(c, args, pos)
		th.tc, th.tf, th.tpos = c, fr, pos
		return tailMark{}
	case *Primitive:
		if p.tail != nil {
			th.checkArity(p, len(args), pos)
			return p.tail(th, args, pos, true)
		}
	}
	return th.apply(proc, args, pos)
}

// tailCall is used by compiled code in tail position for a callee that is
// not known to be a closure: it returns tailMark with the call pending.
func (th *thread) tailCall(proc Value, args []Value, pos *Pos) Value {
	switch p := proc.(type) {
	case *Closure, *caseLambda:
		return th.tailDispatch(p, args, pos)
	case *Primitive:
		if p.tail == nil {
			return th.callPrim(p, args, pos)
		}
	}
	th.tc, th.targs, th.tpos, th.tf = proc, args, pos, nil
	return tailMark{}
}

// bind makes c's frame from args, checking the count.
func (th *thread) bind(c *Closure, args []Value, pos *Pos) *frame {
	info := c.info
	n := len(args)
	if n != info.nreq && (!info.rest || n < info.nreq) {
		th.arityError(c, n, pos)
	}
	fr := th.newFrame(info, c.env)
	copy(fr.vals, args[:info.nreq])
	if info.rest {
		var l Value = Nil
		for i := n - 1; i >= info.nreq; i-- {
			l = &Pair{Car: args[i], Cdr: l}
		}
		fr.vals[info.nreq] = l
	}
	return fr
}

func (th *thread) pickCase(p *caseLambda, n int, pos *Pos) *Closure {
	for _, c := range p.clauses {
		if n == c.info.nreq || c.info.rest && n >= c.info.nreq {
			return c
		}
	}
	th.raise(Errorf("%s: no clause accepts %d argument%s", p.name, n, plural(n)), false, pos, p.name)
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func nameOf(c *Closure) string {
	if c.info.name == "" {
		return "#<procedure>"
	}
	return c.info.name
}

func (th *thread) arityError(c *Closure, n int, pos *Pos) {
	want := fmt.Sprint(c.info.nreq)
	if c.info.rest {
		want = "at least " + want
	}
	th.raise(Errorf("%s: wrong number of arguments: got %d, want %s", nameOf(c), n, want), false, pos, nameOf(c))
}

func (th *thread) checkArity(p *Primitive, n int, pos *Pos) {
	if n < p.MinArgs || p.MaxArgs >= 0 && n > p.MaxArgs {
		var want string
		switch {
		case p.MaxArgs < 0:
			want = fmt.Sprintf("at least %d", p.MinArgs)
		case p.MinArgs == p.MaxArgs:
			want = fmt.Sprint(p.MinArgs)
		default:
			want = fmt.Sprintf("%d to %d", p.MinArgs, p.MaxArgs)
		}
		th.raise(Errorf("%s: wrong number of arguments: got %d, want %s", p.Name, n, want), false, pos, p.Name)
	}
}

// apply calls proc with args and returns its value (never tailMark).
func (th *thread) apply(proc Value, args []Value, pos *Pos) Value {
	switch p := proc.(type) {
	case *Closure:
		return th.run(p, th.bind(p, args, pos), pos)
	case *Primitive:
		v := th.callPrim(p, args, pos)
		if _, ok := v.(tailMark); ok {
			return th.finishTail(pos)
		}
		return v
	case *caseLambda:
		c := th.pickCase(p, len(args), pos)
		return th.run(c, th.bind(c, args, pos), pos)
	case *Continuation:
		th.throw(p, args, pos)
	case *Parameter:
		if len(args) == 0 {
			return p.value
		}
		p.value = args[0]
		return Void
	case *RecordType:
		th.raise(Errorf("not a procedure: record type %s (use its constructor)", p.Name), false, pos, "apply")
	}
	th.raise(Errorf("not a procedure: %s", errString(proc)), false, pos, "apply")
	return nil
}

// finishTail runs a pending tail call left by a primitive's tail function.
func (th *thread) finishTail(pos *Pos) Value {
	if c, ok := th.tc.(*Closure); ok && th.tf != nil {
		fr := th.tf
		th.tc, th.tf = nil, nil
		return th.run(c, fr, pos)
	}
	proc, args := th.tc, th.targs
	th.tc, th.targs = nil, nil
	return th.apply(proc, args, pos)
}

// callBorrowed calls a library primitive (which does not keep its argument
// slice) with arguments on the thread's argument stack: no allocation.
func (th *thread) callBorrowed(p *Primitive, pos *Pos, vals ...Value) Value {
	base := len(th.argstack)
	th.argstack = append(th.argstack, vals...)
	n := len(th.argstack)
	args := th.argstack[base:n:n]
	if n-base < p.MinArgs || p.MaxArgs >= 0 && n-base > p.MaxArgs {
		th.checkArity(p, n-base, pos)
	}
	th.curPos = pos
	defer th.primPanic(p, pos)
	v, err := p.Fn(th.in, args)
	if err != nil {
		th.primError(p.Name, err, pos)
	}
	// the slots are not cleared: they are overwritten by the next call
	th.argstack = th.argstack[:base]
	if v == nil {
		return Void
	}
	return v
}

func (th *thread) callPrim(p *Primitive, args []Value, pos *Pos) Value {
	th.checkArity(p, len(args), pos)
	if p.tail != nil {
		return p.tail(th, args, pos, false)
	}
	th.curPos = pos
	defer th.primPanic(p, pos)
	v, err := p.Fn(th.in, args)
	if err != nil {
		th.primError(p.Name, err, pos)
	}
	if v == nil {
		return Void
	}
	return v
}

// primPanic (deferred around a primitive's Fn) turns a Go panic in the
// primitive's own code (a bug in a host's procedure, a nil map, an
// unhashable key, ...) into a Scheme error that names the procedure and
// can be caught, raised at the call. The evaluator's own signals pass
// without being recovered.
func (th *thread) primPanic(p *Primitive, pos *Pos) {
	if th.unwinding != unwindNone {
		return
	}
	r := recover()
	if r == nil {
		return
	}
	th.raise(Errorf("%s: internal error: %v", p.Name, r), false, pos, p.Name)
}

// primError turns an error returned by a primitive into a raise (or passes
// an escape or abort through).
func (th *thread) primError(name string, err error, pos *Pos) {
	var esc *escapeError
	if errors.As(err, &esc) {
		th.panicEscape(esc.sig)
	}
	var se *Error
	if errors.As(err, &se) {
		if se.Value == nil {
			th.panicAbort(&abortSig{err: se})
		}
		if len(se.Stack) > 0 {
			// Already raised (and seen by handlers) inside a nested Apply.
			th.panicRaise(&raiseSig{val: se.Value, pos: se.Pos, stack: se.Stack})
		}
		// An error the primitive made itself, such as a read error.
		obj := se.Value
		if eo, ok := obj.(*ErrorObject); ok && !se.Pos.IsZero() {
			cp := *eo
			cp.Message = fmt.Sprintf("%s (at %s)", eo.Message, se.Pos)
			obj = &cp
		}
		th.raise(obj, false, pos, name)
	}
	var eo *ErrorObject
	if errors.As(err, &eo) {
		th.raise(eo, false, pos, name)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, name+":") {
		msg = name + ": " + msg
	}
	kind := ""
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		kind = "file"
	}
	th.raise(&ErrorObject{Message: msg, Kind: kind}, false, pos, name)
}

// raise raises obj: the innermost handler installed by
// with-exception-handler is called in the dynamic context of the raise; a
// guard (or no handler) unwinds with a Go panic.
func (th *thread) raise(obj Value, continuable bool, pos *Pos, name string) Value {
	if n := len(th.handlers); n > 0 {
		h := th.handlers[n-1]
		if _, isGuard := h.(guardMark); !isGuard {
			saved := th.handlers
			th.handlers = saved[: n-1 : n-1]
			v := th.apply(h, []Value{obj}, pos)
			if continuable {
				th.handlers = saved
				return v
			}
			msg := "handler returned from non-continuable raise"
			if eo, ok := obj.(*ErrorObject); ok {
				msg += " of error: " + eo.Error()
			} else {
				msg += ": " + errString(obj)
			}
			th.raise(Errorf("%s", msg), false, pos, name)
		}
	}
	// Unwinding costs time in proportion to the stack depth: charge it to
	// the step budget so raising in a loop cannot escape it.
	th.tick -= 1 + len(th.calls)/16
	if th.tick <= 0 {
		th.poll()
	}
	th.panicRaise(&raiseSig{val: obj, pos: posOf(pos), stack: th.snapshot(pos, name)})
	return nil
}

func posOf(p *Pos) Pos {
	if p == nil {
		return Pos{}
	}
	return *p
}

// maxTrace bounds the frames kept in an error's stack.
const maxTrace = 40

func (th *thread) snapshot(pos *Pos, name string) []Frame {
	var out []Frame
	add := func(f Frame) {
		if n := len(out); n > 0 && out[n-1].Pos == f.Pos && out[n-1].Proc == f.Proc {
			out[n-1].Repeat++
			return
		}
		out = append(out, f)
	}
	if name != "" {
		add(Frame{Pos: posOf(pos), Proc: name})
	}
	frame := func(i int) {
		c := th.calls[i]
		n := c.name
		if n == "" {
			n = "lambda"
		}
		add(Frame{Pos: posOf(c.pos), Proc: n})
	}
	// the innermost frames, then the outermost ones: a deep recursion
	// costs no more than a shallow one
	n := len(th.calls)
	low := n - 200
	if low < 0 {
		low = 0
	}
	i := n - 1
	for ; i >= low && len(out) < maxTrace; i-- {
		frame(i)
	}
	// frames i, i-1, ... 0 are left: show the outermost 10
	if rest := i + 1; rest > 0 {
		if rest > 10 {
			out = append(out, Frame{Proc: "...", Repeat: rest - 10})
			rest = 10
		}
		for i := rest - 1; i >= 0; i-- {
			frame(i)
		}
	}
	return out
}

// throw invokes an escape-only continuation.
func (th *thread) throw(k *Continuation, args []Value, pos *Pos) {
	if !k.active {
		th.raise(Errorf("continuation called after its extent ended: continuations are escape-only (call/cc can only jump out of the call that made them)"), false, pos, "continuation")
	}
	var v Value
	if len(args) == 1 {
		v = args[0]
	} else {
		v = &MultipleValues{Vals: args}
	}
	th.panicEscape(&escapeSig{k: k, val: v})
}

const (
	unwindNone = iota
	unwindRaise
	unwindEscape
	unwindAbort
)

// Every signal is panicked through these, so that guard and call/cc can let
// a panic that is not theirs pass without recovering and re-panicking it
// (which costs time in proportion to the stack depth).

func (th *thread) panicRaise(s *raiseSig) {
	th.unwinding = unwindRaise
	panic(s)
}

func (th *thread) panicEscape(s *escapeSig) {
	th.unwinding, th.escapeK = unwindEscape, s.k
	panic(s)
}

func (th *thread) panicAbort(s *abortSig) {
	th.aborting = true
	th.unwinding = unwindAbort
	panic(s)
}

// state is the part of a thread restored when a panic is recovered.
type state struct {
	ncalls, nargs int
	handlers      []Value
}

func (th *thread) save() state { return state{len(th.calls), len(th.argstack), th.handlers} }

func (th *thread) restore(s state) {
	th.calls = th.calls[:s.ncalls]
	clear(th.argstack[s.nargs:])
	th.argstack = th.argstack[:s.nargs]
	th.handlers = s.handlers
	th.tc, th.tf, th.targs = nil, nil, nil
}
