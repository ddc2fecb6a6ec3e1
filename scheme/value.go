package scheme

import (
	"fmt"
	"math/big"
)

// Value is any Scheme value. The concrete Go types are:
//
//	int            fixnum (exact integer); overflow promotes to *big.Int
//	*big.Int       bignum (always normalised back to int when it fits)
//	float64        real (inexact)
//	bool           #t / #f
//	Char           character
//	*String        string (mutable box around a Go string)
//	Symbol         symbol (compared by name)
//	*Pair          pair
//	EmptyList      '() — the single value Nil
//	*Vector        vector
//	*Bytevector    bytevector
//	*HashTable     hash table (insertion ordered)
//	*Primitive     a procedure written in Go
//	*Closure, *Continuation, *Parameter, *Record, *Promise, ... (see eval)
//	*MultipleValues the result of (values a b ...) with other than one value
//	Unspecified    the value of forms with no useful value — the single value Void
//	EOFObject      the end-of-file object — the single value EOF
//	*ErrorObject   a condition raised by error (and the Go errors turned into one)
type Value = any

// Symbol is a Scheme symbol. Two symbols are eq? when their names are equal.
type Symbol string

// Char is a Scheme character.
type Char rune

// String is a mutable Scheme string.
type String struct{ S string }

// NewString returns a fresh Scheme string holding s.
func NewString(s string) *String { return &String{S: s} }

// EmptyList is the type of '().
type EmptyList struct{}

// Nil is the empty list.
var Nil = EmptyList{}

// Unspecified is the type of the unspecified value.
type Unspecified struct{}

// Void is the unspecified value, returned by forms such as set! and display.
var Void = Unspecified{}

// EOFObject is the type of the end-of-file object.
type EOFObject struct{}

// EOF is the end-of-file object.
var EOF = EOFObject{}

// Pos is a source position.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.File == "" && p.Line == 0 {
		return "?"
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsZero reports whether p carries no position.
func (p Pos) IsZero() bool { return p.Line == 0 }

// Pair is a cons cell. Pairs made by the reader carry their source position.
type Pair struct {
	Car, Cdr Value
	Pos      *Pos
}

// Cons makes a pair with no source position.
func Cons(car, cdr Value) *Pair { return &Pair{Car: car, Cdr: cdr} }

// List makes a proper list of vals.
func List(vals ...Value) Value {
	var l Value = Nil
	for i := len(vals) - 1; i >= 0; i-- {
		l = &Pair{Car: vals[i], Cdr: l}
	}
	return l
}

// ListToSlice returns the elements of a proper list; ok is false for an
// improper, circular or too long (more than 1<<24 elements) list.
func ListToSlice(v Value) (out []Value, ok bool) {
	slow := v
	for n := 0; ; n++ {
		switch p := v.(type) {
		case EmptyList:
			return out, true
		case *Pair:
			if n > maxAlloc {
				return nil, false
			}
			out = append(out, p.Car)
			v = p.Cdr
			if n&1 == 1 {
				slow = slow.(*Pair).Cdr
				if slow == v {
					return nil, false // circular
				}
			}
		default:
			return out, false
		}
	}
}

// Vector is a Scheme vector.
type Vector struct{ Items []Value }

// Bytevector is a Scheme bytevector.
type Bytevector struct{ B []byte }

// MultipleValues is what (values ...) returns with zero or several values.
type MultipleValues struct{ Vals []Value }

// Primitive is a procedure implemented in Go.
//
// MinArgs and MaxArgs bound the argument count; MaxArgs < 0 means no upper
// bound. The interpreter checks the count before calling Fn, so Fn may index
// args freely up to MinArgs. Fn returns an error (usually made with
// WrongType, Errorf or NewError) to raise a Scheme error; the interpreter adds
// the position and the Scheme stack.
type Primitive struct {
	Name             string
	MinArgs, MaxArgs int
	Doc              string
	Fn               func(in *Interp, args []Value) (Value, error)

	// tail, set only for core control procedures (apply, call/cc, ...),
	// replaces Fn and may leave a pending tail call.
	tail func(th *thread, args []Value, pos *Pos, tail bool) Value
	// borrow: a library primitive that does not keep args after it
	// returns, so the evaluator may pass a reused slice.
	borrow bool
}

// NewPrimitive makes a primitive; see Primitive.
func NewPrimitive(name string, minArgs, maxArgs int, doc string, fn func(in *Interp, args []Value) (Value, error)) *Primitive {
	return &Primitive{Name: name, MinArgs: minArgs, MaxArgs: maxArgs, Doc: doc, Fn: fn}
}

// ErrorObject is a Scheme condition: what (error msg irritant ...) raises, and
// what Go errors from primitives become when Scheme code catches them.
// Kind is "" for a plain error, "file" for file errors, "read" for read
// errors, "assert" for a failed assert, "limit" for a CallBounded's bound.
type ErrorObject struct {
	Message   string
	Irritants []Value
	Kind      string
	// Err is the Go error a primitive raised this for, when it wrapped one
	// (Errorf with %w): errors.As on the *Error an evaluation returns
	// reaches it (a provider's error through model-turn, say). Scheme sees
	// only the message.
	Err error
}

// Unwrap returns the Go error the object was raised for, if any.
func (e *ErrorObject) Unwrap() error { return e.Err }

func (e *ErrorObject) Error() string {
	s := e.Message
	for _, irr := range e.Irritants {
		s += " " + errString(irr)
	}
	return s
}

// NewError makes an error object; returning it from a primitive raises it.
func NewError(msg string, irritants ...Value) *ErrorObject {
	return &ErrorObject{Message: msg, Irritants: irritants}
}

// Errorf makes an error object with a formatted message.
func Errorf(format string, args ...any) *ErrorObject {
	err := fmt.Errorf(format, args...)
	obj := &ErrorObject{Message: err.Error()}
	if u, ok := err.(interface{ Unwrap() error }); ok && u.Unwrap() != nil {
		obj.Err = u.Unwrap()
	} else if u, ok := err.(interface{ Unwrap() []error }); ok && len(u.Unwrap()) > 0 {
		obj.Err = err
	}
	return obj
}

// WrongType makes the standard argument error, e.g. "car: not a pair: 5".
func WrongType(proc, what string, got Value) *ErrorObject {
	return &ErrorObject{Message: fmt.Sprintf("%s: not %s: %s", proc, what, errString(got))}
}

// bigToValue normalises a big integer: an int when it fits.
func bigToValue(b *big.Int) Value {
	if b.IsInt64() {
		return int(b.Int64())
	}
	return b
}
