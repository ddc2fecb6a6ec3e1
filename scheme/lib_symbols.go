package scheme

func booleanSymbolPrimitives() []*Primitive {
	return []*Primitive{
		prim("not", 1, 1, "(not obj) is #t when obj is #f", func(in *Interp, args []Value) (Value, error) {
			return args[0] == false, nil
		}),
		predPrim("boolean?", func(v Value) bool { _, ok := v.(bool); return ok }),
		prim("boolean=?", 2, -1, "(boolean=? b1 b2 ...)", func(in *Interp, args []Value) (Value, error) {
			for _, a := range args {
				if _, ok := a.(bool); !ok {
					return nil, WrongType("boolean=?", "a boolean", a)
				}
			}
			for i := 1; i < len(args); i++ {
				if args[i] != args[0] {
					return false, nil
				}
			}
			return true, nil
		}),
		predPrim("symbol?", func(v Value) bool { _, ok := v.(Symbol); return ok }),
		prim("symbol->string", 1, 1, "(symbol->string sym) returns a fresh string", func(in *Interp, args []Value) (Value, error) {
			s, ok := args[0].(Symbol)
			if !ok {
				return nil, WrongType("symbol->string", "a symbol", args[0])
			}
			return NewString(string(s)), nil
		}),
		prim("string->symbol", 1, 1, "(string->symbol str)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string->symbol", args[0])
			if err != nil {
				return nil, err
			}
			return Symbol(s.S), nil
		}),
		prim("symbol=?", 2, -1, "(symbol=? s1 s2 ...)", func(in *Interp, args []Value) (Value, error) {
			for _, a := range args {
				if _, ok := a.(Symbol); !ok {
					return nil, WrongType("symbol=?", "a symbol", a)
				}
			}
			for i := 1; i < len(args); i++ {
				if args[i] != args[0] {
					return false, nil
				}
			}
			return true, nil
		}),
		prim("symbol-append", 0, -1, "(symbol-append sym ...) concatenates symbol names", func(in *Interp, args []Value) (Value, error) {
			var s string
			for _, a := range args {
				sym, ok := a.(Symbol)
				if !ok {
					return nil, WrongType("symbol-append", "a symbol", a)
				}
				s += string(sym)
			}
			return Symbol(s), nil
		}),
		predPrim("procedure?", IsProcedure),
		predPrim("eof-object?", func(v Value) bool { return v == EOF }),
		prim("eof-object", 0, 0, "(eof-object) returns the end-of-file object", func(in *Interp, args []Value) (Value, error) {
			return EOF, nil
		}),
		prim("void", 0, -1, "(void arg ...) ignores its arguments and returns the unspecified value", func(in *Interp, args []Value) (Value, error) {
			return Void, nil
		}),
	}
}
