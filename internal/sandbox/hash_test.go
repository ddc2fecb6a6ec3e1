package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hashTree is a small tree with a file in a directory, an executable, a
// link, an empty file and an empty directory.
func hashTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "a.txt", "alpha\n", 0o644)
	write(t, dir, "src/main.go", "package main\n", 0o644)
	write(t, dir, "run.sh", "#!/bin/sh\n", 0o755)
	write(t, dir, "empty", "", 0o644)
	link(t, "a.txt", filepath.Join(dir, "to-a"))
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustHash(t *testing.T, dir string) string {
	t.Helper()
	h, err := HashDir(dir)
	if err != nil {
		t.Fatalf("HashDir(%s): %v", dir, err)
	}
	if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Fatalf("HashDir(%s) = %q: want sha256:<64 hex>", dir, h)
	}
	return h
}

func sum(s string) string {
	b := sha256.Sum256([]byte(s))
	return hex.EncodeToString(b[:])
}

// The framing, entry by entry, as docs/sandbox.md gives it.
func TestHashDirFraming(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a", "hi\n", 0o640)
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "d"), 0o751); err != nil {
		t.Fatal(err)
	}
	link(t, "../a", filepath.Join(dir, "d", "l"))
	write(t, dir, "a.b", "", 0o600)
	if err := syscall.Mkfifo(filepath.Join(dir, "p"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := "f 0640 1:a 3:" + sum("hi\n") + "\n" +
		"f 0600 3:a.b 0:" + sum("") + "\n" +
		"d 0751 1:d 0:" + sum("") + "\n" +
		"l 0000 3:d/l 4:" + sum("../a") + "\n" +
		"o 0000 1:p 0:" + sum("") + "\n"
	if got, want := mustHash(t, dir), "sha256:"+sum(lines); got != want {
		t.Errorf("HashDir = %s, want %s, the sha256 of\n%s", got, want, lines)
	}
}

// Two copies of the same content, made at other times in other places,
// hash the same, and as the folder does.
func TestHashDirIsTheSameForTheSameContent(t *testing.T) {
	dir := hashTree(t)
	want := mustHash(t, dir)
	for i := range 2 {
		w := copyOf(t, dir, nil)
		old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(filepath.Join(w.Path, "a.txt"), old, old); err != nil {
			t.Fatal(err)
		}
		if got := mustHash(t, w.Path); got != want {
			t.Errorf("copy %d: %s, the folder %s", i, got, want)
		}
	}
	if again := mustHash(t, dir); again != want {
		t.Errorf("hashed twice: %s then %s", want, again)
	}
}

// Each change gives a hash of its own.
func TestHashDirChangesWithEachChange(t *testing.T) {
	changes := []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"one byte", func(t *testing.T, dir string) { write(t, dir, "a.txt", "alphA\n", 0o644) }},
		{"a byte added", func(t *testing.T, dir string) { write(t, dir, "empty", "\n", 0o644) }},
		{"chmod +x", func(t *testing.T, dir string) { mustDo(t, os.Chmod(filepath.Join(dir, "a.txt"), 0o755)) }},
		{"chmod g+w", func(t *testing.T, dir string) { mustDo(t, os.Chmod(filepath.Join(dir, "a.txt"), 0o664)) }},
		{"a directory's mode", func(t *testing.T, dir string) { mustDo(t, os.Chmod(filepath.Join(dir, "src"), 0o700)) }},
		{"rename", func(t *testing.T, dir string) {
			mustDo(t, os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")))
			mustDo(t, os.Remove(filepath.Join(dir, "to-a")))
			link(t, "a.txt", filepath.Join(dir, "to-a"))
		}},
		{"moved to another directory", func(t *testing.T, dir string) {
			mustDo(t, os.Rename(filepath.Join(dir, "src/main.go"), filepath.Join(dir, "out/main.go")))
		}},
		{"an empty file added", func(t *testing.T, dir string) { write(t, dir, "new", "", 0o644) }},
		{"an empty directory added", func(t *testing.T, dir string) { mustDo(t, os.Mkdir(filepath.Join(dir, "new"), 0o755)) }},
		{"an empty directory removed", func(t *testing.T, dir string) { mustDo(t, os.Remove(filepath.Join(dir, "out"))) }},
		{"a link's target", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "to-a")))
			link(t, "./a.txt", filepath.Join(dir, "to-a"))
		}},
		{"a link made a file with its target as content", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "to-a")))
			write(t, dir, "to-a", "a.txt", 0o777)
		}},
		{"a file removed", func(t *testing.T, dir string) { mustDo(t, os.Remove(filepath.Join(dir, "empty"))) }},
	}
	base := mustHash(t, hashTree(t))
	seen := map[string]string{base: "no change"}
	for _, c := range changes {
		dir := hashTree(t)
		c.change(t, dir)
		h := mustHash(t, dir)
		if prev, dup := seen[h]; dup {
			t.Errorf("%s: the hash of %s", c.name, prev)
		}
		seen[h] = c.name
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Hashing follows no link, neither to a directory nor to a file.
func TestHashDirFollowsNoLink(t *testing.T) {
	dir := hashTree(t)
	outside := t.TempDir()
	write(t, outside, "f", "one\n", 0o644)
	link(t, outside, filepath.Join(dir, "dirlink"))
	link(t, filepath.Join(outside, "f"), filepath.Join(dir, "filelink"))
	before := mustHash(t, dir)
	write(t, outside, "f", "two\n", 0o644)
	write(t, outside, "g", "new\n", 0o644)
	if after := mustHash(t, dir); after != before {
		t.Errorf("a change out of the directory, through links, changed its hash: %s → %s", before, after)
	}
	if _, err := HashDir(filepath.Join(dir, "a.txt")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("HashDir of a file: %v", err)
	}
}

// The Python script in docs/sandbox.md, as it is there, computes what
// HashDir does, for names with spaces, newlines, colons, non-UTF-8 bytes
// and an order where bytes and characters differ.
func TestHashDirMatchesTheDocsPythonScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the docs' script is not checked")
	}
	doc, err := os.ReadFile("../../docs/sandbox.md")
	if err != nil {
		t.Fatal(err)
	}
	_, script, ok := strings.Cut(string(doc), "```python\n")
	if ok {
		script, _, ok = strings.Cut(script, "```")
	}
	if !ok {
		t.Fatal("docs/sandbox.md has no ```python block")
	}
	scriptFile := filepath.Join(t.TempDir(), "workdir_hash.py")
	mustDo(t, os.WriteFile(scriptFile, []byte(script), 0o644))

	dir := hashTree(t)
	write(t, dir, "with space.txt", "s\n", 0o600)
	write(t, dir, "new\nline", "n\n", 0o644)
	write(t, dir, "co:lon", "c\n", 0o644)
	write(t, dir, "\xff\xfe.bin", "\x00\x01", 0o644)
	write(t, dir, "é", "e\n", 0o644)
	write(t, dir, "\U0001F600", "smile\n", 0o644) // UTF-16 would order it before é's neighbours
	write(t, dir, "a/b", "ab\n", 0o644)
	write(t, dir, "a.b", "a.b\n", 0o644)
	write(t, dir, "a-b", "a-b\n", 0o644)
	link(t, "missing", filepath.Join(dir, "dangling"))
	link(t, "src", filepath.Join(dir, "srclink"))
	mustDo(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	mustDo(t, os.Mkdir(filepath.Join(dir, "a/empty"), 0o700))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety bound
	defer cancel()
	out, err := exec.CommandContext(ctx, py, scriptFile, dir).Output()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", scriptFile, err, out)
	}
	if got, want := strings.TrimSpace(string(out)), mustHash(t, dir); got != want {
		t.Errorf("the docs' script: %s, HashDir: %s", got, want)
	}
}

// ExampleHashDir shows a hash's form.
func ExampleHashDir() {
	dir, _ := os.MkdirTemp("", "hash-example-")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "a"), []byte("hi\n"), 0o644)
	_ = os.Chmod(filepath.Join(dir, "a"), 0o644)
	h, _ := HashDir(dir)
	fmt.Println(h[:7], len(h))
	// Output: sha256: 71
}
