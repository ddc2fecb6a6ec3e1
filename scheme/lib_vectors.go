package scheme

func argVector(proc string, v Value) (*Vector, error) {
	vec, ok := v.(*Vector)
	if !ok {
		return nil, WrongType(proc, "a vector", v)
	}
	return vec, nil
}

func vectorsArgs(proc string, vals []Value) ([]*Vector, int, error) {
	vs := make([]*Vector, len(vals))
	n := -1
	for i, v := range vals {
		vec, err := argVector(proc, v)
		if err != nil {
			return nil, 0, err
		}
		vs[i] = vec
		if n < 0 || len(vec.Items) < n {
			n = len(vec.Items)
		}
	}
	return vs, n, nil
}

func vectorPrimitives() []*Primitive {
	return []*Primitive{
		predPrim("vector?", func(v Value) bool { _, ok := v.(*Vector); return ok }),
		prim("vector", 0, -1, "(vector obj ...)", func(in *Interp, args []Value) (Value, error) {
			return &Vector{Items: append([]Value(nil), args...)}, nil
		}),
		prim("make-vector", 1, 2, "(make-vector k [fill])", func(in *Interp, args []Value) (Value, error) {
			n, ok := args[0].(int)
			if !ok || n < 0 {
				return nil, WrongType("make-vector", "a non-negative exact integer", args[0])
			}
			if err := in.checkAlloc("make-vector", n, valueBytes); err != nil {
				return nil, err
			}
			var fill Value = Void
			if len(args) == 2 {
				fill = args[1]
			}
			items := make([]Value, n)
			for i := range items {
				items[i] = fill
			}
			return &Vector{Items: items}, nil
		}),
		prim("vector-length", 1, 1, "(vector-length vec)", func(in *Interp, args []Value) (Value, error) {
			v, err := argVector("vector-length", args[0])
			if err != nil {
				return nil, err
			}
			return len(v.Items), nil
		}),
		prim("vector-ref", 2, 2, "(vector-ref vec k)", func(in *Interp, args []Value) (Value, error) {
			v, err := argVector("vector-ref", args[0])
			if err != nil {
				return nil, err
			}
			if k, ok := args[1].(int); ok && k >= 0 && k < len(v.Items) {
				return v.Items[k], nil
			}
			k, err := argIndex("vector-ref", args[1], len(v.Items), false)
			if err != nil {
				return nil, err
			}
			return v.Items[k], nil
		}),
		prim("vector-set!", 3, 3, "(vector-set! vec k obj)", func(in *Interp, args []Value) (Value, error) {
			v, err := argVector("vector-set!", args[0])
			if err != nil {
				return nil, err
			}
			k, err := argIndex("vector-set!", args[1], len(v.Items), false)
			if err != nil {
				return nil, err
			}
			v.Items[k] = args[2]
			return Void, nil
		}),
		prim("vector->list", 1, 3, "(vector->list vec [start [end]])", func(in *Interp, args []Value) (Value, error) {
			v, err := argVector("vector->list", args[0])
			if err != nil {
				return nil, err
			}
			start, end, err := argRange("vector->list", args, 1, len(v.Items))
			if err != nil {
				return nil, err
			}
			return List(v.Items[start:end]...), nil
		}),
		prim("list->vector", 1, 1, "(list->vector list)", func(in *Interp, args []Value) (Value, error) {
			vals, err := argList("list->vector", args[0])
			if err != nil {
				return nil, err
			}
			if vals == nil {
				vals = []Value{}
			}
			return &Vector{Items: vals}, nil
		}),
		prim("vector-fill!", 2, 4, "(vector-fill! vec obj [start [end]])", func(in *Interp, args []Value) (Value, error) {
			v, err := argVector("vector-fill!", args[0])
			if err != nil {
				return nil, err
			}
			start, end, err := argRange("vector-fill!", args, 2, len(v.Items))
			if err != nil {
				return nil, err
			}
			for i := start; i < end; i++ {
				v.Items[i] = args[1]
			}
			return Void, nil
		}),
		prim("vector-copy", 1, 3, "(vector-copy vec [start [end]])", func(in *Interp, args []Value) (Value, error) {
			v, err := argVector("vector-copy", args[0])
			if err != nil {
				return nil, err
			}
			start, end, err := argRange("vector-copy", args, 1, len(v.Items))
			if err != nil {
				return nil, err
			}
			return &Vector{Items: append([]Value{}, v.Items[start:end]...)}, nil
		}),
		prim("vector-copy!", 3, 5, "(vector-copy! to at from [start [end]])", func(in *Interp, args []Value) (Value, error) {
			to, err := argVector("vector-copy!", args[0])
			if err != nil {
				return nil, err
			}
			at, err := argIndex("vector-copy!", args[1], len(to.Items), true)
			if err != nil {
				return nil, err
			}
			from, err := argVector("vector-copy!", args[2])
			if err != nil {
				return nil, err
			}
			start, end, err := argRange("vector-copy!", args, 3, len(from.Items))
			if err != nil {
				return nil, err
			}
			if at+end-start > len(to.Items) {
				return nil, Errorf("vector-copy!: %d elements do not fit at index %d of a vector of length %d", end-start, at, len(to.Items))
			}
			copy(to.Items[at:], from.Items[start:end])
			return Void, nil
		}),
		prim("vector-append", 0, -1, "(vector-append vec ...)", func(in *Interp, args []Value) (Value, error) {
			items := []Value{}
			for _, a := range args {
				v, err := argVector("vector-append", a)
				if err != nil {
					return nil, err
				}
				if err := in.checkAlloc("vector-append", len(items)+len(v.Items), valueBytes); err != nil {
					return nil, err
				}
				items = append(items, v.Items...)
			}
			return &Vector{Items: items}, nil
		}),
		prim("vector-grow", 2, 2, "(vector-grow vec k) returns a copy of vec enlarged to k elements", func(in *Interp, args []Value) (Value, error) {
			v, err := argVector("vector-grow", args[0])
			if err != nil {
				return nil, err
			}
			n, ok := args[1].(int)
			if !ok || n < len(v.Items) {
				return nil, WrongType("vector-grow", "a size at least the vector's length", args[1])
			}
			if err := in.checkAlloc("vector-grow", n, valueBytes); err != nil {
				return nil, err
			}
			items := make([]Value, n)
			copy(items, v.Items)
			for i := len(v.Items); i < n; i++ {
				items[i] = Void
			}
			return &Vector{Items: items}, nil
		}),
		prim("vector-map", 2, -1, "(vector-map proc vec1 vec2 ...)", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("vector-map", args[0]); err != nil {
				return nil, err
			}
			vs, n, err := vectorsArgs("vector-map", args[1:])
			if err != nil {
				return nil, err
			}
			out := make([]Value, n)
			for i := 0; i < n; i++ {
				call := make([]Value, len(vs))
				for j, v := range vs {
					call[j] = v.Items[i]
				}
				r, err := in.Apply(args[0], call)
				if err != nil {
					return nil, err
				}
				out[i] = r
			}
			return &Vector{Items: out}, nil
		}),
		prim("vector-for-each", 2, -1, "(vector-for-each proc vec1 vec2 ...)", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("vector-for-each", args[0]); err != nil {
				return nil, err
			}
			vs, n, err := vectorsArgs("vector-for-each", args[1:])
			if err != nil {
				return nil, err
			}
			for i := 0; i < n; i++ {
				call := make([]Value, len(vs))
				for j, v := range vs {
					if i >= len(v.Items) { // shrunk by proc
						return Void, nil
					}
					call[j] = v.Items[i]
				}
				if _, err := in.Apply(args[0], call); err != nil {
					return nil, err
				}
			}
			return Void, nil
		}),
	}
}

func argBytevector(proc string, v Value) (*Bytevector, error) {
	b, ok := v.(*Bytevector)
	if !ok {
		return nil, WrongType(proc, "a bytevector", v)
	}
	return b, nil
}

func argByte(proc string, v Value) (byte, error) {
	n, ok := v.(int)
	if !ok || n < 0 || n > 255 {
		return 0, WrongType(proc, "a byte (an exact integer 0-255)", v)
	}
	return byte(n), nil
}

func bytevectorPrimitives() []*Primitive {
	return []*Primitive{
		predPrim("bytevector?", func(v Value) bool { _, ok := v.(*Bytevector); return ok }),
		prim("bytevector", 0, -1, "(bytevector byte ...)", func(in *Interp, args []Value) (Value, error) {
			b := make([]byte, len(args))
			for i, a := range args {
				x, err := argByte("bytevector", a)
				if err != nil {
					return nil, err
				}
				b[i] = x
			}
			return &Bytevector{B: b}, nil
		}),
		prim("make-bytevector", 1, 2, "(make-bytevector k [byte])", func(in *Interp, args []Value) (Value, error) {
			n, ok := args[0].(int)
			if !ok || n < 0 {
				return nil, WrongType("make-bytevector", "a non-negative exact integer", args[0])
			}
			if err := in.checkAlloc("make-bytevector", n, 1); err != nil {
				return nil, err
			}
			var fill byte
			if len(args) == 2 {
				var err error
				if fill, err = argByte("make-bytevector", args[1]); err != nil {
					return nil, err
				}
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = fill
			}
			return &Bytevector{B: b}, nil
		}),
		prim("bytevector-length", 1, 1, "(bytevector-length bv)", func(in *Interp, args []Value) (Value, error) {
			b, err := argBytevector("bytevector-length", args[0])
			if err != nil {
				return nil, err
			}
			return len(b.B), nil
		}),
		prim("bytevector-u8-ref", 2, 2, "(bytevector-u8-ref bv k)", func(in *Interp, args []Value) (Value, error) {
			b, err := argBytevector("bytevector-u8-ref", args[0])
			if err != nil {
				return nil, err
			}
			k, err := argIndex("bytevector-u8-ref", args[1], len(b.B), false)
			if err != nil {
				return nil, err
			}
			return int(b.B[k]), nil
		}),
		prim("bytevector-u8-set!", 3, 3, "(bytevector-u8-set! bv k byte)", func(in *Interp, args []Value) (Value, error) {
			b, err := argBytevector("bytevector-u8-set!", args[0])
			if err != nil {
				return nil, err
			}
			k, err := argIndex("bytevector-u8-set!", args[1], len(b.B), false)
			if err != nil {
				return nil, err
			}
			x, err := argByte("bytevector-u8-set!", args[2])
			if err != nil {
				return nil, err
			}
			b.B[k] = x
			return Void, nil
		}),
		prim("bytevector-copy", 1, 3, "(bytevector-copy bv [start [end]])", func(in *Interp, args []Value) (Value, error) {
			b, err := argBytevector("bytevector-copy", args[0])
			if err != nil {
				return nil, err
			}
			start, end, err := argRange("bytevector-copy", args, 1, len(b.B))
			if err != nil {
				return nil, err
			}
			return &Bytevector{B: append([]byte{}, b.B[start:end]...)}, nil
		}),
		prim("bytevector-copy!", 3, 5, "(bytevector-copy! to at from [start [end]])", func(in *Interp, args []Value) (Value, error) {
			to, err := argBytevector("bytevector-copy!", args[0])
			if err != nil {
				return nil, err
			}
			at, err := argIndex("bytevector-copy!", args[1], len(to.B), true)
			if err != nil {
				return nil, err
			}
			from, err := argBytevector("bytevector-copy!", args[2])
			if err != nil {
				return nil, err
			}
			start, end, err := argRange("bytevector-copy!", args, 3, len(from.B))
			if err != nil {
				return nil, err
			}
			if at+end-start > len(to.B) {
				return nil, Errorf("bytevector-copy!: %d bytes do not fit at index %d of a bytevector of length %d", end-start, at, len(to.B))
			}
			copy(to.B[at:], from.B[start:end])
			return Void, nil
		}),
		prim("bytevector-append", 0, -1, "(bytevector-append bv ...)", func(in *Interp, args []Value) (Value, error) {
			out := []byte{}
			for _, a := range args {
				b, err := argBytevector("bytevector-append", a)
				if err != nil {
					return nil, err
				}
				out = append(out, b.B...)
			}
			return &Bytevector{B: out}, nil
		}),
		prim("utf8->string", 1, 3, "(utf8->string bv [start [end]]); invalid UTF-8 becomes U+FFFD", func(in *Interp, args []Value) (Value, error) {
			b, err := argBytevector("utf8->string", args[0])
			if err != nil {
				return nil, err
			}
			start, end, err := argRange("utf8->string", args, 1, len(b.B))
			if err != nil {
				return nil, err
			}
			return NewString(toValidUTF8(string(b.B[start:end]))), nil
		}),
		prim("string->utf8", 1, 3, "(string->utf8 s [start [end]])", func(in *Interp, args []Value) (Value, error) {
			s, err := argSubstring("string->utf8", args, 0)
			if err != nil {
				return nil, err
			}
			return &Bytevector{B: []byte(s)}, nil
		}),
	}
}
