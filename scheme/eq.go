package scheme

// Eqv implements eqv?.
func Eqv(a, b Value) bool { return a == b }

// Equal implements equal?.
func Equal(a, b Value) bool { return a == b }

// IsProcedure reports whether v is callable.
func IsProcedure(v Value) bool {
	_, ok := v.(*Primitive)
	return ok
}
