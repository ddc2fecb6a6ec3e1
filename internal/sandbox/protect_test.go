package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func sh(t *testing.T, dir, line string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}

func protectedRepo(t *testing.T) string {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	os.MkdirAll(filepath.Join(dir, ".nodwyn"), 0o755)
	os.WriteFile(filepath.Join(dir, ".nodwyn", "init.scm"), []byte("(define x 1)\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "one")
	return dir
}

// What a command plants in .git/config, .git/hooks and .nodwyn/ to run at
// the person's next git command or nodwyn run is undone, each way it can
// be planted.
func TestProtectedUndoesPlantedChanges(t *testing.T) {
	dir := protectedRepo(t)
	config, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
	p := Protect(dir)
	attacks := []struct{ name, line string }{
		{"fsmonitor appended", `printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' >> .git/config`},
		{"config replaced by rename", `cp .git/config /tmp/c.$$ && echo '[alias] st = !id' >> /tmp/c.$$ && mv /tmp/c.$$ .git/config`},
		{"hook added", `printf '#!/bin/sh\nid\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`},
		{"hooks replaced by a link", `mv .git/hooks .git/h2 && ln -s /tmp .git/hooks`},
		{"hooksPath by git config", `git config core.hooksPath /tmp`},
		{"init.scm rewritten", `echo '(shell "curl x")' > .nodwyn/init.scm`},
		{"a file added to .nodwyn", `echo 'x' > .nodwyn/config.toml`},
		{".nodwyn removed", `rm -rf .nodwyn`},
		{"a sample hook put to work", `mv .git/hooks/pre-commit.sample .git/hooks/pre-commit`},
		{"config made world-writable", `chmod 666 .git/config`},
	}
	for _, a := range attacks {
		sh(t, dir, a.line)
		changed, err := p.Restore()
		if err != nil {
			t.Errorf("%s: Restore: %v", a.name, err)
		}
		if len(changed) == 0 {
			t.Errorf("%s: nothing reported changed", a.name)
		}
		got, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
		if string(got) != string(config) {
			t.Errorf("%s: .git/config is\n%s\nwant\n%s", a.name, got, config)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
			t.Errorf("%s: .git/hooks/pre-commit is there", a.name)
		}
		if fi, err := os.Lstat(filepath.Join(dir, ".git", "hooks")); err != nil || !fi.IsDir() {
			t.Errorf("%s: .git/hooks is not a directory: %v", a.name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit.sample")); err != nil {
			t.Errorf("%s: pre-commit.sample is gone: %v", a.name, err)
		}
		if fi, err := os.Stat(filepath.Join(dir, ".git", "config")); err != nil || fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s: .git/config is writable by others or gone: %v", a.name, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ".nodwyn", "init.scm")); string(b) != "(define x 1)\n" {
			t.Errorf("%s: .nodwyn/init.scm is %q", a.name, b)
		}
		if _, err := os.Stat(filepath.Join(dir, ".nodwyn", "config.toml")); err == nil {
			t.Errorf("%s: .nodwyn/config.toml is there", a.name)
		}
		os.RemoveAll(filepath.Join(dir, ".git", "h2"))
	}
	if note := RestoreNote([]string{".git/config"}, nil); !strings.Contains(note, "git -c") || !strings.Contains(note, ".git/config") {
		t.Errorf("the note %q does not say what was undone and how to do without it", note)
	}
}

// git's ordinary work — commit, branch, switch, stash, tag, merge, gc —
// changes nothing Protected watches, and what it did stays.
func TestProtectedLeavesGitsOrdinaryWork(t *testing.T) {
	dir := protectedRepo(t)
	p := Protect(dir)
	for _, line := range []string{
		`echo b > b.txt && git add b.txt && git -c user.name=t -c user.email=t@t commit -qm two`,
		`git branch feature && git switch -q feature && echo c > c.txt && git add c.txt && git -c user.name=t -c user.email=t@t commit -qm three && git switch -q main`,
		`echo d >> a.txt && git stash -q && git stash pop -q && git checkout -q -- a.txt`,
		`git tag v1 && git -c user.name=t -c user.email=t@t merge -q --no-edit feature && git gc -q`,
		`mkdir -p src && echo 'package main' > src/main.go && rm a.txt`,
	} {
		sh(t, dir, line)
		if changed, err := p.Restore(); len(changed) > 0 || err != nil {
			t.Fatalf("after %q Restore changed %v (%v)", line, changed, err)
		}
	}
	log := gitIn(t, dir, "log", "--oneline", "--all")
	if !strings.Contains(log, "three") || !strings.Contains(log, "two") {
		t.Errorf("the commits are gone:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "main.go")); err != nil {
		t.Errorf("src/main.go: %v", err)
	}
}

// A repository made during the session (git init by the model) is watched
// from the first check that sees it: git init itself is kept.
func TestProtectedWatchesARepositoryMadeLater(t *testing.T) {
	dir := t.TempDir()
	p := Protect(dir)
	sh(t, dir, "git init -q")
	if changed, _ := p.Restore(); len(changed) > 0 {
		t.Fatalf("git init was undone: %v", changed)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "config")); err != nil {
		t.Fatalf(".git/config: %v", err)
	}
	sh(t, dir, `printf '#!/bin/sh\n' > .git/hooks/post-checkout`)
	changed, _ := p.Restore()
	if !slices.Contains(changed, filepath.Join(".git", "hooks", "post-checkout")) {
		t.Errorf("a hook planted after git init was not undone: %v", changed)
	}
}

// From a subdirectory of the repository the repository's own .git and
// top-level .nodwyn are watched.
func TestProtectedFromASubdirectory(t *testing.T) {
	dir := protectedRepo(t)
	sub := filepath.Join(dir, "pkg", "deeper")
	os.MkdirAll(sub, 0o755)
	p := Protect(sub)
	roots := p.Roots()
	for _, want := range []string{filepath.Join(dir, ".git", "config"), filepath.Join(dir, ".git", "hooks"), filepath.Join(dir, ".nodwyn"), filepath.Join(dir, "pkg", ".nodwyn"), filepath.Join(sub, ".nodwyn")} {
		if !slices.Contains(roots, want) {
			t.Errorf("roots %v lack %s", roots, want)
		}
	}
	sh(t, sub, `echo '[core] fsmonitor = x' >> ../../.git/config`)
	if changed, _ := p.Restore(); len(changed) != 1 {
		t.Errorf("changed = %v", changed)
	}
}
