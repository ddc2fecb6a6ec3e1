package prim

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGitignoreRules(t *testing.T) {
	for _, c := range []struct {
		rules string
		path  string
		dir   bool
		want  bool
	}{
		{"*.o", "a.o", false, true},
		{"*.o", "src/deep/a.o", false, true},
		{"*.o", "a.c", false, false},
		{"build/", "build", true, true},
		{"build/", "build", false, false}, // dir-only: a file named build stays
		{"build/", "src/build", true, true},
		{"/root.txt", "root.txt", false, true},
		{"/root.txt", "sub/root.txt", false, false}, // anchored
		{"doc/*.txt", "doc/a.txt", false, true},
		{"doc/*.txt", "x/doc/a.txt", false, false}, // a middle slash anchors
		{"doc/*.txt", "doc/sub/a.txt", false, false},
		{"**/logs", "a/b/logs", true, true},
		{"logs/**", "logs/x/y", false, true},
		{"logs/**", "logs", true, false},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"*.log\n!keep.log", "keep.log", false, false},
		{"*.log\n!keep.log", "other.log", false, true},
		{"!keep.log\n*.log", "keep.log", false, true}, // the later line wins
		{"# comment\n\n  \n", "# comment", false, false},
		{"\\#hash", "#hash", false, true},
		{"\\!bang", "!bang", false, true},
		{"trailing   ", "trailing", false, true},
		{"sp\\ ", "sp ", false, true},
		{"f?o", "foo", false, true},
		{"[abc].txt", "b.txt", false, true},
		{"[abc].txt", "d.txt", false, false},
		{"*", "anything/at/all", false, true},
	} {
		ig := ignorer{files: []ignoreFile{parseIgnore("", []byte(c.rules))}}
		if got := ig.ignored(c.path, c.dir); got != c.want {
			t.Errorf("rules %q, path %q (dir %v): ignored = %v, want %v", c.rules, c.path, c.dir, got, c.want)
		}
	}
}

// A deeper .gitignore takes precedence over a shallower one.
func TestGitignoreNestedPrecedence(t *testing.T) {
	ig := ignorer{files: []ignoreFile{
		parseIgnore("", []byte("*.gen\n")),
		parseIgnore("sub", []byte("!keep.gen\n/local.txt\n")),
	}}
	for path, want := range map[string]bool{
		"a.gen":           true,
		"sub/keep.gen":    false,
		"sub/other.gen":   true,
		"keep.gen":        true, // sub's rule does not reach above sub
		"sub/local.txt":   true,
		"local.txt":       false,
		"sub/x/local.txt": false, // anchored to sub
	} {
		if got := ig.ignored(path, false); got != want {
			t.Errorf("%s: ignored = %v, want %v", path, got, want)
		}
	}
}

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		pat, name string
		want      bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "dir/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"src/**", "src/a/b", true},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.js", false},
		{"[", "[", false}, // malformed: no match
	} {
		if got := matchGlob(c.pat, c.name); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", c.pat, c.name, got, c.want)
		}
	}
}

// makeTree writes files (a name ending in "/" is a directory).
func makeTree(t testing.TB, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		name, content, _ := strings.Cut(f, "=")
		if strings.HasSuffix(name, "/") {
			os.MkdirAll(filepath.Join(root, name), 0o755)
			continue
		}
		writeFile(t, root, name, content)
	}
}

func walked(root, start string) []string {
	var got []string
	w := newWalker(context.Background(), start)
	w.walk(start, func(abs string, d fs.DirEntry) bool {
		r, _ := filepath.Rel(root, abs)
		got = append(got, filepath.ToSlash(r))
		return true
	})
	return got
}

func TestWalkHonoursGitignoreFiles(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root,
		".git/HEAD=ref",
		".git/info/exclude=excluded.txt\n",
		".gitignore=*.log\nbuild/\n/top.txt\n",
		"a.go", "a.log", "top.txt", "excluded.txt",
		"build/out.bin",
		"src/top.txt", "src/b.go", "src/c.log",
		"src/.gitignore=!c.log\ngen/\n",
		"src/gen/x.go",
		"node/keep.txt",
	)
	want := []string{".gitignore", "a.go", "node", "node/keep.txt", "src", "src/.gitignore", "src/b.go", "src/c.log", "src/top.txt"}
	if got := walked(root, root); !slices.Equal(got, want) {
		t.Errorf("walk:\n got %q\nwant %q", got, want)
	}
	// Starting below the root reads the .gitignore files above.
	if got := walked(root, filepath.Join(root, "src")); !slices.Equal(got, []string{"src/.gitignore", "src/b.go", "src/c.log", "src/top.txt"}) {
		t.Errorf("walk from src: %q", got)
	}
}

// Outside a git work tree the folder's own .gitignore files still count.
func TestWalkWithoutGit(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, ".gitignore=secret/\n", "secret/x", "open/y")
	if got := walked(root, root); !slices.Equal(got, []string{".gitignore", "open", "open/y"}) {
		t.Errorf("walk: %q", got)
	}
}

func TestWalkFromRootLeavesOutTheKernelsViews(t *testing.T) {
	for _, c := range []struct {
		dir, name string
		want      bool
	}{
		{"/", "proc", true}, {"/", "sys", true}, {"/", "dev", true},
		{"/", "etc", false}, {"/app", "proc", false}, {"/proc", "1", false},
	} {
		if got := skipPseudo(c.dir, c.name); got != c.want {
			t.Errorf("skipPseudo(%q, %q) = %v, want %v", c.dir, c.name, got, c.want)
		}
	}
}
