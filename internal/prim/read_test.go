package prim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func lines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestFsReadNumbersLines(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "a.txt", "alpha\nbeta\r\n\tgamma")
	res := mustOK(t, tools, "fs-read", map[string]any{"path": "a.txt"})
	if want := "     1\talpha\n     2\tbeta\n     3\t\tgamma"; res.Output != want {
		t.Errorf("got %q, want %q", res.Output, want)
	}
	// An absolute path is read as well.
	abs := filepath.Join(tools.opts.Folder, "a.txt")
	if res := mustOK(t, tools, "fs-read", map[string]any{"path": abs}); !strings.HasPrefix(res.Output, "     1\talpha") {
		t.Errorf("absolute path: %q", res.Output)
	}
}

func TestFsReadOffsetAndLimit(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "f.txt", lines(1, 3000))
	res := mustOK(t, tools, "fs-read", map[string]any{"path": "f.txt"})
	if !strings.HasPrefix(res.Output, "     1\tline 1\n") || !strings.Contains(res.Output, "  2000\tline 2000\n") || strings.Contains(res.Output, "line 2001") {
		t.Errorf("default limit is not 2000 lines")
	}
	if !strings.HasSuffix(res.Output, "[lines 1-2000 of 3000; read on with offset 2001]") {
		t.Errorf("no note on how to read on: %q", res.Output[len(res.Output)-80:])
	}
	res = mustOK(t, tools, "fs-read", map[string]any{"path": "f.txt", "offset": 2999, "limit": 10})
	if want := "  2999\tline 2999\n  3000\tline 3000"; res.Output != want {
		t.Errorf("got %q, want %q", res.Output, want)
	}
	res = mustOK(t, tools, "fs-read", map[string]any{"path": "f.txt", "offset": 10, "limit": 2})
	if want := "    10\tline 10\n    11\tline 11\n[lines 10-11 of 3000; read on with offset 12]"; res.Output != want {
		t.Errorf("got %q, want %q", res.Output, want)
	}
	mustFail(t, tools, "fs-read", map[string]any{"path": "f.txt", "offset": 3001}, "has 3000 lines; offset 3001 is past its end")
	mustFail(t, tools, "fs-read", map[string]any{"path": "f.txt", "offset": 0}, "counting from 1")
	mustFail(t, tools, "fs-read", map[string]any{"path": "f.txt", "limit": -1}, "at least 1")
}

func TestFsReadRefusesBinaryAndMissingFiles(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "bin", "ELF\x00\x01\x02")
	mustFail(t, tools, "fs-read", map[string]any{"path": "bin"}, "bin is a binary file", "shell-exec")
	mustFail(t, tools, "fs-read", map[string]any{"path": "nope.txt"}, "no such file or directory: ", "nope.txt")
	writeFile(t, tools.opts.Folder, "utf8.txt", "héllo wörld\n")
	if res := mustOK(t, tools, "fs-read", map[string]any{"path": "utf8.txt"}); res.Output != "     1\théllo wörld" {
		t.Errorf("%q", res.Output)
	}
}

func TestFsReadEmptyFileAndLongLines(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "empty", "")
	if res := mustOK(t, tools, "fs-read", map[string]any{"path": "empty"}); res.Output != "[empty is empty]" {
		t.Errorf("%q", res.Output)
	}
	writeFile(t, tools.opts.Folder, "long", strings.Repeat("x", 100_000)+"\nshort\n")
	res := mustOK(t, tools, "fs-read", map[string]any{"path": "long"})
	if !strings.Contains(res.Output, "… [line cut]\n     2\tshort\n") || !strings.Contains(res.Output, "1 lines longer than 2000 characters were cut") || len(res.Output) > 2200 {
		t.Errorf("long line not cut: %d bytes", len(res.Output))
	}
}

func TestFsReadListsADirectory(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "sub/b.txt", "")
	writeFile(t, tools.opts.Folder, "a.txt", "")
	os.Symlink("a.txt", filepath.Join(tools.opts.Folder, "link"))
	res := mustOK(t, tools, "fs-read", map[string]any{"path": "."})
	if want := "[directory .: 3 entries]\na.txt\nlink -> a.txt\nsub/"; res.Output != want {
		t.Errorf("got %q, want %q", res.Output, want)
	}
}

func BenchmarkFsRead1000Lines(b *testing.B) {
	tools := newTools(b, Options{})
	writeFile(b, tools.opts.Folder, "f.go", strings.Repeat("\tfmt.Println(\"a line of ordinary Go code\", x, y)\n", 1000))
	args := map[string]any{"path": "f.go"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, err := tools.Run(ctx, "fs-read", args); err != nil || res.IsError {
			b.Fatal(err, res.Output)
		}
	}
}
