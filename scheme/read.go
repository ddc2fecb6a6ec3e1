package scheme

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxReadDepth bounds the nesting of data the reader accepts, so hostile input
// cannot exhaust the Go stack.
const maxReadDepth = 10000

// Read parses every datum in src. file names the source in positions. Pairs
// the reader makes carry the position of the datum they hold.
func Read(src, file string) ([]Value, error) {
	r := NewReader(src, file)
	var out []Value
	for {
		v, err := r.Next()
		if err != nil {
			return out, err
		}
		if v == EOF {
			return out, nil
		}
		out = append(out, v)
	}
}

// readAll reads every datum and the position where each starts.
func readAll(src, file string) ([]Value, []Pos, error) {
	r := NewReader(src, file)
	var out []Value
	var poss []Pos
	for {
		v, p, err := r.next2()
		if err != nil {
			return out, poss, err
		}
		if v == EOF {
			return out, poss, nil
		}
		out = append(out, v)
		poss = append(poss, p)
	}
}

// Reader reads data one at a time from a string.
type Reader struct {
	src       string
	off       int
	line, col int
	file      string
	depth     int
}

// NewReader returns a reader over src; file names the source in positions.
func NewReader(src, file string) *Reader {
	return &Reader{src: src, line: 1, col: 1, file: file}
}

// Offset returns how many bytes of the source have been consumed.
func (r *Reader) Offset() int { return r.off }

// Next returns the next datum, or EOF when the source is exhausted. A read
// error is an *Error with Kind "read"; when the source ended inside a datum,
// IsIncomplete reports true for it.
func (r *Reader) Next() (v Value, err error) {
	v, _, err = r.next2()
	return v, err
}

// next2 is Next that also returns where the datum starts.
func (r *Reader) next2() (v Value, p Pos, err error) {
	defer func() {
		if e := recover(); e != nil {
			re, ok := e.(*Error)
			if !ok {
				re = &Error{Pos: r.pos(), Msg: fmt.Sprintf("read: internal error: %v", e), Value: &ErrorObject{Message: fmt.Sprint("read: internal error: ", e), Kind: "read"}}
			}
			v, err = nil, re
		}
	}()
	r.skipAtmosphere()
	p = r.pos()
	if r.off >= len(r.src) {
		return EOF, p, nil
	}
	return r.datum(), p, nil
}

// IsIncomplete reports whether err is a read error caused by input that ended
// inside a datum (an unclosed list or string), as a REPL needs to know.
func IsIncomplete(err error) bool {
	e, ok := err.(*Error)
	return ok && e.incomplete
}

func (r *Reader) pos() Pos { return Pos{File: r.file, Line: r.line, Col: r.col} }

func (r *Reader) fail(p Pos, format string, args ...any) {
	obj := &ErrorObject{Message: "read: " + fmt.Sprintf(format, args...), Kind: "read"}
	panic(&Error{Pos: p, Msg: obj.Message, Value: obj})
}

func (r *Reader) failEOF(p Pos, what string) {
	obj := &ErrorObject{Message: "read: unexpected end of input in " + what, Kind: "read"}
	panic(&Error{Pos: p, Msg: obj.Message, Value: obj, incomplete: true})
}

func (r *Reader) peek() rune {
	if r.off >= len(r.src) {
		return -1
	}
	c := r.src[r.off]
	if c < utf8.RuneSelf {
		return rune(c)
	}
	ru, _ := utf8.DecodeRuneInString(r.src[r.off:])
	return ru
}

func (r *Reader) next() rune {
	if r.off >= len(r.src) {
		return -1
	}
	c := rune(r.src[r.off])
	n := 1
	if c >= utf8.RuneSelf {
		c, n = utf8.DecodeRuneInString(r.src[r.off:])
	}
	r.off += n
	if c == '\n' {
		r.line++
		r.col = 1
	} else {
		r.col++
	}
	return c
}

func (r *Reader) skipAtmosphere() {
	for r.off < len(r.src) {
		c := r.peek()
		switch {
		case c == ';':
			for r.off < len(r.src) && r.peek() != '\n' {
				r.next()
			}
		case c == '#' && r.off+1 < len(r.src) && r.src[r.off+1] == '|':
			p := r.pos()
			r.next()
			r.next()
			depth := 1
			for depth > 0 {
				if r.off >= len(r.src) {
					r.failEOF(p, "block comment")
				}
				c := r.next()
				if c == '|' && r.peek() == '#' {
					r.next()
					depth--
				} else if c == '#' && r.peek() == '|' {
					r.next()
					depth++
				}
			}
		case c == '#' && r.off+1 < len(r.src) && r.src[r.off+1] == ';':
			r.next()
			r.next()
			r.skipAtmosphere()
			if r.off >= len(r.src) {
				r.failEOF(r.pos(), "datum comment")
			}
			r.datum()
		case c == '#' && r.off+1 < len(r.src) && r.src[r.off+1] == '!':
			// #!fold-case, #!no-fold-case, or a shebang line: skip the line.
			for r.off < len(r.src) && r.peek() != '\n' {
				r.next()
			}
		case unicode.IsSpace(c):
			r.next()
		default:
			return
		}
	}
}

func isDelimiter(c rune) bool {
	return c == -1 || unicode.IsSpace(c) || c == '(' || c == ')' || c == '"' || c == ';' || c == '\''
}

func (r *Reader) datum() Value {
	r.depth++
	defer func() { r.depth-- }()
	p := r.pos()
	if r.depth > maxReadDepth {
		r.fail(p, "nesting deeper than %d", maxReadDepth)
	}
	c := r.peek()
	switch c {
	case -1:
		r.failEOF(p, "datum")
	case '(', '[':
		r.next()
		return r.list(p, closer(c))
	case ')', ']':
		r.next()
		r.fail(p, "unexpected '%c'", c)
	case '\'':
		r.next()
		return r.abbrev(p, "quote")
	case '`':
		r.next()
		return r.abbrev(p, "quasiquote")
	case ',':
		r.next()
		if r.peek() == '@' {
			r.next()
			return r.abbrev(p, "unquote-splicing")
		}
		return r.abbrev(p, "unquote")
	case '"':
		r.next()
		return NewString(r.stringLit(p, '"'))
	case '|':
		r.next()
		return Symbol(r.stringLit(p, '|'))
	case '#':
		return r.hash(p)
	}
	tok := r.token()
	return r.atom(p, tok)
}

func closer(c rune) rune {
	if c == '[' {
		return ']'
	}
	return ')'
}

func (r *Reader) abbrev(p Pos, name string) Value {
	r.skipAtmosphere()
	if r.off >= len(r.src) {
		r.failEOF(p, name)
	}
	d := r.datum()
	outer := posPair(Symbol(name), nil, p)
	outer.Cdr = &Pair{Car: d, Cdr: Nil, Pos: outer.Pos}
	return outer
}

// pairAt is a pair and the position it was read at, made in one allocation
// (the reader makes one for every element of every list it reads).
type pairAt struct {
	pair Pair
	pos  Pos
}

// posPair is a pair whose Pos is p, allocated with it.
func posPair(car, cdr Value, p Pos) *Pair {
	c := &pairAt{pair: Pair{Car: car, Cdr: cdr}, pos: p}
	c.pair.Pos = &c.pos
	return &c.pair
}

func (r *Reader) list(p Pos, close rune) Value {
	var head, tail *Pair
	for {
		r.skipAtmosphere()
		c := r.peek()
		if c == -1 {
			r.failEOF(p, "list")
		}
		if c == ')' || c == ']' {
			r.next()
			if c != close {
				r.fail(r.pos(), "list opened with '%c' closed with '%c'", map[rune]rune{')': '(', ']': '['}[close], c)
			}
			if head == nil {
				return Nil
			}
			return head
		}
		ep := r.pos()
		if c == '.' && r.off+1 < len(r.src) && isDelimiter(rune(r.src[r.off+1])) {
			r.next()
			if head == nil {
				r.fail(ep, "'.' at the start of a list")
			}
			r.skipAtmosphere()
			if r.peek() == -1 {
				r.failEOF(p, "list")
			}
			tail.Cdr = r.datum()
			r.skipAtmosphere()
			c := r.peek()
			if c == -1 {
				r.failEOF(p, "list")
			}
			if c != close {
				r.fail(r.pos(), "expected '%c' after the datum following '.'", close)
			}
			r.next()
			return head
		}
		d := r.datum()
		var cell *Pair
		if head == nil {
			cell = posPair(d, Nil, p)
			head = cell
		} else {
			cell = posPair(d, Nil, ep)
			tail.Cdr = cell
		}
		tail = cell
	}
}

func (r *Reader) stringLit(p Pos, delim rune) string {
	var b strings.Builder
	for {
		c := r.next()
		switch c {
		case -1:
			if delim == '"' {
				r.failEOF(p, "string")
			}
			r.failEOF(p, "|symbol|")
		case delim:
			return b.String()
		case '\\':
			e := r.next()
			switch e {
			case -1:
				r.failEOF(p, "string")
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'a':
				b.WriteByte(7)
			case 'b':
				b.WriteByte(8)
			case '0':
				b.WriteByte(0)
			case '\\', '"', '|':
				b.WriteRune(e)
			case 'x', 'X':
				var hex strings.Builder
				for {
					h := r.next()
					if h == -1 {
						r.failEOF(p, "string")
					}
					if h == ';' {
						break
					}
					hex.WriteRune(h)
					if hex.Len() > 8 {
						r.fail(p, "bad \\x escape in string")
					}
				}
				n, err := strconv.ParseUint(hex.String(), 16, 32)
				if err != nil || n > unicode.MaxRune {
					r.fail(p, "bad \\x escape %q in string", hex.String())
				}
				b.WriteRune(rune(n))
			default:
				if e == ' ' || e == '\t' || e == '\n' || e == '\r' {
					// \ <intraline whitespace> <newline> <intraline whitespace>
					for e == ' ' || e == '\t' || e == '\r' {
						e = r.next()
					}
					if e != '\n' {
						r.fail(p, "bad line continuation in string")
					}
					for c := r.peek(); c == ' ' || c == '\t'; c = r.peek() {
						r.next()
					}
					continue
				}
				r.fail(p, "unknown escape \\%c in string", e)
			}
		default:
			b.WriteRune(c)
		}
	}
}

func (r *Reader) token() string {
	start := r.off
	for !isDelimiter(r.peek()) {
		r.next()
	}
	return r.src[start:r.off]
}

var charNames = map[string]rune{
	"space": ' ', "newline": '\n', "tab": '\t', "nul": 0, "null": 0,
	"alarm": 7, "backspace": 8, "delete": 127, "escape": 27, "return": '\r',
	"linefeed": '\n', "altmode": 27,
}

func (r *Reader) hash(p Pos) Value {
	r.next() // '#'
	c := r.peek()
	switch c {
	case '(':
		r.next()
		items, _ := ListToSlice(r.list(p, ')'))
		return &Vector{Items: items}
	case '\\':
		r.next()
		first := r.next()
		if first == -1 {
			r.failEOF(p, "character")
		}
		rest := r.token()
		if rest == "" {
			return Char(first)
		}
		name := string(first) + rest
		if ch, ok := charNames[strings.ToLower(name)]; ok {
			return Char(ch)
		}
		if first == 'x' || first == 'X' {
			n, err := strconv.ParseUint(rest, 16, 32)
			if err == nil && n <= unicode.MaxRune {
				return Char(rune(n))
			}
		}
		r.fail(p, "unknown character #\\%s", name)
	case 'u', 'U':
		tok := r.token()
		if strings.EqualFold(tok, "u8") && r.peek() == '(' {
			r.next()
			items, _ := ListToSlice(r.list(p, ')'))
			bv := &Bytevector{B: make([]byte, len(items))}
			for i, it := range items {
				n, ok := it.(int)
				if !ok || n < 0 || n > 255 {
					r.fail(p, "bytevector element is not a byte: %s", errString(it))
				}
				bv.B[i] = byte(n)
			}
			return bv
		}
		r.fail(p, "unknown syntax #%s", tok)
	}
	tok := r.token()
	switch strings.ToLower(tok) {
	case "t", "true":
		return true
	case "f", "false":
		return false
	case "eof":
		return EOF
	}
	if v, ok := rdParseNumber("#" + tok); ok {
		return v
	}
	r.fail(p, "unknown syntax #%s", tok)
	return nil
}

// fixUTF8 replaces each invalid byte with U+FFFD, as string literals do.
func fixUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		b.WriteRune(c)
	}
	return b.String()
}

func (r *Reader) atom(p Pos, tok string) Value {
	tok = fixUTF8(tok)
	if tok == "" {
		c := r.next()
		r.fail(p, "unexpected '%c'", c)
	}
	if v, ok := rdParseNumber(tok); ok {
		return v
	}
	if strings.ContainsRune(tok, '|') {
		// a|b c|d style: bars inside a symbol quote their contents.
		var b strings.Builder
		in := false
		for _, c := range tok {
			if c == '|' {
				in = !in
				continue
			}
			b.WriteRune(c)
		}
		return Symbol(b.String())
	}
	return Symbol(tok)
}

// rdParseNumber parses a Scheme number token; the syntax is the one
// string->number accepts (stringToNumber).
func rdParseNumber(tok string) (Value, bool) { return stringToNumber(tok, 10) }
