package scheme

import "fmt"

func init() {
	specials = map[Symbol]*special{}
	def := func(name string, f func(c *compiler, x *Pair, sc *scope, tail bool) code) {
		specials[Symbol(name)] = &special{name: name, compile: f}
	}
	def("quote", compQuote)
	def("if", compIf)
	def("define", compDefine)
	def("set!", compSet)
	def("lambda", compLambdaForm)
	def("begin", compBegin)
	def("let", compLet)
	def("let*", compLetStar)
	def("letrec", compLetrec)
	def("letrec*", compLetrec)
	def("do", compDo)
	def("cond", compCondForm)
	def("case", compCase)
	def("and", compAnd)
	def("or", compOr)
	def("when", compWhen)
	def("unless", compWhen)
	def("quasiquote", compQuasiquote)
	def("unquote", compMisplaced)
	def("unquote-splicing", compMisplaced)
	def("else", compMisplaced)
	def("=>", compMisplaced)
	def("define-record-type", compDefineRecord)
	def("parameterize", compParameterize)
	def("case-lambda", compCaseLambda)
	def("let-values", compLetValues)
	def("let*-values", compLetValues)
	def("define-values", compDefineValues)
	def("receive", compReceive)
	def("guard", compGuard)
	def("delay", compDelay)
	def("delay-force", compDelay)
	def("make-promise-lazy", compDelay)
	def("define-syntax", compDefineSyntax)
	def("let-syntax", compLetSyntax)
	def("letrec-syntax", compLetSyntax)
	def("syntax-rules", compMisplaced)
	def("assert", compAssert)
}

func formName(x *Pair) string {
	if s, ok := baseName(x.Car); ok {
		return string(s)
	}
	if sp, ok := x.Car.(*special); ok {
		return sp.name
	}
	return "form"
}

func (c *compiler) args(x *Pair, min, max int, usage string) ([]Value, *Pos) {
	pos := x.Pos
	parts := c.list(x.Cdr, pos, formName(x))
	if len(parts) < min || max >= 0 && len(parts) > max {
		c.syntaxErr(pos, "%s: bad syntax, want %s", formName(x), usage)
	}
	return parts, pos
}

func compMisplaced(c *compiler, x *Pair, sc *scope, tail bool) code {
	c.syntaxErr(x.Pos, "%s: not allowed here", formName(x))
	return nil
}

func compQuote(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, _ := c.args(x, 1, 1, "(quote datum)")
	return constCode(strip(parts[0]))
}

func compIf(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, 3, "(if test then [else])")
	test := c.comp(parts[0], sc, false, pos)
	then := c.comp(parts[1], sc, tail, pos)
	if len(parts) == 2 {
		return func(th *thread, fr *frame) Value {
			if test(th, fr) != false {
				return then(th, fr)
			}
			return Void
		}
	}
	els := c.comp(parts[2], sc, tail, pos)
	return func(th *thread, fr *frame) Value {
		if test(th, fr) != false {
			return then(th, fr)
		}
		return els(th, fr)
	}
}

func compDefine(c *compiler, x *Pair, sc *scope, tail bool) code {
	if !sc.top {
		c.syntaxErr(x.Pos, "define: not allowed in an expression (only at top level or at the start of a body)")
	}
	name, val := c.parseDefine(x, x.Pos)
	s, _ := baseName(name)
	g := c.in.defineCell(s)
	vc := c.compNamed(val, sc, string(s), x.Pos)
	return func(th *thread, fr *frame) Value {
		g.value = vc(th, fr)
		return Void
	}
}

// defineCell returns the global cell for s, making a top-level define of s
// shadow a macro or special form of that name.
func (in *Interp) defineCell(s Symbol) *global {
	delete(in.macros, s)
	if specials[s] != nil {
		if in.shadowed == nil {
			in.shadowed = map[Symbol]bool{}
		}
		in.shadowed[s] = true
	}
	return in.cell(s)
}

func compSet(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, 2, "(set! variable value)")
	if !isIdentifier(parts[0]) {
		c.syntaxErr(pos, "set!: not an identifier: %s", shortName(parts[0]))
	}
	val := c.comp(parts[1], sc, false, pos)
	switch b := c.lookup(sc, parts[0]).(type) {
	case *localVar:
		return c.localSet(b, val)
	case *global:
		c.in.noteRef(b, pos)
		return func(th *thread, fr *frame) Value {
			v := val(th, fr)
			if b.value == nil {
				th.raise(Errorf("set!: unbound variable: %s", writeSym(b.name)), false, pos, "set!")
			}
			b.value = v
			return Void
		}
	}
	c.syntaxErr(pos, "set!: cannot assign the syntax keyword %s", shortName(parts[0]))
	return nil
}

func compLambdaForm(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(lambda formals body ...)")
	return closureCode(c.compLambda(parts[0], x.Cdr.(*Pair).Cdr, sc, "", pos))
}

func compBegin(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 0, -1, "(begin expr ...)")
	cs := make([]code, len(parts))
	for i, p := range parts {
		cs[i] = c.comp(p, sc, tail && i == len(parts)-1, pos)
	}
	return seqCode(cs)
}

// parseBindings parses ((name init) ...).
func (c *compiler) parseBindings(x Value, pos *Pos, what string) (names, inits []Value) {
	for _, b := range c.list(x, pos, what) {
		parts, ok := ListToSlice(b)
		if !ok || len(parts) != 2 || !isIdentifier(parts[0]) {
			c.syntaxErr(pairPos(b, pos), "%s: bad binding %s, want (name value)", what, shortName(b))
		}
		names = append(names, parts[0])
		inits = append(inits, parts[1])
	}
	return names, inits
}

func compLet(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(let ((name value) ...) body ...)")
	if isIdentifier(parts[0]) {
		return c.namedLet(x, parts, sc, tail, pos)
	}
	names, inits := c.parseBindings(parts[0], pos, "let")
	initcs := make([]code, len(inits))
	for i, e := range inits {
		s, _ := baseName(names[i])
		initcs[i] = c.compNamed(e, sc, string(s), pos)
	}
	nsc := &scope{parent: sc, lam: c.lam, top: false}
	slots := make([]int, len(names))
	for i, n := range names {
		slots[i] = nsc.declare(n).idx
	}
	body := c.compBody(x.Cdr.(*Pair).Cdr, nsc, tail, pos)
	if len(slots) == 1 {
		s0, i0 := slots[0], initcs[0]
		return func(th *thread, fr *frame) Value {
			fr.vals[s0] = i0(th, fr)
			return body(th, fr)
		}
	}
	return func(th *thread, fr *frame) Value {
		for i, ic := range initcs {
			fr.vals[slots[i]] = ic(th, fr)
		}
		return body(th, fr)
	}
}

func (c *compiler) namedLet(x *Pair, parts []Value, sc *scope, tail bool, pos *Pos) code {
	if len(parts) < 3 {
		c.syntaxErr(pos, "let: bad syntax, want (let name ((var init) ...) body ...)")
	}
	names, inits := c.parseBindings(parts[1], pos, "let")
	initcs := make([]code, len(inits))
	for i, e := range inits {
		initcs[i] = c.comp(e, sc, false, pos)
	}
	nsc := &scope{parent: sc, lam: c.lam}
	v := nsc.declare(parts[0])
	s, _ := baseName(parts[0])
	info := c.compLambda(List(names...), x.Cdr.(*Pair).Cdr.(*Pair).Cdr, nsc, string(s), pos)
	slot := v.idx
	fc := func(th *thread, fr *frame) Value {
		var cl *Closure
		if info.captures {
			cl = &Closure{info: info, env: fr}
		} else {
			cl = &Closure{info: info}
		}
		fr.vals[slot] = cl
		return cl
	}
	return makeCall(fc, initcs, tail, pos)
}

func compLetStar(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(let* ((name value) ...) body ...)")
	names, inits := c.parseBindings(parts[0], pos, "let*")
	var cs []code
	cur := sc
	for i, n := range names {
		s, _ := baseName(n)
		ic := c.compNamed(inits[i], cur, string(s), pos)
		nsc := &scope{parent: cur, lam: c.lam}
		v := nsc.declare(n)
		cs = append(cs, c.localSet(v, ic))
		cur = nsc
	}
	cs = append(cs, c.compBody(x.Cdr.(*Pair).Cdr, &scope{parent: cur, lam: c.lam}, tail, pos))
	return seqCode(cs)
}

func compLetrec(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(letrec ((name value) ...) body ...)")
	names, inits := c.parseBindings(parts[0], pos, formName(x))
	nsc := &scope{parent: sc, lam: c.lam}
	vars := make([]*localVar, len(names))
	for i, n := range names {
		vars[i] = nsc.declare(n)
		vars[i].checked = true
	}
	cs := []code{func(th *thread, fr *frame) Value {
		for _, v := range vars {
			fr.vals[v.idx] = nil
		}
		return Void
	}}
	for i, v := range vars {
		cs = append(cs, c.localSet(v, c.compNamed(inits[i], nsc, string(v.name), pos)))
	}
	cs = append(cs, c.compBody(x.Cdr.(*Pair).Cdr, nsc, tail, pos))
	return seqCode(cs)
}

func compDo(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(do ((var init step) ...) (test result ...) command ...)")
	specs := c.list(parts[0], pos, "do")
	loop := &ident{name: Symbol("do-loop")}
	var bindings, steps []Value
	for _, s := range specs {
		sp, ok := ListToSlice(s)
		if !ok || len(sp) < 2 || len(sp) > 3 || !isIdentifier(sp[0]) {
			c.syntaxErr(pairPos(s, pos), "do: bad variable spec %s, want (var init [step])", shortName(s))
		}
		bindings = append(bindings, List(sp[0], sp[1]))
		if len(sp) == 3 {
			steps = append(steps, sp[2])
		} else {
			steps = append(steps, sp[0])
		}
	}
	exit, ok := parts[1].(*Pair)
	if !ok {
		c.syntaxErr(pos, "do: want (test result ...) after the variables")
	}
	cmds := x.Cdr.(*Pair).Cdr.(*Pair).Cdr
	again := &Pair{Car: loop, Cdr: List(steps...), Pos: pos}
	body := &Pair{Car: specials["begin"], Cdr: appendList(cmds, List(again)), Pos: pos}
	form := &Pair{Car: specials["let"], Cdr: List(loop, List(bindings...),
		&Pair{Car: specials["if"], Cdr: List(exit.Car, &Pair{Car: specials["begin"], Cdr: exit.Cdr, Pos: pos}, body), Pos: pos}), Pos: pos}
	return c.comp(form, sc, tail, pos)
}

func appendList(a, b Value) Value {
	items, _ := ListToSlice(a)
	for i := len(items) - 1; i >= 0; i-- {
		b = &Pair{Car: items[i], Cdr: b}
	}
	return b
}

// noMatch is what a guard's clauses return when none applies.
type noMatch struct{}

func compCondForm(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 0, -1, "(cond clause ...)")
	return c.compCond(parts, sc, tail, pos, Void)
}

func isKeyword(x Value, name Symbol) bool {
	if sp, ok := x.(*special); ok {
		return sp.name == string(name)
	}
	s, ok := baseName(x)
	return ok && s == name
}

func (c *compiler) compCond(clauses []Value, sc *scope, tail bool, pos *Pos, fallthroughValue Value) code {
	next := constCode(fallthroughValue)
	for i := len(clauses) - 1; i >= 0; i-- {
		cl := clauses[i]
		cpos := pairPos(cl, pos)
		parts, ok := ListToSlice(cl)
		if !ok || len(parts) == 0 {
			c.syntaxErr(cpos, "cond: bad clause %s", shortName(cl))
		}
		if isKeyword(parts[0], "else") {
			if i != len(clauses)-1 {
				c.syntaxErr(cpos, "cond: else clause must be last")
			}
			next = c.seqForms(parts[1:], sc, tail, cpos)
			continue
		}
		test := c.comp(parts[0], sc, false, cpos)
		rest := next
		switch {
		case len(parts) == 1:
			next = func(th *thread, fr *frame) Value {
				if v := test(th, fr); v != false {
					return v
				}
				return rest(th, fr)
			}
		case isKeyword(parts[1], "=>"):
			if len(parts) != 3 {
				c.syntaxErr(cpos, "cond: want (test => procedure)")
			}
			fc := c.comp(parts[2], sc, false, cpos)
			next = func(th *thread, fr *frame) Value {
				if v := test(th, fr); v != false {
					f := fc(th, fr)
					if tail {
						return th.tailCall(f, []Value{v}, cpos)
					}
					return th.apply(f, []Value{v}, cpos)
				}
				return rest(th, fr)
			}
		default:
			body := c.seqForms(parts[1:], sc, tail, cpos)
			next = func(th *thread, fr *frame) Value {
				if test(th, fr) != false {
					return body(th, fr)
				}
				return rest(th, fr)
			}
		}
	}
	return next
}

func (c *compiler) seqForms(forms []Value, sc *scope, tail bool, pos *Pos) code {
	cs := make([]code, len(forms))
	for i, f := range forms {
		cs[i] = c.comp(f, sc, tail && i == len(forms)-1, pos)
	}
	return seqCode(cs)
}

type caseClause struct {
	datums []Value
	isElse bool
	body   code
	arrow  code
}

func compCase(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 1, -1, "(case key clause ...)")
	key := c.comp(parts[0], sc, false, pos)
	var cls []caseClause
	for i, cl := range parts[1:] {
		cpos := pairPos(cl, pos)
		cp, ok := ListToSlice(cl)
		if !ok || len(cp) < 1 {
			c.syntaxErr(cpos, "case: bad clause %s", shortName(cl))
		}
		var cc caseClause
		if isKeyword(cp[0], "else") {
			if i != len(parts)-2 {
				c.syntaxErr(cpos, "case: else clause must be last")
			}
			cc.isElse = true
		} else {
			ds, ok := ListToSlice(strip(cp[0]))
			if !ok {
				c.syntaxErr(cpos, "case: want a list of data, got %s", shortName(cp[0]))
			}
			cc.datums = ds
		}
		if len(cp) >= 2 && isKeyword(cp[1], "=>") {
			if len(cp) != 3 {
				c.syntaxErr(cpos, "case: want (data => procedure)")
			}
			cc.arrow = c.comp(cp[2], sc, false, cpos)
		} else {
			cc.body = c.seqForms(cp[1:], sc, tail, cpos)
		}
		cls = append(cls, cc)
	}
	return func(th *thread, fr *frame) Value {
		k := key(th, fr)
		for i := range cls {
			cl := &cls[i]
			match := cl.isElse
			for _, d := range cl.datums {
				if Eqv(k, d) {
					match = true
					break
				}
			}
			if !match {
				continue
			}
			if cl.arrow != nil {
				f := cl.arrow(th, fr)
				if tail {
					return th.tailCall(f, []Value{k}, pos)
				}
				return th.apply(f, []Value{k}, pos)
			}
			return cl.body(th, fr)
		}
		return Void
	}
}

func compAnd(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 0, -1, "(and expr ...)")
	if len(parts) == 0 {
		return constCode(true)
	}
	cs := make([]code, len(parts))
	for i, p := range parts {
		cs[i] = c.comp(p, sc, tail && i == len(parts)-1, pos)
	}
	init, last := cs[:len(cs)-1], cs[len(cs)-1]
	return func(th *thread, fr *frame) Value {
		for _, e := range init {
			if e(th, fr) == false {
				return false
			}
		}
		return last(th, fr)
	}
}

func compOr(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 0, -1, "(or expr ...)")
	if len(parts) == 0 {
		return constCode(false)
	}
	cs := make([]code, len(parts))
	for i, p := range parts {
		cs[i] = c.comp(p, sc, tail && i == len(parts)-1, pos)
	}
	init, last := cs[:len(cs)-1], cs[len(cs)-1]
	return func(th *thread, fr *frame) Value {
		for _, e := range init {
			if v := e(th, fr); v != false {
				return v
			}
		}
		return last(th, fr)
	}
}

func compWhen(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 1, -1, "("+formName(x)+" test expr ...)")
	test := c.comp(parts[0], sc, false, pos)
	body := c.seqForms(parts[1:], sc, tail, pos)
	if formName(x) == "unless" {
		return func(th *thread, fr *frame) Value {
			if test(th, fr) == false {
				return body(th, fr)
			}
			return Void
		}
	}
	return func(th *thread, fr *frame) Value {
		if test(th, fr) != false {
			return body(th, fr)
		}
		return Void
	}
}

// Quasiquote

func compQuasiquote(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 1, 1, "(quasiquote template)")
	return c.qq(parts[0], 1, sc, pos)
}

func qqForm(x Value, name Symbol) (Value, bool) {
	p, ok := x.(*Pair)
	if !ok || !isKeyword(p.Car, name) {
		return nil, false
	}
	rest, ok := p.Cdr.(*Pair)
	if !ok {
		return nil, false
	}
	if _, ok := rest.Cdr.(EmptyList); !ok {
		return nil, false
	}
	return rest.Car, true
}

func (c *compiler) qq(x Value, depth int, sc *scope, pos *Pos) code {
	if !hasUnquote(x, 0) {
		return constCode(strip(x))
	}
	switch v := x.(type) {
	case *Pair:
		pos = pairPos(v, pos)
		if e, ok := qqForm(v, "unquote"); ok {
			if depth == 1 {
				return c.comp(e, sc, false, pos)
			}
			inner := c.qq(e, depth-1, sc, pos)
			return func(th *thread, fr *frame) Value { return List(Symbol("unquote"), inner(th, fr)) }
		}
		if e, ok := qqForm(v, "quasiquote"); ok {
			inner := c.qq(e, depth+1, sc, pos)
			return func(th *thread, fr *frame) Value { return List(Symbol("quasiquote"), inner(th, fr)) }
		}
		if e, ok := qqForm(v.Car, "unquote-splicing"); ok && depth == 1 {
			spl := c.comp(e, sc, false, pos)
			rest := c.qq(v.Cdr, depth, sc, pos)
			return func(th *thread, fr *frame) Value {
				l := spl(th, fr)
				items, ok := ListToSlice(l)
				if !ok {
					th.raise(Errorf("unquote-splicing: not a list: %s", errString(l)), false, pos, "unquote-splicing")
				}
				r := rest(th, fr)
				for i := len(items) - 1; i >= 0; i-- {
					r = &Pair{Car: items[i], Cdr: r}
				}
				return r
			}
		}
		if e, ok := qqForm(v.Car, "unquote-splicing"); ok {
			inner := c.qq(e, depth-1, sc, pos)
			rest := c.qq(v.Cdr, depth, sc, pos)
			return func(th *thread, fr *frame) Value {
				return &Pair{Car: List(Symbol("unquote-splicing"), inner(th, fr)), Cdr: rest(th, fr)}
			}
		}
		car := c.qq(v.Car, depth, sc, pos)
		cdr := c.qq(v.Cdr, depth, sc, pos)
		return func(th *thread, fr *frame) Value { return &Pair{Car: car(th, fr), Cdr: cdr(th, fr)} }
	case *Vector:
		l := c.qq(List(v.Items...), depth, sc, pos)
		return func(th *thread, fr *frame) Value {
			items, _ := ListToSlice(l(th, fr))
			return &Vector{Items: items}
		}
	}
	return constCode(strip(x))
}

func hasUnquote(x Value, depth int) bool {
	if depth > maxReadDepth {
		return false
	}
	switch v := x.(type) {
	case *Pair:
		if isKeyword(v.Car, "unquote") || isKeyword(v.Car, "unquote-splicing") {
			return true
		}
		for n := 0; n < 1<<20; n++ {
			if hasUnquote(v.Car, depth+1) {
				return true
			}
			next, ok := v.Cdr.(*Pair)
			if !ok {
				return hasUnquote(v.Cdr, depth+1)
			}
			if isKeyword(next.Car, "unquote") {
				return true // dotted unquote: `(a . ,b)
			}
			v = next
		}
	case *Vector:
		for _, it := range v.Items {
			if hasUnquote(it, depth+1) {
				return true
			}
		}
	}
	return false
}

// Multiple values

func compLetValues(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(let-values (((formals) expr) ...) body ...)")
	star := formName(x) == "let*-values"
	bs := c.list(parts[0], pos, formName(x))
	var cs []code
	nsc := &scope{parent: sc, lam: c.lam}
	cur := sc
	for _, b := range bs {
		bp, ok := ListToSlice(b)
		if !ok || len(bp) != 2 {
			c.syntaxErr(pairPos(b, pos), "%s: bad binding %s, want (formals expression)", formName(x), shortName(b))
		}
		val := c.comp(bp[1], cur, false, pos)
		target := nsc
		if star {
			target = &scope{parent: cur, lam: c.lam}
		}
		var vars []*localVar
		walkFormals(bp[0], func(id Value) { vars = append(vars, target.declare(id)) },
			func() { c.syntaxErr(pos, "%s: bad formals %s", formName(x), shortName(bp[0])) })
		cs = append(cs, c.valuesBinder(bp[0], vars, val, pos, formName(x)))
		if star {
			cur = target
		}
	}
	if star {
		nsc = &scope{parent: cur, lam: c.lam}
	}
	cs = append(cs, c.compBody(x.Cdr.(*Pair).Cdr, nsc, tail, pos))
	return seqCode(cs)
}

func compReceive(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 3, -1, "(receive formals expression body ...)")
	val := c.comp(parts[1], sc, false, pos)
	nsc := &scope{parent: sc, lam: c.lam}
	var vars []*localVar
	walkFormals(parts[0], func(id Value) { vars = append(vars, nsc.declare(id)) },
		func() { c.syntaxErr(pos, "receive: bad formals") })
	bind := c.valuesBinder(parts[0], vars, val, pos, "receive")
	body := c.compBody(x.Cdr.(*Pair).Cdr.(*Pair).Cdr, nsc, tail, pos)
	return seqCode([]code{bind, body})
}

func compDefineValues(c *compiler, x *Pair, sc *scope, tail bool) code {
	if !sc.top {
		c.syntaxErr(x.Pos, "define-values: not allowed in an expression")
	}
	parts, pos := c.args(x, 2, 2, "(define-values formals expression)")
	val := c.comp(parts[1], sc, false, pos)
	var cells []*global
	walkFormals(parts[0], func(id Value) {
		s, _ := baseName(id)
		cells = append(cells, c.in.defineCell(s))
	}, func() { c.syntaxErr(pos, "define-values: bad formals") })
	nreq := 0
	f := parts[0]
	for {
		p, ok := f.(*Pair)
		if !ok {
			break
		}
		nreq++
		f = p.Cdr
	}
	rest := isIdentifier(f)
	return func(th *thread, fr *frame) Value {
		vals := valuesOf(val(th, fr))
		if len(vals) != nreq && (!rest || len(vals) < nreq) {
			th.raise(Errorf("define-values: expected %d values, got %d", nreq, len(vals)), false, pos, "define-values")
		}
		for i := 0; i < nreq; i++ {
			cells[i].value = vals[i]
		}
		if rest {
			cells[nreq].value = List(vals[nreq:]...)
		}
		return Void
	}
}

func compCaseLambda(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 0, -1, "(case-lambda (formals body ...) ...)")
	infos := make([]*lambdaInfo, len(parts))
	for i, cl := range parts {
		cp, ok := cl.(*Pair)
		if !ok {
			c.syntaxErr(pos, "case-lambda: bad clause %s", shortName(cl))
		}
		infos[i] = c.compLambda(cp.Car, cp.Cdr, sc, "case-lambda", pairPos(cl, pos))
	}
	return func(th *thread, fr *frame) Value {
		cl := &caseLambda{name: "case-lambda", clauses: make([]*Closure, len(infos))}
		for i, info := range infos {
			cl.clauses[i] = &Closure{info: info, env: fr}
		}
		return cl
	}
}

// Exceptions

func compGuard(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(guard (var clause ...) body ...)")
	spec, ok := parts[0].(*Pair)
	if !ok || !isIdentifier(spec.Car) {
		c.syntaxErr(pos, "guard: want (guard (var clause ...) body ...)")
	}
	body := c.compBody(x.Cdr.(*Pair).Cdr, sc, false, pos)
	nsc := &scope{parent: sc, lam: c.lam}
	v := nsc.declare(spec.Car)
	clauses := c.compCond(c.list(spec.Cdr, pos, "guard"), nsc, tail, pos, noMatch{})
	slot := v.idx
	return func(th *thread, fr *frame) Value {
		val, sig := th.try(func() Value { return body(th, fr) })
		if sig == nil {
			return val
		}
		fr.vals[slot] = sig.val
		r := clauses(th, fr)
		if _, nm := r.(noMatch); nm {
			return th.reraise(sig)
		}
		return r
	}
}

// reraise passes a condition no guard clause matched on, as R7RS says: with
// raise-continuable in the guard's dynamic environment, so an outer
// with-exception-handler sees it (and its value becomes the guard's).
func (th *thread) reraise(sig *raiseSig) Value {
	if n := len(th.handlers); n > 0 {
		if _, isGuard := th.handlers[n-1].(guardMark); !isGuard {
			p := sig.pos
			return th.raise(sig.val, true, &p, "raise")
		}
	}
	th.panicRaise(sig)
	return nil
}

// try runs f with a guard installed: a raise that reaches it is returned.
func (th *thread) try(f func() Value) (v Value, sig *raiseSig) {
	st := th.save()
	th.handlers = append(st.handlers[:len(st.handlers):len(st.handlers)], guardMark{})
	defer func() {
		th.handlers = st.handlers
		if th.unwinding != unwindRaise {
			return // a normal return, or a panic this guard lets pass
		}
		r := recover()
		s, ok := r.(*raiseSig)
		if !ok {
			panic(r)
		}
		th.unwinding = unwindNone
		th.restore(st)
		sig = s
	}()
	return f(), nil
}

func compAssert(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 1, -1, "(assert expression [message ...])")
	test := c.comp(parts[0], sc, false, pos)
	src := shortName(parts[0])
	return func(th *thread, fr *frame) Value {
		if test(th, fr) == false {
			th.raise(&ErrorObject{Message: "assertion failed: " + src, Kind: "assert"}, false, pos, "assert")
		}
		return Void
	}
}

// Promises

// Promise is what delay, delay-force and make-promise make.
type Promise struct {
	done  bool
	val   Value
	thunk Value
	lazy  bool // delay-force: the thunk returns a promise
}

// SchemeString implements the printer hook.
func (p *Promise) SchemeString(bool) string { return "#<promise>" }

func compDelay(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 1, 1, "("+formName(x)+" expression)")
	info := c.compLambda(Nil, List(parts[0]), sc, formName(x), pos)
	lazy := formName(x) != "delay"
	return func(th *thread, fr *frame) Value {
		return &Promise{thunk: &Closure{info: info, env: fr}, lazy: lazy}
	}
}

func (th *thread) force(v Value, pos *Pos) Value {
	p, ok := v.(*Promise)
	if !ok {
		return v
	}
	for !p.done {
		r := th.apply(p.thunk, nil, pos)
		if p.done {
			break
		}
		if !p.lazy {
			p.done, p.val, p.thunk = true, r, nil
			break
		}
		q, ok := r.(*Promise)
		if !ok {
			p.done, p.val, p.thunk = true, r, nil
			break
		}
		p.done, p.val, p.thunk, p.lazy = q.done, q.val, q.thunk, q.lazy
	}
	return p.val
}

// Parameters

func compParameterize(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 2, -1, "(parameterize ((param value) ...) body ...)")
	names, inits := c.parseBindingsAny(parts[0], pos)
	pcs := make([]code, len(names))
	vcs := make([]code, len(names))
	for i := range names {
		pcs[i] = c.comp(names[i], sc, false, pos)
		vcs[i] = c.comp(inits[i], sc, false, pos)
	}
	body := c.compBody(x.Cdr.(*Pair).Cdr, sc, false, pos)
	return func(th *thread, fr *frame) Value {
		ps := make([]*Parameter, len(pcs))
		vs := make([]Value, len(pcs))
		for i := range pcs {
			pv := pcs[i](th, fr)
			p, ok := pv.(*Parameter)
			if !ok {
				th.raise(Errorf("parameterize: not a parameter: %s", errString(pv)), false, pos, "parameterize")
			}
			ps[i] = p
			vs[i] = vcs[i](th, fr)
		}
		for i, p := range ps {
			if p.converter != nil {
				vs[i] = th.apply(p.converter, []Value{vs[i]}, pos)
			}
		}
		old := make([]Value, len(ps))
		for i, p := range ps {
			old[i] = p.value
			p.value = vs[i]
		}
		defer func() {
			for i, p := range ps {
				p.value = old[i]
			}
		}()
		return body(th, fr)
	}
}

func (c *compiler) parseBindingsAny(x Value, pos *Pos) (names, inits []Value) {
	for _, b := range c.list(x, pos, "parameterize") {
		parts, ok := ListToSlice(b)
		if !ok || len(parts) != 2 {
			c.syntaxErr(pairPos(b, pos), "parameterize: bad binding %s, want (parameter value)", shortName(b))
		}
		names = append(names, parts[0])
		inits = append(inits, parts[1])
	}
	return names, inits
}

// Records

// RecordType is a type made by define-record-type.
type RecordType struct {
	Name   string
	Fields []Symbol
}

// SchemeString implements the printer hook.
func (t *RecordType) SchemeString(bool) string { return "#<record-type " + t.Name + ">" }

// Record is an instance of a RecordType.
type Record struct {
	Type   *RecordType
	Fields []Value
}

// SchemeString implements the printer hook: #<name field-value ...>.
func (r *Record) SchemeString(write bool) string {
	s := "#<" + r.Type.Name
	for i, f := range r.Fields {
		s += fmt.Sprintf(" %s=%s", r.Type.Fields[i], WriteString(f))
	}
	return s + ">"
}

func compDefineRecord(c *compiler, x *Pair, sc *scope, tail bool) code {
	return c.comp(c.recordDefs(x, x.Pos), sc, tail, x.Pos)
}

// recordDefs turns a define-record-type form into (begin (define ...) ...)
// of the type, constructor, predicate, accessors and modifiers.
func (c *compiler) recordDefs(x *Pair, pos *Pos) Value {
	parts, _ := c.args(x, 3, -1, "(define-record-type name (constructor field ...) predicate (field accessor [modifier]) ...)")
	tname, _ := baseName(parts[0])
	if tname == "" {
		if p, ok := parts[0].(*Pair); ok {
			tname, _ = baseName(p.Car)
		}
	}
	display := string(tname)
	if len(display) > 2 && display[0] == '<' && display[len(display)-1] == '>' {
		display = display[1 : len(display)-1]
	}
	rt := &RecordType{Name: display}
	type fieldSpec struct {
		name     Symbol
		acc, mod Value
	}
	var fields []fieldSpec
	for _, f := range parts[3:] {
		fp, ok := ListToSlice(f)
		if !ok || len(fp) < 1 || len(fp) > 3 || !isIdentifier(fp[0]) {
			c.syntaxErr(pairPos(f, pos), "define-record-type: bad field spec %s", shortName(f))
		}
		fs := fieldSpec{}
		fs.name, _ = baseName(fp[0])
		if len(fp) > 1 {
			fs.acc = fp[1]
		}
		if len(fp) > 2 {
			fs.mod = fp[2]
		}
		fields = append(fields, fs)
		rt.Fields = append(rt.Fields, fs.name)
	}
	index := func(s Symbol) int {
		for i, f := range rt.Fields {
			if f == s {
				return i
			}
		}
		return -1
	}
	quote := func(v Value) Value { return List(specials["quote"], v) }
	define := func(name, v Value) Value { return &Pair{Car: specials["define"], Cdr: List(name, quote(v)), Pos: pos} }
	var defs []Value
	if isIdentifier(parts[0]) {
		defs = append(defs, define(parts[0], rt))
	}
	// constructor
	var ctorName Value
	var ctorFields []int
	switch cs := parts[1].(type) {
	case *Pair:
		ctorName = cs.Car
		for _, f := range c.list(cs.Cdr, pos, "define-record-type") {
			s, _ := baseName(f)
			i := index(s)
			if i < 0 {
				c.syntaxErr(pos, "define-record-type: constructor field %s is not a field of %s", s, display)
			}
			ctorFields = append(ctorFields, i)
		}
	case Symbol, *ident:
		ctorName = cs
		for i := range rt.Fields {
			ctorFields = append(ctorFields, i)
		}
	}
	if ctorName != nil {
		cn, _ := baseName(ctorName)
		nf := len(rt.Fields)
		cf := ctorFields
		defs = append(defs, define(ctorName, NewPrimitive(string(cn), len(cf), len(cf), "record constructor",
			func(in *Interp, args []Value) (Value, error) {
				r := &Record{Type: rt, Fields: make([]Value, nf)}
				for i := range r.Fields {
					r.Fields[i] = false
				}
				for i, fi := range cf {
					r.Fields[fi] = args[i]
				}
				return r, nil
			})))
	}
	if pn, ok := baseName(parts[2]); ok {
		defs = append(defs, define(parts[2], NewPrimitive(string(pn), 1, 1, "record predicate",
			func(in *Interp, args []Value) (Value, error) {
				r, ok := args[0].(*Record)
				return ok && r.Type == rt, nil
			})))
	}
	for i, f := range fields {
		i, fname := i, f.name
		if f.acc != nil {
			an, _ := baseName(f.acc)
			name := string(an)
			defs = append(defs, define(f.acc, NewPrimitive(name, 1, 1, "record accessor",
				func(in *Interp, args []Value) (Value, error) {
					r, ok := args[0].(*Record)
					if !ok || r.Type != rt {
						return nil, WrongType(name, "a "+display+" record", args[0])
					}
					return r.Fields[i], nil
				})))
		}
		if f.mod != nil {
			mn, _ := baseName(f.mod)
			name := string(mn)
			defs = append(defs, define(f.mod, NewPrimitive(name, 2, 2, "record modifier of "+string(fname),
				func(in *Interp, args []Value) (Value, error) {
					r, ok := args[0].(*Record)
					if !ok || r.Type != rt {
						return nil, WrongType(name, "a "+display+" record", args[0])
					}
					r.Fields[i] = args[1]
					return Void, nil
				})))
		}
	}
	return &Pair{Car: specials["begin"], Cdr: List(defs...), Pos: pos}
}
