// Package prim holds nodwyn's tool primitives: the programs a model's tool
// calls run. One file per tool, its test beside it:
//
//	shell-exec   shell.go       a command line, run to its end (bash -c, or sh -c)
//	shell-start  shellstart.go  a background process the session owns (shell-read, shell-stop)
//	fs-read      read.go        numbered lines of a file, or a directory's listing
//	fs-write     write.go       a whole file
//	fs-edit      edit.go        an exact-string replacement that matches once
//	fs-find      find.go        paths by glob, honouring .gitignore
//	index-grep   grep.go        regular expressions over files, honouring .gitignore
//	self-check   selfcheck.go   the contract's first check, in a working copy (self-validation)
//	run-tests    selfcheck.go   a test command the model gives, in a working copy
//	git-status   git.go         offered only in a git work tree
//	git-diff     git.go
//
// Each tool is one descriptor (Tool, table.go) its file registers from
// init: its name, its parameters (type, a one-line description, the role
// the guard judges it as), its Run and when it is offered. The table drives
// the schema the model sees, the decoding of a call's arguments, the
// guard's roles (the session hands them over as data) and nodwyn guard
// --tool; what the model reads of the tool itself is in prompts/tools.scm.
//
// Tools never call the guard: the session asks it before a tool runs. They
// never decide policy either; Options carries what the session decided
// (sandbox mode, the lean profile, the allow-listed environment).
//
// prim imports the standard library, golang.org/x/sys, internal/sandbox,
// through which every program a tool starts runs, and internal/fsview, the
// reading of a path (never blocking on a FIFO) it shares with the guard.
package prim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// Options configures a Tools. Folder is required; every other field has a
// default (see DefaultOptions and New).
type Options struct {
	Folder       string // absolute, the run's folder; relative paths are relative to it
	Scratch      string // the session's scratch directory (TMPDIR for commands)
	Sandbox      bool   // sandbox mode: what a command starts in the background keeps running
	LeaveRunning bool   // a command still running at its time limit is left running (stopped at Close) instead of stopped: the profile's leave-running setting
	// GitRepo is IsGitRepo(Folder) when the caller has asked already
	// (RepoKnown): git is then not started again to ask.
	RepoKnown, GitRepo bool
	EnvAllow           []string      // names (and prefixes ending in '*', like "LC_*") passed to children
	ExtraEnv           []string      // KEY=VALUE added after scrubbing (optional)
	Timeout            time.Duration // shell-exec default time limit (default 2 min)
	MaxTimeout         time.Duration // the most a call's own timeout may ask for (default 10 min)
	MaxOutput          int           // bytes of output kept per stream before a truncation marker (default 1 MiB)
	// Backup is called before a file tool overwrites or edits an existing
	// file, with its previous content; an error stops the write.
	Backup func(absPath string, old []byte) error
	// Deny, when set, names the paths fs-find and index-grep leave out of
	// a walk (not reported, not descended into): the guard's denylist, so a
	// search that starts above ~/.ssh (a folder of / or the home directory
	// in sandbox mode) never shows what is in it.
	Deny func(absPath string) bool
	// DenyResolved is Deny for a path the kernel resolved (where an open
	// file really is: no links, no ".."), judged without resolving it
	// again; nil: Deny.
	DenyResolved func(absPath string) bool
	Shell        string // default: bash if found on PATH, else sh
	// Seam is the execution seam's mode ([sandbox] mode in config.toml):
	// "" or no_sandbox runs commands in the folder, working_copy each in a
	// fresh copy of Checkout (default: the folder), which must hold the
	// folder. Not to be confused with Sandbox (sandbox mode).
	Seam     sandbox.Mode
	Checkout string
	// SelfCheck, with Seam working_copy, offers self-check and run-tests
	// (selfcheck.go); the session sets it when it is store-backed.
	SelfCheck *SelfCheck
	// Floor, when set, is the kernel floor every program the tools start
	// runs under (shell-exec, shell-start, self-check, run-tests, git),
	// and the file tools' own opens, reads, writes and walks (fsopen.go):
	// the session makes it from the guard's denylist (sandbox.NewFloor).
	Floor *sandbox.Floor
	// BeforeFirstProcess, when set, is called once with Mark() before the
	// first program the tools start (nodwyn run's watchdog, which a run
	// that starts none does without).
	BeforeFirstProcess func(mark string)
	// AfterCommand, when set, is called after each command line the tools
	// run (shell-exec, self-check, run-tests) has ended; what it returns,
	// if anything, is added to the command's result on a line of its own
	// (the session undoes changes to .git/config, .git/hooks and .nodwyn/
	// there: sandbox.Protected).
	AfterCommand func() string
}

const (
	defaultTimeout    = 2 * time.Minute
	defaultMaxTimeout = 10 * time.Minute
	defaultMaxOutput  = 1 << 20
)

// DefaultOptions returns the defaults: the allow-listed environment, the
// time limits and the output cap. Folder and Scratch are the caller's.
func DefaultOptions() Options {
	return Options{
		EnvAllow:   append([]string{"PATH", "HOME", "LANG", "LANGUAGE", "LC_*", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ"}, ToolchainEnv...),
		Timeout:    defaultTimeout,
		MaxTimeout: defaultMaxTimeout,
		MaxOutput:  defaultMaxOutput,
	}
}

// ToolchainEnv are the variables that say where a language's toolchain,
// caches and package index are (GOPATH, CARGO_HOME, RUSTUP_HOME,
// JAVA_HOME, GOPROXY, npm_config_registry …): images and CI runners set
// them to places other than the defaults, and without them a command's go,
// cargo or npm looks in the default place, which the write confinement
// and the egress proxy would then refuse as not the one the person uses.
// They pass to commands like the rest of EnvAllow, and are still dropped
// when they hold a secret (an index URL with a password in it), and an
// index or proxy URL with any user name or query in it is dropped too
// (toolchainURLs: a token is often the user name, https://TOKEN@host, or a
// parameter such as ?_authToken=). Option strings (GOFLAGS, MAVEN_OPTS)
// are not passed: they can carry -Dpassword=… or -X main.apiKey=….
var ToolchainEnv = []string{
	"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GONOPROXY", "GOTOOLCHAIN", "GOTELEMETRY",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
	"JAVA_HOME", "MAVEN_HOME", "M2_HOME", "GRADLE_USER_HOME",
	"PYENV_ROOT", "PYENV_VERSION", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CACHE_DIR", "UV_INDEX_URL", "UV_CACHE_DIR",
	"NVM_DIR", "npm_config_registry", "npm_config_cache", "YARN_CACHE_FOLDER", "PNPM_HOME",
	"XDG_CACHE_HOME",
}

// Result is what a tool call gives back.
type Result struct {
	Output   string   // what the model reads
	IsError  bool     // the tool failed: bad arguments, a missing file, an edit that did not match
	ExitCode int      // shell-exec: the command's exit status (a non-zero one is not IsError)
	Changed  []string // absolute paths the tool wrote
}

func failf(format string, a ...any) Result {
	return Result{Output: fmt.Sprintf(format, a...), IsError: true}
}

// Tools runs the primitives for one session in one folder.
type Tools struct {
	opts  Options
	env   []string // the scrubbed environment of every program a tool runs
	mark  string   // MarkEnv's value in env: finds what the session started (StopMarked)
	names []string
	git   string // path of the git binary, "" when git is not offered

	// Every program runs through the sandbox: sb is the session's (a
	// NoSandbox, or a WorkingCopySandbox over it), host the NoSandbox the
	// git tools run on (they show the real folder).
	sb   sandbox.Sandbox
	host *sandbox.NoSandbox

	mu     sync.Mutex
	closed bool
	bg     []*bgProc // shell-start processes
	bgSeq  int
	bgDir  string // where shell-start output goes when Scratch is empty (made lazily)
}

// New checks opts, fills in defaults and returns the session's tools.
func New(opts Options) (*Tools, error) {
	if opts.Folder == "" || !filepath.IsAbs(opts.Folder) {
		return nil, fmt.Errorf("prim: folder %q must be an absolute path", opts.Folder)
	}
	opts.Folder = filepath.Clean(opts.Folder)
	if fi, err := os.Stat(opts.Folder); err != nil {
		return nil, fmt.Errorf("prim: folder: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("prim: folder %s is not a directory", opts.Folder)
	}
	if opts.Scratch != "" && !filepath.IsAbs(opts.Scratch) {
		return nil, fmt.Errorf("prim: scratch directory %q must be an absolute path", opts.Scratch)
	}
	def := DefaultOptions()
	if opts.EnvAllow == nil {
		opts.EnvAllow = def.EnvAllow
	}
	if opts.Timeout <= 0 {
		opts.Timeout = def.Timeout
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = def.MaxTimeout
	}
	if opts.MaxTimeout < opts.Timeout {
		opts.MaxTimeout = opts.Timeout
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = def.MaxOutput
	}
	if opts.Shell == "" {
		if p, err := exec.LookPath("bash"); err == nil {
			opts.Shell = p
		} else if p, err := exec.LookPath("sh"); err == nil {
			opts.Shell = p
		} else {
			opts.Shell = "/bin/sh"
		}
	}
	t := &Tools{opts: opts}
	t.env = ScrubEnv(os.Environ(), opts.EnvAllow)
	if opts.Scratch != "" {
		t.env = setEnv(t.env, "TMPDIR", opts.Scratch)
	}
	t.env = append(t.env, opts.ExtraEnv...)
	t.mark = sandbox.NewMark()
	t.env = setEnv(t.env, sandbox.MarkEnv, t.mark)
	hopts := sandbox.HostOptions{Mark: t.mark, Release: opts.Sandbox, Floor: opts.Floor}
	if f := opts.BeforeFirstProcess; f != nil {
		hopts.BeforeFirstStart = func() { f(t.mark) }
	}
	t.host = sandbox.NewHost(hopts)
	t.sb = t.host
	if opts.Seam == sandbox.ModeWorkingCopy {
		checkout := opts.Checkout
		if checkout == "" {
			checkout = opts.Folder
		}
		base := opts.Scratch
		if base == "" {
			base = os.TempDir()
		}
		wc, err := sandbox.NewWorkingCopy(t.host, checkout, base, gitEnv(t.env), t.skipInCopy(checkout))
		if err != nil {
			return nil, fmt.Errorf("prim: %w", err)
		}
		t.sb = wc
	} else if opts.Seam != "" && opts.Seam != sandbox.ModeNoSandbox {
		return nil, fmt.Errorf("prim: unknown sandbox mode %q", opts.Seam)
	}
	if opts.RepoKnown {
		if opts.GitRepo {
			t.git, _ = exec.LookPath("git")
		}
	} else if g, err := exec.LookPath("git"); err == nil && gitDirAbove(opts.Folder) && isGitRepo(g, opts.Folder, t.env) {
		t.git = g
	}
	for _, tool := range Table() {
		if ok, _ := tool.offer(t); ok {
			t.names = append(t.names, tool.Name)
		}
	}
	return t, nil
}

// Options returns the options in effect, defaults filled in.
func (t *Tools) Options() Options { return t.opts }

// Mark returns the session's mark: every program the tools start has
// MarkEnv=Mark() in its environment, and so has what it starts, so
// StopMarked(Mark(), …) finds them all, even where nodwyn is gone (a
// watchdog outliving it).
func (t *Tools) Mark() string { return t.mark }

// Env returns the scrubbed environment the tools' programs run with.
func (t *Tools) Env() []string { return slices.Clone(t.env) }

// Names returns the tools offered in this folder, in the table's order.
// What a tool's Offered says (git-status and git-diff only in a git work
// tree where git is installed; self-check and run-tests only in a working
// copy) is decided once, by New.
func (t *Tools) Names() []string { return slices.Clone(t.names) }

func (t *Tools) offered(name string) bool { return slices.Contains(t.names, name) }

// Resolve returns the absolute, cleaned path p names: relative paths are
// relative to folder. "~" is not expanded: it is the shell's syntax, and the
// guard judges a file tool's path exactly as it is resolved here (a "~/x"
// that meant the home directory and was judged as a folder path would be a
// way past the denylist). Nothing is judged here; the guard does that.
func Resolve(folder, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(folder, p)
}

// rel shows an absolute path the way results show paths: relative to the
// folder when inside it, absolute otherwise.
func (t *Tools) rel(abs string) string {
	if r, err := filepath.Rel(t.opts.Folder, abs); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return filepath.ToSlash(r)
	}
	return abs
}

// Run runs the tool name with args, as decoded from the model's JSON: the
// table's descriptor decodes them (Param) and runs the tool. The error is
// only for internal failures and for a cancelled ctx (the partial result
// comes with it); a tool-level failure is a Result with IsError set and a
// message the model can act on.
func (t *Tools) Run(ctx context.Context, name string, args map[string]any) (Result, error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return Result{}, errors.New("prim: tools are closed")
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	tool, ok := lookup(name)
	if !ok {
		return failf("unknown tool %q; the tools are: %s", name, strings.Join(t.names, ", ")), nil
	}
	if !t.offered(name) {
		_, why := tool.offer(t)
		return failf("%s: not offered here: %s", name, why), nil
	}
	a, msg := tool.decode(args)
	if msg != "" {
		return Result{Output: msg, IsError: true}, nil
	}
	return tool.Run(t, ctx, a)
}

// Schema returns the JSON schema of the tool's parameters, each with its
// type and the one-line description describe gives it (Tool.Schema), or
// nil for a name that is no tool. What the model reads of a tool and its
// parameters is the session's business (prompts/tools.scm).
func (t *Tools) Schema(name string, describe func(param string) string) map[string]any {
	tool, ok := lookup(name)
	if !ok {
		return nil
	}
	return tool.Schema(describe)
}

// Close stops the session's shell-start processes, shell-exec calls still
// in progress, and the lean commands left running at their time limit, all
// through the sandbox (sandbox.NoSandbox.Close). Outside sandbox mode it also
// stops whatever still holds the output pipes of earlier shell-exec calls,
// and every process that carries the session's mark (MarkEnv): what left its
// process group and holds no pipe, such as a double-forked setsid daemon. In
// sandbox mode what shell-exec's commands started in the background is left
// alone.
func (t *Tools) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	bgDir := t.bgDir
	t.mu.Unlock()
	err := t.sb.Close()
	if bgDir != "" {
		os.RemoveAll(bgDir)
	}
	return err
}

// Sandbox is the session's execution seam.
func (t *Tools) Sandbox() sandbox.Sandbox { return t.sb }

// skipInCopy leaves out of a working copy what Options.Deny denies (a
// tracked .ssh in a dotfiles checkout is not copied to where a relative
// path would reach it unjudged).
func (t *Tools) skipInCopy(checkout string) func(rel string) bool {
	if t.opts.Deny == nil {
		return nil
	}
	return func(rel string) bool { return t.opts.Deny(filepath.Join(checkout, rel)) }
}

// Confinement says how what the tools' commands start is kept from
// outliving the session: "cgroup /sys/fs/cgroup/…", "subreaper (…)", … or
// "none: sandbox mode …" (sandbox.NoSandbox.Confinement).
func (t *Tools) Confinement() string { return t.host.Confinement() }
