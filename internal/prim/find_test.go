package prim

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func findTree(t *testing.T) *Tools {
	tools := newTools(t, Options{})
	makeTree(t, tools.opts.Folder,
		".gitignore=vendor/\n*.tmp\n",
		"main.go", "util.go", "README.md", "x.tmp",
		"cmd/tool/main.go", "cmd/tool/main_test.go",
		"vendor/lib/lib.go",
		"web/app.ts", "web/app.tsx", "web/testdata/",
	)
	return tools
}

func TestFsFind(t *testing.T) {
	tools := findTree(t)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "*.go"}, "cmd/tool/main.go\ncmd/tool/main_test.go\nmain.go\nutil.go"},
		{map[string]any{"pattern": "**/*.go"}, "cmd/tool/main.go\ncmd/tool/main_test.go\nmain.go\nutil.go"},
		{map[string]any{"pattern": "cmd/**/*_test.go"}, "cmd/tool/main_test.go"},
		{map[string]any{"pattern": "*.go", "path": "cmd"}, "cmd/tool/main.go\ncmd/tool/main_test.go"},
		{map[string]any{"pattern": "tool/*.go", "path": "cmd"}, "cmd/tool/main.go\ncmd/tool/main_test.go"},
		{map[string]any{"pattern": "*.{ts,tsx}"}, "web/app.ts\nweb/app.tsx"},
		{map[string]any{"pattern": "testdata"}, "web/testdata/"},
		{map[string]any{"pattern": "./main.go"}, "main.go"},
		{map[string]any{"pattern": filepath.Join(tools.opts.Folder, "web", "*.ts")}, "web/app.ts"},
	} {
		res := mustOK(t, tools, "fs-find", c.args)
		if res.Output != c.want {
			t.Errorf("fs-find %v:\n got %q\nwant %q", c.args, res.Output, c.want)
		}
	}
	// Ignored files are not found, even by name.
	res := mustOK(t, tools, "fs-find", map[string]any{"pattern": "lib.go"})
	if !strings.Contains(res.Output, "no path below . matches") || !strings.Contains(res.Output, ".gitignore") {
		t.Errorf("ignored file found: %q", res.Output)
	}
	if res := mustOK(t, tools, "fs-find", map[string]any{"pattern": "*.tmp"}); strings.Contains(res.Output, "x.tmp") {
		t.Errorf("ignored file found: %q", res.Output)
	}
}

func TestFsFindErrors(t *testing.T) {
	tools := findTree(t)
	mustFail(t, tools, "fs-find", map[string]any{"pattern": "[x"}, "bad pattern")
	mustFail(t, tools, "fs-find", map[string]any{"pattern": "*", "path": "nope"}, "no such file or directory")
	mustFail(t, tools, "fs-find", map[string]any{"pattern": "*", "path": "main.go"}, "not a directory")
	mustFail(t, tools, "fs-find", map[string]any{"pattern": ""}, "empty")
}

func TestFsFindCapsItsResults(t *testing.T) {
	tools := newTools(t, Options{})
	for i := 0; i < maxFindResults+5; i++ {
		writeFile(t, tools.opts.Folder, fmt.Sprintf("f%04d.txt", i), "")
	}
	res := mustOK(t, tools, "fs-find", map[string]any{"pattern": "*.txt"})
	if n := strings.Count(res.Output, ".txt\n"); n != maxFindResults {
		t.Errorf("%d results shown, want %d", n, maxFindResults)
	}
	if !strings.HasSuffix(res.Output, "[1000 of 1005 matches shown; narrow the pattern or give a path]") {
		t.Errorf("no cap note: %q", res.Output[len(res.Output)-100:])
	}
}
