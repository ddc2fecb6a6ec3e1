package scheme

import (
	"strings"
)

// corePrimitives are the procedures that need the evaluator: control,
// exceptions, equality, eval. Built once; installed into every Interp after
// the standard library, so these win over any library entry of the same name.
var corePrimitives = buildCore()

func init() {
	// The standard library and the core procedures do not keep their
	// argument slices (the library's contract), so calls to them may pass
	// a reused slice. Set once, before any interpreter exists.
	for _, p := range stdlibPrimitives() {
		p.borrow = p.tail == nil
	}
	for _, p := range corePrimitives {
		p.borrow = p.tail == nil
	}
}

func corePrim(name string, min, max int, doc string, tail func(th *thread, args []Value, pos *Pos, tail bool) Value) *Primitive {
	p := &Primitive{Name: name, MinArgs: min, MaxArgs: max, Doc: doc, tail: tail}
	p.Fn = func(in *Interp, args []Value) (Value, error) { return in.Apply(p, args) }
	return p
}

func buildCore() []*Primitive {
	ps := []*Primitive{
		corePrim("apply", 1, -1, "(apply proc arg ... list) calls proc with the args and the elements of list", primApply),
		corePrim("call-with-current-continuation", 1, 1, "(call/cc proc) calls proc with an escape-only continuation", primCallCC),
		corePrim("call-with-escape-continuation", 1, 1, "(call/ec proc) calls proc with an escape continuation", primCallCC),
		corePrim("dynamic-wind", 3, 3, "(dynamic-wind before thunk after)", primDynamicWind),
		corePrim("values", 0, -1, "(values obj ...) returns its arguments as multiple values", primValues),
		corePrim("call-with-values", 2, 2, "(call-with-values producer consumer)", primCallWithValues),
		corePrim("error", 0, -1, "(error message irritant ...) raises an error object", primError),
		corePrim("raise", 1, 1, "(raise obj) raises obj (non-continuable)", primRaise),
		corePrim("raise-continuable", 1, 1, "(raise-continuable obj) raises obj; the handler's value is returned", func(th *thread, a []Value, pos *Pos, _ bool) Value {
			return th.raise(a[0], true, pos, "raise-continuable")
		}),
		corePrim("with-exception-handler", 2, 2, "(with-exception-handler handler thunk)", primWithHandler),
		corePrim("force", 1, 1, "(force promise) forces a promise", func(th *thread, a []Value, pos *Pos, _ bool) Value { return th.force(a[0], pos) }),
		corePrim("eval", 1, 2, "(eval expr [environment]) evaluates expr in the global environment", func(th *thread, a []Value, pos *Pos, _ bool) Value {
			return th.in.evalTop(th, a[0], pos)
		}),
		corePrim("load", 1, 1, "(load filename) evaluates a file", primLoad),
		corePrim("exit", 0, 1, "(exit [code]) ends evaluation; Eval returns an error wrapping *ExitError", primExit),
		corePrim("make-parameter", 1, 2, "(make-parameter value [converter])", func(th *thread, a []Value, pos *Pos, _ bool) Value {
			var conv Value
			v := a[0]
			if len(a) == 2 {
				conv = a[1]
				v = th.apply(conv, []Value{v}, pos)
			}
			return NewParameter(v, conv)
		}),
	}
	simple := func(name string, min, max int, doc string, fn func(args []Value) Value) {
		ps = append(ps, &Primitive{Name: name, MinArgs: min, MaxArgs: max, Doc: doc,
			Fn: func(in *Interp, args []Value) (Value, error) { return fn(args), nil }})
	}
	simple("eq?", 2, 2, "(eq? a b) identity", func(a []Value) Value { return Eq(a[0], a[1]) })
	simple("eqv?", 2, 2, "(eqv? a b) identity, numbers and characters by value", func(a []Value) Value { return Eqv(a[0], a[1]) })
	simple("equal?", 2, 2, "(equal? a b) structural equality", func(a []Value) Value { return Equal(a[0], a[1]) })
	simple("procedure?", 1, 1, "(procedure? obj)", func(a []Value) Value { return IsProcedure(a[0]) })
	simple("make-promise", 1, 1, "(make-promise obj) a promise already forced to obj", func(a []Value) Value {
		if p, ok := a[0].(*Promise); ok {
			return p
		}
		return &Promise{done: true, val: a[0]}
	})
	simple("promise?", 1, 1, "(promise? obj)", func(a []Value) Value { _, ok := a[0].(*Promise); return ok })
	simple("error-object?", 1, 1, "(error-object? obj)", func(a []Value) Value { _, ok := a[0].(*ErrorObject); return ok })
	simple("error-object-message", 1, 1, "(error-object-message err)", func(a []Value) Value {
		if e, ok := a[0].(*ErrorObject); ok {
			return NewString(e.Message)
		}
		return NewString("")
	})
	simple("error-object-irritants", 1, 1, "(error-object-irritants err)", func(a []Value) Value {
		if e, ok := a[0].(*ErrorObject); ok {
			return List(e.Irritants...)
		}
		return Nil
	})
	simple("file-error?", 1, 1, "(file-error? obj)", func(a []Value) Value { e, ok := a[0].(*ErrorObject); return ok && e.Kind == "file" })
	simple("read-error?", 1, 1, "(read-error? obj)", func(a []Value) Value { e, ok := a[0].(*ErrorObject); return ok && e.Kind == "read" })
	simple("interaction-environment", 0, 0, "(interaction-environment) the global environment", func([]Value) Value { return Symbol("interaction-environment") })
	simple("scheme-report-environment", 0, 1, "(scheme-report-environment [version]) the global environment", func([]Value) Value { return Symbol("interaction-environment") })
	simple("environment", 0, -1, "(environment spec ...) the global environment", func([]Value) Value { return Symbol("interaction-environment") })
	for _, p := range ps {
		if p.Name == "call-with-current-continuation" {
			ps = append(ps, alias2("call/cc", p))
		}
		if p.Name == "call-with-escape-continuation" {
			ps = append(ps, alias2("call/ec", p))
		}
	}
	return ps
}

func alias2(name string, p *Primitive) *Primitive {
	q := *p
	q.Name = name
	return &q
}

func primApply(th *thread, a []Value, pos *Pos, tail bool) Value {
	last := a[len(a)-1]
	rest, ok := ListToSlice(last)
	if !ok {
		th.raise(WrongType("apply", "a list", last), false, pos, "apply")
	}
	args := make([]Value, 0, len(a)-2+len(rest))
	args = append(args, a[1:len(a)-1]...)
	args = append(args, rest...)
	if tail {
		return th.tailCall(a[0], args, pos)
	}
	return th.apply(a[0], args, pos)
}

func primCallCC(th *thread, a []Value, pos *Pos, _ bool) (v Value) {
	k := &Continuation{active: true}
	st := th.save()
	defer func() {
		k.active = false
		if th.unwinding != unwindEscape || th.escapeK != k {
			return // a normal return, or a panic that is not for k
		}
		r := recover()
		s, ok := r.(*escapeSig)
		if !ok || s.k != k {
			panic(r)
		}
		th.unwinding, th.escapeK = unwindNone, nil
		th.restore(st)
		v = s.val
	}()
	return th.apply(a[0], []Value{k}, pos)
}

func primDynamicWind(th *thread, a []Value, pos *Pos, _ bool) Value {
	th.apply(a[0], nil, pos)
	v := th.windBody(a[1], a[2], pos)
	th.apply(a[2], nil, pos)
	return v
}

// windBody runs thunk; if it is left by a raise or an escape, after runs on
// the way out (not for aborts: cancellation ends evaluation at once).
func (th *thread) windBody(thunk, after Value, pos *Pos) Value {
	st := th.save()
	done := false
	defer func() {
		// No recover: the panic goes on after the after thunk, so an
		// escape through many winds costs no re-panics.
		if !done && !th.aborting {
			// the after thunk may raise and catch errors of its own: keep
			// what is unwinding now
			kind, k := th.unwinding, th.escapeK
			th.restore(st)
			th.apply(after, nil, pos)
			th.unwinding, th.escapeK = kind, k
		}
	}()
	v := th.apply(thunk, nil, pos)
	done = true
	return v
}

func primValues(th *thread, a []Value, pos *Pos, _ bool) Value {
	if len(a) == 1 {
		return a[0]
	}
	return &MultipleValues{Vals: append([]Value(nil), a...)}
}

func primCallWithValues(th *thread, a []Value, pos *Pos, tail bool) Value {
	v := th.apply(a[0], nil, pos)
	args := valuesOf(v)
	if tail {
		return th.tailCall(a[1], args, pos)
	}
	return th.apply(a[1], args, pos)
}

func primError(th *thread, a []Value, pos *Pos, _ bool) Value {
	obj := &ErrorObject{}
	if len(a) > 0 {
		switch m := a[0].(type) {
		case *String:
			obj.Message = m.S
		case Symbol:
			// (error 'proc "message" irritant ...), a common older style
			obj.Message = string(m)
			if len(a) > 1 {
				if s, ok := a[1].(*String); ok {
					obj.Message += ": " + s.S
					a = a[1:]
				}
			}
		default:
			obj.Message = DisplayString(m)
		}
		obj.Irritants = append([]Value(nil), a[1:]...)
	}
	return th.raise(obj, false, pos, "error")
}

func primRaise(th *thread, a []Value, pos *Pos, _ bool) Value {
	return th.raise(a[0], false, pos, "raise")
}

func primWithHandler(th *thread, a []Value, pos *Pos, _ bool) Value {
	if !IsProcedure(a[0]) {
		th.raise(WrongType("with-exception-handler", "a procedure", a[0]), false, pos, "with-exception-handler")
	}
	saved := th.handlers
	th.handlers = append(saved[:len(saved):len(saved)], a[0])
	defer func() { th.handlers = saved }()
	return th.apply(a[1], nil, pos)
}

func primLoad(th *thread, a []Value, pos *Pos, _ bool) Value {
	s, ok := a[0].(*String)
	if !ok {
		th.raise(WrongType("load", "a string", a[0]), false, pos, "load")
	}
	var data []byte
	var err error
	if th.in.loadFS != nil {
		data, err = readFS(th.in.loadFS, s.S)
	} else {
		data, err = readFiles(th.in.files(), s.S)
	}
	if err != nil {
		th.primError("load", err, pos)
	}
	forms, poss, rerr := readAll(string(data), s.S)
	if rerr != nil {
		th.panicRaise(&raiseSig{val: rerr.(*Error).Value, pos: rerr.(*Error).Pos, stack: th.snapshot(pos, "load")})
	}
	var v Value = Void
	for i, f := range forms {
		v = th.in.evalTop(th, f, &poss[i])
	}
	return v
}

func primExit(th *thread, a []Value, pos *Pos, _ bool) Value {
	code := 0
	if len(a) == 1 {
		switch v := a[0].(type) {
		case int:
			code = v
		case bool:
			if !v {
				code = 1
			}
		}
	}
	e := &ExitError{Code: code}
	th.panicAbort(&abortSig{err: &Error{Pos: posOf(pos), Msg: strings.TrimPrefix(e.Error(), "scheme: "), Err: e}})
	return nil
}
