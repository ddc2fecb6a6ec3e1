package scheme

// syntax-rules macros, hygienic by renaming: every identifier a template
// inserts (that is not a pattern variable) becomes a fresh *ident that
// refers to the binding its name has where the macro was defined, unless a
// binding form in the expansion binds it. So a template's tmp cannot capture
// a user's tmp, and a user's local binding of if or list cannot change what
// the template's if or list mean.

type macro struct {
	name     string
	env      *scope
	literals []Value
	ellipsis Value // nil: the standard ...
	rules    []macroRule
}

type macroRule struct{ pattern, template Value }

// SchemeString implements the printer hook.
func (m *macro) SchemeString(bool) string { return "#<syntax " + m.name + ">" }

func (c *compiler) makeMacro(spec Value, sc *scope, name string, pos *Pos) *macro {
	p, ok := spec.(*Pair)
	if !ok || !isKeyword(p.Car, "syntax-rules") {
		c.syntaxErr(pos, "%s: only syntax-rules transformers are supported, got %s", name, shortName(spec))
	}
	pos = pairPos(p, pos)
	parts := c.list(p.Cdr, pos, "syntax-rules")
	m := &macro{name: name, env: sc}
	if len(parts) > 0 && isIdentifier(parts[0]) {
		m.ellipsis = parts[0]
		parts = parts[1:]
	}
	if len(parts) == 0 {
		c.syntaxErr(pos, "syntax-rules: want (syntax-rules (literal ...) (pattern template) ...)")
	}
	lits, ok := ListToSlice(parts[0])
	if !ok {
		c.syntaxErr(pos, "syntax-rules: literals must be a list")
	}
	m.literals = lits
	for _, r := range parts[1:] {
		rp, ok := ListToSlice(r)
		if !ok || len(rp) != 2 {
			c.syntaxErr(pairPos(r, pos), "syntax-rules: bad rule %s, want (pattern template)", shortName(r))
		}
		if _, ok := rp[0].(*Pair); !ok {
			c.syntaxErr(pairPos(r, pos), "syntax-rules: pattern must be a list: %s", shortName(rp[0]))
		}
		m.rules = append(m.rules, macroRule{rp[0], rp[1]})
	}
	return m
}

func sameName(a, b Value) bool {
	x, ok1 := baseName(a)
	y, ok2 := baseName(b)
	return ok1 && ok2 && x == y
}

func (m *macro) isEllipsis(x Value) bool {
	if m.ellipsis != nil {
		return x == m.ellipsis || sameName(x, m.ellipsis)
	}
	s, ok := baseName(x)
	return ok && s == "..."
}

func (m *macro) isLiteral(x Value) bool {
	for _, l := range m.literals {
		if l == x || sameName(l, x) {
			return true
		}
	}
	return false
}

// mseq is the binding of a pattern variable under an ellipsis.
type mseq []any

// menv holds pattern variable bindings; parent supplies the outer levels
// while a template ellipsis is being expanded.
type menv struct {
	m      map[Value]any
	parent *menv
}

func (e *menv) get(k Value) (any, bool) {
	for ; e != nil; e = e.parent {
		if v, ok := e.m[k]; ok {
			return v, true
		}
	}
	return nil, false
}

func (m *macro) expand(c *compiler, x *Pair, sc *scope) Value {
	for _, r := range m.rules {
		b := map[Value]any{}
		pat := r.pattern.(*Pair)
		if m.match(pat.Cdr, x.Cdr, b, 0) {
			ex := &expansion{m: m, c: c, renames: map[Value]*ident{}, pos: x.Pos}
			return ex.subst(r.template, &menv{m: b}, false, 0)
		}
	}
	c.syntaxErr(x.Pos, "%s: no syntax-rules pattern matches %s", m.name, shortName(x))
	return nil
}

func (m *macro) match(pat, form Value, b map[Value]any, depth int) bool {
	if depth > maxReadDepth {
		return false
	}
	switch p := pat.(type) {
	case Symbol, *ident:
		if m.isLiteral(p) {
			return isIdentifier(form) && sameName(p, form)
		}
		if s, _ := baseName(p); s == "_" {
			return true
		}
		b[p] = form
		return true
	case *Pair:
		if next, ok := p.Cdr.(*Pair); ok && m.isEllipsis(next.Car) {
			after := next.Cdr
			minAfter := 0
			for a := after; ; {
				ap, ok := a.(*Pair)
				if !ok {
					break
				}
				minAfter++
				a = ap.Cdr
			}
			var items []Value
			f := form
			for {
				fp, ok := f.(*Pair)
				if !ok {
					break
				}
				items = append(items, fp.Car)
				f = fp.Cdr
			}
			n := len(items) - minAfter
			if n < 0 {
				return false
			}
			vars := m.patternVars(p.Car, nil)
			seqs := make([]mseq, len(vars))
			for i := 0; i < n; i++ {
				sub := map[Value]any{}
				if !m.match(p.Car, items[i], sub, depth+1) {
					return false
				}
				for j, v := range vars {
					seqs[j] = append(seqs[j], sub[v])
				}
			}
			for j, v := range vars {
				if seqs[j] == nil {
					seqs[j] = mseq{}
				}
				b[v] = seqs[j]
			}
			// rebuild the rest of the form for the patterns after the ellipsis
			rest := f
			for i := len(items) - 1; i >= n; i-- {
				rest = &Pair{Car: items[i], Cdr: rest}
			}
			return m.match(after, rest, b, depth+1)
		}
		fp, ok := form.(*Pair)
		if !ok {
			return false
		}
		return m.match(p.Car, fp.Car, b, depth+1) && m.match(p.Cdr, fp.Cdr, b, depth+1)
	case EmptyList:
		_, ok := form.(EmptyList)
		return ok
	case *Vector:
		fv, ok := form.(*Vector)
		if !ok {
			return false
		}
		return m.match(List(p.Items...), List(fv.Items...), b, depth+1)
	}
	return Equal(strip(form), pat)
}

func (m *macro) patternVars(pat Value, out []Value) []Value {
	switch p := pat.(type) {
	case Symbol, *ident:
		if m.isLiteral(p) || m.isEllipsis(p) {
			return out
		}
		if s, _ := baseName(p); s == "_" {
			return out
		}
		return append(out, p)
	case *Pair:
		out = m.patternVars(p.Car, out)
		return m.patternVars(p.Cdr, out)
	case *Vector:
		for _, it := range p.Items {
			out = m.patternVars(it, out)
		}
	}
	return out
}

type expansion struct {
	m       *macro
	c       *compiler
	renames map[Value]*ident
	pos     *Pos
}

func (ex *expansion) rename(id Value) *ident {
	if r, ok := ex.renames[id]; ok {
		return r
	}
	r := &ident{name: id, env: ex.m.env}
	ex.renames[id] = r
	return r
}

func (ex *expansion) subst(t Value, b *menv, escaped bool, depth int) Value {
	if depth > maxReadDepth {
		ex.c.syntaxErr(ex.pos, "%s: template nested too deeply", ex.m.name)
	}
	switch v := t.(type) {
	case Symbol, *ident:
		if val, ok := b.get(v); ok {
			if _, isSeq := val.(mseq); isSeq {
				ex.c.syntaxErr(ex.pos, "%s: pattern variable %s used without an ellipsis", ex.m.name, shortName(v))
			}
			return val
		}
		return ex.rename(v)
	case *Pair:
		if !escaped && ex.m.isEllipsis(v.Car) {
			if rest, ok := v.Cdr.(*Pair); ok {
				return ex.subst(rest.Car, b, true, depth+1)
			}
		}
		if next, ok := v.Cdr.(*Pair); ok && !escaped && ex.m.isEllipsis(next.Car) {
			k := 1
			after := next.Cdr
			for {
				ap, ok := after.(*Pair)
				if !ok || !ex.m.isEllipsis(ap.Car) {
					break
				}
				k++
				after = ap.Cdr
			}
			items := ex.ellipsis(v.Car, b, k, depth)
			rest := ex.subst(after, b, escaped, depth+1)
			for i := len(items) - 1; i >= 0; i-- {
				rest = &Pair{Car: items[i], Cdr: rest, Pos: ex.pos}
			}
			return rest
		}
		return &Pair{Car: ex.subst(v.Car, b, escaped, depth+1), Cdr: ex.subst(v.Cdr, b, escaped, depth+1), Pos: ex.pos}
	case *Vector:
		l := ex.subst(List(v.Items...), b, escaped, depth+1)
		items, _ := ListToSlice(l)
		return &Vector{Items: items}
	}
	return t
}

// ellipsis expands elem once per element of the sequences bound to the
// pattern variables it uses, k levels deep.
func (ex *expansion) ellipsis(elem Value, b *menv, k, depth int) []Value {
	var vars []Value
	n := -1
	for _, v := range ex.templateVars(elem, nil) {
		val, ok := b.get(v)
		if !ok {
			continue
		}
		seq, isSeq := val.(mseq)
		if !isSeq {
			continue
		}
		vars = append(vars, v)
		if n < 0 || len(seq) < n {
			n = len(seq)
		}
	}
	if vars == nil {
		ex.c.syntaxErr(ex.pos, "%s: no pattern variable under the ellipsis in template %s", ex.m.name, shortName(elem))
	}
	var out []Value
	for i := 0; i < n; i++ {
		inner := &menv{m: make(map[Value]any, len(vars)), parent: b}
		for _, v := range vars {
			val, _ := b.get(v)
			inner.m[v] = val.(mseq)[i]
		}
		if k > 1 {
			out = append(out, ex.ellipsis(elem, inner, k-1, depth+1)...)
		} else {
			out = append(out, ex.subst(elem, inner, false, depth+1))
		}
	}
	return out
}

func (ex *expansion) templateVars(t Value, out []Value) []Value {
	switch v := t.(type) {
	case Symbol, *ident:
		return append(out, v)
	case *Pair:
		out = ex.templateVars(v.Car, out)
		return ex.templateVars(v.Cdr, out)
	case *Vector:
		for _, it := range v.Items {
			out = ex.templateVars(it, out)
		}
	}
	return out
}

func compDefineSyntax(c *compiler, x *Pair, sc *scope, tail bool) code {
	if !sc.top {
		c.syntaxErr(x.Pos, "define-syntax: not allowed in an expression")
	}
	name, m := c.parseDefineSyntax(x, nil, x.Pos)
	c.in.defineMacro(name, m)
	return constCode(Void)
}

func (in *Interp) defineMacro(name Value, m *macro) {
	s, _ := baseName(name)
	if in.macros == nil {
		in.macros = map[Symbol]*macro{}
	}
	in.macros[s] = m
}

func compLetSyntax(c *compiler, x *Pair, sc *scope, tail bool) code {
	parts, pos := c.args(x, 1, -1, "("+formName(x)+" ((name (syntax-rules ...)) ...) body ...)")
	nsc := &scope{parent: sc, lam: c.lam}
	env := sc
	if formName(x) == "letrec-syntax" {
		env = nsc
	}
	for _, b := range c.list(parts[0], pos, formName(x)) {
		bp, ok := ListToSlice(b)
		if !ok || len(bp) != 2 || !isIdentifier(bp[0]) {
			c.syntaxErr(pairPos(b, pos), "%s: bad binding %s", formName(x), shortName(b))
		}
		s, _ := baseName(bp[0])
		nsc.bindSyntax(bp[0], c.makeMacro(bp[1], env, string(s), pos))
	}
	if len(parts) == 1 {
		return constCode(Void)
	}
	return c.compBody(x.Cdr.(*Pair).Cdr, nsc, tail, pos)
}
