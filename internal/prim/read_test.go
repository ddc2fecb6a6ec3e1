package prim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
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

// A FIFO (or any file that is not regular) is refused without waiting for a
// writer.
func TestFsReadDoesNotWaitOnAFifo(t *testing.T) {
	tools := newTools(t, Options{})
	p := filepath.Join(tools.opts.Folder, "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan Result, 1)
	go func() {
		res, _ := tools.Run(context.Background(), "fs-read", map[string]any{"path": "fifo"})
		done <- res
	}()
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(res.Output, "not a regular file") {
			t.Errorf("%q", res.Output)
		}
	case <-time.After(3 * time.Second):
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("fs-read of a FIFO waited for a writer")
	}
}

// A very long line is not held whole, shown or not: reading the first line
// of a file whose second is 64 MB allocates far less than 64 MB.
func TestFsReadDoesNotHoldAVeryLongLine(t *testing.T) {
	tools := newTools(t, Options{})
	p := filepath.Join(tools.opts.Folder, "big.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("first\n")
	chunk := []byte(strings.Repeat("x", 1<<20))
	for range 64 {
		f.Write(chunk)
	}
	f.WriteString("\nlast\n")
	f.Close()
	for _, args := range []map[string]any{{"path": "big.txt", "limit": 1}, {"path": "big.txt"}} {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		res := mustOK(t, tools, "fs-read", args)
		runtime.ReadMemStats(&m1)
		if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
			t.Errorf("%v: allocated %d MB", args, a>>20)
		}
		if _, ok := args["limit"]; ok {
			if res.Output != "     1\tfirst\n[lines 1-1 of 3; read on with offset 2]" {
				t.Errorf("%q", res.Output)
			}
		} else if !strings.Contains(res.Output, "… [line cut]\n     3\tlast\n") {
			t.Errorf("%q", res.Output[len(res.Output)-200:])
		}
	}
}

// ReadHead reads as fs-read does: the head and the size of a regular file;
// a file that is, once open, where Deny says no (a link the caller did not
// judge) is refused, and a FIFO is refused at once.
func TestReadHead(t *testing.T) {
	folder := t.TempDir()
	secret := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(secret, []byte("PRIVATE"), 0o600)
	os.WriteFile(filepath.Join(folder, "AGENTS.md"), []byte("use tabs, always"), 0o644)
	os.Symlink(secret, filepath.Join(folder, "LINK.md"))
	syscall.Mkfifo(filepath.Join(folder, "pipe"), 0o644)
	tools := newTools(t, Options{Folder: folder, Deny: func(p string) bool { return p == secret }})
	if b, size, err := tools.ReadHead("AGENTS.md", 8); err != nil || string(b) != "use tabs" || size != 16 {
		t.Errorf("AGENTS.md: %q %d %v", b, size, err)
	}
	if b, _, err := tools.ReadHead("LINK.md", 100); err == nil || !strings.Contains(err.Error(), "a denied path") || len(b) > 0 {
		t.Errorf("a link to a denied file: %q %v", b, err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := tools.ReadHead("pipe", 100); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadHead waited on a FIFO")
	}
}
