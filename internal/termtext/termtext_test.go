package termtext

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// What a terminal would act on is shown escaped; a single-line field shows
// its newline and tab too.
func TestLineEscapesWhatATerminalActsOn(t *testing.T) {
	for in, want := range map[string]string{
		"name\x1b[3A\x1b[J":           `name\x1b[3A\x1b[J`,        // CSI: cursor up, erase below
		"\x1b]0;title\x07":            `\x1b]0;title\a`,           // OSC: the window's title
		"csi \u009b2J osc \u009d0":    `csi \u009b2J osc \u009d0`, // 8-bit CSI and OSC (C1)
		"a\nb\tc\r\x00\x7f\v\f\b":     `a\nb\tc\r\x00\x7f\v\f\b`,
		"bad \xff \x9b utf-8":         `bad \xff \x9b utf-8`, // not UTF-8: the bytes
		"cut \xe6\x97":                `cut \xe6\x97`,
		"abc\u202edcba.scm":           `abc\u202edcba.scm`, // right-to-left override
		"\u202a\u202b\u202c\u202d":    `\u202a\u202b\u202c\u202d`,
		"\u2066x\u2067y\u2068z\u2069": `\u2066x\u2067y\u2068z\u2069`,
		"marks \u200e\u200f\u061c":    `marks \u200e\u200f\u061c`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

// Text keeps the layout (LF and TAB) and escapes the rest as Line does.
func TestTextKeepsNewlinesAndTabs(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb\tc":                  "a\nb\tc",
		"over\rwrite":              `over\rwrite`,
		"line\n\x1b[1A\x1b[2Kgone": "line\n" + `\x1b[1A\x1b[2Kgone`,
		"\u009b31m\u202e":          `\u009b31m\u202e`,
		"bad \xff":                 `bad \xff`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// Ordinary text passes unchanged, non-ASCII letters, emoji (with their
// joiners), a valid U+FFFD and backslashes included.
func TestOrdinaryTextIsUnchanged(t *testing.T) {
	for _, s := range []string{
		"", "plain", "café 日本", "naïve Ωmega ĳ", "שלום עולם", "مرحبا",
		"👩‍💻 🏳️‍🌈", "replacement \ufffd stays", `C:\dir\x1b is text`,
		"/home/me/src/project/.nodwyn/init.scm", "zero\u200bwidth space",
	} {
		if got := Line(s); got != s {
			t.Errorf("Line(%q) = %q, want it unchanged", s, got)
		}
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
	}
}

// Whatever goes in, what comes out is valid UTF-8 with no character a
// terminal acts on (Line: not even a newline), and escaping it again
// changes nothing.
func TestNothingUnsafeComesOut(t *testing.T) {
	var all []byte
	for b := 0; b < 256; b++ {
		all = append(all, byte(b))
	}
	for r := rune(0x80); r < 0x3000; r++ {
		all = utf8.AppendRune(all, r)
	}
	in := string(all)
	for name, f := range map[string]func(string) string{"Line": Line, "Text": Text} {
		out := f(in)
		if !utf8.ValidString(out) {
			t.Errorf("%s: not valid UTF-8", name)
		}
		for _, r := range out {
			if unsafe(r, name == "Text") {
				t.Errorf("%s lets %U through", name, r)
			}
		}
		if again := f(out); again != out {
			t.Errorf("%s is not idempotent", name)
		}
	}
	if strings.ContainsAny(Line(in), "\n\t") {
		t.Error("Line lets a newline or a tab through")
	}
}

// The writer escapes each write as Text does and reports what it was
// given as written.
func TestWriterEscapes(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	for _, s := range []string{"hello\n", "\x1b[2J\x1b]0;x\x07", "\u009b\tok\n"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if want := "hello\n" + `\x1b[2J\x1b]0;x\a\u009b` + "\tok\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
	broken := errors.New("closed")
	if n, err := Writer(failing{broken}).Write([]byte("x")); n != 0 || err != broken {
		t.Errorf("a failed write: %d, %v", n, err)
	}
}

type failing struct{ err error }

func (f failing) Write([]byte) (int, error) { return 0, f.err }
