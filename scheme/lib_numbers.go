package scheme

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The numeric tower: exact integers are int, promoted to *big.Int on
// overflow and normalised back; inexact reals are float64. There are no
// exact rationals: (/ 1 3) is 0.3333333333333333 and (/ 6 3) is 2.

const (
	kInt = iota
	kBig
	kFloat
	kNone
)

func numKind(v Value) int {
	switch v.(type) {
	case int:
		return kInt
	case *big.Int:
		return kBig
	case float64:
		return kFloat
	}
	return kNone
}

func isNumber(v Value) bool { return numKind(v) != kNone }

func toBig(v Value) *big.Int {
	switch x := v.(type) {
	case int:
		return big.NewInt(int64(x))
	case *big.Int:
		return x
	}
	return nil
}

func toFloat(v Value) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case float64:
		return x
	}
	return math.NaN()
}

func numAdd(a, b Value) Value {
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok {
			s := x + y
			if (s > x) == (y > 0) {
				return s
			}
			return bigToValue(new(big.Int).Add(big.NewInt(int64(x)), big.NewInt(int64(y))))
		}
	}
	if numKind(a) == kFloat || numKind(b) == kFloat {
		return toFloat(a) + toFloat(b)
	}
	return bigToValue(new(big.Int).Add(toBig(a), toBig(b)))
}

func numSub(a, b Value) Value {
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok {
			d := x - y
			if (d < x) == (y > 0) {
				return d
			}
			return bigToValue(new(big.Int).Sub(big.NewInt(int64(x)), big.NewInt(int64(y))))
		}
	}
	if numKind(a) == kFloat || numKind(b) == kFloat {
		return toFloat(a) - toFloat(b)
	}
	return bigToValue(new(big.Int).Sub(toBig(a), toBig(b)))
}

// maxBigBits bounds the size of an exact integer that * and expt make, so a
// runaway computation gets an error instead of running for minutes or
// exhausting memory inside one multiplication.
const maxBigBits = 1 << 23

// checkMulSize refuses a product of exact integers above maxBigBits.
func checkMulSize(proc string, a, b Value) error {
	x, ok1 := a.(*big.Int)
	y, ok2 := b.(*big.Int)
	if !ok1 && !ok2 {
		return nil
	}
	bits := 64
	if ok1 {
		bits = x.BitLen()
	}
	if ok2 {
		bits += y.BitLen()
	} else {
		bits += 64
	}
	if bits > maxBigBits {
		return Errorf("%s: result too large: about %d bits (the limit is %d)", proc, bits, maxBigBits)
	}
	return nil
}

func numMul(a, b Value) Value {
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok {
			if x > -1<<31 && x < 1<<31 && y > -1<<31 && y < 1<<31 {
				return x * y
			}
			p := x * y
			if x != -1 && y != -1 && (x == 0 || p/x == y) {
				return p
			}
			return bigToValue(new(big.Int).Mul(big.NewInt(int64(x)), big.NewInt(int64(y))))
		}
	}
	if numKind(a) == kFloat || numKind(b) == kFloat {
		return toFloat(a) * toFloat(b)
	}
	return bigToValue(new(big.Int).Mul(toBig(a), toBig(b)))
}

func numDiv(proc string, a, b Value) (Value, error) {
	if numKind(a) == kFloat || numKind(b) == kFloat {
		return toFloat(a) / toFloat(b), nil
	}
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok {
			if y == 0 {
				return nil, Errorf("%s: division by zero", proc)
			}
			if y != -1 && x%y == 0 {
				return x / y, nil
			}
			if y != -1 {
				return float64(x) / float64(y), nil
			}
		}
	}
	bx, by := toBig(a), toBig(b)
	if by.Sign() == 0 {
		return nil, Errorf("%s: division by zero", proc)
	}
	q, r := new(big.Int).QuoRem(bx, by, new(big.Int))
	if r.Sign() == 0 {
		return bigToValue(q), nil
	}
	fx, _ := new(big.Float).SetInt(bx).Float64()
	fy, _ := new(big.Float).SetInt(by).Float64()
	return fx / fy, nil
}

// numCmp compares two numbers; ok is false when either is NaN.
func numCmp(a, b Value) (c int, ok bool) {
	if x, isInt := a.(int); isInt {
		if y, isInt := b.(int); isInt {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	if numKind(a) == kFloat || numKind(b) == kFloat {
		x, y := toFloat(a), toFloat(b)
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		case x == y:
			return 0, true
		}
		return 0, false
	}
	return toBig(a).Cmp(toBig(b)), true
}

func numSign(v Value) int {
	switch x := v.(type) {
	case int:
		switch {
		case x < 0:
			return -1
		case x > 0:
			return 1
		}
		return 0
	case *big.Int:
		return x.Sign()
	case float64:
		switch {
		case x < 0:
			return -1
		case x > 0:
			return 1
		}
	}
	return 0
}

func numNeg(v Value) Value { return numSub(0, v) }

func checkNumbers(proc string, args []Value) error {
	for _, a := range args {
		if numKind(a) == kNone {
			return WrongType(proc, "a number", a)
		}
	}
	return nil
}

func isInteger(v Value) bool {
	switch x := v.(type) {
	case int, *big.Int:
		return true
	case float64:
		return x == math.Trunc(x) && !math.IsInf(x, 0)
	}
	return false
}

func argInteger(proc string, v Value) error {
	if !isInteger(v) {
		return WrongType(proc, "an integer", v)
	}
	return nil
}

// intDivide computes truncated or floored quotient and remainder.
func intDivide(proc string, a, b Value, floor bool) (q, r Value, err error) {
	if err := argInteger(proc, a); err != nil {
		return nil, nil, err
	}
	if err := argInteger(proc, b); err != nil {
		return nil, nil, err
	}
	if numSign(b) == 0 {
		return nil, nil, Errorf("%s: division by zero", proc)
	}
	if numKind(a) == kFloat || numKind(b) == kFloat {
		x, y := toFloat(a), toFloat(b)
		qf := math.Trunc(x / y)
		rf := math.Mod(x, y)
		if floor && rf != 0 && (rf < 0) != (y < 0) {
			qf--
			rf += y
		}
		return qf, rf, nil
	}
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok && !(x == math.MinInt && y == -1) {
			qi, ri := x/y, x%y
			if floor && ri != 0 && (ri < 0) != (y < 0) {
				qi--
				ri += y
			}
			return qi, ri, nil
		}
	}
	bx, by := toBig(a), toBig(b)
	bq, br := new(big.Int).QuoRem(bx, by, new(big.Int))
	if floor && br.Sign() != 0 && br.Sign() != by.Sign() {
		bq.Sub(bq, big.NewInt(1))
		br.Add(br, by)
	}
	return bigToValue(bq), bigToValue(br), nil
}

func divPrim(name string, floor bool, which int) *Primitive {
	return prim(name, 2, 2, "("+name+" n d)", func(in *Interp, args []Value) (Value, error) {
		q, r, err := intDivide(name, args[0], args[1], floor)
		if err != nil {
			return nil, err
		}
		switch which {
		case 0:
			return q, nil
		case 1:
			return r, nil
		}
		return &MultipleValues{Vals: []Value{q, r}}, nil
	})
}

func cmpPrim(name string, test func(c int) bool) *Primitive {
	return prim(name, 1, -1, "("+name+" x y ...) compares numbers", func(in *Interp, args []Value) (Value, error) {
		if len(args) == 2 {
			if x, ok := args[0].(int); ok {
				if y, ok := args[1].(int); ok {
					c := 0
					if x < y {
						c = -1
					} else if x > y {
						c = 1
					}
					return test(c), nil
				}
			}
		}
		if err := checkNumbers(name, args); err != nil {
			return nil, err
		}
		result := true
		for i := 0; i+1 < len(args); i++ {
			c, ok := numCmp(args[i], args[i+1])
			if !ok || !test(c) {
				result = false
			}
		}
		return result, nil
	})
}

func floatFn(name string, f func(float64) float64) *Primitive {
	return prim(name, 1, 1, "("+name+" x)", func(in *Interp, args []Value) (Value, error) {
		if numKind(args[0]) == kNone {
			return nil, WrongType(name, "a number", args[0])
		}
		return f(toFloat(args[0])), nil
	})
}

func roundPrim(name string, f func(float64) float64) *Primitive {
	return prim(name, 1, 1, "("+name+" x) rounds to an integer (exact stays exact)", func(in *Interp, args []Value) (Value, error) {
		switch x := args[0].(type) {
		case int, *big.Int:
			return x, nil
		case float64:
			return f(x), nil
		}
		return nil, WrongType(name, "a number", args[0])
	})
}

func predPrim(name string, f func(v Value) bool) *Primitive {
	return prim(name, 1, 1, "("+name+" obj)", func(in *Interp, args []Value) (Value, error) {
		return f(args[0]), nil
	})
}

func numPred(name, what string, f func(v Value) (bool, bool)) *Primitive {
	return prim(name, 1, 1, "("+name+" x)", func(in *Interp, args []Value) (Value, error) {
		r, ok := f(args[0])
		if !ok {
			return nil, WrongType(name, what, args[0])
		}
		return r, nil
	})
}

func isExactInt(v Value) bool {
	switch v.(type) {
	case int, *big.Int:
		return true
	}
	return false
}

func toExact(proc string, v Value) (Value, error) {
	switch x := v.(type) {
	case int, *big.Int:
		return x, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) || x != math.Trunc(x) {
			return nil, Errorf("%s: no exact representation (exact rationals are not supported): %s", proc, floatString(x))
		}
		if x >= -(1<<62) && x <= 1<<62 {
			return int(x), nil
		}
		b, _ := big.NewFloat(x).Int(nil)
		return bigToValue(b), nil
	}
	return nil, WrongType(proc, "a number", v)
}

func toInexact(proc string, v Value) (Value, error) {
	if numKind(v) == kNone {
		return nil, WrongType(proc, "a number", v)
	}
	return toFloat(v), nil
}

func gcdValues(a, b Value) Value {
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok && x != math.MinInt && y != math.MinInt {
			if x < 0 {
				x = -x
			}
			if y < 0 {
				y = -y
			}
			for y != 0 {
				x, y = y, x%y
			}
			return x
		}
	}
	bx := new(big.Int).Abs(toBig(a))
	by := new(big.Int).Abs(toBig(b))
	return bigToValue(new(big.Int).GCD(nil, nil, bx, by))
}

func numAbs(v Value) Value {
	if numSign(v) < 0 {
		return numNeg(v)
	}
	if f, ok := v.(float64); ok {
		return math.Abs(f) // turns -0.0 into 0.0
	}
	return v
}

func exactIntegerSqrt(proc string, v Value) (s, r Value, err error) {
	if !isExactInt(v) || numSign(v) < 0 {
		return nil, nil, WrongType(proc, "a non-negative exact integer", v)
	}
	if x, ok := v.(int); ok {
		si := int(math.Sqrt(float64(x)))
		for si*si > x {
			si--
		}
		for (si+1)*(si+1) <= x {
			si++
		}
		return si, x - si*si, nil
	}
	b := toBig(v)
	bs := new(big.Int).Sqrt(b)
	br := new(big.Int).Sub(b, new(big.Int).Mul(bs, bs))
	return bigToValue(bs), bigToValue(br), nil
}

func numExpt(proc string, base, exp Value) (Value, error) {
	if err := checkNumbers(proc, []Value{base, exp}); err != nil {
		return nil, err
	}
	if isExactInt(base) && isExactInt(exp) {
		if numSign(exp) >= 0 {
			e, ok := exp.(int)
			if !ok {
				switch b := base.(type) {
				case int:
					if b == 0 || b == 1 {
						return b, nil
					}
				}
				return nil, Errorf("%s: exponent too large: %s", proc, errString(exp))
			}
			if x, ok := base.(int); ok {
				r, ok := intPow(x, e)
				if ok {
					return r, nil
				}
			}
			if bits := int64(toBig(base).BitLen()-1) * int64(e); bits > maxBigBits {
				return nil, Errorf("%s: result too large: about %d bits (the limit is %d)", proc, bits, maxBigBits)
			}
			return bigToValue(new(big.Int).Exp(toBig(base), big.NewInt(int64(e)), nil)), nil
		}
		if numSign(base) == 0 {
			return nil, Errorf("%s: division by zero: 0 to a negative power", proc)
		}
		return math.Pow(toFloat(base), toFloat(exp)), nil
	}
	return math.Pow(toFloat(base), toFloat(exp)), nil
}

// intPow computes x**e with overflow detection.
func intPow(x, e int) (int, bool) {
	r := 1
	for e > 0 {
		if e&1 == 1 {
			p := numMul(r, x)
			pi, ok := p.(int)
			if !ok {
				return 0, false
			}
			r = pi
		}
		e >>= 1
		if e > 0 {
			sq := numMul(x, x)
			si, ok := sq.(int)
			if !ok {
				return 0, false
			}
			x = si
		}
	}
	return r, true
}

// numberToString formats a number in radix (2, 8, 10 or 16).
func numberToString(proc string, v Value, radix int) (string, error) {
	switch x := v.(type) {
	case int:
		return strconv.FormatInt(int64(x), radix), nil
	case *big.Int:
		return x.Text(radix), nil
	case float64:
		if radix != 10 {
			if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
				return strconv.FormatInt(int64(x), radix) + ".", nil
			}
			return "", Errorf("%s: inexact numbers can only be written in radix 10: %s", proc, floatString(x))
		}
		return floatString(x), nil
	}
	return "", WrongType(proc, "a number", v)
}

// stringToNumber parses the external representation of a number, as
// string->number does; ok is false when s is not a number.
func stringToNumber(s string, radix int) (Value, bool) {
	exactness := byte(0)
	for len(s) >= 2 && s[0] == '#' {
		switch s[1] | 0x20 {
		case 'x':
			radix = 16
		case 'b':
			radix = 2
		case 'o':
			radix = 8
		case 'd':
			radix = 10
		case 'e', 'i':
			exactness = s[1] | 0x20
		default:
			return nil, false
		}
		s = s[2:]
	}
	v, ok := parseReal(s, radix)
	if !ok {
		return nil, false
	}
	switch exactness {
	case 'e':
		e, err := toExact("string->number", v)
		if err != nil {
			return nil, false
		}
		return e, true
	case 'i':
		return toFloat(v), true
	}
	return v, true
}

func parseReal(s string, radix int) (Value, bool) {
	if s == "" {
		return nil, false
	}
	switch s {
	case "+inf.0":
		return math.Inf(1), true
	case "-inf.0":
		return math.Inf(-1), true
	case "+nan.0", "-nan.0":
		return math.NaN(), true
	}
	if i := strings.IndexByte(s, '/'); i > 0 {
		n, ok1 := parseInteger(s[:i], radix)
		d, ok2 := parseInteger(s[i+1:], radix)
		if !ok1 || !ok2 || s[i+1] == '+' || s[i+1] == '-' {
			return nil, false
		}
		if numSign(d) == 0 {
			return nil, false
		}
		v, err := numDiv("string->number", n, d)
		return v, err == nil
	}
	if v, ok := parseInteger(s, radix); ok {
		return v, true
	}
	if radix != 10 {
		return nil, false
	}
	// Decimal: [sign] digits [. digits] [e [sign] digits], at least one digit.
	digits, i := 0, 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return nil, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		expDigits := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			expDigits++
		}
		if expDigits == 0 {
			return nil, false
		}
	}
	if i != len(s) {
		return nil, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of range values still parse to ±Inf or 0 with an error.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return nil, false
	}
	return f, true
}

func parseInteger(s string, radix int) (Value, bool) {
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	if body == "" {
		return nil, false
	}
	for i := 0; i < len(body); i++ {
		c := body[i] | 0x20
		var d int
		switch {
		case body[i] >= '0' && body[i] <= '9':
			d = int(body[i] - '0')
		case c >= 'a' && c <= 'z':
			d = int(c-'a') + 10
		default:
			return nil, false
		}
		if d >= radix {
			return nil, false
		}
	}
	if n, err := strconv.ParseInt(s, radix, 64); err == nil {
		return int(n), true
	}
	b, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), radix)
	if !ok {
		return nil, false
	}
	return bigToValue(b), true
}

func numberPrimitives() []*Primitive {
	return []*Primitive{
		prim("+", 0, -1, "(+ z ...) sums numbers", func(in *Interp, args []Value) (Value, error) {
			if len(args) == 2 {
				if x, ok := args[0].(int); ok {
					if y, ok := args[1].(int); ok {
						if s := x + y; (s > x) == (y > 0) {
							return s, nil
						}
					}
				}
			}
			var acc Value = 0
			for _, a := range args {
				if numKind(a) == kNone {
					return nil, WrongType("+", "a number", a)
				}
				acc = numAdd(acc, a)
			}
			return acc, nil
		}),
		prim("*", 0, -1, "(* z ...) multiplies numbers", func(in *Interp, args []Value) (Value, error) {
			var acc Value = 1
			for _, a := range args {
				if numKind(a) == kNone {
					return nil, WrongType("*", "a number", a)
				}
				if err := checkMulSize("*", acc, a); err != nil {
					return nil, err
				}
				acc = numMul(acc, a)
			}
			return acc, nil
		}),
		prim("-", 1, -1, "(- z) negates; (- z1 z2 ...) subtracts", func(in *Interp, args []Value) (Value, error) {
			if len(args) == 2 {
				if x, ok := args[0].(int); ok {
					if y, ok := args[1].(int); ok {
						if d := x - y; (d < x) == (y > 0) {
							return d, nil
						}
					}
				}
			}
			if err := checkNumbers("-", args); err != nil {
				return nil, err
			}
			if len(args) == 1 {
				return numNeg(args[0]), nil
			}
			acc := args[0]
			for _, a := range args[1:] {
				acc = numSub(acc, a)
			}
			return acc, nil
		}),
		prim("/", 1, -1, "(/ z) inverts; (/ z1 z2 ...) divides; exact when the division is exact, else inexact", func(in *Interp, args []Value) (Value, error) {
			if err := checkNumbers("/", args); err != nil {
				return nil, err
			}
			if len(args) == 1 {
				return numDiv("/", 1, args[0])
			}
			acc := args[0]
			for _, a := range args[1:] {
				var err error
				if acc, err = numDiv("/", acc, a); err != nil {
					return nil, err
				}
			}
			return acc, nil
		}),
		cmpPrim("=", func(c int) bool { return c == 0 }),
		cmpPrim("<", func(c int) bool { return c < 0 }),
		cmpPrim(">", func(c int) bool { return c > 0 }),
		cmpPrim("<=", func(c int) bool { return c <= 0 }),
		cmpPrim(">=", func(c int) bool { return c >= 0 }),
		divPrim("quotient", false, 0),
		divPrim("remainder", false, 1),
		divPrim("modulo", true, 1),
		divPrim("truncate-quotient", false, 0),
		divPrim("truncate-remainder", false, 1),
		divPrim("floor-quotient", true, 0),
		divPrim("floor-remainder", true, 1),
		divPrim("truncate/", false, 2),
		divPrim("floor/", true, 2),
		prim("abs", 1, 1, "(abs x)", func(in *Interp, args []Value) (Value, error) {
			if numKind(args[0]) == kNone {
				return nil, WrongType("abs", "a number", args[0])
			}
			return numAbs(args[0]), nil
		}),
		prim("magnitude", 1, 1, "(magnitude x) is abs for reals", func(in *Interp, args []Value) (Value, error) {
			if numKind(args[0]) == kNone {
				return nil, WrongType("magnitude", "a number", args[0])
			}
			return numAbs(args[0]), nil
		}),
		minMax("min", -1),
		minMax("max", 1),
		prim("gcd", 0, -1, "(gcd n ...)", func(in *Interp, args []Value) (Value, error) {
			var acc Value = 0
			inexact := false
			for _, a := range args {
				if err := argInteger("gcd", a); err != nil {
					return nil, err
				}
				if f, ok := a.(float64); ok {
					inexact = true
					a, _ = toExact("gcd", f)
				}
				acc = gcdValues(acc, a)
			}
			if inexact {
				return toFloat(acc), nil
			}
			return acc, nil
		}),
		prim("lcm", 0, -1, "(lcm n ...)", func(in *Interp, args []Value) (Value, error) {
			var acc Value = 1
			inexact := false
			for _, a := range args {
				if err := argInteger("lcm", a); err != nil {
					return nil, err
				}
				if f, ok := a.(float64); ok {
					inexact = true
					a, _ = toExact("lcm", f)
				}
				if numSign(a) == 0 {
					acc = 0
					continue
				}
				if numSign(acc) == 0 {
					continue
				}
				g := gcdValues(acc, a)
				q, _ := numDiv("lcm", numAbs(a), g)
				acc = numMul(acc, q)
			}
			if inexact {
				return toFloat(acc), nil
			}
			return numAbs(acc), nil
		}),
		predPrim("number?", isNumber),
		predPrim("complex?", isNumber),
		predPrim("real?", isNumber),
		predPrim("rational?", func(v Value) bool {
			if f, ok := v.(float64); ok {
				return !math.IsInf(f, 0) && !math.IsNaN(f)
			}
			return isExactInt(v)
		}),
		predPrim("integer?", isInteger),
		predPrim("exact-integer?", isExactInt),
		predPrim("exact-rational?", isExactInt),
		numPred("exact?", "a number", func(v Value) (bool, bool) { k := numKind(v); return k == kInt || k == kBig, k != kNone }),
		numPred("inexact?", "a number", func(v Value) (bool, bool) { k := numKind(v); return k == kFloat, k != kNone }),
		numPred("zero?", "a number", func(v Value) (bool, bool) {
			return numKind(v) != kNone && numSign(v) == 0 && !isNaN(v), numKind(v) != kNone
		}),
		numPred("positive?", "a number", func(v Value) (bool, bool) { return numSign(v) > 0, numKind(v) != kNone }),
		numPred("negative?", "a number", func(v Value) (bool, bool) { return numSign(v) < 0, numKind(v) != kNone }),
		numPred("odd?", "an integer", func(v Value) (bool, bool) {
			if !isInteger(v) {
				return false, false
			}
			_, r, _ := intDivide("odd?", v, 2, false)
			return numSign(r) != 0, true
		}),
		numPred("even?", "an integer", func(v Value) (bool, bool) {
			if !isInteger(v) {
				return false, false
			}
			_, r, _ := intDivide("even?", v, 2, false)
			return numSign(r) == 0, true
		}),
		numPred("nan?", "a number", func(v Value) (bool, bool) { return isNaN(v), numKind(v) != kNone }),
		numPred("infinite?", "a number", func(v Value) (bool, bool) {
			f, ok := v.(float64)
			return ok && math.IsInf(f, 0), numKind(v) != kNone
		}),
		numPred("finite?", "a number", func(v Value) (bool, bool) {
			f, ok := v.(float64)
			return !ok || !math.IsInf(f, 0) && !math.IsNaN(f), numKind(v) != kNone
		}),
		prim("exact", 1, 1, "(exact x) converts an integral inexact number to exact", func(in *Interp, args []Value) (Value, error) {
			return toExact("exact", args[0])
		}),
		prim("inexact->exact", 1, 1, "(inexact->exact x), same as exact", func(in *Interp, args []Value) (Value, error) {
			return toExact("inexact->exact", args[0])
		}),
		prim("inexact", 1, 1, "(inexact x)", func(in *Interp, args []Value) (Value, error) {
			return toInexact("inexact", args[0])
		}),
		prim("exact->inexact", 1, 1, "(exact->inexact x), same as inexact", func(in *Interp, args []Value) (Value, error) {
			return toInexact("exact->inexact", args[0])
		}),
		roundPrim("floor", math.Floor),
		roundPrim("ceiling", math.Ceil),
		roundPrim("round", math.RoundToEven),
		roundPrim("truncate", math.Trunc),
		prim("sqrt", 1, 1, "(sqrt x); exact for exact perfect squares", func(in *Interp, args []Value) (Value, error) {
			v := args[0]
			if numKind(v) == kNone {
				return nil, WrongType("sqrt", "a number", v)
			}
			if numSign(v) < 0 {
				return nil, Errorf("sqrt: no real square root (complex numbers are not supported): %s", errString(v))
			}
			if isExactInt(v) {
				s, r, _ := exactIntegerSqrt("sqrt", v)
				if numSign(r) == 0 {
					return s, nil
				}
			}
			return math.Sqrt(toFloat(v)), nil
		}),
		prim("exact-integer-sqrt", 1, 1, "(exact-integer-sqrt k) returns s and r with s*s + r = k", func(in *Interp, args []Value) (Value, error) {
			s, r, err := exactIntegerSqrt("exact-integer-sqrt", args[0])
			if err != nil {
				return nil, err
			}
			return &MultipleValues{Vals: []Value{s, r}}, nil
		}),
		prim("expt", 2, 2, "(expt base exponent)", func(in *Interp, args []Value) (Value, error) {
			return numExpt("expt", args[0], args[1])
		}),
		prim("square", 1, 1, "(square x)", func(in *Interp, args []Value) (Value, error) {
			if numKind(args[0]) == kNone {
				return nil, WrongType("square", "a number", args[0])
			}
			if err := checkMulSize("square", args[0], args[0]); err != nil {
				return nil, err
			}
			return numMul(args[0], args[0]), nil
		}),
		floatFn("exp", math.Exp),
		prim("log", 1, 2, "(log x) natural logarithm; (log x base)", func(in *Interp, args []Value) (Value, error) {
			if err := checkNumbers("log", args); err != nil {
				return nil, err
			}
			if len(args) == 2 {
				return math.Log(toFloat(args[0])) / math.Log(toFloat(args[1])), nil
			}
			return math.Log(toFloat(args[0])), nil
		}),
		floatFn("sin", math.Sin),
		floatFn("cos", math.Cos),
		floatFn("tan", math.Tan),
		floatFn("asin", math.Asin),
		floatFn("acos", math.Acos),
		prim("atan", 1, 2, "(atan y) or (atan y x)", func(in *Interp, args []Value) (Value, error) {
			if err := checkNumbers("atan", args); err != nil {
				return nil, err
			}
			if len(args) == 2 {
				return math.Atan2(toFloat(args[0]), toFloat(args[1])), nil
			}
			return math.Atan(toFloat(args[0])), nil
		}),
		prim("number->string", 1, 2, "(number->string z [radix])", func(in *Interp, args []Value) (Value, error) {
			radix := 10
			if len(args) == 2 {
				r, ok := args[1].(int)
				if !ok || (r != 2 && r != 8 && r != 10 && r != 16) {
					return nil, WrongType("number->string", "a radix (2, 8, 10 or 16)", args[1])
				}
				radix = r
			}
			s, err := numberToString("number->string", args[0], radix)
			if err != nil {
				return nil, err
			}
			return NewString(s), nil
		}),
		prim("string->number", 1, 2, "(string->number s [radix]) returns #f when s is not a number", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string->number", args[0])
			if err != nil {
				return nil, err
			}
			radix := 10
			if len(args) == 2 {
				r, ok := args[1].(int)
				if !ok || (r != 2 && r != 8 && r != 10 && r != 16) {
					return nil, WrongType("string->number", "a radix (2, 8, 10 or 16)", args[1])
				}
				radix = r
			}
			v, ok := stringToNumber(s.S, radix)
			if !ok {
				return false, nil
			}
			return v, nil
		}),
		prim("exact-nonnegative-integer?", 1, 1, "(exact-nonnegative-integer? obj)", func(in *Interp, args []Value) (Value, error) {
			return isExactInt(args[0]) && numSign(args[0]) >= 0, nil
		}),
	}
}

func isNaN(v Value) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

func minMax(name string, want int) *Primitive {
	return prim(name, 1, -1, "("+name+" x y ...)", func(in *Interp, args []Value) (Value, error) {
		if err := checkNumbers(name, args); err != nil {
			return nil, err
		}
		best := args[0]
		inexact := numKind(best) == kFloat
		for _, a := range args[1:] {
			if numKind(a) == kFloat {
				inexact = true
			}
			if isNaN(a) {
				best = a
				continue
			}
			if c, ok := numCmp(a, best); ok && c == want {
				best = a
			}
		}
		if inexact {
			return toFloat(best), nil
		}
		return best, nil
	})
}
