package scheme

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// addSeeds adds every chunk of testdata/*.scm to the corpus.
func addSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.scm")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, ch := range splitChunks(string(data)) {
			f.Add(strings.TrimLeft(ch.src, "\n"))
		}
	}
	f.Add(`#\x41 "a\x42;" |a b| #u8(1 2) #(1 #;2 3) #| nested #| |# |# 1e400 #e1.5 #x-ff 1/3 '(a . b) ,@x`)
}

// FuzzRead: the reader never panics, and what it reads prints and reads
// back to an equal datum.
func FuzzRead(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		vals, err := Read(src, "fuzz")
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.Pos.IsZero() || strings.Contains(se.Msg, "internal error") {
				t.Fatalf("read error without a position: %v", err)
			}
			return
		}
		for _, v := range vals {
			s := WriteString(v)
			back, err := Read(s, "again")
			if err != nil || len(back) != 1 {
				t.Fatalf("%q printed as %q which reads back as %v, %v", src, s, back, err)
			}
			if !Equal(v, back[0]) && !strings.Contains(s, "nan") {
				t.Fatalf("%q printed as %q which reads back as %s", src, s, WriteString(back[0]))
			}
		}
	})
}

// FuzzEval: evaluating arbitrary data under a step budget neither panics
// the host nor hangs, and no Go panic inside the interpreter escapes as an
// internal error.
func FuzzEval(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Contains(src, "exit") || strings.Contains(src, "load") || strings.Contains(src, "make-") {
			return // exits, file access and huge allocations are not interesting here
		}
		in := New()
		in.Stdout = &strings.Builder{}
		in.SetStepLimit(200000)
		in.SetMaxDepth(2000)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := in.Eval(ctx, src, "fuzz")
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("%q: %v", src, err)
		}
	})
}
