package scheme

import "math/big"

// Eq implements eq?: identity for objects, value for small atoms (numbers
// that fit a fixnum, characters, booleans, symbols, the empty list).
func Eq(a, b Value) bool {
	switch x := a.(type) {
	case *String, *Pair, *Vector, *Bytevector, *big.Int:
		return eqPtr(a, b)
	case int:
		y, ok := b.(int)
		return ok && x == y
	case Symbol:
		y, ok := b.(Symbol)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case bool, Char, EmptyList, Unspecified, EOFObject, *Primitive, *Closure, *Record, *HashTable, *Promise, *Parameter, *Continuation:
		return a == b
	}
	return comparableEq(a, b)
}

func eqPtr(a, b Value) bool {
	switch x := a.(type) {
	case *String:
		y, ok := b.(*String)
		return ok && x == y
	case *Pair:
		y, ok := b.(*Pair)
		return ok && x == y
	case *Vector:
		y, ok := b.(*Vector)
		return ok && x == y
	case *Bytevector:
		y, ok := b.(*Bytevector)
		return ok && x == y
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x == y
	}
	return false
}

// comparableEq compares with ==, treating values of incomparable Go types
// (which hosts might store) as distinct instead of panicking.
func comparableEq(a, b Value) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}

// Eqv implements eqv?: like eq?, and numbers of the same exactness and
// value are eqv.
func Eqv(a, b Value) bool {
	switch x := a.(type) {
	case int:
		y, ok := b.(int)
		return ok && x == y
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	case *String:
		y, ok := b.(*String)
		return ok && (x == y || x.S == "" && y.S == "")
	}
	return Eq(a, b)
}

// Equal implements equal?: structural equality of pairs, vectors, strings
// and bytevectors, eqv? otherwise. It walks with an explicit stack, so
// structures nested deeper than the Go stack could hold compare correctly;
// circular structures that are not eq? compare unequal after maxEqualSteps.
func Equal(a, b Value) bool {
	type todo struct{ a, b Value }
	var buf [16]todo
	stack := buf[:0]
	for steps := 0; ; steps++ {
		if steps > maxEqualSteps {
			return false
		}
		switch x := a.(type) {
		case *Pair:
			y, ok := b.(*Pair)
			if !ok {
				return false
			}
			if x != y {
				stack = append(stack, todo{x.Cdr, y.Cdr})
				a, b = x.Car, y.Car
				continue
			}
		case *String:
			y, ok := b.(*String)
			if !ok || x.S != y.S {
				return false
			}
		case *Vector:
			y, ok := b.(*Vector)
			if !ok || len(x.Items) != len(y.Items) {
				return false
			}
			if x != y {
				for i := len(x.Items) - 1; i >= 0; i-- {
					stack = append(stack, todo{x.Items[i], y.Items[i]})
				}
			}
		case *Bytevector:
			y, ok := b.(*Bytevector)
			if !ok || string(x.B) != string(y.B) {
				return false
			}
		default:
			if !Eqv(a, b) {
				return false
			}
		}
		n := len(stack)
		if n == 0 {
			return true
		}
		a, b = stack[n-1].a, stack[n-1].b
		stack = stack[:n-1]
	}
}

// maxEqualSteps bounds the work of one equal? (circular structures).
const maxEqualSteps = 1 << 27

// IsProcedure reports whether v can be called.
func IsProcedure(v Value) bool {
	switch v.(type) {
	case *Primitive, *Closure, *caseLambda, *Continuation, *Parameter:
		return true
	}
	return false
}
