package scheme

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON bridge (string->json, json->string, json-read, json-write) maps:
//
//	JSON                Scheme
//	object              association list with SYMBOL keys, in document order:
//	                    {"a": 1, "b": [true]} <-> ((a . 1) (b . #(#t)));
//	                    {} <-> ()
//	array               vector: [1, 2] <-> #(1 2)
//	string              string
//	integer             exact integer (bignum when large)
//	other number        inexact real (1.5, 1e3 -> 1000.0)
//	true / false        #t / #f
//	null                the symbol null
//
// On output the mapping is widened: object keys may be symbols or strings
// (exact integers are written as decimal strings), a hash table is an object
// (in insertion order), a symbol other than null is a string, and a
// non-empty proper list that is not an association list (an element that is
// not a pair, or a key that is not a symbol or string) is an array. NaN and
// infinities, characters, procedures and improper lists are errors.

const jsonMaxDepth = 10000

func jsonEncode(proc string, v Value) (string, error) {
	var b strings.Builder
	if err := jsonWrite(proc, &b, v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func jsonWrite(proc string, b *strings.Builder, v Value, depth int) error {
	if depth > jsonMaxDepth {
		return Errorf("%s: nesting too deep", proc)
	}
	switch x := v.(type) {
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return Errorf("%s: JSON has no representation for %s", proc, floatString(x))
		}
		b.WriteString(floatString(x))
	case *String:
		jsonQuote(b, x.S)
	case Symbol:
		if x == "null" {
			b.WriteString("null")
		} else {
			jsonQuote(b, string(x))
		}
	case *Vector:
		b.WriteByte('[')
		for i, e := range x.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := jsonWrite(proc, b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case EmptyList:
		b.WriteString("{}")
	case *Pair:
		vals, ok := ListToSlice(x)
		if !ok {
			return Errorf("%s: improper list has no JSON representation: %s", proc, errString(x))
		}
		if isJSONAlist(vals) {
			b.WriteByte('{')
			for i, e := range vals {
				p := e.(*Pair)
				if i > 0 {
					b.WriteByte(',')
				}
				if err := jsonKey(proc, b, p.Car); err != nil {
					return err
				}
				b.WriteByte(':')
				if err := jsonWrite(proc, b, p.Cdr, depth+1); err != nil {
					return err
				}
			}
			b.WriteByte('}')
			return nil
		}
		b.WriteByte('[')
		for i, e := range vals {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := jsonWrite(proc, b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case *HashTable:
		b.WriteByte('{')
		i := 0
		var err error
		x.Range(func(k, val Value) bool {
			if i > 0 {
				b.WriteByte(',')
			}
			i++
			if err = jsonKey(proc, b, k); err != nil {
				return false
			}
			b.WriteByte(':')
			err = jsonWrite(proc, b, val, depth+1)
			return err == nil
		})
		if err != nil {
			return err
		}
		b.WriteByte('}')
	default:
		return Errorf("%s: no JSON representation for %s", proc, errString(v))
	}
	return nil
}

func isJSONAlist(vals []Value) bool {
	for _, e := range vals {
		p, ok := e.(*Pair)
		if !ok {
			return false
		}
		switch p.Car.(type) {
		case Symbol, *String:
		default:
			return false
		}
	}
	return true
}

func jsonKey(proc string, b *strings.Builder, k Value) error {
	switch x := k.(type) {
	case Symbol:
		jsonQuote(b, string(x))
	case *String:
		jsonQuote(b, x.S)
	case int:
		jsonQuote(b, strconv.Itoa(x))
	default:
		return Errorf("%s: JSON object key must be a symbol or string: %s", proc, errString(k))
	}
	return nil
}

func jsonQuote(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b.WriteByte(c)
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\ufffd`)
			} else if r == '\u2028' || r == '\u2029' {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
		i++
	}
	b.WriteByte('"')
}

// jsonParser is a recursive-descent JSON parser that keeps object key order.
type jsonParser struct {
	s   string
	off int
}

type jsonError struct {
	msg        string
	incomplete bool
}

func (p *jsonParser) fail(format string, args ...any) {
	panic(&jsonError{msg: fmt.Sprintf("at offset %d: ", p.off) + fmt.Sprintf(format, args...)})
}

func (p *jsonParser) failEOF() {
	panic(&jsonError{msg: fmt.Sprintf("at offset %d: unexpected end of input", p.off), incomplete: true})
}

func (p *jsonParser) skipSpace() {
	for p.off < len(p.s) {
		switch p.s[p.off] {
		case ' ', '\t', '\n', '\r':
			p.off++
		default:
			return
		}
	}
}

// parseJSON parses one JSON value at the start of s (after white space) and
// returns it with the number of bytes consumed. At end of input (only white
// space) it returns EOF.
func parseJSON(s string) (v Value, n int, jerr *jsonError) {
	p := &jsonParser{s: s}
	defer func() {
		if e := recover(); e != nil {
			je, ok := e.(*jsonError)
			if !ok {
				panic(e)
			}
			v, n, jerr = nil, p.off, je
		}
	}()
	p.skipSpace()
	if p.off >= len(p.s) {
		return EOF, p.off, nil
	}
	v = p.value(0)
	return v, p.off, nil
}

func (p *jsonParser) value(depth int) Value {
	if depth > jsonMaxDepth {
		p.fail("nesting too deep")
	}
	p.skipSpace()
	if p.off >= len(p.s) {
		p.failEOF()
	}
	switch c := p.s[p.off]; {
	case c == '{':
		p.off++
		var items []Value
		p.skipSpace()
		if p.off < len(p.s) && p.s[p.off] == '}' {
			p.off++
			return Nil
		}
		for {
			p.skipSpace()
			if p.off >= len(p.s) {
				p.failEOF()
			}
			if p.s[p.off] != '"' {
				p.fail("object key must be a string, found %q", p.s[p.off])
			}
			key := p.str()
			p.skipSpace()
			p.expect(':')
			val := p.value(depth + 1)
			items = append(items, &Pair{Car: Symbol(key), Cdr: val})
			p.skipSpace()
			if p.off >= len(p.s) {
				p.failEOF()
			}
			if p.s[p.off] == ',' {
				p.off++
				continue
			}
			p.expectEither('}')
			return List(items...)
		}
	case c == '[':
		p.off++
		items := []Value{}
		p.skipSpace()
		if p.off < len(p.s) && p.s[p.off] == ']' {
			p.off++
			return &Vector{Items: items}
		}
		for {
			items = append(items, p.value(depth+1))
			p.skipSpace()
			if p.off >= len(p.s) {
				p.failEOF()
			}
			if p.s[p.off] == ',' {
				p.off++
				continue
			}
			p.expectEither(']')
			return &Vector{Items: items}
		}
	case c == '"':
		return NewString(p.str())
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, lit := range []struct {
			word string
			v    Value
		}{{"true", true}, {"false", false}, {"null", Symbol("null")}} {
			if strings.HasPrefix(p.s[p.off:], lit.word) {
				p.off += len(lit.word)
				return lit.v
			}
			if strings.HasPrefix(lit.word, p.s[p.off:]) {
				p.off = len(p.s)
				p.failEOF()
			}
		}
		r, _ := utf8.DecodeRuneInString(p.s[p.off:])
		p.fail("unexpected character %q", r)
	}
	return nil
}

func (p *jsonParser) expect(c byte) {
	if p.off >= len(p.s) {
		p.failEOF()
	}
	if p.s[p.off] != c {
		r, _ := utf8.DecodeRuneInString(p.s[p.off:])
		p.fail("expected %q, found %q", c, r)
	}
	p.off++
}

// expectEither expects ',' (handled by the caller) or the closing c.
func (p *jsonParser) expectEither(c byte) {
	if p.s[p.off] != c {
		r, _ := utf8.DecodeRuneInString(p.s[p.off:])
		p.fail("expected ',' or %q, found %q", c, r)
	}
	p.off++
}

func (p *jsonParser) str() string {
	p.off++ // opening quote
	start := p.off
	// Fast path: no escapes.
	for p.off < len(p.s) {
		c := p.s[p.off]
		if c == '"' {
			s := p.s[start:p.off]
			p.off++
			return toValidUTF8(s)
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.off++
	}
	var b strings.Builder
	b.WriteString(p.s[start:p.off])
	for {
		if p.off >= len(p.s) {
			p.failEOF()
		}
		c := p.s[p.off]
		switch {
		case c == '"':
			p.off++
			return toValidUTF8(b.String())
		case c < 0x20:
			p.fail("control character in string")
		case c != '\\':
			b.WriteByte(c)
			p.off++
			continue
		}
		p.off++
		if p.off >= len(p.s) {
			p.failEOF()
		}
		e := p.s[p.off]
		p.off++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := p.hex4()
			if utf16.IsSurrogate(r) {
				if strings.HasPrefix(p.s[p.off:], `\u`) {
					p.off += 2
					r2 := p.hex4()
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
		default:
			p.fail("invalid escape \\%c in string", e)
		}
	}
}

func (p *jsonParser) hex4() rune {
	if p.off+4 > len(p.s) {
		p.failEOF()
	}
	n, err := strconv.ParseUint(p.s[p.off:p.off+4], 16, 32)
	if err != nil {
		p.fail("invalid \\u escape")
	}
	p.off += 4
	return rune(n)
}

func (p *jsonParser) number() Value {
	start := p.off
	digits := func() int {
		n := 0
		for p.off < len(p.s) && p.s[p.off] >= '0' && p.s[p.off] <= '9' {
			p.off++
			n++
		}
		return n
	}
	if p.s[p.off] == '-' {
		p.off++
	}
	intStart := p.off
	if digits() == 0 {
		if p.off >= len(p.s) {
			p.failEOF()
		}
		p.fail("invalid number")
	}
	if p.s[intStart] == '0' && p.off-intStart > 1 {
		p.fail("invalid number: leading zero")
	}
	isFloat := false
	if p.off < len(p.s) && p.s[p.off] == '.' {
		isFloat = true
		p.off++
		if digits() == 0 {
			if p.off >= len(p.s) {
				p.failEOF()
			}
			p.fail("invalid number: no digits after the decimal point")
		}
	}
	if p.off < len(p.s) && (p.s[p.off] == 'e' || p.s[p.off] == 'E') {
		isFloat = true
		p.off++
		if p.off < len(p.s) && (p.s[p.off] == '+' || p.s[p.off] == '-') {
			p.off++
		}
		if digits() == 0 {
			if p.off >= len(p.s) {
				p.failEOF()
			}
			p.fail("invalid number: no digits in the exponent")
		}
	}
	text := p.s[start:p.off]
	if !isFloat {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return int(n)
		}
		b, _ := new(big.Int).SetString(text, 10)
		return bigToValue(b)
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			p.fail("invalid number %s", text)
		}
	}
	return f
}

// readJSON reads one JSON value from an input port.
func (p *Port) readJSON() (Value, error) {
	for {
		rest := p.buf[p.off:]
		v, n, jerr := parseJSON(rest)
		streamMore := !p.srcEOF && p.src != nil
		if jerr != nil {
			if jerr.incomplete && streamMore && p.fill() {
				continue
			}
			return nil, &ErrorObject{Message: "json-read: invalid JSON " + jerr.msg, Kind: "read"}
		}
		if streamMore && (v == EOF || n >= len(rest)) {
			if p.fill() {
				continue
			}
		}
		p.off += n
		return v, nil
	}
}

// StringToJSON parses a JSON text into Scheme data (see the mapping above).
func StringToJSON(s string) (Value, error) {
	v, n, jerr := parseJSON(s)
	if jerr != nil {
		return nil, &ErrorObject{Message: "string->json: invalid JSON " + jerr.msg, Kind: "read"}
	}
	if v == EOF {
		return nil, &ErrorObject{Message: "string->json: empty input", Kind: "read"}
	}
	rest := strings.TrimLeft(s[n:], " \t\r\n")
	if rest != "" {
		return nil, &ErrorObject{Message: fmt.Sprintf("string->json: invalid JSON at offset %d: unexpected data after the value", len(s)-len(rest)), Kind: "read"}
	}
	return v, nil
}

// JSONString renders Scheme data as JSON text (see the mapping above).
func JSONString(v Value) (string, error) {
	s, err := jsonEncode("json->string", v)
	if err != nil {
		return "", err
	}
	return s, nil
}

func jsonPrimitives() []*Primitive {
	return []*Primitive{
		prim("string->json", 1, 1, "(string->json s) parses JSON: objects become alists with symbol keys, arrays vectors, null the symbol null", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string->json", args[0])
			if err != nil {
				return nil, err
			}
			return StringToJSON(s.S)
		}),
		prim("json->string", 1, 1, "(json->string obj) renders obj as JSON: alists and hash tables become objects, vectors arrays, 'null null", func(in *Interp, args []Value) (Value, error) {
			s, err := JSONString(args[0])
			if err != nil {
				return nil, err
			}
			return NewString(s), nil
		}),
	}
}
