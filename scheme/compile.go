package scheme

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The compiler turns expanded source into a tree of Go closures (code).
// Variables are resolved at compile time: locals to (depth, slot) in the
// frame chain, globals to their cell. Every let/letrec/define inside a lambda
// body gets a slot in that lambda's frame, so only lambdas allocate frames.

// ident is a symbol renamed by a macro expansion: it refers to the binding
// its name has in env (the scope where the macro was defined; nil means the
// global environment) unless a binding form inside the expansion binds it.
type ident struct {
	name Value // Symbol or *ident
	env  *scope
}

// SchemeString implements the printer hook: an identifier prints as its name.
func (i *ident) SchemeString(bool) string { s, _ := baseName(i); return string(s) }

func baseName(x Value) (Symbol, bool) {
	for {
		switch v := x.(type) {
		case Symbol:
			return v, true
		case *ident:
			x = v.name
		default:
			return "", false
		}
	}
}

func isIdentifier(x Value) bool {
	switch x.(type) {
	case Symbol, *ident:
		return true
	}
	return false
}

// strip replaces renamed identifiers by their symbols (syntax->datum).
func strip(x Value) Value {
	switch v := x.(type) {
	case *ident:
		s, _ := baseName(v)
		return s
	case *Pair:
		if !hasIdent(v, 0) {
			return v
		}
		var head, tail *Pair
		var cur Value = v
		for {
			p, ok := cur.(*Pair)
			if !ok {
				break
			}
			cell := &Pair{Car: strip(p.Car), Cdr: Nil, Pos: p.Pos}
			if head == nil {
				head = cell
			} else {
				tail.Cdr = cell
			}
			tail = cell
			cur = p.Cdr
		}
		tail.Cdr = strip(cur)
		return head
	case *Vector:
		if !hasIdent(v, 0) {
			return v
		}
		items := make([]Value, len(v.Items))
		for i, it := range v.Items {
			items[i] = strip(it)
		}
		return &Vector{Items: items}
	}
	return x
}

func hasIdent(x Value, depth int) bool {
	if depth > maxReadDepth {
		return false
	}
	switch v := x.(type) {
	case *ident:
		return true
	case *Pair:
		for n := 0; n < 1<<20; n++ {
			if hasIdent(v.Car, depth+1) {
				return true
			}
			next, ok := v.Cdr.(*Pair)
			if !ok {
				return hasIdent(v.Cdr, depth+1)
			}
			v = next
		}
	case *Vector:
		for _, it := range v.Items {
			if hasIdent(it, depth+1) {
				return true
			}
		}
	}
	return false
}

// scope is a compile-time environment level.
type scope struct {
	parent *scope
	lam    *lambdaInfo
	top    bool
	names  []Value
	binds  []any // *localVar, *macro or *special
}

type localVar struct {
	lam     *lambdaInfo
	idx     int
	checked bool // letrec/define: reading it before it is set is an error
	name    Symbol
}

func (sc *scope) declare(name Value) *localVar {
	s, _ := baseName(name)
	v := &localVar{lam: sc.lam, idx: sc.lam.nslots, name: s}
	sc.lam.nslots++
	sc.names = append(sc.names, name)
	sc.binds = append(sc.binds, v)
	return v
}

func (sc *scope) bindSyntax(name Value, b any) {
	sc.names = append(sc.names, name)
	sc.binds = append(sc.binds, b)
}

// special is a core syntactic form.
type special struct {
	name    string
	compile func(c *compiler, x *Pair, sc *scope, tail bool) code
}

// SchemeString implements the printer hook.
func (s *special) SchemeString(bool) string { return s.name }

var specials map[Symbol]*special

// maxCompileDepth bounds the nesting the compiler recurses through.
const maxCompileDepth = 20000

// maxExpansions bounds macro expansions in one top-level form, so a macro
// that expands to itself fails instead of looping.
const maxExpansions = 1000000

type compiler struct {
	in         *Interp
	th         *thread
	lam        *lambdaInfo
	depth      int
	expansions int
}

func (c *compiler) syntaxErr(pos *Pos, format string, args ...any) {
	obj := &ErrorObject{Message: fmt.Sprintf(format, args...), Kind: "syntax"}
	c.th.panicRaise(&raiseSig{val: obj, pos: posOf(pos), stack: c.th.snapshot(nil, "")})
}

// lookup resolves an identifier to *localVar, *macro, *special or *global.
func (c *compiler) lookup(sc *scope, id Value) any {
	for {
		for s := sc; s != nil; s = s.parent {
			for i := len(s.names) - 1; i >= 0; i-- {
				if s.names[i] == id {
					return s.binds[i]
				}
			}
		}
		if i, ok := id.(*ident); ok {
			sc, id = i.env, i.name
			continue
		}
		return c.in.globalBinding(id.(Symbol))
	}
}

func (in *Interp) globalBinding(s Symbol) any {
	if m, ok := in.macros[s]; ok {
		return m
	}
	if sp := specials[s]; sp != nil && !in.shadowed[s] {
		return sp
	}
	return in.cell(s)
}

// headSpecial returns the special form named by the head of x, if any.
func (c *compiler) headSpecial(x *Pair, sc *scope) *special {
	switch h := x.Car.(type) {
	case *special:
		return h
	case Symbol, *ident:
		if sp, ok := c.lookup(sc, h).(*special); ok {
			return sp
		}
	}
	return nil
}

// expandHead expands x while it is a macro use.
func (c *compiler) expandHead(x Value, sc *scope) Value {
	for {
		p, ok := x.(*Pair)
		if !ok || !isIdentifier(p.Car) {
			return x
		}
		m, ok := c.lookup(sc, p.Car).(*macro)
		if !ok {
			return x
		}
		x = c.expand(m, p, sc)
	}
}

func (c *compiler) expand(m *macro, x *Pair, sc *scope) Value {
	c.expansions++
	if c.expansions > maxExpansions {
		c.syntaxErr(x.Pos, "%s: macro expansion limit exceeded (a macro expanding to itself?)", m.name)
	}
	if c.expansions&1023 == 0 && c.th.cancelled.Load() {
		c.th.abortCancelled()
	}
	return m.expand(c, x, sc)
}

func (c *compiler) comp(x Value, sc *scope, tail bool, pos *Pos) code {
	switch v := x.(type) {
	case Symbol, *ident:
		return c.compRef(x, sc, pos)
	case *Pair:
		if v.Pos != nil {
			pos = v.Pos
		}
		c.depth++
		defer func() { c.depth-- }()
		if c.depth > maxCompileDepth {
			c.syntaxErr(pos, "expression nested deeper than %d", maxCompileDepth)
		}
		switch h := v.Car.(type) {
		case *special:
			return h.compile(c, v, sc, tail)
		case Symbol, *ident:
			switch b := c.lookup(sc, h).(type) {
			case *special:
				return b.compile(c, v, sc, tail)
			case *macro:
				return c.comp(c.expand(b, v, sc), sc, tail, pos)
			}
		}
		return c.compCall(v, sc, tail, pos)
	case EmptyList:
		return constCode(Nil)
	case *Vector:
		return constCode(strip(v))
	}
	return constCode(x)
}

func constCode(v Value) code {
	return func(*thread, *frame) Value { return v }
}

func (c *compiler) compRef(id Value, sc *scope, pos *Pos) code {
	switch b := c.lookup(sc, id).(type) {
	case *localVar:
		return c.localRef(b, pos)
	case *global:
		c.in.noteRef(b, pos)
		return globalRef(b, pos)
	}
	s, _ := baseName(id)
	c.syntaxErr(pos, "%s: syntax keyword used as a variable", s)
	return nil
}

func globalRef(g *global, pos *Pos) code {
	return func(th *thread, fr *frame) Value {
		if v := g.value; v != nil {
			return v
		}
		return th.unbound(g, pos)
	}
}

func (th *thread) unbound(g *global, pos *Pos) Value {
	th.raise(Errorf("unbound variable: %s", writeSym(g.name)), false, pos, "")
	return nil
}

func writeSym(s Symbol) string { return WriteString(s) }

// varDepth returns how many frames up v lives, marking the lambdas in
// between as capturing (their frames must be on the heap).
func (c *compiler) varDepth(v *localVar) int {
	d := 0
	for l := c.lam; l != v.lam; l = l.parent {
		l.captures = true
		l.parent.heap = true
		d++
	}
	return d
}

func (c *compiler) localRef(v *localVar, pos *Pos) code {
	d, i := c.varDepth(v), v.idx
	if v.checked {
		name := v.name
		return func(th *thread, fr *frame) Value {
			for k := 0; k < d; k++ {
				fr = fr.up
			}
			if x := fr.vals[i]; x != nil {
				return x
			}
			th.raise(Errorf("%s: variable used before its definition", writeSym(name)), false, pos, "")
			return nil
		}
	}
	switch d {
	case 0:
		return func(th *thread, fr *frame) Value { return fr.vals[i] }
	case 1:
		return func(th *thread, fr *frame) Value { return fr.up.vals[i] }
	case 2:
		return func(th *thread, fr *frame) Value { return fr.up.up.vals[i] }
	}
	return func(th *thread, fr *frame) Value {
		for k := 0; k < d; k++ {
			fr = fr.up
		}
		return fr.vals[i]
	}
}

// localSet returns code storing into v.
func (c *compiler) localSet(v *localVar, val code) code {
	d, i := c.varDepth(v), v.idx
	if d == 0 {
		return func(th *thread, fr *frame) Value { fr.vals[i] = val(th, fr); return Void }
	}
	return func(th *thread, fr *frame) Value {
		x := val(th, fr)
		f := fr
		for k := 0; k < d; k++ {
			f = f.up
		}
		f.vals[i] = x
		return Void
	}
}

func seqCode(cs []code) code {
	switch len(cs) {
	case 0:
		return constCode(Void)
	case 1:
		return cs[0]
	case 2:
		a, b := cs[0], cs[1]
		return func(th *thread, fr *frame) Value { a(th, fr); return b(th, fr) }
	}
	init, last := cs[:len(cs)-1], cs[len(cs)-1]
	return func(th *thread, fr *frame) Value {
		for _, x := range init {
			x(th, fr)
		}
		return last(th, fr)
	}
}

func (c *compiler) list(x Value, pos *Pos, what string) []Value {
	out, ok := ListToSlice(x)
	if !ok {
		c.syntaxErr(pos, "%s: bad syntax (improper list)", what)
	}
	return out
}

func pairPos(x Value, def *Pos) *Pos {
	if p, ok := x.(*Pair); ok && p.Pos != nil {
		return p.Pos
	}
	return def
}

// compCall compiles a procedure call.
func (c *compiler) compCall(x *Pair, sc *scope, tail bool, pos *Pos) code {
	args := c.list(x.Cdr, pos, "procedure call")
	argcs := make([]code, len(args))
	cell := x.Cdr
	for i, a := range args {
		// a symbol argument's position is that of its list cell
		argcs[i] = c.comp(a, sc, false, pairPos(cell, pos))
		cell = cell.(*Pair).Cdr
	}
	if isIdentifier(x.Car) {
		if g, ok := c.lookup(sc, x.Car).(*global); ok {
			c.in.noteRef(g, pos)
			if p, ok := g.value.(*Primitive); ok {
				if fc := c.inlinePrim(g, p, args, argcs, sc, pos); fc != nil {
					return fc
				}
			}
			return makeCallG(nil, g, argcs, tail, pos)
		}
	}
	fc := c.comp(x.Car, sc, false, pos)
	return makeCall(fc, argcs, tail, pos)
}

func evalArgs(th *thread, fr *frame, argcs []code) []Value {
	args := make([]Value, len(argcs))
	for i, a := range argcs {
		args[i] = a(th, fr)
	}
	return args
}

func makeCall(fc code, argcs []code, tail bool, pos *Pos) code {
	return makeCallG(fc, nil, argcs, tail, pos)
}

// makeCallG is makeCall; when g is not nil the callee is that global's value.
func makeCallG(fc code, g *global, argcs []code, tail bool, pos *Pos) code {
	n := len(argcs)
	if tail {
		switch n {
		case 1:
			a0 := argcs[0]
			return func(th *thread, fr *frame) Value {
				var f Value
				if g != nil {
					if f = g.value; f == nil {
						f = th.unbound(g, pos)
					}
				} else {
					f = fc(th, fr)
				}
				if cl, ok := f.(*Closure); ok && cl.info.nreq == 1 && !cl.info.rest {
					nf := th.newFrame(cl.info, cl.env)
					nf.vals[0] = a0(th, fr)
					th.tc, th.tf, th.tpos = cl, nf, pos
					return tailMark{}
				}
				x0 := a0(th, fr)
				if p, ok := f.(*Primitive); ok && p.borrow {
					return th.callBorrowed(p, pos, x0)
				}
				return th.tailCall(f, []Value{x0}, pos)
			}
		case 2:
			a0, a1 := argcs[0], argcs[1]
			return func(th *thread, fr *frame) Value {
				var f Value
				if g != nil {
					if f = g.value; f == nil {
						f = th.unbound(g, pos)
					}
				} else {
					f = fc(th, fr)
				}
				if cl, ok := f.(*Closure); ok && cl.info.nreq == 2 && !cl.info.rest {
					nf := th.newFrame(cl.info, cl.env)
					nf.vals[0] = a0(th, fr)
					nf.vals[1] = a1(th, fr)
					th.tc, th.tf, th.tpos = cl, nf, pos
					return tailMark{}
				}
				x0, x1 := a0(th, fr), a1(th, fr)
				if p, ok := f.(*Primitive); ok && p.borrow {
					return th.callBorrowed(p, pos, x0, x1)
				}
				return th.tailCall(f, []Value{x0, x1}, pos)
			}
		case 3:
			a0, a1, a2 := argcs[0], argcs[1], argcs[2]
			return func(th *thread, fr *frame) Value {
				var f Value
				if g != nil {
					if f = g.value; f == nil {
						f = th.unbound(g, pos)
					}
				} else {
					f = fc(th, fr)
				}
				if cl, ok := f.(*Closure); ok && cl.info.nreq == 3 && !cl.info.rest {
					nf := th.newFrame(cl.info, cl.env)
					nf.vals[0] = a0(th, fr)
					nf.vals[1] = a1(th, fr)
					nf.vals[2] = a2(th, fr)
					th.tc, th.tf, th.tpos = cl, nf, pos
					return tailMark{}
				}
				x0, x1, x2 := a0(th, fr), a1(th, fr), a2(th, fr)
				if p, ok := f.(*Primitive); ok && p.borrow {
					return th.callBorrowed(p, pos, x0, x1, x2)
				}
				return th.tailCall(f, []Value{x0, x1, x2}, pos)
			}
		}
		return func(th *thread, fr *frame) Value {
			var f Value
			if g != nil {
				if f = g.value; f == nil {
					f = th.unbound(g, pos)
				}
			} else {
				f = fc(th, fr)
			}
			if cl, ok := f.(*Closure); ok && cl.info.nreq == n && !cl.info.rest {
				nf := th.newFrame(cl.info, cl.env)
				for i, a := range argcs {
					nf.vals[i] = a(th, fr)
				}
				th.tc, th.tf, th.tpos = cl, nf, pos
				return tailMark{}
			}
			return th.tailCall(f, evalArgs(th, fr, argcs), pos)
		}
	}
	switch n {
	case 1:
		a0 := argcs[0]
		return func(th *thread, fr *frame) Value {
			var f Value
			if g != nil {
				if f = g.value; f == nil {
					f = th.unbound(g, pos)
				}
			} else {
				f = fc(th, fr)
			}
			if cl, ok := f.(*Closure); ok && cl.info.nreq == 1 && !cl.info.rest {
				nf := th.newFrame(cl.info, cl.env)
				nf.vals[0] = a0(th, fr)
				return th.run(cl, nf, pos)
			}
			x0 := a0(th, fr)
			if p, ok := f.(*Primitive); ok && p.borrow {
				return th.callBorrowed(p, pos, x0)
			}
			return th.apply(f, []Value{x0}, pos)
		}
	case 2:
		a0, a1 := argcs[0], argcs[1]
		return func(th *thread, fr *frame) Value {
			var f Value
			if g != nil {
				if f = g.value; f == nil {
					f = th.unbound(g, pos)
				}
			} else {
				f = fc(th, fr)
			}
			if cl, ok := f.(*Closure); ok && cl.info.nreq == 2 && !cl.info.rest {
				nf := th.newFrame(cl.info, cl.env)
				nf.vals[0] = a0(th, fr)
				nf.vals[1] = a1(th, fr)
				return th.run(cl, nf, pos)
			}
			x0, x1 := a0(th, fr), a1(th, fr)
			if p, ok := f.(*Primitive); ok && p.borrow {
				return th.callBorrowed(p, pos, x0, x1)
			}
			return th.apply(f, []Value{x0, x1}, pos)
		}
	case 3:
		a0, a1, a2 := argcs[0], argcs[1], argcs[2]
		return func(th *thread, fr *frame) Value {
			var f Value
			if g != nil {
				if f = g.value; f == nil {
					f = th.unbound(g, pos)
				}
			} else {
				f = fc(th, fr)
			}
			if cl, ok := f.(*Closure); ok && cl.info.nreq == 3 && !cl.info.rest {
				nf := th.newFrame(cl.info, cl.env)
				nf.vals[0] = a0(th, fr)
				nf.vals[1] = a1(th, fr)
				nf.vals[2] = a2(th, fr)
				return th.run(cl, nf, pos)
			}
			x0, x1, x2 := a0(th, fr), a1(th, fr), a2(th, fr)
			if p, ok := f.(*Primitive); ok && p.borrow {
				return th.callBorrowed(p, pos, x0, x1, x2)
			}
			return th.apply(f, []Value{x0, x1, x2}, pos)
		}
	}
	return func(th *thread, fr *frame) Value {
		var f Value
		if g != nil {
			if f = g.value; f == nil {
				f = th.unbound(g, pos)
			}
		} else {
			f = fc(th, fr)
		}
		if cl, ok := f.(*Closure); ok && cl.info.nreq == n && !cl.info.rest {
			nf := th.newFrame(cl.info, cl.env)
			for i, a := range argcs {
				nf.vals[i] = a(th, fr)
			}
			return th.run(cl, nf, pos)
		}
		return th.apply(f, evalArgs(th, fr, argcs), pos)
	}
}

// callGlobal is the slow path of an inlined primitive.
func (th *thread) callGlobal(g *global, args []Value, pos *Pos) Value {
	f := g.value
	if f == nil {
		return th.unbound(g, pos)
	}
	return th.apply(f, args, pos)
}

const (
	opAdd = iota
	opSub
	opLt
	opGt
	opLe
	opGe
	opEq
)

var intOps = map[string]int{"+": opAdd, "-": opSub, "<": opLt, ">": opGt, "<=": opLe, ">=": opGe, "=": opEq}

// intOp applies op to fixnums; ok is false on overflow.
func intOp(op, x, y int) (Value, bool) {
	switch op {
	case opAdd:
		s := x + y
		return s, (s > x) == (y > 0)
	case opSub:
		s := x - y
		return s, (s < x) == (y > 0)
	case opLt:
		return x < y, true
	case opGt:
		return x > y, true
	case opLe:
		return x <= y, true
	case opGe:
		return x >= y, true
	}
	return x == y, true
}

// operand describes an argument the inlined code can read without a call:
// a local of the current frame or a fixnum constant.
type operand struct {
	local, isConst bool
	idx, k         int
}

func (c *compiler) operand(x Value, sc *scope) operand {
	switch v := x.(type) {
	case int:
		return operand{isConst: true, k: v}
	case Symbol, *ident:
		if lv, ok := c.lookup(sc, v).(*localVar); ok && lv.lam == c.lam && !lv.checked {
			return operand{local: true, idx: lv.idx}
		}
	}
	return operand{}
}

// inlinePrim returns fast code for common primitives on fixnums and pairs.
// The fast path runs only while the global still holds the same primitive.
func (c *compiler) inlinePrim(g *global, p *Primitive, args []Value, argcs []code, sc *scope, pos *Pos) code {
	if len(argcs) == 2 {
		a, b := argcs[0], argcs[1]
		if op, ok := intOps[p.Name]; ok {
			oa, ob := c.operand(args[0], sc), c.operand(args[1], sc)
			slow := func(th *thread, x, y Value) Value { return th.callGlobal(g, []Value{x, y}, pos) }
			switch {
			case oa.local && ob.isConst:
				i, k := oa.idx, ob.k
				return func(th *thread, fr *frame) Value {
					x := fr.vals[i]
					if xi, ok := x.(int); ok {
						if q, _ := g.value.(*Primitive); q == p {
							if r, ok := intOp(op, xi, k); ok {
								return r
							}
						}
					}
					return slow(th, x, k)
				}
			case oa.local && ob.local:
				i, j := oa.idx, ob.idx
				return func(th *thread, fr *frame) Value {
					x, y := fr.vals[i], fr.vals[j]
					if xi, ok := x.(int); ok {
						if yi, ok := y.(int); ok {
							if q, _ := g.value.(*Primitive); q == p {
								if r, ok := intOp(op, xi, yi); ok {
									return r
								}
							}
						}
					}
					return slow(th, x, y)
				}
			case ob.isConst:
				k := ob.k
				return func(th *thread, fr *frame) Value {
					x := a(th, fr)
					if xi, ok := x.(int); ok {
						if q, _ := g.value.(*Primitive); q == p {
							if r, ok := intOp(op, xi, k); ok {
								return r
							}
						}
					}
					return slow(th, x, k)
				}
			}
			return func(th *thread, fr *frame) Value {
				x, y := a(th, fr), b(th, fr)
				if xi, ok := x.(int); ok {
					if yi, ok := y.(int); ok {
						if q, _ := g.value.(*Primitive); q == p {
							if r, ok := intOp(op, xi, yi); ok {
								return r
							}
						}
					}
				}
				return slow(th, x, y)
			}
		}
		switch p.Name {
		case "cons":
			return func(th *thread, fr *frame) Value {
				x, y := a(th, fr), b(th, fr)
				if q, _ := g.value.(*Primitive); q == p {
					return &Pair{Car: x, Cdr: y}
				}
				return th.callGlobal(g, []Value{x, y}, pos)
			}
		case "eq?":
			return func(th *thread, fr *frame) Value {
				x, y := a(th, fr), b(th, fr)
				if q, _ := g.value.(*Primitive); q == p {
					return Eq(x, y)
				}
				return th.callGlobal(g, []Value{x, y}, pos)
			}
		}
		return nil
	}
	if len(argcs) == 1 {
		a := argcs[0]
		var op func(x Value) (Value, bool)
		switch p.Name {
		case "car":
			op = func(x Value) (Value, bool) {
				if p, ok := x.(*Pair); ok {
					return p.Car, true
				}
				return nil, false
			}
		case "cdr":
			op = func(x Value) (Value, bool) {
				if p, ok := x.(*Pair); ok {
					return p.Cdr, true
				}
				return nil, false
			}
		case "null?":
			op = func(x Value) (Value, bool) { _, ok := x.(EmptyList); return ok, true }
		case "pair?":
			op = func(x Value) (Value, bool) { _, ok := x.(*Pair); return ok, true }
		case "not":
			op = func(x Value) (Value, bool) { return x == false, true }
		case "zero?":
			op = func(x Value) (Value, bool) {
				if i, ok := x.(int); ok {
					return i == 0, true
				}
				return nil, false
			}
		default:
			return nil
		}
		return func(th *thread, fr *frame) Value {
			x := a(th, fr)
			if q, _ := g.value.(*Primitive); q == p {
				if r, ok := op(x); ok {
					return r
				}
			}
			return th.callGlobal(g, []Value{x}, pos)
		}
	}
	return nil
}

// Lambda

func (c *compiler) compLambda(formals, body Value, sc *scope, name string, pos *Pos) *lambdaInfo {
	info := &lambdaInfo{name: name, parent: c.lam, pos: posOf(pos)}
	nsc := &scope{parent: sc, lam: info}
	seen := map[Value]bool{}
	for {
		switch f := formals.(type) {
		case *Pair:
			if !isIdentifier(f.Car) {
				c.syntaxErr(pos, "lambda: parameter is not an identifier: %s", errString(strip(f.Car)))
			}
			if seen[f.Car] {
				c.syntaxErr(pos, "lambda: duplicate parameter %s", errString(strip(f.Car)))
			}
			seen[f.Car] = true
			nsc.declare(f.Car)
			info.nreq++
			formals = f.Cdr
			continue
		case EmptyList:
		case Symbol, *ident:
			nsc.declare(f)
			info.rest = true
		default:
			c.syntaxErr(pos, "lambda: bad parameter list")
		}
		break
	}
	saved := c.lam
	c.lam = info
	info.body = c.compBody(body, nsc, true, pos)
	c.lam = saved
	return info
}

func closureCode(info *lambdaInfo) code {
	return func(th *thread, fr *frame) Value {
		if info.captures {
			return &Closure{info: info, env: fr}
		}
		return &Closure{info: info}
	}
}

// bodyItem is one definition or expression of a body.
type bodyItem struct {
	vars    []*localVar // define / define-values targets
	formals Value       // define-values formals
	x       Value
	pos     *Pos
	isDef   bool
}

// compBody compiles a lambda or let body: internal definitions (also those
// produced by macros and begin) become letrec* bindings in the frame.
func (c *compiler) compBody(body Value, sc *scope, tail bool, pos *Pos) code {
	forms := c.list(body, pos, "body")
	bsc := &scope{parent: sc, lam: c.lam}
	var items []bodyItem
	var defined []*localVar
	for len(forms) > 0 {
		x := forms[0]
		forms = forms[1:]
		x = c.expandHead(x, bsc)
		p, ok := x.(*Pair)
		if !ok {
			items = append(items, bodyItem{x: x, pos: pos})
			continue
		}
		ppos := pairPos(p, pos)
		switch sp := c.headSpecial(p, bsc); {
		case sp == nil:
			items = append(items, bodyItem{x: x, pos: ppos})
		case sp.name == "begin":
			sub := c.list(p.Cdr, ppos, "begin")
			forms = append(sub, forms...)
		case sp.name == "define":
			name, val := c.parseDefine(p, ppos)
			v := bsc.declare(name)
			v.checked = true
			defined = append(defined, v)
			items = append(items, bodyItem{vars: []*localVar{v}, x: val, pos: ppos, isDef: true})
		case sp.name == "define-values":
			parts := c.list(p.Cdr, ppos, "define-values")
			if len(parts) != 2 {
				c.syntaxErr(ppos, "define-values: want (define-values formals expression)")
			}
			var vars []*localVar
			walkFormals(parts[0], func(id Value) {
				v := bsc.declare(id)
				v.checked = true
				vars = append(vars, v)
			}, func() { c.syntaxErr(ppos, "define-values: bad formals") })
			defined = append(defined, vars...)
			items = append(items, bodyItem{vars: vars, formals: parts[0], x: parts[1], pos: ppos, isDef: true})
		case sp.name == "define-record-type":
			forms = append([]Value{c.recordDefs(p, ppos)}, forms...)
		case sp.name == "define-syntax":
			name, m := c.parseDefineSyntax(p, bsc, ppos)
			bsc.bindSyntax(name, m)
		default:
			items = append(items, bodyItem{x: x, pos: ppos})
		}
	}
	if len(items) == 0 {
		c.syntaxErr(pos, "empty body")
	}
	var cs []code
	if len(defined) > 0 {
		slots := make([]int, len(defined))
		for i, v := range defined {
			slots[i] = v.idx
		}
		cs = append(cs, func(th *thread, fr *frame) Value {
			for _, s := range slots {
				fr.vals[s] = nil
			}
			return Void
		})
	}
	for i, it := range items {
		last := i == len(items)-1
		switch {
		case it.isDef && it.formals == nil:
			v := it.vars[0]
			cs = append(cs, c.localSet(v, c.compNamed(it.x, bsc, string(v.name), it.pos)))
		case it.isDef:
			cs = append(cs, c.valuesBinder(it.formals, it.vars, c.comp(it.x, bsc, false, it.pos), it.pos, "define-values"))
		default:
			cs = append(cs, c.comp(it.x, bsc, tail && last, it.pos))
		}
		if last && it.isDef {
			cs = append(cs, constCode(Void))
		}
	}
	return seqCode(cs)
}

// compNamed compiles x, naming it when it is a lambda.
func (c *compiler) compNamed(x Value, sc *scope, name string, pos *Pos) code {
	if p, ok := x.(*Pair); ok {
		if sp := c.headSpecial(p, sc); sp != nil && sp.name == "lambda" {
			parts := c.list(p.Cdr, pairPos(p, pos), "lambda")
			if len(parts) < 2 {
				c.syntaxErr(pairPos(p, pos), "lambda: want (lambda formals body ...)")
			}
			return closureCode(c.compLambda(parts[0], p.Cdr.(*Pair).Cdr, sc, name, pairPos(p, pos)))
		}
	}
	return c.comp(x, sc, false, pos)
}

// parseDefine returns the name and value expression of a define form,
// turning (define (f . args) body ...) into a lambda.
func (c *compiler) parseDefine(p *Pair, pos *Pos) (Value, Value) {
	parts := c.list(p.Cdr, pos, "define")
	if len(parts) == 0 {
		c.syntaxErr(pos, "define: want (define name value) or (define (name args ...) body ...)")
	}
	target := parts[0]
	if isIdentifier(target) {
		switch len(parts) {
		case 1:
			return target, List(specials["quote"], Void)
		case 2:
			return target, parts[1]
		}
		c.syntaxErr(pos, "define: too many expressions for %s", errString(strip(target)))
	}
	// (define (name . formals) body ...), possibly curried.
	body := p.Cdr.(*Pair).Cdr
	for {
		tp, ok := target.(*Pair)
		if !ok {
			c.syntaxErr(pos, "define: bad name %s", errString(strip(target)))
		}
		lam := &Pair{Car: specials["lambda"], Cdr: &Pair{Car: tp.Cdr, Cdr: body}, Pos: pos}
		if isIdentifier(tp.Car) {
			return tp.Car, lam
		}
		target = tp.Car
		body = List(lam)
	}
}

func walkFormals(f Value, id func(Value), bad func()) {
	for {
		switch x := f.(type) {
		case *Pair:
			if !isIdentifier(x.Car) {
				bad()
				return
			}
			id(x.Car)
			f = x.Cdr
			continue
		case EmptyList:
		case Symbol, *ident:
			id(x)
		default:
			bad()
		}
		return
	}
}

// valuesOf spreads a (values ...) result.
func valuesOf(v Value) []Value {
	if mv, ok := v.(*MultipleValues); ok {
		return mv.Vals
	}
	return []Value{v}
}

// valuesBinder returns code that evaluates val and binds its values to vars
// according to formals (which may have a rest variable).
func (c *compiler) valuesBinder(formals Value, vars []*localVar, val code, pos *Pos, what string) code {
	nreq := 0
	f := formals
	for {
		p, ok := f.(*Pair)
		if !ok {
			break
		}
		nreq++
		f = p.Cdr
	}
	rest := isIdentifier(f)
	sets := make([]func(th *thread, fr *frame, v Value), len(vars))
	for i, v := range vars {
		d, idx := c.varDepth(v), v.idx
		sets[i] = func(th *thread, fr *frame, x Value) {
			for k := 0; k < d; k++ {
				fr = fr.up
			}
			fr.vals[idx] = x
		}
	}
	return func(th *thread, fr *frame) Value {
		vals := valuesOf(val(th, fr))
		if len(vals) != nreq && (!rest || len(vals) < nreq) {
			want := fmt.Sprint(nreq)
			if rest {
				want = "at least " + want
			}
			th.raise(Errorf("%s: expected %s values, got %d", what, want, len(vals)), false, pos, what)
		}
		for i := 0; i < nreq; i++ {
			sets[i](th, fr, vals[i])
		}
		if rest {
			sets[nreq](th, fr, List(vals[nreq:]...))
		}
		return Void
	}
}

func (c *compiler) parseDefineSyntax(p *Pair, sc *scope, pos *Pos) (Value, *macro) {
	parts := c.list(p.Cdr, pos, "define-syntax")
	if len(parts) != 2 || !isIdentifier(parts[0]) {
		c.syntaxErr(pos, "define-syntax: want (define-syntax name (syntax-rules ...))")
	}
	s, _ := baseName(parts[0])
	return parts[0], c.makeMacro(parts[1], sc, string(s), pos)
}

// shortName is used in messages about forms.
func shortName(x Value) string {
	s := errString(strip(x))
	if len(s) > 60 {
		cut := 57
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}
