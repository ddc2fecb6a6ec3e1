package prim

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	writeFile(t, dir, "a.txt", "one\ntwo\n")
	writeFile(t, dir, "b.txt", "bee\n")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	return dir
}

func TestGitToolsOfferedOnlyInAWorkTree(t *testing.T) {
	repo := gitRepo(t)
	tools := newTools(t, Options{Folder: repo})
	if names := tools.Names(); !slices.Contains(names, "git-status") || !slices.Contains(names, "git-diff") {
		t.Errorf("git work tree: names %v", names)
	}
	if !IsGitRepo(repo) {
		t.Error("IsGitRepo(repo) = false")
	}
	plain := newTools(t, Options{})
	if names := plain.Names(); slices.Contains(names, "git-status") || slices.Contains(names, "git-diff") {
		t.Errorf("no work tree: names %v", names)
	}
	if IsGitRepo(plain.opts.Folder) {
		t.Error("IsGitRepo(plain folder) = true")
	}
	mustFail(t, plain, "git-status", nil, "not a git work tree")
}

func TestGitStatusAndDiff(t *testing.T) {
	repo := gitRepo(t)
	tools := newTools(t, Options{Folder: repo})
	res := mustOK(t, tools, "git-status", nil)
	if !strings.HasPrefix(res.Output, "## main") || !strings.Contains(res.Output, "[clean") {
		t.Errorf("clean status: %q", res.Output)
	}
	if res := mustOK(t, tools, "git-diff", nil); !strings.HasPrefix(res.Output, "[no unstaged changes") {
		t.Errorf("empty diff: %q", res.Output)
	}

	writeFile(t, repo, "a.txt", "one\nTWO\n")
	writeFile(t, repo, "b.txt", "buzz\n")
	writeFile(t, repo, "new.txt", "new\n")
	res = mustOK(t, tools, "git-status", nil)
	for _, w := range []string{" M a.txt", " M b.txt", "?? new.txt"} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("status lacks %q: %q", w, res.Output)
		}
	}
	res = mustOK(t, tools, "git-diff", map[string]any{"path": "a.txt"})
	if !strings.Contains(res.Output, "-two\n+TWO") || strings.Contains(res.Output, "b.txt") {
		t.Errorf("diff of a.txt: %q", res.Output)
	}
	if strings.Contains(res.Output, "\x1b[") {
		t.Error("colour in the diff")
	}
	cmd := exec.Command("git", "add", "b.txt")
	cmd.Dir = repo
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	res = mustOK(t, tools, "git-diff", map[string]any{"staged": true})
	if !strings.Contains(res.Output, "+buzz") || strings.Contains(res.Output, "TWO") {
		t.Errorf("staged diff: %q", res.Output)
	}
	mustFail(t, tools, "git-diff", map[string]any{"path": "/definitely/outside"}, "git failed")
}

// git runs with the scrubbed environment too.
func TestGitSeesTheScrubbedEnvironment(t *testing.T) {
	repo := gitRepo(t)
	t.Setenv("GIT_DIR", "/nonexistent") // not allow-listed: would break git if passed
	t.Setenv("GIT_WORK_TREE", "/nonexistent")
	tools := newTools(t, Options{Folder: repo})
	mustOK(t, tools, "git-status", nil)
}

// Outside any repository IsGitRepo starts no git (a process a run's
// start-up does not need); inside one, git is asked.
func TestIsGitRepoStartsGitOnlyWhereThereIsARepository(t *testing.T) {
	bin := t.TempDir()
	marker := filepath.Join(bin, "ran")
	fake := "#!/bin/sh\necho x >> " + marker + "\necho true\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	plain := t.TempDir()
	if IsGitRepo(plain) {
		t.Errorf("%s: a folder with no .git above it is a repository", plain)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("git was started for a folder with no .git above it")
	}
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	sub := filepath.Join(repo, "a", "b")
	os.MkdirAll(sub, 0o755)
	if !IsGitRepo(sub) {
		t.Errorf("%s: below a .git, and git says true: not a repository", sub)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("git was not asked where there is a .git: %v", err)
	}
}
