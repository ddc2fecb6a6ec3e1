package prim

import (
	"fmt"
	"strings"
	"testing"
)

func grepTree(t *testing.T) *Tools {
	tools := newTools(t, Options{})
	makeTree(t, tools.opts.Folder,
		".gitignore=dist/\n",
		"main.go=package main\n\nfunc main() {\n\tHello()\n}\n",
		"hello.go=package main\n\n// Hello says hello.\nfunc Hello() { println(\"hello\") }\n",
		"notes.md=hello from the notes\n",
		"dist/bundle.js=function hello() {}\n",
		"img.png=\x89PNG\x00\x00hello",
		"sub/deep.go=package sub // hello\n",
	)
	return tools
}

func TestIndexGrep(t *testing.T) {
	tools := grepTree(t)
	res := mustOK(t, tools, "index-grep", map[string]any{"pattern": "hello"})
	want := "hello.go:3: // Hello says hello.\nhello.go:4: func Hello() { println(\"hello\") }\nnotes.md:1: hello from the notes\nsub/deep.go:1: package sub // hello\n[4 matching lines in 3 files]"
	if res.Output != want {
		t.Errorf("got %q\nwant %q", res.Output, want)
	}
	res = mustOK(t, tools, "index-grep", map[string]any{"pattern": "^func hello", "ignore_case": true})
	if res.Output != "hello.go:4: func Hello() { println(\"hello\") }\n[1 matching lines in 1 files]" {
		t.Errorf("ignore_case, ^ at line start: %q", res.Output)
	}
	res = mustOK(t, tools, "index-grep", map[string]any{"pattern": "hello", "glob": "*.go", "path": "sub"})
	if res.Output != "sub/deep.go:1: package sub // hello\n[1 matching lines in 1 files]" {
		t.Errorf("glob and path: %q", res.Output)
	}
	res = mustOK(t, tools, "index-grep", map[string]any{"pattern": "Hello", "path": "main.go"})
	if res.Output != "main.go:4: \tHello()\n[1 matching lines in 1 files]" {
		t.Errorf("one file: %q", res.Output)
	}
	res = mustOK(t, tools, "index-grep", map[string]any{"pattern": "nowhere"})
	if !strings.HasPrefix(res.Output, `[no match for "nowhere" in 5 files below .; 1 binary and 0 very large files skipped]`) {
		t.Errorf("no match: %q", res.Output)
	}
}

func TestIndexGrepErrors(t *testing.T) {
	tools := grepTree(t)
	mustFail(t, tools, "index-grep", map[string]any{"pattern": "func ("}, "bad regular expression", "escape")
	mustFail(t, tools, "index-grep", map[string]any{"pattern": "x", "glob": "[x"}, "bad glob")
	mustFail(t, tools, "index-grep", map[string]any{"pattern": "x", "path": "nope"}, "no such file")
	mustFail(t, tools, "index-grep", map[string]any{"pattern": ""}, "empty")
}

func TestIndexGrepCapsMatches(t *testing.T) {
	tools := newTools(t, Options{})
	var b strings.Builder
	for i := 0; i < maxGrepMatches+50; i++ {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	writeFile(t, tools.opts.Folder, "many.txt", b.String())
	res := mustOK(t, tools, "index-grep", map[string]any{"pattern": "match"})
	if n := strings.Count(res.Output, "\nmany.txt:"); n != maxGrepMatches-1 {
		t.Errorf("%d matches shown, want %d", n+1, maxGrepMatches)
	}
	if !strings.HasSuffix(res.Output, "there are more: narrow the pattern, path or glob]") {
		t.Errorf("no cap note: %q", res.Output[len(res.Output)-120:])
	}
}

func TestIndexGrepCapsBytes(t *testing.T) {
	tools := newTools(t, Options{})
	line := strings.Repeat("y", 1000)
	var b strings.Builder
	for i := 0; i < 300; i++ {
		b.WriteString("x" + line + "\n")
	}
	writeFile(t, tools.opts.Folder, "wide.txt", b.String())
	res := mustOK(t, tools, "index-grep", map[string]any{"pattern": "x"})
	if len(res.Output) > maxGrepBytes+200 {
		t.Errorf("output %d bytes, cap %d", len(res.Output), maxGrepBytes)
	}
	if !strings.Contains(res.Output, "yyy…\n") {
		t.Error("long lines not cut")
	}
	if !strings.Contains(res.Output, "there are more") {
		t.Errorf("no cap note: %q", res.Output[len(res.Output)-120:])
	}
}
