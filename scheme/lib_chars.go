package scheme

import (
	"unicode"
	"unicode/utf8"
)

func argChar(proc string, v Value) (rune, error) {
	c, ok := v.(Char)
	if !ok {
		return 0, WrongType(proc, "a character", v)
	}
	return rune(c), nil
}

func charCmp(name string, fold bool, test func(a, b rune) bool) *Primitive {
	return prim(name, 1, -1, "("+name+" c1 c2 ...)", func(in *Interp, args []Value) (Value, error) {
		rs := make([]rune, len(args))
		for i, a := range args {
			r, err := argChar(name, a)
			if err != nil {
				return nil, err
			}
			if fold {
				r = unicode.ToLower(unicode.ToUpper(r))
			}
			rs[i] = r
		}
		for i := 0; i+1 < len(rs); i++ {
			if !test(rs[i], rs[i+1]) {
				return false, nil
			}
		}
		return true, nil
	})
}

func charPred(name string, f func(rune) bool) *Primitive {
	return prim(name, 1, 1, "("+name+" char)", func(in *Interp, args []Value) (Value, error) {
		r, err := argChar(name, args[0])
		if err != nil {
			return nil, err
		}
		return f(r), nil
	})
}

func charMap(name string, f func(rune) rune) *Primitive {
	return prim(name, 1, 1, "("+name+" char)", func(in *Interp, args []Value) (Value, error) {
		r, err := argChar(name, args[0])
		if err != nil {
			return nil, err
		}
		return Char(f(r)), nil
	})
}

func charPrimitives() []*Primitive {
	eq := func(a, b rune) bool { return a == b }
	lt := func(a, b rune) bool { return a < b }
	gt := func(a, b rune) bool { return a > b }
	le := func(a, b rune) bool { return a <= b }
	ge := func(a, b rune) bool { return a >= b }
	return []*Primitive{
		predPrim("char?", func(v Value) bool { _, ok := v.(Char); return ok }),
		prim("char->integer", 1, 1, "(char->integer char)", func(in *Interp, args []Value) (Value, error) {
			r, err := argChar("char->integer", args[0])
			if err != nil {
				return nil, err
			}
			return int(r), nil
		}),
		prim("integer->char", 1, 1, "(integer->char n) for a Unicode scalar value n", func(in *Interp, args []Value) (Value, error) {
			n, ok := args[0].(int)
			if !ok || n < 0 || n > unicode.MaxRune || (n >= 0xD800 && n <= 0xDFFF) {
				return nil, WrongType("integer->char", "a Unicode scalar value", args[0])
			}
			return Char(rune(n)), nil
		}),
		charCmp("char=?", false, eq),
		charCmp("char<?", false, lt),
		charCmp("char>?", false, gt),
		charCmp("char<=?", false, le),
		charCmp("char>=?", false, ge),
		charCmp("char-ci=?", true, eq),
		charCmp("char-ci<?", true, lt),
		charCmp("char-ci>?", true, gt),
		charCmp("char-ci<=?", true, le),
		charCmp("char-ci>=?", true, ge),
		charPred("char-alphabetic?", unicode.IsLetter),
		charPred("char-numeric?", unicode.IsDigit),
		charPred("char-whitespace?", unicode.IsSpace),
		charPred("char-upper-case?", unicode.IsUpper),
		charPred("char-lower-case?", unicode.IsLower),
		charMap("char-upcase", unicode.ToUpper),
		charMap("char-downcase", unicode.ToLower),
		charMap("char-foldcase", func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }),
		prim("digit-value", 1, 1, "(digit-value char) returns the decimal digit's value, or #f", func(in *Interp, args []Value) (Value, error) {
			r, err := argChar("digit-value", args[0])
			if err != nil {
				return nil, err
			}
			if !unicode.IsDigit(r) {
				return false, nil
			}
			// Decimal digits come in contiguous runs of ten, each starting
			// at a zero.
			start := r
			for unicode.IsDigit(start - 1) {
				start--
			}
			return int(r-start) % 10, nil
		}),
	}
}

// runeCount is utf8.RuneCountInString with an ASCII fast path.
func runeCount(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s)
		}
	}
	return len(s)
}
