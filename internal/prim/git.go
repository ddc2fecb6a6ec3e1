package prim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// git-status {} and git-diff {path, staged}: the real git, run in the
// folder with the scrubbed environment, never a pager, a prompt or colour.
// Offered only in a git work tree, and only where git is installed.

const gitTimeout = time.Minute

// IsGitRepo reports whether folder is inside a git work tree, as git
// itself says; false where git is not installed.
// A folder with no .git in it or above it is not one, and git is not
// started to say so (a run's start-up in a harness's /app saves a
// process); where there is one, git decides (a worktree's .git file, a
// broken repository, safe.directory).
func IsGitRepo(folder string) bool {
	if !gitDirAbove(folder) {
		return false
	}
	g, err := exec.LookPath("git")
	if err != nil {
		return false
	}
	return isGitRepo(g, folder, ScrubEnv(os.Environ(), DefaultOptions().EnvAllow))
}

// gitDirAbove reports whether folder or a directory above it holds .git
// (a directory, or a worktree's file): where git's own discovery would
// look, given that git runs with the scrubbed environment (no GIT_DIR).
func gitDirAbove(folder string) bool {
	for d := filepath.Clean(folder); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

func isGitRepo(git, folder string, env []string) bool {
	cmd := exec.Command(git, "rev-parse", "--is-inside-work-tree")
	cmd.Dir = folder
	cmd.Env = gitEnv(env)
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

func gitEnv(env []string) []string {
	return append(env[:len(env):len(env)], "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "PAGER=cat")
}

// runGit runs git with args in the folder, on the host (never in a working
// copy: git-status and git-diff show the real folder); ok is false when git
// failed.
func (t *Tools) runGit(parent context.Context, args ...string) (out string, ok bool, err error) {
	o, err := t.host.Run(parent, sandbox.Command{
		Argv:    append([]string{t.git, "-c", "core.quotepath=off", "-c", "color.ui=false"}, args...),
		Dir:     t.opts.Folder,
		Env:     gitEnv(t.env),
		Timeout: gitTimeout, Handling: sandbox.KillOnDrop, MaxOutput: t.opts.MaxOutput,
	})
	if err != nil {
		if parent.Err() != nil {
			return "", false, parent.Err()
		}
		return err.Error(), false, nil
	}
	if o.TimedOut {
		return o.Out + "[git took longer than " + gitTimeout.String() + " and was stopped]", false, nil
	}
	return o.Out, o.ExitCode == 0, nil
}

func init() {
	offered := func(t *Tools) (bool, string) {
		return t.git != "", t.opts.Folder + " is not a git work tree (or git is not installed)"
	}
	Register(Tool{Name: "git-status", Order: 50, Run: (*Tools).gitStatus, Offered: offered})
	Register(Tool{Name: "git-diff", Order: 51, Run: (*Tools).gitDiff, Offered: offered, Params: []Param{
		{Name: "path", Type: String, Role: roles.PathSearch},
		{Name: "staged", Type: Boolean},
	}})
}

func (t *Tools) gitStatus(ctx context.Context, _ Args) (Result, error) {
	out, ok, err := t.runGit(ctx, "status", "--short", "--branch")
	if err != nil {
		return Result{Output: "[cancelled]", IsError: true}, err
	}
	if !ok {
		return failf("git-status: git failed:\n%s", out), nil
	}
	out = strings.TrimSuffix(out, "\n")
	if !strings.Contains(out, "\n") {
		out += "\n[clean: no changes, no untracked files]"
	}
	return Result{Output: out}, nil
}

func (t *Tools) gitDiff(ctx context.Context, a Args) (Result, error) {
	p := a.Str("path")
	staged := a.Bool("staged")
	args := []string{"diff", "--no-ext-diff", "--no-color"}
	if staged {
		args = append(args, "--staged")
	}
	args = append(args, "--")
	if p != "" {
		args = append(args, Resolve(t.opts.Folder, p))
	} else {
		args = append(args, ".")
	}
	// The contents of files the denylist refuses stay out of the diff; their
	// names, which are no secret, are said.
	left := t.deniedChanges(ctx, staged)
	for _, rel := range left {
		args = append(args, ":(exclude,literal)"+rel)
	}
	out, ok, err := t.runGit(ctx, args...)
	if err != nil {
		return Result{Output: "[cancelled]", IsError: true}, err
	}
	if !ok {
		return failf("git-diff: git failed:\n%s", out), nil
	}
	if out == "" {
		switch {
		case staged:
			out = "[no staged changes]"
		default:
			out = "[no unstaged changes to tracked files; new files show in git-status, staged changes with staged: true]"
		}
	}
	out = strings.TrimSuffix(out, "\n")
	if len(left) > 0 {
		out += "\n[left out of the diff, as credential material nodwyn's tools never read: " + strings.Join(left, ", ") + "]"
	}
	return Result{Output: out}, nil
}

// deniedChanges lists, relative to the folder, the changed files that
// Options.Deny refuses.
func (t *Tools) deniedChanges(ctx context.Context, staged bool) []string {
	if t.opts.Deny == nil {
		return nil
	}
	args := []string{"diff", "--name-only", "-z", "--relative"}
	if staged {
		args = append(args, "--staged")
	}
	out, ok, err := t.runGit(ctx, args...)
	if err != nil || !ok {
		return nil
	}
	var left []string
	for _, rel := range strings.Split(out, "\x00") {
		if rel != "" && t.opts.Deny(filepath.Join(t.opts.Folder, rel)) {
			left = append(left, rel)
		}
	}
	return left
}

// maxStatusOutput bounds what GitStatus reads from git.
const maxStatusOutput = 16 << 20

// GitStatus maps each path `git status --porcelain -z --untracked-files=all`
// names to its two-letter status, run as git-status is: in the folder, with
// the scrubbed environment, under ctx and the git time limit. It is nil
// where git is not installed, and an error when git fails or says more
// than 16 MiB.
func (t *Tools) GitStatus(parent context.Context) (map[string]string, error) {
	if t.git == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(parent, gitTimeout)
	defer cancel()
	// nodwyn's own call, in a folder the model writes: no fsmonitor (a
	// command .git/config could name), and under the kernel floor like the
	// model's commands, since a filter driver the model configured may run.
	cmd := exec.CommandContext(ctx, t.git, "-c", "core.quotepath=off", "-c", "core.fsmonitor=false", "status", "--porcelain", "-z", "--untracked-files=all")
	cmd.Dir = t.opts.Folder
	cmd.Env = gitEnv(t.env)
	out := &limitedBuffer{max: maxStatusOutput}
	cmd.Stdout = out
	err := t.host.StartProgram(cmd) // under the floor, in the session's cgroup; the watchdog is there first
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git status: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("git status: %w", err)
	}
	if out.over {
		return nil, fmt.Errorf("git status said more than %d bytes", maxStatusOutput)
	}
	m := map[string]string{}
	for _, rec := range strings.Split(out.b.String(), "\x00") {
		if len(rec) > 3 {
			m[rec[3:]] = rec[:2]
		}
	}
	return m, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b    strings.Builder
	max  int
	over bool
}

func (w *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p) // all of it is taken: the rest is dropped, not refused
	if room := w.max - w.b.Len(); len(p) > room {
		w.over = true
		p = p[:max(room, 0)]
	}
	w.b.Write(p)
	return n, nil
}
