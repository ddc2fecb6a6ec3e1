package scheme

import (
	"fmt"
	"math"
	"math/big"
)

type unpackMarker int

const (
	// Optional, among UnpackArgs destinations, marks the following ones as
	// optional: when their arguments are missing they are left unchanged, so
	// set defaults before the call.
	Optional unpackMarker = iota + 1
	// Rest, among UnpackArgs destinations, must be followed by exactly one
	// *[]Value, which receives all remaining arguments.
	Rest
)

// UnpackArgs converts a primitive's arguments into Go variables, checking
// their count and types. Each destination is a pointer:
//
//	*Value        any value, unconverted (Value is any; call ToGo for Go data)
//	*string       a string
//	*Symbol       a symbol
//	*Char         a character
//	*int, *int64  an exact integer that fits
//	*float64      any real number
//	*bool         a boolean (#t or #f; other values are an error)
//	*[]Value      a list or vector
//	*[]string     a list or vector of strings
//	*[]byte       a bytevector or string
//	*map[string]any  an association list or hash table (converted with ToGo)
//	**HashTable   a hash table
//	**Pair        a pair
//	**Vector      a vector
//	**Port        a port
//
// The markers Optional and Rest may appear among the destinations:
//
//	var path string
//	limit := 100
//	var rest []scheme.Value
//	err := scheme.UnpackArgs("read-file", args, &path, scheme.Optional, &limit, scheme.Rest, &rest)
//
// Errors name the procedure and the argument, e.g.
// "read-file: argument 2: not an exact integer: "x"", and are Scheme errors
// when returned from a primitive's Fn.
func UnpackArgs(proc string, args []Value, dst ...any) error {
	required, positional := -1, 0
	var rest *[]Value
	for i := 0; i < len(dst); i++ {
		switch dst[i] {
		case Optional:
			if required >= 0 {
				return Errorf("%s: UnpackArgs: Optional given twice", proc)
			}
			required = positional
			continue
		case Rest:
			if i != len(dst)-2 {
				return Errorf("%s: UnpackArgs: Rest must be followed by exactly one *[]Value", proc)
			}
			r, ok := dst[i+1].(*[]Value)
			if !ok {
				return Errorf("%s: UnpackArgs: Rest must be followed by a *[]Value, not %T", proc, dst[i+1])
			}
			rest = r
			i = len(dst)
			continue
		}
		positional++
	}
	if required < 0 {
		required = positional
	}
	if len(args) < required {
		return Errorf("%s: too few arguments: want %s, got %d", proc, arity(required, positional, rest != nil), len(args))
	}
	if len(args) > positional && rest == nil {
		return Errorf("%s: too many arguments: want %s, got %d", proc, arity(required, positional, false), len(args))
	}
	ai := 0
	for _, d := range dst {
		if d == Optional {
			continue
		}
		if d == Rest {
			break
		}
		if ai >= len(args) {
			return nil
		}
		if err := unpackOne(proc, ai+1, args[ai], d); err != nil {
			return err
		}
		ai++
	}
	if rest != nil {
		if ai < len(args) {
			*rest = append([]Value(nil), args[ai:]...)
		} else {
			*rest = nil
		}
	}
	return nil
}

func arity(min, max int, rest bool) string {
	switch {
	case rest:
		return fmt.Sprintf("at least %d", min)
	case min == max:
		return fmt.Sprintf("%d", min)
	}
	return fmt.Sprintf("%d to %d", min, max)
}

func unpackOne(proc string, n int, v Value, dst any) error {
	bad := func(what string) error {
		return WrongType(fmt.Sprintf("%s: argument %d", proc, n), what, v)
	}
	switch d := dst.(type) {
	case *Value:
		*d = v
	case *string:
		s, ok := v.(*String)
		if !ok {
			return bad("a string")
		}
		*d = s.S
	case *Symbol:
		s, ok := v.(Symbol)
		if !ok {
			return bad("a symbol")
		}
		*d = s
	case *Char:
		c, ok := v.(Char)
		if !ok {
			return bad("a character")
		}
		*d = c
	case *int:
		i, ok := v.(int)
		if !ok {
			return bad("an exact integer")
		}
		*d = i
	case *int64:
		switch x := v.(type) {
		case int:
			*d = int64(x)
		case *big.Int:
			if !x.IsInt64() {
				return bad("an exact integer that fits in 64 bits")
			}
			*d = x.Int64()
		default:
			return bad("an exact integer")
		}
	case *float64:
		if numKind(v) == kNone {
			return bad("a number")
		}
		f := toFloat(v)
		if math.IsNaN(f) && !isNaN(v) {
			return bad("a number")
		}
		*d = f
	case *bool:
		b, ok := v.(bool)
		if !ok {
			return bad("a boolean")
		}
		*d = b
	case *[]Value:
		switch x := v.(type) {
		case *Vector:
			*d = append([]Value(nil), x.Items...)
		default:
			l, ok := ListToSlice(v)
			if !ok {
				return bad("a list")
			}
			*d = l
		}
	case *[]string:
		var l []Value
		switch x := v.(type) {
		case *Vector:
			l = x.Items
		default:
			var ok bool
			if l, ok = ListToSlice(v); !ok {
				return bad("a list of strings")
			}
		}
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(*String)
			if !ok {
				return bad("a list of strings")
			}
			out[i] = s.S
		}
		*d = out
	case *[]byte:
		switch x := v.(type) {
		case *Bytevector:
			*d = x.B
		case *String:
			*d = []byte(x.S)
		default:
			return bad("a bytevector")
		}
	case *map[string]any:
		switch v.(type) {
		case EmptyList:
			*d = map[string]any{}
			return nil
		case *HashTable:
		case *Pair:
			vals, ok := ListToSlice(v)
			if !ok || !isJSONAlist(vals) {
				return bad("an association list with symbol or string keys")
			}
		default:
			return bad("an association list or hash table")
		}
		m, _ := ToGo(v).(map[string]any)
		*d = m
	case **HashTable:
		h, ok := v.(*HashTable)
		if !ok {
			return bad("a hash table")
		}
		*d = h
	case **Pair:
		p, ok := v.(*Pair)
		if !ok {
			return bad("a pair")
		}
		*d = p
	case **Vector:
		x, ok := v.(*Vector)
		if !ok {
			return bad("a vector")
		}
		*d = x
	case **Port:
		x, ok := v.(*Port)
		if !ok {
			return bad("a port")
		}
		*d = x
	default:
		return Errorf("%s: UnpackArgs: unsupported destination type %T", proc, dst)
	}
	return nil
}
