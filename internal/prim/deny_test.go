package prim

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Options.Deny keeps fs-find and index-grep out of denied paths: a search
// that starts above them neither names nor reads what they hold, and finds
// everything else.
func TestDenyLeavesPathsOutOfSearches(t *testing.T) {
	root := t.TempDir()
	for path, text := range map[string]string{
		".ssh/id_rsa":   "SECRET-KEY-LINE\n",
		".ssh/config":   "SECRET-CONFIG-LINE\n",
		"src/main.go":   "package main // SECRET-looking but fine\n",
		"notes/todo.md": "nothing\n",
	} {
		abs := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	denied := filepath.Join(root, ".ssh")
	// Without Deny the same searches do reach .ssh, so the test can fail.
	plain := DefaultOptions()
	plain.Folder, plain.Scratch = root, t.TempDir()
	pt, err := New(plain)
	var tools *Tools
	if err != nil {
		t.Fatal(err)
	}
	defer pt.Close()
	if r, _ := pt.Run(context.Background(), "index-grep", map[string]any{"pattern": "SECRET"}); !strings.Contains(r.Output, "SECRET-KEY") {
		t.Fatalf("the control search did not reach .ssh: %q", r.Output)
	}
	opts := DefaultOptions()
	opts.Folder, opts.Scratch = root, t.TempDir()
	opts.Deny = func(p string) bool { return p == denied || strings.HasPrefix(p, denied+"/") }
	tools, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tools.Close()
	ctx := context.Background()
	find, err := tools.Run(ctx, "fs-find", map[string]any{"pattern": "**"})
	if err != nil || find.IsError {
		t.Fatalf("fs-find: %v %+v", err, find)
	}
	if strings.Contains(find.Output, ".ssh") || !strings.Contains(find.Output, "src/main.go") {
		t.Errorf("fs-find output: %q", find.Output)
	}
	grep, err := tools.Run(ctx, "index-grep", map[string]any{"pattern": "SECRET"})
	if err != nil || grep.IsError {
		t.Fatalf("index-grep: %v %+v", err, grep)
	}
	if strings.Contains(grep.Output, "SECRET-KEY") || strings.Contains(grep.Output, "SECRET-CONFIG") || !strings.Contains(grep.Output, "main.go") {
		t.Errorf("index-grep output: %q", grep.Output)
	}
}

// git-diff leaves out the contents of the files Deny refuses, and names
// them; the rest of the diff is whole.
func TestGitDiffLeavesOutDeniedFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write(".env", "TOKEN=old\n")
	write("main.go", "package main\n")
	run("add", ".")
	run("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init")
	write(".env", "TOKEN=new-secret-value\n")
	write("main.go", "package main // changed\n")

	opts := DefaultOptions()
	opts.Folder, opts.Scratch = root, t.TempDir()
	opts.Deny = func(p string) bool { return filepath.Base(p) == ".env" }
	tools, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tools.Close()
	r, err := tools.Run(context.Background(), "git-diff", map[string]any{})
	if err != nil || r.IsError {
		t.Fatalf("git-diff: %v %+v", err, r)
	}
	if strings.Contains(r.Output, "new-secret-value") || !strings.Contains(r.Output, "// changed") || !strings.Contains(r.Output, "left out of the diff") || !strings.Contains(r.Output, ".env") {
		t.Fatalf("git-diff output: %q", r.Output)
	}
}
