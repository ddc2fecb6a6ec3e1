package prim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const goSrc = `package main

import "fmt"

func main() {
	x := 1
	fmt.Println("hello", x)
	fmt.Println("hello", x)
}

func other() {
	if err != nil {
		return err
	}
}
`

func TestFsEditReplacesTheOneMatch(t *testing.T) {
	var bk backups
	tools := newTools(t, Options{Backup: bk.backup})
	abs := writeFile(t, tools.opts.Folder, "main.go", goSrc)
	res := mustOK(t, tools, "fs-edit", map[string]any{"path": "main.go", "old": "\tx := 1\n", "new": "\tx := 2\n\ty := 3\n"})
	if res.Output != "edited main.go at line 6: 2 lines replaced by 3" || !slices.Equal(res.Changed, []string{abs}) {
		t.Errorf("result %+v", res)
	}
	if got := readFile(t, abs); got != strings.Replace(goSrc, "\tx := 1\n", "\tx := 2\n\ty := 3\n", 1) {
		t.Errorf("file now %q", got)
	}
	if !slices.Equal(bk.onDisk, []string{goSrc}) {
		t.Errorf("Backup not called before the edit with the old content: %q", bk.calls)
	}
}

func TestFsEditSeveralMatchesGivesTheLines(t *testing.T) {
	tools := newTools(t, Options{})
	abs := writeFile(t, tools.opts.Folder, "main.go", goSrc)
	mustFail(t, tools, "fs-edit", map[string]any{"path": "main.go", "old": `fmt.Println("hello", x)`, "new": "x"},
		"old matches 2 times in main.go (at lines 7, 8)", "include more of the surrounding lines")
	if readFile(t, abs) != goSrc {
		t.Error("the file changed")
	}
}

func TestFsEditNoMatchShowsWhitespaceInsensitiveMatch(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "main.go", goSrc)
	res := mustFail(t, tools, "fs-edit", map[string]any{"path": "main.go", "old": "if err != nil {\n    return err\n}", "new": "x"},
		"does not match the text of main.go exactly", "matches lines 12-14 if whitespace is ignored")
	if !strings.Contains(res.Output, "    12\t\tif err != nil {\n    13\t\t\treturn err\n    14\t\t}") {
		t.Errorf("exact text not shown: %q", res.Output)
	}
}

func TestFsEditNoMatchShowsTheNearestLines(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "main.go", goSrc)
	res := mustFail(t, tools, "fs-edit", map[string]any{"path": "main.go", "old": "func mian() {\n\tx := 1", "new": "x"}, "The nearest lines:")
	if !strings.Contains(res.Output, "     5\tfunc main() {\n     6\t\tx := 1") {
		t.Errorf("nearest lines not shown: %q", res.Output)
	}
	res = mustFail(t, tools, "fs-edit", map[string]any{"path": "main.go", "old": "zzzz qqqq", "new": "x"}, "No line of the file is like", "fs-read")
	_ = res
}

func TestFsEditCRLFFile(t *testing.T) {
	tools := newTools(t, Options{})
	abs := writeFile(t, tools.opts.Folder, "w.txt", "one\r\ntwo\r\nthree\r\n")
	mustOK(t, tools, "fs-edit", map[string]any{"path": "w.txt", "old": "one\ntwo\n", "new": "1\n2\n"})
	if got := readFile(t, abs); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("file now %q", got)
	}
}

func TestFsEditRefusals(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "a.txt", "abc")
	mustFail(t, tools, "fs-edit", map[string]any{"path": "missing.txt", "old": "a", "new": "b"}, "no such file", "fs-write")
	mustFail(t, tools, "fs-edit", map[string]any{"path": "a.txt", "old": "", "new": "b"}, "old is empty")
	mustFail(t, tools, "fs-edit", map[string]any{"path": "a.txt", "old": "a", "new": "a"}, "the same")
	os.WriteFile(filepath.Join(tools.opts.Folder, "bin"), []byte("a\x00b"), 0o644)
	mustFail(t, tools, "fs-edit", map[string]any{"path": "bin", "old": "a", "new": "b"}, "binary")
	// Deleting text is an edit.
	res := mustOK(t, tools, "fs-edit", map[string]any{"path": "a.txt", "old": "b", "new": ""})
	if res.Output != "edited a.txt at line 1: 1 line replaced by 0" {
		t.Errorf("%q", res.Output)
	}
}

// An old that appears twice, overlapping ("aa" in "aaa"), matches twice:
// replacing the first would be a guess.
func TestFsEditOverlappingMatchesAreSeveral(t *testing.T) {
	tools := newTools(t, Options{})
	abs := writeFile(t, tools.opts.Folder, "a.txt", "x\naaa\n")
	mustFail(t, tools, "fs-edit", map[string]any{"path": "a.txt", "old": "aa", "new": "b"}, "matches 2 times", "lines 2, 2")
	if got := readFile(t, abs); got != "x\naaa\n" {
		t.Errorf("file changed to %q", got)
	}
}

// In a file whose lines end in CRLF, new's lines end in CRLF too, even when
// old (one line) matched as it was.
func TestFsEditCRLFFileKeepsItsLineEndsInNew(t *testing.T) {
	tools := newTools(t, Options{})
	abs := writeFile(t, tools.opts.Folder, "w.txt", "one\r\ntwo\r\n")
	mustOK(t, tools, "fs-edit", map[string]any{"path": "w.txt", "old": "one", "new": "uno\nein"})
	if got := readFile(t, abs); got != "uno\r\nein\r\ntwo\r\n" {
		t.Errorf("file now %q", got)
	}
	// A file with LF line ends is left as it is.
	abs = writeFile(t, tools.opts.Folder, "l.txt", "one\ntwo\n")
	mustOK(t, tools, "fs-edit", map[string]any{"path": "l.txt", "old": "one", "new": "uno\nein"})
	if got := readFile(t, abs); got != "uno\nein\ntwo\n" {
		t.Errorf("file now %q", got)
	}
}
