package bashread

// git: -C, -c with command-carrying keys, --upload-pack and its kin, ext::
// transports, what loses work for good, and the repository it reads.

import (
	"os"
	"path/filepath"
	"strings"
)

// The options of git's subcommands: those that run a command or set a
// configuration value, and what a local clone's source is not.
var (
	gitRoles      = optRoles("run: --upload-pack --receive-pack --exec", "value: -c --config")
	gitFetchRoles = optRoles("run: --upload-pack --receive-pack --exec -u", "value: -c --config",
		"text: -b --branch -o --origin --depth --reference -j --jobs --template --separate-git-dir --filter")
)

// gitCommandKeys are git configuration keys whose value is a command (or a
// path whose content runs).
var gitCommandKeys = Lazy(`(?i)^(core\.(fsmonitor|pager|sshcommand|editor|askpass|hookspath|gitproxy|worktree)|diff\..*\.(command|textconv)|diff\.external|merge\..*\.driver|filter\..*\.(clean|smudge|process)|sequence\.editor|credential\..*helper|credential\.helper|uploadpack\.packobjectshook|pager\..*|alias\..*|gpg\.program|gpg\..*\.program|protocol\..*|remote\..*\.(uploadpack|receivepack|proxy)|url\..*|http\..*\.(sslcert|sslkey|cookiefile)|http\.(sslcert|sslkey|cookiefile)|include\.path|includeif\..*)$`)

// git judges git: -C, -c with command-carrying keys, --upload-pack and its
// kin, ext:: transports, and git push as a hard trigger.
func (an *Reading) git(base string, args []string, stdin string) string {
	saved, savedOK := an.cwd, an.cwdOK
	defer func() { an.cwd, an.cwdOK = saved, savedOK }()
	rest := an.opts(args, roleRest, lookup(base).roles, func(opt string, r Use, v string) {
		switch {
		case r == roleCwd:
			an.judge(v, UseOperand)
			an.setCwd(v)
		case opt == "-c":
			an.gitConfig(v)
		case r == roleValue: // --config-env: a value from the environment
			an.uncertain = true
		}
	})
	if len(rest) == 0 {
		return ""
	}
	sub, rest := rest[0], rest[1:]
	if len(an.progs) < 256 {
		an.progs = append(an.progs, "git "+sub)
	}
	roles := gitRoles
	switch sub {
	case "fetch", "clone", "pull", "ls-remote":
		roles = gitFetchRoles
	}
	plain := an.opts(rest, roleNone, roles, func(_ string, r Use, v string) {
		if r == roleValue {
			an.gitConfig(v)
		}
	})
	for _, a := range plain {
		if c, ok := strings.CutPrefix(a, "ext::"); ok {
			an.script(strings.ReplaceAll(c, "% ", " "), nil)
		} else if strings.HasPrefix(a, "fd::") {
			an.uncertain = true
		}
	}
	if why := gitDestructive(sub, rest); why != "" {
		an.act(ActGitLoses, sub, why)
	}
	switch sub {
	case "push":
		an.act(ActGitPush, sub, "")
	case "config":
		var kv []string
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") {
				kv = append(kv, a)
			}
		}
		if len(kv) >= 2 {
			an.gitConfig(kv[0] + "=" + strings.Join(kv[1:], " "))
		}
		for j, a := range rest {
			if (a == "-f" || a == "--file") && j+1 < len(rest) {
				an.judge(rest[j+1], UseWrite)
			}
		}
		return markUnknown
	case "clone", "fetch", "pull", "ls-remote", "submodule", "remote":
		an.act(ActGitRemote, sub, "")
		if sub == "clone" {
			// A local clone copies the whole repository it names.
			if len(plain) > 0 && !strings.Contains(plain[0], "://") && !strings.Contains(plain[0], "@") {
				an.judge(plain[0], UseRecursive)
			}
		}
	case "commit", "tag":
		// -m and -F: the message is text; -F's file is read.
		for j, a := range rest {
			if (a == "-F" || a == "--file") && j+1 < len(rest) {
				an.judge(rest[j+1], UseOperand)
			}
		}
		return markUnknown
	case "show", "archive", "cat-file", "bundle", "format-patch", "blame", "grep", "log", "diff", "stash", "ls-tree", "ls-files":
		// What the repository holds is read: a repository whose work
		// tree holds a protected directory (a home directory kept in
		// git) may hold its files.
		an.act(ActGitReadsRepo, sub, "")
		if sub == "grep" {
			// git grep -O CMD (--open-files-in-pager) runs CMD on what matched.
			an.opts(rest, roleNone, gitGrepRoles, func(_ string, _ Use, v string) {})
			return an.grep("grep", rest, stdin)
		}
	case "status", "add", "rm", "mv", "checkout", "restore", "switch", "reset", "branch", "rev-parse", "merge", "rebase", "cherry-pick", "init", "apply", "bisect", "worktree", "describe", "shortlog", "am", "clean", "notes":
	}
	an.operands(rest, UseOperand)
	return markUnknown
}

func (an *Reading) gitConfig(kv string) {
	k, v, _ := strings.Cut(kv, "=")
	an.gitConfigKV(k, v)
}

// gitConfigKV judges one configuration item git takes from -c or the
// environment.
func (an *Reading) gitConfigKV(k, v string) {
	k = strings.TrimSpace(k)
	an.judge(v, UseMention)
	if lk := strings.ToLower(k); strings.HasPrefix(lk, "remote.") && (strings.HasSuffix(lk, ".url") || strings.HasSuffix(lk, ".pushurl") || strings.HasSuffix(lk, ".proxy")) {
		// Where a remote is, or how it is reached: the session's egress
		// proxy allows the folder's remotes' hosts by default.
		an.act(ActGitRemoteConfig, "git", k)
	}
	if !gitCommandKeys.MatchString(k) {
		if an.looksLikePath(v) {
			an.judge(v, UseOperand)
		}
		return
	}
	lk := strings.ToLower(k)
	switch {
	case strings.HasPrefix(lk, "alias."):
		if s, ok := strings.CutPrefix(v, "!"); ok {
			an.script(s, nil)
		}
	case strings.HasSuffix(lk, "hookspath") || strings.HasSuffix(lk, "worktree") || strings.HasPrefix(lk, "include") || strings.Contains(lk, "ssl") || strings.Contains(lk, "cookiefile"):
		an.judge(v, UseRecursive)
		if (lk == "core.hookspath" || strings.HasPrefix(lk, "include")) && v != os.DevNull { // /dev/null: no hooks, nothing included
			// Hooks from there, or a file of configuration whose
			// aliases, pager and hooks run unread.
			an.act(ActGitHooks, "git", v)
		}
	case strings.HasPrefix(lk, "protocol.") || strings.HasPrefix(lk, "url."):
		an.act(ActGitRemoteConfig, "git", k)
	default:
		an.script(v, nil)
	}
}

// gitGrepRoles are git grep's options beyond grep's.
var gitGrepRoles = optRoles("run: -O --open-files-in-pager")

// gitTopDir is the directory of the first .git found going up from dir, or
// "".
func (an *Reading) gitTopDir(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if h, kind := an.hostPath(filepath.Join(d, ".git")); kind != viewHidden {
			if _, err := an.fs.Lstat(h); err == nil {
				return d
			}
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// gitDestructive names what a git subcommand destroys that no undo can bring
// back, or "" when it is an ordinary, recoverable git operation.
func gitDestructive(sub string, rest []string) string {
	has := func(pred func(string) bool) bool {
		for _, a := range rest {
			if a == "--" {
				break
			}
			if pred(a) {
				return true
			}
		}
		return false
	}
	short := func(c byte) func(string) bool {
		return func(a string) bool {
			return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0
		}
	}
	eq := func(s string) func(string) bool { return func(a string) bool { return a == s } }
	switch sub {
	case "reset":
		if has(eq("--hard")) || has(eq("--merge")) || has(eq("--keep")) {
			return "git reset --hard throws away uncommitted changes for good"
		}
	case "clean":
		dry := has(short('n')) || has(eq("--dry-run"))
		if !dry && (has(short('f')) || has(eq("--force"))) {
			return "git clean -f deletes untracked files for good"
		}
	case "checkout", "restore":
		for j, a := range rest {
			if a == "--" && j+1 < len(rest) || sub == "checkout" && (a == "-f" || a == "--force") {
				return "git " + sub + " overwrites uncommitted changes for good"
			}
		}
		if sub == "restore" && !has(eq("--staged")) {
			return "git restore overwrites uncommitted changes for good"
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			return "git stash " + rest[0] + " throws away stashed changes for good"
		}
	case "branch":
		if has(eq("-D")) || has(func(a string) bool { return a == "--delete" }) && has(func(a string) bool { return a == "--force" || a == "-f" }) {
			return "git branch -D deletes a branch whether or not it was merged"
		}
	}
	return ""
}
