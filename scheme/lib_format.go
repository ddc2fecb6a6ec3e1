package scheme

import (
	"strings"
)

// formatString expands a format control string:
//
//	~a  display the next argument
//	~s  write the next argument
//	~d  the next argument, which must be a number, in decimal
//	~x ~o ~b  the next argument, an exact integer, in hex, octal, binary
//	~%  ~n  a newline
//	~~  a tilde
//
// Directive letters may be upper case. Too few or too many arguments and
// unknown directives are errors.
func formatString(proc, f string, args []Value) (string, error) {
	var b strings.Builder
	next := 0
	take := func(d byte) (Value, error) {
		if next >= len(args) {
			return nil, Errorf("%s: too few arguments for directive ~%c in %s", proc, d, writeStringLit(f))
		}
		v := args[next]
		next++
		return v, nil
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			return "", Errorf("%s: format string ends in a lone ~: %s", proc, writeStringLit(f))
		}
		d := f[i]
		switch d | 0x20 {
		case 'a':
			v, err := take(d)
			if err != nil {
				return "", err
			}
			b.WriteString(DisplayString(v))
		case 's':
			v, err := take(d)
			if err != nil {
				return "", err
			}
			b.WriteString(WriteString(v))
		case 'd', 'x', 'o', 'b':
			v, err := take(d)
			if err != nil {
				return "", err
			}
			radix := map[byte]int{'d': 10, 'x': 16, 'o': 8, 'b': 2}[d|0x20]
			if !isNumber(v) || (radix != 10 && !isExactInt(v)) {
				if radix == 10 {
					return "", Errorf("%s: ~%c needs a number: %s", proc, d, errString(v))
				}
				return "", Errorf("%s: ~%c needs an exact integer: %s", proc, d, errString(v))
			}
			s, err := numberToString(proc, v, radix)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		case '%', 'n':
			b.WriteByte('\n')
		case '~':
			b.WriteByte('~')
		default:
			return "", Errorf("%s: unknown directive ~%c in %s", proc, d, writeStringLit(f))
		}
	}
	if next < len(args) {
		return "", Errorf("%s: too many arguments for %s: %d unused", proc, writeStringLit(f), len(args)-next)
	}
	return b.String(), nil
}

func formatPrimitives() []*Primitive {
	return []*Primitive{
		prim("string-format", 1, -1, "(string-format fmt arg ...) is (format #f fmt arg ...)", func(in *Interp, args []Value) (Value, error) {
			f, err := argString("string-format", args[0])
			if err != nil {
				return nil, err
			}
			s, err := formatString("string-format", f.S, args[1:])
			if err != nil {
				return nil, err
			}
			return NewString(s), nil
		}),
	}
}
