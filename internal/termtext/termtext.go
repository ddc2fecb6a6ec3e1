// Package termtext escapes text another party chose — a file's name, a
// session's task, a path the model picked, what a model or a tool said,
// what Scheme displays — before a terminal sees it. A terminal acts on some
// characters instead of showing them: ESC and CSI move the cursor and erase
// lines (a trust listing could hide the line a person was about to approve),
// OSC sets the window's title, CR overwrites a line, and the bidi controls
// reorder what is read. Here each of them is written as a visible escape,
// as strconv.Quote writes it (\x1b, \r, \u009b, \u202e), and so is a byte
// that is not UTF-8 (\xff); everything else, ordinary UTF-8 included, is
// left as it is. A backslash is not doubled: the text stays what a person
// reads, not a Go literal.
//
// It is a leaf (the standard library only), so every package that prints
// for a person — cli, and store for 'nodwyn log' — escapes the same way.
// Machine output (--json) does not go through it: JSON escapes controls
// itself.
package termtext

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Line is s escaped for a field shown on one line (a file name, a task, a
// path, a column of a table): every control character is escaped, LF and
// TAB included, so a name cannot start a line of its own or shift a
// table's columns.
func Line(s string) string { return escape(s, false) }

// Text is s escaped for text shown as it is laid out (the model's answer,
// a diff, a Scheme program's output): LF and TAB are kept, every other
// control character is escaped (CR too: it would overwrite the line).
func Text(s string) string { return escape(s, true) }

// unsafe reports whether a terminal would act on r instead of showing it:
// C0 controls, DEL, C1 controls (the 8-bit CSI U+009B and OSC U+009D among
// them), and the bidi controls that reorder the text around them —
// embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069) and
// the marks (U+200E, U+200F, U+061C).
func unsafe(r rune, layout bool) bool {
	switch {
	case r < 0x20:
		return !(layout && (r == '\n' || r == '\t'))
	case r == 0x7f, 0x80 <= r && r <= 0x9f:
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069,
		r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

func escape(s string, layout bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f { // the common case: printable ASCII
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafe(r, layout) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s // nothing to escape: no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			hexEscape(&b, 'x', uint32(s[i]), 2)
		case unsafe(r, layout):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// writeEscape writes r as strconv.QuoteRune writes it, without the quotes.
func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if r < 0x80 {
			hexEscape(b, 'x', uint32(r), 2)
		} else {
			hexEscape(b, 'u', uint32(r), 4)
		}
	}
}

func hexEscape(b *strings.Builder, kind byte, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteByte('\\')
	b.WriteByte(kind)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hex[v>>uint(shift)&0xf])
	}
}

// Writer escapes, as Text does, what is written through it to w: for a
// stream another party writes to a terminal (what Scheme code displays).
// Each Write is escaped on its own; a character split across two writes
// shows as the escapes of its bytes (the Scheme interpreter writes whole
// strings).
func Writer(w io.Writer) io.Writer { return &writer{w} }

type writer struct{ w io.Writer }

func (t *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
