package scheme

import (
	"sort"
)

// listLength returns the length of a proper list; ok is false for improper
// and circular lists.
func listLength(v Value) (int, bool) {
	n := 0
	slow := v
	for {
		p, ok := v.(*Pair)
		if !ok {
			_, isNil := v.(EmptyList)
			return n, isNil
		}
		v = p.Cdr
		n++
		if n&1 == 0 {
			slow = slow.(*Pair).Cdr
			if slow == v {
				if _, isPair := v.(*Pair); isPair {
					return n, false
				}
			}
		}
	}
}

// circular reports whether the chain of pairs from v loops (Floyd's two
// pointers; an improper or proper end stops it). reverse and list-copy ask
// first: without it they made pairs until the 16M-element bound, 800 MB for
// a three-element cycle.
func circular(v Value) bool {
	slow, fast := v, v
	for {
		p, ok := fast.(*Pair)
		if !ok {
			return false
		}
		q, ok := p.Cdr.(*Pair)
		if !ok {
			return false
		}
		fast = q.Cdr
		slow = slow.(*Pair).Cdr
		if slow == fast {
			_, isPair := fast.(*Pair)
			return isPair
		}
	}
}

func sliceToList(vals []Value) Value { return List(vals...) }

func cxr(name, path string) *Primitive {
	// path is read right to left, as in the name: cadr = car of cdr.
	return prim(name, 1, 1, "("+name+" pair)", func(in *Interp, args []Value) (Value, error) {
		v := args[0]
		for i := len(path) - 1; i >= 0; i-- {
			p, ok := v.(*Pair)
			if !ok {
				return nil, WrongType(name, "a pair of the right shape", args[0])
			}
			if path[i] == 'a' {
				v = p.Car
			} else {
				v = p.Cdr
			}
		}
		return v, nil
	})
}

func memGeneric(name string, eq func(a, b Value) bool) *Primitive {
	return prim(name, 2, 3, "("+name+" obj list [compare]) returns the first tail of list whose car matches obj, or #f", func(in *Interp, args []Value) (Value, error) {
		var proc Value
		if len(args) == 3 {
			if err := argProc(name, args[2]); err != nil {
				return nil, err
			}
			proc = args[2]
		}
		v := args[1]
		for i := 1; ; i++ {
			p, ok := v.(*Pair)
			if !ok {
				break
			}
			if i&pollMask == 0 {
				in.checkCancel()
			}
			if proc != nil {
				r, err := in.Apply(proc, []Value{args[0], p.Car})
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					return p, nil
				}
			} else if eq(args[0], p.Car) {
				return p, nil
			}
			v = p.Cdr
		}
		if _, ok := v.(EmptyList); !ok {
			return nil, WrongType(name, "a list", args[1])
		}
		return false, nil
	})
}

func assGeneric(name string, eq func(a, b Value) bool) *Primitive {
	return prim(name, 2, 3, "("+name+" key alist [compare]) returns the first pair of alist whose car matches key, or #f", func(in *Interp, args []Value) (Value, error) {
		var proc Value
		if len(args) == 3 {
			if err := argProc(name, args[2]); err != nil {
				return nil, err
			}
			proc = args[2]
		}
		v := args[1]
		for i := 1; ; i++ {
			p, ok := v.(*Pair)
			if !ok {
				break
			}
			if i&pollMask == 0 {
				in.checkCancel()
			}
			entry, ok := p.Car.(*Pair)
			if !ok {
				return nil, WrongType(name, "an association list (element is not a pair)", p.Car)
			}
			if proc != nil {
				r, err := in.Apply(proc, []Value{args[0], entry.Car})
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					return entry, nil
				}
			} else if eq(args[0], entry.Car) {
				return entry, nil
			}
			v = p.Cdr
		}
		if _, ok := v.(EmptyList); !ok {
			return nil, WrongType(name, "a list", args[1])
		}
		return false, nil
	})
}

func eqValues(a, b Value) bool {
	// eq? on our representation: identical for pointers and small values.
	// Numbers: fixnums are eq? when equal, as in most Schemes.
	return a == b
}

// mapLists calls f on the i-th elements of each list, stopping at the
// shortest; collect says whether to gather results.
func mapLists(in *Interp, name string, f Value, lists []Value, collect bool) (Value, error) {
	if err := argProc(name, f); err != nil {
		return nil, err
	}
	var head, tail *Pair
	add := func(v Value) {
		if !collect {
			return
		}
		c := &Pair{Car: v, Cdr: Nil}
		if tail == nil {
			head = c
		} else {
			tail.Cdr = c
		}
		tail = c
	}
	result := func() Value {
		if !collect {
			return Void
		}
		if head == nil {
			return Nil
		}
		return head
	}
	if len(lists) == 1 {
		v := lists[0]
		for {
			p, ok := v.(*Pair)
			if !ok {
				if _, ok := v.(EmptyList); !ok {
					return nil, WrongType(name, "a list", lists[0])
				}
				return result(), nil
			}
			r, err := in.Apply(f, []Value{p.Car})
			if err != nil {
				return nil, err
			}
			add(r)
			v = p.Cdr
		}
	}
	cur := append([]Value(nil), lists...)
	for {
		callArgs := make([]Value, len(cur))
		for i, l := range cur {
			p, ok := l.(*Pair)
			if !ok {
				if _, ok := l.(EmptyList); !ok {
					return nil, WrongType(name, "a list", lists[i])
				}
				return result(), nil
			}
			callArgs[i] = p.Car
			cur[i] = p.Cdr
		}
		r, err := in.Apply(f, callArgs)
		if err != nil {
			return nil, err
		}
		add(r)
	}
}

// sortValues sorts vals stably with the Scheme predicate less.
func sortValues(in *Interp, name string, vals []Value, less Value) error {
	if err := argProc(name, less); err != nil {
		return err
	}
	var serr error
	sort.SliceStable(vals, func(i, j int) bool {
		if serr != nil {
			return false
		}
		r, err := in.Apply(less, []Value{vals[i], vals[j]})
		if err != nil {
			serr = err
			return false
		}
		return IsTrue(r)
	})
	return serr
}

// sortArgs accepts both (sort seq less?) and (list-sort less? seq).
func sortArgs(args []Value) (seq, less Value) {
	if IsProcedure(args[0]) && !IsProcedure(args[1]) {
		return args[1], args[0]
	}
	return args[0], args[1]
}

func sortPrim(name string, inPlace bool) *Primitive {
	return prim(name, 2, 2, "("+name+" seq less?) sorts a list or vector stably; (list-sort less? list) also works", func(in *Interp, args []Value) (Value, error) {
		seq, less := sortArgs(args)
		switch s := seq.(type) {
		case *Vector:
			vals := s.Items
			if !inPlace {
				vals = append([]Value(nil), s.Items...)
			}
			if err := sortValues(in, name, vals, less); err != nil {
				return nil, err
			}
			if inPlace {
				return Void, nil
			}
			return &Vector{Items: vals}, nil
		default:
			vals, ok := ListToSlice(seq)
			if !ok {
				return nil, WrongType(name, "a list or vector", seq)
			}
			if err := sortValues(in, name, vals, less); err != nil {
				return nil, err
			}
			if inPlace {
				// Write the sorted values back into the same pairs.
				v := seq
				for _, x := range vals {
					p := v.(*Pair)
					p.Car = x
					v = p.Cdr
				}
				return seq, nil
			}
			return sliceToList(vals), nil
		}
	})
}

func listPrimitives() []*Primitive {
	ps := []*Primitive{
		prim("cons", 2, 2, "(cons a b) makes a pair", func(in *Interp, args []Value) (Value, error) {
			return &Pair{Car: args[0], Cdr: args[1]}, nil
		}),
		prim("car", 1, 1, "(car pair)", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Pair)
			if !ok {
				return nil, WrongType("car", "a pair", args[0])
			}
			return p.Car, nil
		}),
		prim("cdr", 1, 1, "(cdr pair)", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Pair)
			if !ok {
				return nil, WrongType("cdr", "a pair", args[0])
			}
			return p.Cdr, nil
		}),
		prim("set-car!", 2, 2, "(set-car! pair obj)", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Pair)
			if !ok {
				return nil, WrongType("set-car!", "a pair", args[0])
			}
			p.Car = args[1]
			return Void, nil
		}),
		prim("set-cdr!", 2, 2, "(set-cdr! pair obj)", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Pair)
			if !ok {
				return nil, WrongType("set-cdr!", "a pair", args[0])
			}
			p.Cdr = args[1]
			return Void, nil
		}),
		prim("list", 0, -1, "(list obj ...)", func(in *Interp, args []Value) (Value, error) {
			return List(args...), nil
		}),
		prim("cons*", 1, -1, "(cons* obj ... tail) is like list but the last argument is the tail", func(in *Interp, args []Value) (Value, error) {
			l := args[len(args)-1]
			for i := len(args) - 2; i >= 0; i-- {
				l = &Pair{Car: args[i], Cdr: l}
			}
			return l, nil
		}),
		predPrim("pair?", func(v Value) bool { _, ok := v.(*Pair); return ok }),
		predPrim("null?", func(v Value) bool { _, ok := v.(EmptyList); return ok }),
		predPrim("list?", func(v Value) bool { _, ok := listLength(v); return ok }),
		prim("make-list", 1, 2, "(make-list k [fill])", func(in *Interp, args []Value) (Value, error) {
			n, ok := args[0].(int)
			if !ok || n < 0 {
				return nil, WrongType("make-list", "a non-negative exact integer", args[0])
			}
			if err := in.checkAlloc("make-list", n, pairBytes); err != nil {
				return nil, err
			}
			var fill Value = Void
			if len(args) == 2 {
				fill = args[1]
			}
			var l Value = Nil
			for i := 0; i < n; i++ {
				if i&pollMask == 0 {
					in.checkCancel()
				}
				l = &Pair{Car: fill, Cdr: l}
			}
			return l, nil
		}),
		prim("length", 1, 1, "(length list)", func(in *Interp, args []Value) (Value, error) {
			n, ok := listLength(args[0])
			if !ok {
				return nil, WrongType("length", "a proper list", args[0])
			}
			return n, nil
		}),
		prim("append", 0, -1, "(append list ... obj) concatenates lists; the last argument is shared, not copied", func(in *Interp, args []Value) (Value, error) {
			if len(args) == 0 {
				return Nil, nil
			}
			result := args[len(args)-1]
			for i := len(args) - 2; i >= 0; i-- {
				vals, ok := ListToSlice(args[i])
				if !ok {
					return nil, WrongType("append", "a list", args[i])
				}
				for j := len(vals) - 1; j >= 0; j-- {
					result = &Pair{Car: vals[j], Cdr: result}
				}
			}
			return result, nil
		}),
		prim("reverse", 1, 1, "(reverse list)", func(in *Interp, args []Value) (Value, error) {
			if circular(args[0]) {
				return nil, WrongType("reverse", "a list (it is circular or too long)", args[0])
			}
			var r Value = Nil
			v := args[0]
			for i := 1; ; i++ {
				p, ok := v.(*Pair)
				if !ok {
					break
				}
				if i&pollMask == 0 {
					in.checkCancel()
					if i > maxAlloc {
						return nil, WrongType("reverse", "a list (it is circular or too long)", args[0])
					}
				}
				r = &Pair{Car: p.Car, Cdr: r}
				v = p.Cdr
			}
			if _, ok := v.(EmptyList); !ok {
				return nil, WrongType("reverse", "a list", args[0])
			}
			return r, nil
		}),
		prim("list-tail", 2, 2, "(list-tail list k) drops the first k elements", func(in *Interp, args []Value) (Value, error) {
			k, ok := args[1].(int)
			if !ok || k < 0 {
				return nil, WrongType("list-tail", "a non-negative exact integer", args[1])
			}
			v := args[0]
			for i := 0; i < k; i++ {
				if i&pollMask == pollMask {
					in.checkCancel()
				}
				p, ok := v.(*Pair)
				if !ok {
					return nil, Errorf("list-tail: index out of range: %d (list too short: %s)", k, errString(args[0]))
				}
				v = p.Cdr
			}
			return v, nil
		}),
		prim("list-ref", 2, 2, "(list-ref list k)", func(in *Interp, args []Value) (Value, error) {
			k, ok := args[1].(int)
			if !ok || k < 0 {
				return nil, WrongType("list-ref", "a non-negative exact integer", args[1])
			}
			v := args[0]
			for i := 0; ; i++ {
				if i&pollMask == pollMask {
					in.checkCancel()
				}
				p, ok := v.(*Pair)
				if !ok {
					return nil, Errorf("list-ref: index out of range: %d (list too short: %s)", k, errString(args[0]))
				}
				if i == k {
					return p.Car, nil
				}
				v = p.Cdr
			}
		}),
		prim("list-set!", 3, 3, "(list-set! list k obj)", func(in *Interp, args []Value) (Value, error) {
			k, ok := args[1].(int)
			if !ok || k < 0 {
				return nil, WrongType("list-set!", "a non-negative exact integer", args[1])
			}
			v := args[0]
			for i := 0; ; i++ {
				if i&pollMask == pollMask {
					in.checkCancel()
				}
				p, ok := v.(*Pair)
				if !ok {
					return nil, Errorf("list-set!: index out of range: %d (list too short: %s)", k, errString(args[0]))
				}
				if i == k {
					p.Car = args[2]
					return Void, nil
				}
				v = p.Cdr
			}
		}),
		prim("list-copy", 1, 1, "(list-copy obj) copies the spine of a list (an improper tail is kept)", func(in *Interp, args []Value) (Value, error) {
			if circular(args[0]) {
				return nil, WrongType("list-copy", "a list (it is circular or too long)", args[0])
			}
			var head, tail *Pair
			v := args[0]
			for i := 1; ; i++ {
				p, ok := v.(*Pair)
				if !ok {
					break
				}
				if i&pollMask == 0 {
					in.checkCancel()
					if i > maxAlloc {
						return nil, WrongType("list-copy", "a list (it is circular or too long)", args[0])
					}
				}
				c := &Pair{Car: p.Car, Cdr: Nil}
				if tail == nil {
					head = c
				} else {
					tail.Cdr = c
				}
				tail = c
				v = p.Cdr
			}
			if tail == nil {
				return v, nil
			}
			tail.Cdr = v
			return head, nil
		}),
		prim("last-pair", 1, 1, "(last-pair list)", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Pair)
			if !ok {
				return nil, WrongType("last-pair", "a pair", args[0])
			}
			for i := 1; ; i++ {
				next, ok := p.Cdr.(*Pair)
				if !ok {
					return p, nil
				}
				if i&pollMask == 0 {
					in.checkCancel()
				}
				p = next
			}
		}),
		memGeneric("memq", eqValues),
		memGeneric("memv", Eqv),
		memGeneric("member", Equal),
		assGeneric("assq", eqValues),
		assGeneric("assv", Eqv),
		assGeneric("assoc", Equal),
		prim("map", 2, -1, "(map proc list1 list2 ...) stops at the shortest list", func(in *Interp, args []Value) (Value, error) {
			return mapLists(in, "map", args[0], args[1:], true)
		}),
		prim("for-each", 2, -1, "(for-each proc list1 list2 ...)", func(in *Interp, args []Value) (Value, error) {
			return mapLists(in, "for-each", args[0], args[1:], false)
		}),
		prim("alist-copy", 1, 1, "(alist-copy alist) copies the spine and each pair", func(in *Interp, args []Value) (Value, error) {
			vals, err := argList("alist-copy", args[0])
			if err != nil {
				return nil, err
			}
			out := make([]Value, len(vals))
			for i, v := range vals {
				if p, ok := v.(*Pair); ok {
					out[i] = &Pair{Car: p.Car, Cdr: p.Cdr}
				} else {
					out[i] = v
				}
			}
			return List(out...), nil
		}),
		prim("alist-delete", 2, 3, "(alist-delete key alist [=]) removes every entry whose key is equal? (or =) to key", func(in *Interp, args []Value) (Value, error) {
			vals, err := argList("alist-delete", args[1])
			if err != nil {
				return nil, err
			}
			var out []Value
			for _, v := range vals {
				p, ok := v.(*Pair)
				if !ok {
					return nil, WrongType("alist-delete", "an association list (element is not a pair)", v)
				}
				same := false
				if len(args) == 3 {
					r, err := in.Apply(args[2], []Value{args[0], p.Car})
					if err != nil {
						return nil, err
					}
					same = IsTrue(r)
				} else {
					same = Equal(args[0], p.Car)
				}
				if !same {
					out = append(out, p)
				}
			}
			return List(out...), nil
		}),
		sortPrim("sort", false),
		sortPrim("list-sort", false),
		sortPrim("sort!", true),
		sortPrim("vector-sort", false),
		sortPrim("vector-sort!", true),
	}
	for _, c := range []string{
		"aa", "ad", "da", "dd",
		"aaa", "aad", "ada", "add", "daa", "dad", "dda", "ddd",
		"addd", "dddd",
	} {
		ps = append(ps, cxr("c"+c+"r", c))
	}
	return ps
}
