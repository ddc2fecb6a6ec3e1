package scheme

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// WriteString returns the external representation of v as write produces it:
// strings quoted with R7RS escapes, characters as #\a or #\space, symbols that
// would not read back as |bars|.
func WriteString(v Value) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case Symbol:
		return writeSymbol(string(x))
	case *String:
		return writeStringLit(x.S)
	case bool:
		if x {
			return "#t"
		}
		return "#f"
	}
	var b strings.Builder
	printValue(&b, v, true)
	return b.String()
}

// DisplayString returns the representation of v as display produces it:
// strings and characters appear as their contents.
func DisplayString(v Value) string {
	switch x := v.(type) {
	case *String:
		return x.S
	case int:
		return strconv.Itoa(x)
	case Symbol:
		return string(x)
	}
	var b strings.Builder
	printValue(&b, v, false)
	return b.String()
}

// printDepthLimit bounds nesting so a pathological structure cannot exhaust
// the Go stack; deeper parts print as "...".
const printDepthLimit = 10000

func printValue(b *strings.Builder, v Value, write bool) {
	printValueDepth(&printer{Builder: b}, v, write, 0)
}

// printer is the output of printValueDepth; with max > 0 printing stops
// soon after max bytes (the caller truncates).
type printer struct {
	*strings.Builder
	max int
}

func (b *printer) full() bool { return b.max > 0 && b.Len() > b.max }

// errMaxLen bounds a value shown in an error message.
const errMaxLen = 300

// errString is the written representation of v for an error message: cut
// to about errMaxLen bytes (ending in "..."), so that a huge or circular
// list makes a short message quickly.
func errString(v Value) string {
	var sb strings.Builder
	printValueDepth(&printer{Builder: &sb, max: errMaxLen}, v, true, 0)
	s := sb.String()
	if len(s) > errMaxLen {
		cut := errMaxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func printValueDepth(b *printer, v Value, write bool, depth int) {
	if depth > printDepthLimit {
		b.WriteString("...")
		return
	}
	if b.full() {
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("#<nil>")
	case int:
		var buf [24]byte
		b.Write(strconv.AppendInt(buf[:0], int64(x), 10))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		b.WriteString(floatString(x))
	case bool:
		if x {
			b.WriteString("#t")
		} else {
			b.WriteString("#f")
		}
	case Char:
		if write {
			b.WriteString(writeChar(x))
		} else {
			b.WriteRune(rune(x))
		}
	case *String:
		if write {
			writeStringLitTo(b.Builder, x.S)
		} else {
			b.WriteString(x.S)
		}
	case Symbol:
		if write {
			b.WriteString(writeSymbol(string(x)))
		} else {
			b.WriteString(string(x))
		}
	case EmptyList:
		b.WriteString("()")
	case *Pair:
		printList(b, x, write, depth)
	case *Vector:
		b.WriteString("#(")
		for i, e := range x.Items {
			if b.full() {
				break
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			printValueDepth(b, e, write, depth+1)
		}
		b.WriteByte(')')
	case *Bytevector:
		b.WriteString("#u8(")
		for i, e := range x.B {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(int(e)))
		}
		b.WriteByte(')')
	case Unspecified:
		// The unspecified value prints as nothing at all in display, which
		// keeps (display (if #f #f)) quiet; write shows it.
		if write {
			b.WriteString("#<unspecified>")
		}
	case EOFObject:
		b.WriteString("#<eof>")
	case *Primitive:
		b.WriteString("#<procedure ")
		b.WriteString(x.Name)
		b.WriteByte('>')
	case *HashTable:
		fmt.Fprintf(b, "#<hash-table %d>", x.Count())
	case *Port:
		b.WriteString("#<")
		b.WriteString(x.kind())
		b.WriteByte('>')
	case *Parameter:
		b.WriteString("#<procedure parameter>")
	case *MultipleValues:
		for i, e := range x.Vals {
			if i > 0 {
				b.WriteByte(' ')
			}
			printValueDepth(b, e, write, depth+1)
		}
	case *ErrorObject:
		b.WriteString("#<error ")
		b.WriteString(writeStringLit(x.Message))
		for _, irr := range x.Irritants {
			b.WriteByte(' ')
			printValueDepth(b, irr, true, depth+1)
		}
		b.WriteByte('>')
	case interface{ SchemeString(write bool) string }:
		// Core types (closures, records, continuations, promises) print
		// themselves.
		b.WriteString(x.SchemeString(write))
	default:
		if IsProcedure(v) {
			b.WriteString("#<procedure>")
			return
		}
		fmt.Fprintf(b, "#<%T>", v)
	}
}

var quoteAbbrev = map[Symbol]string{
	"quote":            "'",
	"quasiquote":       "`",
	"unquote":          ",",
	"unquote-splicing": ",@",
}

func printList(b *printer, p *Pair, write bool, depth int) {
	if s, ok := p.Car.(Symbol); ok {
		if abbr, ok := quoteAbbrev[s]; ok {
			if rest, ok := p.Cdr.(*Pair); ok {
				if _, ok := rest.Cdr.(EmptyList); ok {
					b.WriteString(abbr)
					printValueDepth(b, rest.Car, write, depth+1)
					return
				}
			}
		}
	}
	b.WriteByte('(')
	var v Value = p
	first := true
	for n := 0; ; n++ {
		switch x := v.(type) {
		case *Pair:
			if !first {
				b.WriteByte(' ')
			}
			first = false
			if n > 1<<24 || b.full() {
				b.WriteString("...)")
				return
			}
			printValueDepth(b, x.Car, write, depth+1)
			v = x.Cdr
			continue
		case EmptyList:
		default:
			b.WriteString(" . ")
			printValueDepth(b, x, write, depth+1)
		}
		break
	}
	b.WriteByte(')')
}

// floatString prints a float so it reads back as inexact: 1.0, 0.5, 1e+21,
// +inf.0, -inf.0, +nan.0.
func floatString(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+inf.0"
	case math.IsInf(f, -1):
		return "-inf.0"
	case math.IsNaN(f):
		return "+nan.0"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".en") {
		s += ".0"
	}
	return s
}

var writeCharNames = map[rune]string{
	0:      "null",
	7:      "alarm",
	8:      "backspace",
	9:      "tab",
	10:     "newline",
	13:     "return",
	27:     "escape",
	32:     "space",
	127:    "delete",
	0xFEFF: "xfeff",
}

func writeChar(c Char) string {
	r := rune(c)
	if name, ok := writeCharNames[r]; ok {
		return `#\` + name
	}
	if r < 32 || !unicode.IsPrint(r) {
		return fmt.Sprintf(`#\x%x`, r)
	}
	return `#\` + string(r)
}

// writeStringLit returns s as a string literal with R7RS escapes.
func writeStringLit(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	writeStringLitTo(&b, s)
	return b.String()
}

func writeStringLitTo(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case 7:
			b.WriteString(`\a`)
		case 8:
			b.WriteString(`\b`)
		case 0:
			b.WriteString(`\x0;`)
		default:
			if r == utf8.RuneError && size == 1 || r < 0x20 || r == 0x7f || !unicode.IsPrint(r) && r > 0x7f && !unicode.IsSpace(r) {
				fmt.Fprintf(b, `\x%x;`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// writeSymbol returns the written form of a symbol: its name, or |name| with
// escapes when the name would not read back as the same symbol.
func writeSymbol(s string) string {
	if symbolNeedsBars(s) {
		var b strings.Builder
		b.WriteByte('|')
		for _, r := range s {
			switch r {
			case '|':
				b.WriteString(`\|`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if r < 0x20 || r == 0x7f {
					fmt.Fprintf(&b, `\x%x;`, r)
				} else {
					b.WriteRune(r)
				}
			}
		}
		b.WriteByte('|')
		return b.String()
	}
	return s
}

func symbolNeedsBars(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f {
			return true
		}
		switch c {
		case '(', ')', '[', ']', '{', '}', '"', ';', '\'', '`', ',', '|':
			return true
		}
	}
	if s == "." {
		return true
	}
	if s[0] == '#' {
		return true
	}
	// Something that would read as a number must be barred.
	if _, ok := stringToNumber(s, 10); ok {
		return true
	}
	return false
}
