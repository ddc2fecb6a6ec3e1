package scheme

// Script tests: every testdata/*.scm file is run by TestScripts.
//
// Format of a test file:
//
//   - The file is split into chunks on lines consisting of exactly "---".
//     Each chunk runs in a fresh interpreter (New() plus the assertion
//     procedures below). Line numbers are those of the whole file.
//   - The top-level forms of a chunk are evaluated one after the other; an
//     error stops only the form that raised it, the next form still runs.
//   - `; ### "regexp"` at the end of a line says that an error is expected at
//     that line: the uncaught error (or read error) whose position — or, for
//     an error inside a called procedure, the innermost stack frame in this
//     file — is on that line must match the Go regexp. The regexp is matched
//     against the message without its position, e.g. `car: not a pair: 5`.
//     An error on a line without an annotation fails the test; so does an
//     annotation whose error never happened.
//   - Assertions report through t.Error with the file:line:col of the call and
//     do not stop the form:
//     (assert-equal want got)       fails unless (equal? want got)
//     (assert-true x)               fails if x is #f
//     (assert-false x)              fails unless x is #f
//     (assert-error "regexp" thunk) fails unless (thunk) raises an error whose
//     message matches regexp
//     The core `assert` form raises an error instead (use it to test assert).
//   - Output of display/write goes to a buffer, readable with (test-output),
//     which returns and clears it.
//
// Run one file: go test ./scheme -run 'TestScripts/core_tail'

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var expectRE = regexp.MustCompile(`;\s*###\s*"((?:[^"\\]|\\.)*)"`)

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.scm")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.scm files")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".scm")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range splitChunks(string(data)) {
				runChunk(t, filepath.Base(file), ch)
			}
		})
	}
}

type chunk struct {
	src    string // padded so that line numbers match the file
	expect map[int]*regexp.Regexp
	seen   map[int]bool
}

func splitChunks(src string) []*chunk {
	lines := strings.SplitAfter(src, "\n")
	var out []*chunk
	var cur []string
	start := 0
	flush := func(end int) {
		ch := &chunk{expect: map[int]*regexp.Regexp{}, seen: map[int]bool{}}
		ch.src = strings.Repeat("\n", start) + strings.Join(cur, "")
		for i, l := range cur {
			if m := expectRE.FindStringSubmatch(l); m != nil {
				ch.expect[start+i+1] = regexp.MustCompile(strings.ReplaceAll(m[1], `\"`, `"`))
			}
		}
		out = append(out, ch)
	}
	for i, l := range lines {
		if strings.TrimRight(l, " \t\r\n") == "---" {
			flush(i)
			cur = nil
			start = i + 1
			continue
		}
		cur = append(cur, l)
	}
	flush(len(lines))
	return out
}

// testPrims returns the assertion procedures for one chunk.
func testPrims(t *testing.T, out *bytes.Buffer) []*Primitive {
	report := func(in *Interp, format string, args ...any) {
		t.Helper()
		t.Errorf("%s: %s", in.CurrentPos(), fmt.Sprintf(format, args...))
	}
	return []*Primitive{
		NewPrimitive("assert-equal", 2, 2, "(assert-equal want got)", func(in *Interp, a []Value) (Value, error) {
			if !Equal(a[0], a[1]) {
				report(in, "assert-equal: got %s, want %s", WriteString(a[1]), WriteString(a[0]))
			}
			return Void, nil
		}),
		NewPrimitive("assert-true", 1, 1, "(assert-true x)", func(in *Interp, a []Value) (Value, error) {
			if a[0] == false {
				report(in, "assert-true: got #f")
			}
			return Void, nil
		}),
		NewPrimitive("assert-false", 1, 1, "(assert-false x)", func(in *Interp, a []Value) (Value, error) {
			if a[0] != false {
				report(in, "assert-false: got %s", WriteString(a[0]))
			}
			return Void, nil
		}),
		NewPrimitive("assert-error", 2, 2, "(assert-error regexp thunk)", func(in *Interp, a []Value) (Value, error) {
			pos := in.CurrentPos()
			s, ok := a[0].(*String)
			if !ok {
				return nil, WrongType("assert-error", "a string", a[0])
			}
			re, err := regexp.Compile(s.S)
			if err != nil {
				return nil, Errorf("assert-error: bad regexp: %v", err)
			}
			_, err = in.Apply(a[1], nil)
			var se *Error
			switch {
			case err == nil:
				t.Errorf("%s: assert-error: no error raised, want one matching %q", pos, s.S)
			case !errors.As(err, &se) || se.Value == nil:
				return nil, err // escapes and aborts pass through
			case !re.MatchString(se.Msg):
				t.Errorf("%s: assert-error: error %q does not match %q", pos, se.Msg, s.S)
			}
			return Void, nil
		}),
		NewPrimitive("test-output", 0, 0, "(test-output) returns and clears what was displayed", func(in *Interp, a []Value) (Value, error) {
			s := out.String()
			out.Reset()
			return NewString(s), nil
		}),
	}
}

func runChunk(t *testing.T, file string, ch *chunk) {
	t.Helper()
	in := New()
	var out bytes.Buffer
	in.Stdout = &out
	for _, p := range testPrims(t, &out) {
		in.Register(p)
	}
	in.SetStepLimit(200_000_000)
	forms, poss, err := readAll(ch.src, file)
	if err != nil {
		ch.gotError(t, file, err)
	}
	for i, f := range forms {
		if _, err := in.run(context.Background(), func(th *thread) Value { return in.evalTop(th, f, &poss[i]) }); err != nil {
			ch.gotError(t, file, err)
		}
	}
	for line, re := range ch.expect {
		if !ch.seen[line] {
			t.Errorf("%s:%d: expected error matching %q did not happen", file, line, re)
		}
	}
}

func (ch *chunk) gotError(t *testing.T, file string, err error) {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) {
		t.Errorf("%s: unexpected non-Scheme error: %v", file, err)
		return
	}
	line := 0
	if se.Pos.File == file {
		line = se.Pos.Line
	}
	if _, ok := ch.expect[line]; !ok {
		for _, f := range se.Stack {
			if f.Pos.File == file {
				if _, ok := ch.expect[f.Pos.Line]; ok {
					line = f.Pos.Line
					break
				}
			}
		}
	}
	re, ok := ch.expect[line]
	if !ok {
		t.Errorf("unexpected error: %s", se.Trace())
		return
	}
	ch.seen[line] = true
	if !re.MatchString(se.Msg) {
		t.Errorf("%s:%d: error %q does not match %q", file, line, se.Msg, re)
	}
}
