package guard

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/fsview"
	"github.com/nodwyn/nodwyn/internal/guard/bashread"
)

// ArgvTrigger judges a command line (shell-exec, shell-start) by the paths
// it names. The line is read by bashread (argv_judge.go judges what it
// tells), parsed as bash with mvdan.cc/sh/v3 and walked statement by
// statement, without running anything: words are expanded
// with the line's own assignments, ~ and $HOME, brace expansion, and what
// echo, printf, a for list, a here-doc or a names-only program (find, ls,
// …) hands to another command through a pipe into xargs, through $(…) or
// as a script to bash -c, sh -c, eval or a shell reading its input.
// Wrappers (env, timeout, nice, nohup, stdbuf, setsid, sudo, command, time,
// busybox, xargs, find -exec, …) are looked through, and options and
// variables that carry a command (git -c core.fsmonitor=…, --upload-pack,
// sed's e, tar --checkpoint-action, rg --pre, BASH_ENV, LD_PRELOAD,
// GIT_SSH_COMMAND, PAGER, PROMPT_COMMAND, …) are judged as commands.
// Interpreter one-liners (python -c, perl -e, ruby -e, node -e, awk) have
// their code scanned for paths and for the names of denied directories.
//
// Decisions, by default: a path in a denied directory (or /proc/*/environ,
// mem, root, cwd, fd) anywhere on the line is refused outright, since
// nobody could approve it; a recursive copy or search of a directory that
// holds one is refused too; a path outside the folder and the scratch
// directory is a security confirm, a credential-shaped file name too; an
// absolute path inside the folder is refused with the advice to write it
// relative. Network tools and hard triggers (rm -rf, git push, mkfs, dd
// of=/dev/…) are ordinary confirms. A parse error, an analysis that cannot
// finish within Timeout, or a path the analysis cannot follow, on a line
// that mentions the home directory or a denied name, is refused.
//
// With Sandbox a path is outside only in the denylist's directories, and
// the denylist's file names are not judged on a command line. With
// KernelFloor see the package's known limits.
type ArgvTrigger struct {
	Folder, Scratch, Home string
	Tmp                   bool // /tmp is inside (a lean session nobody approves)
	Sandbox               bool
	Denylist              *PathDenylist
	Timeout               time.Duration // default 200ms
	// Env holds variables a command may see whose values the analysis
	// knows (XDG_CONFIG_HOME, XDG_DATA_HOME, CREDENTIALS_DIRECTORY, …).
	Env map[string]string
	// KernelFloor: the kernel denies the denylist's directories to every
	// command (Options.KernelFloor). In sandbox mode a line is then not
	// refused for what the analysis cannot follow, only for what it
	// names; in both modes prose that names a denied directory (a quoted
	// sentence echoed into a file, a commit message) is no reason to
	// refuse.
	KernelFloor bool
	// RunDirs are the directories the folder's commands run in instead
	// of it (Options.RunDirs), Checkout what they are copies of: each
	// line is also walked from each of them, and a refusal of such a
	// reading counts.
	RunDirs  []string
	Checkout string
	// FS is the file system the analysis reads (listings, links, small
	// files a line reads or runs); nil is the operating system's. Set it
	// before the first line.
	FS fsview.FS

	mu        sync.Mutex
	lastLine  string
	lastRes   *argvResult
	mentionRe *regexp.Regexp
	deniedRe  *regexp.Regexp
	codeNames []string
	reader    *bashread.Reader
}

// argvResult is what the analysis of one line found.
type argvResult struct {
	decision Decision
	writes   []string // absolute paths the line writes
	progs    []string // the programs the line runs, by base name
	timedOut bool
	// unfinished: the analysis stopped before its end (time, a failure),
	// and the decision is failClosed's.
	unfinished bool
}

// Name is the checker's name.
func (a *ArgvTrigger) Name() string { return "ArgvTrigger" }

// Check judges the command line of a tool that runs one (its parameter
// with the command role: shell-exec, shell-start, self-check, run-tests).
func (a *ArgvTrigger) Check(_ context.Context, req Request) Decision {
	line, ok := commandLine(req)
	if !ok {
		return Decision{}
	}
	d := a.analyze(line).decision
	if d.Verdict != Allow {
		d.Checker = a.Name()
	}
	return d
}

// Judge analyses one command line and returns the decision.
func (a *ArgvTrigger) Judge(line string) Decision {
	return a.Check(context.Background(), Request{Tool: "shell-exec", Args: map[string]any{"command": line}})
}

// analyze runs the analysis within the time bound, caching the last line
// (ProtectedPaths asks for the same line right after).
func (a *ArgvTrigger) analyze(line string) *argvResult {
	a.mu.Lock()
	if a.lastRes != nil && a.lastLine == line {
		r := a.lastRes
		a.mu.Unlock()
		return r
	}
	a.mu.Unlock()
	res := a.reading(line, -1)
	if res.decision.Verdict < Refuse {
		for i, dir := range a.RunDirs {
			r := a.reading(line, i)
			if r.decision.Verdict > res.decision.Verdict && (r.decision.Verdict == Refuse || r.unfinished) {
				// What the line writes stays the folder's reading's:
				// a write inside the copy is thrown away with it.
				d := r.decision
				d.Reason = "commands run in a working copy of the checkout, at " + dir + " (a fresh name each time), so the line was judged from there too, and there " + d.Reason
				res = &argvResult{decision: d, writes: res.writes, progs: res.progs, timedOut: r.timedOut, unfinished: r.unfinished}
				if d.Verdict == Refuse {
					break
				}
			}
		}
	}
	a.mu.Lock()
	a.lastLine, a.lastRes = line, res
	a.mu.Unlock()
	return res
}

// reading walks the line from the folder (run -1) or from the run
// directory RunDirs[run], seen through its view (there only refusals
// count: the reading is Indirect), within the time bound.
func (a *ArgvTrigger) reading(line string, run int) *argvResult {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 200 * time.Millisecond
	}
	a.init()
	j := &argvJudge{t: a}
	j.r = a.reader.NewReading(line, time.Now().Add(timeout), j, run)
	done := make(chan *argvResult, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				res := a.failClosed(line, fmt.Sprintf("the analysis of the line failed (%v)", r), nil)
				res.unfinished = true
				done <- res
			}
		}()
		done <- j.run()
	}()
	timer := time.NewTimer(timeout + timeout/2)
	var res *argvResult
	select {
	case res = <-done:
		timer.Stop()
	case <-timer.C:
		j.r.Abort()
		res = a.failClosed(line, "the analysis of the line did not finish in time", nil)
		res.timedOut, res.unfinished = true, true
	}
	return res
}

// failClosed is the decision for a line the analysis could not finish:
// refused when it mentions the home directory or a denied name, otherwise
// a security confirm.
func (a *ArgvTrigger) failClosed(line, why string, err error) *argvResult {
	if err != nil {
		why += ": " + err.Error()
	}
	if m := a.mentions(line); m != "" {
		return &argvResult{decision: Decision{Verdict: Refuse, Checker: a.Name(), Reason: fmt.Sprintf(
			"%s, and it mentions %s, so it was refused and nothing of it ran; write a simpler line that names its files plainly, without %s", why, m, m)}}
	}
	// A security confirm, not an ordinary one: an unattended --yolo run
	// and a sandbox run answer ordinary confirms yes, and a line padded
	// until its analysis runs out of time (or written in syntax bash
	// takes and the parser does not) would then run unjudged.
	return &argvResult{decision: Decision{Verdict: SecurityConfirm, Checker: a.Name(), Reason: why + "; nodwyn could not judge it, so a person is asked (an unattended run declines); a simpler line that names its files plainly is judged without asking, and a long file is better written with fs-write"}}
}

// mentions returns what the line says that relates to the home directory
// or the denylist, or "".
func (a *ArgvTrigger) mentions(line string) string {
	a.init()
	if m := a.mentionRe.FindString(line); m != "" {
		return strings.TrimSpace(strings.Trim(m, "'\"=:("))
	}
	for _, n := range a.codeNames {
		if strings.Contains(line, n) {
			return n
		}
	}
	return ""
}

// mentionsDenied returns the denied name the line mentions, or "": the
// names of the denied directories, /proc, credential-shaped names.
func (a *ArgvTrigger) mentionsDenied(line string) string {
	a.init()
	if m := a.deniedRe.FindString(line); m != "" {
		return m
	}
	for _, n := range a.codeNames {
		if strings.Contains(line, n) {
			return n
		}
	}
	return ""
}

// init prepares the patterns that depend on the options.
func (a *ArgvTrigger) init() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mentionRe != nil {
		return
	}
	denied := []string{`/proc/`, `\benviron\b`, `\bid_(?:rsa|dsa|ecdsa|ed25519)`, `\.pem\b`, `credentials`}
	a.deniedRe = regexp.MustCompile(strings.Join(denied, "|"))
	alts := append([]string{`(?:^|[\s=:'"(])~[A-Za-z0-9_.\-]*(?:/|$|\s)`, `\$\{?HOME\b`}, denied...)
	if a.Home != "" && a.Home != "/" {
		alts = append(alts, regexp.QuoteMeta(a.Home)+`(?:/|$|[\s'"])`)
	}
	a.mentionRe = regexp.MustCompile(strings.Join(alts, "|"))
	a.reader = &bashread.Reader{
		Folder: a.Folder, Scratch: a.Scratch, Home: a.Home, Env: a.Env, FS: a.FS,
		Names: DeniedName, Prose: a.KernelFloor, RunDirs: a.RunDirs, Checkout: a.Checkout,
	}
	seen := map[string]bool{}
	if a.Denylist != nil {
		for _, d := range a.Denylist.Dirs {
			for _, n := range dirNames(d, a.Home, a.Denylist.entries[d].Dir) {
				if !seen[n] {
					seen[n] = true
					a.codeNames = append(a.codeNames, n)
				}
			}
		}
	}
}

// dirNames are the strings that identify a denied path inside code: its
// absolute path, its path relative to the home directory, and a denied
// directory's base name when that is a dotted name (.ssh, .aws, …). A
// denied file directly in the home (~/.netrc, ~/.npmrc) is named with its
// home ("~/.netrc", "$HOME/.netrc"), not bare: a project's own .npmrc is
// ordinary work.
func dirNames(dir, home string, isDir bool) []string {
	names := []string{dir}
	if home != "" && home != "/" && within(dir, home) && dir != home {
		rel, _ := filepath.Rel(home, dir)
		if isDir || strings.Contains(rel, "/") {
			names = append(names, rel)
		} else {
			names = append(names, "~/"+rel, "$HOME/"+rel)
		}
		if b := filepath.Base(dir); isDir && strings.HasPrefix(b, ".") && len(b) > 3 {
			names = append(names, b)
		}
	}
	return names
}
