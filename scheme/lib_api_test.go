package scheme

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

func TestWriteAndDisplay(t *testing.T) {
	big1, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	cases := []struct {
		v              Value
		write, display string
	}{
		{1, "1", "1"},
		{big1, "123456789012345678901234567890", "123456789012345678901234567890"},
		{1.0, "1.0", "1.0"},
		{0.1, "0.1", "0.1"},
		{1e21, "1e+21", "1e+21"},
		{1.5e-7, "1.5e-07", "1.5e-07"},
		{math.Inf(1), "+inf.0", "+inf.0"},
		{math.Inf(-1), "-inf.0", "-inf.0"},
		{math.NaN(), "+nan.0", "+nan.0"},
		{true, "#t", "#t"},
		{false, "#f", "#f"},
		{Char('a'), `#\a`, "a"},
		{Char(' '), `#\space`, " "},
		{Char('\n'), `#\newline`, "\n"},
		{Char(0), `#\null`, "\x00"},
		{Char(0x7), `#\alarm`, "\a"},
		{Char(0x1), `#\x1`, "\x01"},
		{Char('λ'), `#\λ`, "λ"},
		{NewString("a\"b\\c\nd\te\x01"), `"a\"b\\c\nd\te\x1;"`, "a\"b\\c\nd\te\x01"},
		{NewString("héllo"), `"héllo"`, "héllo"},
		{Symbol("abc"), "abc", "abc"},
		{Symbol("a b"), "|a b|", "a b"},
		{Symbol("a|b"), `|a\|b|`, "a|b"},
		{Symbol("42"), "|42|", "42"},
		{Symbol("+"), "+", "+"},
		{Symbol("..."), "...", "..."},
		{Symbol(""), "||", ""},
		{Nil, "()", "()"},
		{List(1, NewString("x"), Char('c')), `(1 "x" #\c)`, "(1 x c)"},
		{Cons(1, 2), "(1 . 2)", "(1 . 2)"},
		{Cons(1, Cons(2, 3)), "(1 2 . 3)", "(1 2 . 3)"},
		{List(Symbol("quote"), Symbol("x")), "'x", "'x"},
		{List(Symbol("quote"), Symbol("x"), Symbol("y")), "(quote x y)", "(quote x y)"},
		{&Vector{Items: []Value{1, NewString("s")}}, `#(1 "s")`, "#(1 s)"},
		{&Vector{}, "#()", "#()"},
		{&Bytevector{B: []byte{1, 255}}, "#u8(1 255)", "#u8(1 255)"},
		{Void, "#<unspecified>", ""},
		{EOF, "#<eof>", "#<eof>"},
		{NewPrimitive("foo", 0, 0, "", nil), "#<procedure foo>", "#<procedure foo>"},
		{NewHashTable(), "#<hash-table 0>", "#<hash-table 0>"},
		{&MultipleValues{Vals: []Value{1, 2}}, "1 2", "1 2"},
		{NewError("boom", 1), `#<error "boom" 1>`, `#<error "boom" 1>`},
	}
	for _, c := range cases {
		if got := WriteString(c.v); got != c.write {
			t.Errorf("WriteString(%#v) = %q, want %q", c.v, got, c.write)
		}
		if got := DisplayString(c.v); got != c.display {
			t.Errorf("DisplayString(%#v) = %q, want %q", c.v, got, c.display)
		}
	}
}

// Written data reads back as equal data.
func TestWriteReadsBack(t *testing.T) {
	vals := []Value{
		NewString("tab\there \"quoted\" back\\slash \x01 é"),
		Symbol("with space"), Symbol("1+"), Symbol("#foo"),
		Char(' '), Char('\t'), Char('x'), Char(0x3bb),
		1.0, -0.25, 1e300, 12345678901234567890.0,
	}
	for _, v := range vals {
		s := WriteString(v)
		got, err := Read(s, "t")
		if err != nil || len(got) != 1 {
			t.Errorf("Read(%s) = %v, %v", s, got, err)
			continue
		}
		if WriteString(got[0]) != s {
			t.Errorf("round trip of %s gave %s", s, WriteString(got[0]))
		}
	}
}

func TestHashTableOrderAndDeletion(t *testing.T) {
	h := NewHashTable()
	for i := 0; i < 100; i++ {
		h.Set(NewString(itoa(i)), i)
	}
	for i := 0; i < 100; i += 2 {
		if !h.Delete(NewString(itoa(i))) {
			t.Fatalf("delete %d: not found", i)
		}
	}
	if h.Delete(NewString("0")) {
		t.Fatal("second delete reported the key present")
	}
	h.Set(NewString("0"), "again")
	h.Set(NewString("1"), "updated") // keeps its place
	keys := h.Keys()
	if h.Count() != 51 || len(keys) != 51 {
		t.Fatalf("count = %d, keys = %d, want 51", h.Count(), len(keys))
	}
	if DisplayString(keys[0]) != "1" || DisplayString(keys[49]) != "99" || DisplayString(keys[50]) != "0" {
		t.Errorf("order after deletions: first %s, [49] %s, last %s", WriteString(keys[0]), WriteString(keys[49]), WriteString(keys[50]))
	}
	if v, ok := h.Get(NewString("1")); !ok || v != "updated" {
		t.Errorf("Get(1) = %v, %v", v, ok)
	}
	// Deleting while walking neither skips live entries nor visits deleted ones.
	var seen []string
	h.Range(func(k, v Value) bool {
		seen = append(seen, DisplayString(k))
		if DisplayString(k) == "1" {
			h.Delete(NewString("3"))
		}
		return true
	})
	if len(seen) != 50 || seen[1] != "5" {
		t.Errorf("walk with deletion saw %d keys, second %q", len(seen), seen[1])
	}
	c := h.Copy()
	c.Set(Symbol("new"), 1)
	if _, ok := h.Get(Symbol("new")); ok {
		t.Error("copy shares storage with the original")
	}
	h.Clear()
	if h.Count() != 0 || len(h.Keys()) != 0 {
		t.Error("clear left entries")
	}
}

func TestHashTableKeyEquivalence(t *testing.T) {
	h := NewHashTable()
	h.Set(List(1, NewString("a")), "list")
	h.Set(1, "int")
	h.Set(1.0, "float")
	h.Set(math.NaN(), "nan")
	if v, _ := h.Get(List(1, NewString("a"))); v != "list" {
		t.Errorf("structural list key not found: %v", v)
	}
	if v, _ := h.Get(1); v != "int" {
		t.Errorf("1 -> %v", v)
	}
	if v, _ := h.Get(1.0); v != "float" {
		t.Errorf("1.0 -> %v", v)
	}
	if v, _ := h.Get(math.NaN()); v != "nan" {
		t.Errorf("nan -> %v", v)
	}
	// A key holding a procedure is compared by identity.
	p := NewPrimitive("p", 0, 0, "", nil)
	k1 := List(p)
	h.Set(k1, "proc")
	if _, ok := h.Get(List(p)); ok {
		t.Error("list holding a procedure matched a different list")
	}
	if v, _ := h.Get(k1); v != "proc" {
		t.Error("identity key not found")
	}
	// Circular structures do not hang.
	c := Cons(1, Nil)
	c.Cdr = c
	h.Set(c, "circular")
	if v, _ := h.Get(c); v != "circular" {
		t.Error("circular key not found")
	}
}

func TestUnpackArgs(t *testing.T) {
	var (
		s   string
		n   int
		i64 int64
		f   float64
		b   bool
		v   Value
		l   []Value
		ss  []string
		m   map[string]any
		sym Symbol
	)
	args := []Value{NewString("x"), 3, 4, 2, true, Symbol("q"), List(1, 2),
		List(NewString("a"), NewString("b")), List(Cons(Symbol("k"), 1)), Symbol("s")}
	err := UnpackArgs("foo", args, &s, &n, &i64, &f, &b, &v, &l, &ss, &m, &sym)
	if err != nil {
		t.Fatal(err)
	}
	if s != "x" || n != 3 || i64 != 4 || f != 2.0 || !b || v != Symbol("q") || len(l) != 2 ||
		!reflect.DeepEqual(ss, []string{"a", "b"}) || m["k"] != 1 || sym != "s" {
		t.Errorf("unpacked %v %v %v %v %v %v %v %v %v %v", s, n, i64, f, b, v, l, ss, m, sym)
	}

	// Optional arguments keep their defaults when absent.
	limit, name := 100, "dflt"
	if err := UnpackArgs("foo", []Value{NewString("p")}, &s, Optional, &limit, &name); err != nil {
		t.Fatal(err)
	}
	if s != "p" || limit != 100 || name != "dflt" {
		t.Errorf("optional: %q %d %q", s, limit, name)
	}
	if err := UnpackArgs("foo", []Value{NewString("p"), 7}, &s, Optional, &limit, &name); err != nil || limit != 7 {
		t.Errorf("optional given: %v %d", err, limit)
	}
	var rest []Value
	if err := UnpackArgs("foo", []Value{1, 2, 3}, &n, Rest, &rest); err != nil || n != 1 || len(rest) != 2 {
		t.Errorf("rest: %v %d %v", err, n, rest)
	}

	errCases := []struct {
		args []Value
		dst  []any
		want string
	}{
		{[]Value{5}, []any{&s}, `foo: argument 1: not a string: 5`},
		{[]Value{NewString("a"), NewString("b")}, []any{&s, &n}, `foo: argument 2: not an exact integer: "b"`},
		{[]Value{}, []any{&s}, `foo: too few arguments: want 1, got 0`},
		{[]Value{1, 2}, []any{&n}, `foo: too many arguments: want 1, got 2`},
		{[]Value{1, 2, 3}, []any{&n, Optional, &n}, `foo: too many arguments: want 1 to 2, got 3`},
		{[]Value{}, []any{&n, Rest, &rest}, `foo: too few arguments: want at least 1, got 0`},
		{[]Value{1}, []any{&b}, `foo: argument 1: not a boolean: 1`},
		{[]Value{1.5}, []any{&n}, `foo: argument 1: not an exact integer: 1.5`},
		{[]Value{NewString("x")}, []any{&f}, `foo: argument 1: not a number: "x"`},
		{[]Value{Cons(1, 2)}, []any{&l}, `foo: argument 1: not a list: (1 . 2)`},
		{[]Value{List(1)}, []any{&ss}, `foo: argument 1: not a list of strings: (1)`},
		{[]Value{List(1)}, []any{&m}, `foo: argument 1: not an association list with symbol or string keys: (1)`},
		{[]Value{1}, []any{new(complex128)}, `foo: UnpackArgs: unsupported destination type *complex128`},
		{[]Value{1}, []any{Rest, &n}, `foo: UnpackArgs: Rest must be followed by a *[]Value, not *int`},
	}
	for _, c := range errCases {
		err := UnpackArgs("foo", c.args, c.dst...)
		if err == nil || err.Error() != c.want {
			t.Errorf("UnpackArgs(%s) error = %v, want %q", WriteString(List(c.args...)), err, c.want)
		}
	}
}

func TestToGoFromGo(t *testing.T) {
	in := map[string]any{
		"b": []any{1, "two", 3.5, true, nil},
		"a": map[string]any{"nested": int64(7)},
		"n": json.Number("12"),
		"f": json.Number("1.5"),
	}
	v := FromGo(in)
	want := `((a (nested . 7)) (b 1 "two" 3.5 #t ()) (f . 1.5) (n . 12))`
	if got := WriteString(v); got != want {
		t.Errorf("FromGo = %s, want %s", got, want)
	}
	back := ToGo(v)
	wantBack := map[string]any{
		"a": map[string]any{"nested": 7},
		"b": []any{1, "two", 3.5, true, nil},
		"f": 1.5,
		"n": 12,
	}
	if !reflect.DeepEqual(back, wantBack) {
		t.Errorf("ToGo = %#v, want %#v", back, wantBack)
	}
	if got := WriteString(FromGo([]string{"x"})); got != `("x")` {
		t.Errorf("FromGo([]string) = %s", got)
	}
	if got := WriteString(FromGo(map[string]int{"z": 1, "y": 2})); got != `((y . 2) (z . 1))` {
		t.Errorf("FromGo(map[string]int) = %s", got)
	}
	if got := WriteString(FromGo(uint64(math.MaxUint64))); got != "18446744073709551615" {
		t.Errorf("FromGo(MaxUint64) = %s", got)
	}
	if FromGo(nil) != Nil || ToGo(Nil) != nil {
		t.Error("nil <-> '() broken")
	}
	h := NewHashTable()
	h.Set(NewString("k"), &Vector{Items: []Value{Symbol("null"), Char('c')}})
	if got := ToGo(h); !reflect.DeepEqual(got, map[string]any{"k": []any{nil, "c"}}) {
		t.Errorf("ToGo(hash table) = %#v", got)
	}
	if got := ToGo(Cons(1, 2)); !reflect.DeepEqual(got, []any{1, 2}) {
		t.Errorf("ToGo(improper) = %#v", got)
	}
	type opaque struct{ x int }
	o := &opaque{1}
	if FromGo(o) != o {
		t.Error("opaque Go value not passed through")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	src := `{"name":"nodwyn","n":3,"pi":3.25,"ok":true,"no":false,"nil":null,"list":[1,[2],{}],"s":"a\"b\\c\n\u0001é"}`
	v, err := StringToJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := JSONString(v)
	if err != nil {
		t.Fatal(err)
	}
	if out != src {
		t.Errorf("round trip:\n got %s\nwant %s", out, src)
	}
	var a, b any
	if err := json.Unmarshal([]byte(src), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("output is not valid JSON: %v", err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("round trip changed the data")
	}
}

func TestPorts(t *testing.T) {
	in := New()
	var buf bytes.Buffer
	in.Stdout = &buf
	display, _ := in.Lookup("display")
	newline, _ := in.Lookup("newline")
	write, _ := in.Lookup("write")
	if _, err := in.Apply(display, []Value{NewString("hi")}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Apply(newline, nil); err != nil {
		t.Fatal(err)
	}
	// The console port follows in.Stdout, set after New.
	if buf.String() != "hi\n" {
		t.Errorf("stdout got %q", buf.String())
	}
	p := NewOutputStringPort()
	if _, err := in.Apply(write, []Value{NewString("q"), p}); err != nil {
		t.Fatal(err)
	}
	if p.String() != `"q"` {
		t.Errorf("string port got %q", p.String())
	}
	closePort, _ := in.Lookup("close-port")
	if _, err := in.Apply(closePort, []Value{p}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Apply(write, []Value{1, p}); err == nil || !strings.Contains(err.Error(), "write: port is closed") {
		t.Errorf("write to closed port: %v", err)
	}

	// Reading from a stream port that delivers data in small pieces.
	r := NewInputPort(&slowReader{s: "(a\n b) \"str\" 42 {\"k\": [1, 2]}\nline two\n"}, "slow")
	read, _ := in.Lookup("read")
	readLine, _ := in.Lookup("read-line")
	jsonRead, _ := in.Lookup("json-read")
	var got []string
	for i := 0; i < 3; i++ {
		v, err := in.Apply(read, []Value{r})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, WriteString(v))
	}
	v, err := in.Apply(jsonRead, []Value{r})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, WriteString(v))
	for i := 0; i < 3; i++ {
		v, err := in.Apply(readLine, []Value{r})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, WriteString(v))
	}
	want := []string{`(a b)`, `"str"`, `42`, `((k . #(1 2)))`, `""`, `"line two"`, `#<eof>`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stream reads = %v, want %v", got, want)
	}
}

// slowReader returns at most two bytes per Read.
type slowReader struct{ s string }

func (r *slowReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, errEOFForTest
	}
	n := copy(p[:min(len(p), 2)], r.s)
	r.s = r.s[n:]
	return n, nil
}

var errEOFForTest = &eofError{}

type eofError struct{}

func (*eofError) Error() string { return "EOF" }

func TestStdlibTableIsShared(t *testing.T) {
	a, b := stdlibPrimitives(), stdlibPrimitives()
	if len(a) < 250 || &a[0] != &b[0] {
		t.Errorf("table has %d entries or is rebuilt per call", len(a))
	}
	for _, p := range a {
		if p.Doc == "" || p.Fn == nil {
			t.Errorf("%s has no doc or no function", p.Name)
		}
	}
}

func TestFilePorts(t *testing.T) {
	dir := t.TempDir()
	in := NewWith(Options{Files: OSFiles{}})
	in.Define("dir", NewString(dir))
	src := `
(define path (string-append dir "/out.txt"))
(call-with-output-file path (lambda (p) (write '(a "b") p) (newline p)))
(with-output-to-file (string-append dir "/two.txt") (lambda () (display "second")))
(list (file-exists? path)
      (call-with-input-file path read)
      (with-input-from-file (string-append dir "/two.txt") read-line)
      (let ((p (open-input-file path))) (read-line p))
      (begin (delete-file path) (file-exists? path))
      (guard (e ((file-error? e) 'file-error)) (open-input-file path)))`
	v, err := in.Eval(context.Background(), src, "files")
	if err != nil {
		t.Fatal(err)
	}
	want := `(#t (a "b") "second" "(a \"b\")" #f file-error)`
	if got := WriteString(v); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
