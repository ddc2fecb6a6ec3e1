package scheme

// SRFI-1 list procedures.

// listArgs checks that each of vals is a list and returns their elements,
// truncated to the shortest.
func listArgs(proc string, vals []Value) ([][]Value, int, error) {
	ls := make([][]Value, len(vals))
	n := -1
	for i, v := range vals {
		l, err := argList(proc, v)
		if err != nil {
			return nil, 0, err
		}
		ls[i] = l
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return ls, n, nil
}

// column returns the i-th elements of each list, followed by extra.
func column(ls [][]Value, i int, extra ...Value) []Value {
	out := make([]Value, 0, len(ls)+len(extra))
	for _, l := range ls {
		out = append(out, l[i])
	}
	return append(out, extra...)
}

// eachN is the shape shared by count, any, every, list-index, filter-map
// and append-map: (proc f list1 list2 ...).
func eachN(name, doc string, body func(in *Interp, f Value, ls [][]Value, n int) (Value, error)) *Primitive {
	return prim(name, 2, -1, doc, func(in *Interp, args []Value) (Value, error) {
		if err := argProc(name, args[0]); err != nil {
			return nil, err
		}
		ls, n, err := listArgs(name, args[1:])
		if err != nil {
			return nil, err
		}
		return body(in, args[0], ls, n)
	})
}

// filterPrim implements filter and remove (keep says which side is kept).
func filterPrim(name string, keep bool) *Primitive {
	return prim(name, 2, 2, "("+name+" pred list)", func(in *Interp, args []Value) (Value, error) {
		if err := argProc(name, args[0]); err != nil {
			return nil, err
		}
		l, err := argList(name, args[1])
		if err != nil {
			return nil, err
		}
		var out []Value
		for _, x := range l {
			r, err := in.Apply(args[0], []Value{x})
			if err != nil {
				return nil, err
			}
			if IsTrue(r) == keep {
				out = append(out, x)
			}
		}
		return List(out...), nil
	})
}

func deletePrim(name string) *Primitive {
	return prim(name, 2, 3, "("+name+" x list [=]) removes every element equal? (or =) to x", func(in *Interp, args []Value) (Value, error) {
		l, err := argList(name, args[1])
		if err != nil {
			return nil, err
		}
		var out []Value
		for _, y := range l {
			same := false
			if len(args) == 3 {
				r, err := in.Apply(args[2], []Value{args[0], y})
				if err != nil {
					return nil, err
				}
				same = IsTrue(r)
			} else {
				same = Equal(args[0], y)
			}
			if !same {
				out = append(out, y)
			}
		}
		return List(out...), nil
	})
}

func nth(name string, i int) *Primitive {
	return prim(name, 1, 1, "("+name+" list)", func(in *Interp, args []Value) (Value, error) {
		v := args[0]
		for k := 0; ; k++ {
			p, ok := v.(*Pair)
			if !ok {
				return nil, Errorf("%s: list too short: %s", name, errString(args[0]))
			}
			if k == i {
				return p.Car, nil
			}
			v = p.Cdr
		}
	})
}

func srfi1Primitives() []*Primitive {
	return []*Primitive{
		filterPrim("filter", true),
		filterPrim("remove", false),
		prim("partition", 2, 2, "(partition pred list) returns two values: the elements that satisfy pred and those that do not", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("partition", args[0]); err != nil {
				return nil, err
			}
			l, err := argList("partition", args[1])
			if err != nil {
				return nil, err
			}
			var yes, no []Value
			for _, x := range l {
				r, err := in.Apply(args[0], []Value{x})
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					yes = append(yes, x)
				} else {
					no = append(no, x)
				}
			}
			return &MultipleValues{Vals: []Value{List(yes...), List(no...)}}, nil
		}),
		prim("reduce", 3, 3, "(reduce f ridentity list) is (f e3 (f e2 e1)); ridentity for the empty list", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("reduce", args[0]); err != nil {
				return nil, err
			}
			l, err := argList("reduce", args[2])
			if err != nil {
				return nil, err
			}
			if len(l) == 0 {
				return args[1], nil
			}
			acc := l[0]
			for _, x := range l[1:] {
				if acc, err = in.Apply(args[0], []Value{x, acc}); err != nil {
					return nil, err
				}
			}
			return acc, nil
		}),
		prim("reduce-right", 3, 3, "(reduce-right f ridentity list) is (f e1 (f e2 e3))", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("reduce-right", args[0]); err != nil {
				return nil, err
			}
			l, err := argList("reduce-right", args[2])
			if err != nil {
				return nil, err
			}
			if len(l) == 0 {
				return args[1], nil
			}
			acc := l[len(l)-1]
			for i := len(l) - 2; i >= 0; i-- {
				if acc, err = in.Apply(args[0], []Value{l[i], acc}); err != nil {
					return nil, err
				}
			}
			return acc, nil
		}),
		prim("fold", 3, -1, "(fold kons knil list1 list2 ...) calls (kons e1 e2 ... acc) left to right", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("fold", args[0]); err != nil {
				return nil, err
			}
			ls, n, err := listArgs("fold", args[2:])
			if err != nil {
				return nil, err
			}
			acc := args[1]
			for i := 0; i < n; i++ {
				if acc, err = in.Apply(args[0], column(ls, i, acc)); err != nil {
					return nil, err
				}
			}
			return acc, nil
		}),
		prim("fold-left", 3, -1, "(fold-left f init list1 ...) calls (f acc e1 e2 ...) left to right (R6RS)", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("fold-left", args[0]); err != nil {
				return nil, err
			}
			ls, n, err := listArgs("fold-left", args[2:])
			if err != nil {
				return nil, err
			}
			acc := args[1]
			for i := 0; i < n; i++ {
				if acc, err = in.Apply(args[0], append([]Value{acc}, column(ls, i)...)); err != nil {
					return nil, err
				}
			}
			return acc, nil
		}),
		prim("fold-right", 3, -1, "(fold-right kons knil list1 list2 ...) calls (kons e1 e2 ... acc) right to left", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("fold-right", args[0]); err != nil {
				return nil, err
			}
			ls, n, err := listArgs("fold-right", args[2:])
			if err != nil {
				return nil, err
			}
			acc := args[1]
			for i := n - 1; i >= 0; i-- {
				if acc, err = in.Apply(args[0], column(ls, i, acc)); err != nil {
					return nil, err
				}
			}
			return acc, nil
		}),
		deletePrim("delete"),
		deletePrim("delete!"),
		prim("delete-duplicates", 1, 2, "(delete-duplicates list [=]) keeps the first occurrence of each element", func(in *Interp, args []Value) (Value, error) {
			l, err := argList("delete-duplicates", args[0])
			if err != nil {
				return nil, err
			}
			var out []Value
			if len(args) == 1 {
				seen := NewHashTable()
				for _, x := range l {
					if _, dup := seen.Get(x); !dup {
						seen.Set(x, true)
						out = append(out, x)
					}
				}
				return List(out...), nil
			}
			if err := argProc("delete-duplicates", args[1]); err != nil {
				return nil, err
			}
		outer:
			for _, x := range l {
				for _, y := range out {
					r, err := in.Apply(args[1], []Value{y, x})
					if err != nil {
						return nil, err
					}
					if IsTrue(r) {
						continue outer
					}
				}
				out = append(out, x)
			}
			return List(out...), nil
		}),
		eachN("any", "(any pred list1 ...) returns the first true value of pred, or #f", func(in *Interp, f Value, ls [][]Value, n int) (Value, error) {
			for i := 0; i < n; i++ {
				r, err := in.Apply(f, column(ls, i))
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					return r, nil
				}
			}
			return false, nil
		}),
		eachN("every", "(every pred list1 ...) returns #f if pred is false for some element, else the last value (#t for empty lists)", func(in *Interp, f Value, ls [][]Value, n int) (Value, error) {
			var last Value = true
			for i := 0; i < n; i++ {
				r, err := in.Apply(f, column(ls, i))
				if err != nil {
					return nil, err
				}
				if !IsTrue(r) {
					return false, nil
				}
				last = r
			}
			return last, nil
		}),
		eachN("count", "(count pred list1 ...) counts the elements satisfying pred", func(in *Interp, f Value, ls [][]Value, n int) (Value, error) {
			c := 0
			for i := 0; i < n; i++ {
				r, err := in.Apply(f, column(ls, i))
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					c++
				}
			}
			return c, nil
		}),
		eachN("list-index", "(list-index pred list1 ...) returns the index of the first element satisfying pred, or #f", func(in *Interp, f Value, ls [][]Value, n int) (Value, error) {
			for i := 0; i < n; i++ {
				r, err := in.Apply(f, column(ls, i))
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					return i, nil
				}
			}
			return false, nil
		}),
		eachN("filter-map", "(filter-map f list1 ...) collects the true values of f", func(in *Interp, f Value, ls [][]Value, n int) (Value, error) {
			var out []Value
			for i := 0; i < n; i++ {
				r, err := in.Apply(f, column(ls, i))
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					out = append(out, r)
				}
			}
			return List(out...), nil
		}),
		eachN("append-map", "(append-map f list1 ...) appends the lists f returns", func(in *Interp, f Value, ls [][]Value, n int) (Value, error) {
			var out []Value
			for i := 0; i < n; i++ {
				r, err := in.Apply(f, column(ls, i))
				if err != nil {
					return nil, err
				}
				l, ok := ListToSlice(r)
				if !ok {
					return nil, Errorf("append-map: procedure returned a non-list: %s", errString(r))
				}
				out = append(out, l...)
			}
			return List(out...), nil
		}),
		prim("find", 2, 2, "(find pred list) returns the first element satisfying pred, or #f", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("find", args[0]); err != nil {
				return nil, err
			}
			l, err := argList("find", args[1])
			if err != nil {
				return nil, err
			}
			for _, x := range l {
				r, err := in.Apply(args[0], []Value{x})
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					return x, nil
				}
			}
			return false, nil
		}),
		prim("find-tail", 2, 2, "(find-tail pred list) returns the first pair whose car satisfies pred, or #f", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("find-tail", args[0]); err != nil {
				return nil, err
			}
			if _, err := argList("find-tail", args[1]); err != nil {
				return nil, err
			}
			for v := args[1]; ; {
				p, ok := v.(*Pair)
				if !ok {
					return false, nil
				}
				r, err := in.Apply(args[0], []Value{p.Car})
				if err != nil {
					return nil, err
				}
				if IsTrue(r) {
					return p, nil
				}
				v = p.Cdr
			}
		}),
		prim("iota", 1, 3, "(iota count [start [step]])", func(in *Interp, args []Value) (Value, error) {
			n, ok := args[0].(int)
			if !ok || n < 0 {
				return nil, WrongType("iota", "a non-negative exact integer", args[0])
			}
			if err := in.checkAlloc("iota", n, pairBytes); err != nil {
				return nil, err
			}
			var start, step Value = 0, 1
			if len(args) > 1 {
				start = args[1]
			}
			if len(args) > 2 {
				step = args[2]
			}
			if err := checkNumbers("iota", []Value{start, step}); err != nil {
				return nil, err
			}
			out := make([]Value, n)
			for i := range out {
				if i == 0 {
					out[i] = start
				} else {
					out[i] = numAdd(start, numMul(i, step))
				}
			}
			return List(out...), nil
		}),
		prim("list-tabulate", 2, 2, "(list-tabulate n proc) is the list of (proc 0) ... (proc n-1)", func(in *Interp, args []Value) (Value, error) {
			n, ok := args[0].(int)
			if !ok || n < 0 {
				return nil, WrongType("list-tabulate", "a non-negative exact integer", args[0])
			}
			if err := in.checkAlloc("list-tabulate", n, pairBytes); err != nil {
				return nil, err
			}
			if err := argProc("list-tabulate", args[1]); err != nil {
				return nil, err
			}
			out := make([]Value, n)
			for i := range out {
				r, err := in.Apply(args[1], []Value{i})
				if err != nil {
					return nil, err
				}
				out[i] = r
			}
			return List(out...), nil
		}),
		prim("last", 1, 1, "(last list) returns the last element", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Pair)
			if !ok {
				return nil, WrongType("last", "a non-empty list", args[0])
			}
			for i := 1; ; i++ {
				next, ok := p.Cdr.(*Pair)
				if !ok {
					return p.Car, nil
				}
				if i&pollMask == 0 {
					in.checkCancel()
				}
				p = next
			}
		}),
		nth("first", 0),
		nth("second", 1),
		nth("third", 2),
		nth("fourth", 3),
		nth("fifth", 4),
		prim("take", 2, 2, "(take list k) returns the first k elements", func(in *Interp, args []Value) (Value, error) {
			k, ok := args[1].(int)
			if !ok || k < 0 {
				return nil, WrongType("take", "a non-negative exact integer", args[1])
			}
			out := make([]Value, 0, k)
			v := args[0]
			for i := 0; i < k; i++ {
				p, ok := v.(*Pair)
				if !ok {
					return nil, Errorf("take: list too short for %d elements: %s", k, errString(args[0]))
				}
				out = append(out, p.Car)
				v = p.Cdr
			}
			return List(out...), nil
		}),
		prim("drop", 2, 2, "(drop list k) drops the first k elements", func(in *Interp, args []Value) (Value, error) {
			k, ok := args[1].(int)
			if !ok || k < 0 {
				return nil, WrongType("drop", "a non-negative exact integer", args[1])
			}
			v := args[0]
			for i := 0; i < k; i++ {
				p, ok := v.(*Pair)
				if !ok {
					return nil, Errorf("drop: list too short to drop %d elements: %s", k, errString(args[0]))
				}
				v = p.Cdr
			}
			return v, nil
		}),
		prim("take-while", 2, 2, "(take-while pred list)", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("take-while", args[0]); err != nil {
				return nil, err
			}
			l, err := argList("take-while", args[1])
			if err != nil {
				return nil, err
			}
			for i, x := range l {
				r, err := in.Apply(args[0], []Value{x})
				if err != nil {
					return nil, err
				}
				if !IsTrue(r) {
					return List(l[:i]...), nil
				}
			}
			return args[1], nil
		}),
		prim("drop-while", 2, 2, "(drop-while pred list)", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("drop-while", args[0]); err != nil {
				return nil, err
			}
			if _, err := argList("drop-while", args[1]); err != nil {
				return nil, err
			}
			v := args[1]
			for {
				p, ok := v.(*Pair)
				if !ok {
					return v, nil
				}
				r, err := in.Apply(args[0], []Value{p.Car})
				if err != nil {
					return nil, err
				}
				if !IsTrue(r) {
					return p, nil
				}
				v = p.Cdr
			}
		}),
		prim("append!", 0, -1, "(append! list ...) like append, may reuse its arguments' pairs", func(in *Interp, args []Value) (Value, error) {
			var result Value = Nil
			var last *Pair
			for i, a := range args {
				if _, ok := a.(EmptyList); ok {
					continue
				}
				if i < len(args)-1 {
					if _, ok := listLength(a); !ok {
						return nil, WrongType("append!", "a list", a)
					}
				}
				if last == nil {
					result = a
				} else {
					last.Cdr = a
				}
				if p, ok := a.(*Pair); ok {
					for {
						next, ok := p.Cdr.(*Pair)
						if !ok {
							break
						}
						p = next
					}
					last = p
				}
			}
			return result, nil
		}),
		prim("reverse!", 1, 1, "(reverse! list) reverses in place, reusing the pairs", func(in *Interp, args []Value) (Value, error) {
			if _, ok := listLength(args[0]); !ok {
				return nil, WrongType("reverse!", "a list", args[0])
			}
			var r Value = Nil
			v := args[0]
			for {
				p, ok := v.(*Pair)
				if !ok {
					return r, nil
				}
				next := p.Cdr
				p.Cdr = r
				r = p
				v = next
			}
		}),
		prim("concatenate", 1, 1, "(concatenate list-of-lists)", func(in *Interp, args []Value) (Value, error) {
			ls, err := argList("concatenate", args[0])
			if err != nil {
				return nil, err
			}
			var out []Value
			for _, l := range ls {
				vals, err := argList("concatenate", l)
				if err != nil {
					return nil, err
				}
				out = append(out, vals...)
			}
			return List(out...), nil
		}),
	}
}
