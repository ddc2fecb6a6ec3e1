package guard

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// ProtectedPaths guards the folder's own machinery. A write to .git/,
// .github/, .gitea/, the Makefile or scripts/ (by a file tool, or by a
// command line's redirection or a program's destination) is a security
// confirm; a write to nodwyn's own folder, .nodwyn/ (and its former name
// .nibb/), always needs a person: a security confirm when someone is
// there to answer, refused when nobody is.
//
// With Sandbox the task's Makefile, scripts/, .git/, .github/ and .gitea/
// are the task's to write; .nodwyn/ and .nibb/ are still refused.
type ProtectedPaths struct {
	Folder     string
	Sandbox    bool
	Unattended bool
	Argv       *ArgvTrigger // finds what a command line writes; may be nil
}

// Name is the checker's name.
func (p *ProtectedPaths) Name() string { return "ProtectedPaths" }

// Check judges what a write tool or a command line writes.
func (p *ProtectedPaths) Check(_ context.Context, req Request) Decision {
	var targets []string
	switch {
	case isWrite(req):
		_, abs, ok := toolPath(req, p.Folder)
		if !ok {
			return Decision{}
		}
		targets = []string{abs}
	case isShell(req) && p.Argv != nil:
		line, _ := commandLine(req)
		res := p.Argv.analyze(line)
		targets = res.writes
		// nodwyn's own folder named on a line that runs anything but a
		// reader counts as written: tar -x, unzip, git checkout, an
		// interpreter or an editor write where the analysis does not
		// look.
		if ownFolderWord.MatchString(line) && !readersOnly(res.progs) {
			targets = append(targets, filepath.Join(p.Folder, ".nodwyn"))
		}
	default:
		return Decision{}
	}
	best := Decision{}
	for _, t := range targets {
		if d := p.judge(t); d.Verdict > best.Verdict {
			best = d
		}
	}
	return best
}

func (p *ProtectedPaths) judge(abs string) Decision {
	if p.Folder == "" || !filepath.IsAbs(abs) {
		return Decision{}
	}
	var rel string
	for _, q := range []string{filepath.Clean(abs), physical(abs), physical(filepath.Clean(abs))} {
		for _, f := range []string{p.Folder, physical(p.Folder)} {
			if within(q, f) {
				if r, err := filepath.Rel(f, q); err == nil {
					rel = r
				}
			}
		}
		if rel != "" {
			break
		}
	}
	if rel == "" || rel == "." {
		return Decision{}
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	// A case-insensitive file system writes .NODWYN/ into .nodwyn/; make
	// reads GNUmakefile and makefile before Makefile.
	switch lf := strings.ToLower(first); {
	case lf == ".nodwyn" || lf == ".nibb":
		first = lf
	case lf == ".git" || lf == ".github" || lf == ".gitea" || lf == "scripts":
		first = lf
	case lf == "makefile" || lf == "gnumakefile":
		first = "Makefile"
	}
	switch first {
	case ".nodwyn", ".nibb":
		if p.Sandbox || p.Unattended {
			return Decision{Verdict: Refuse, Checker: p.Name(), Reason: fmt.Sprintf(
				"%s is in %s/, nodwyn's own folder, which only a person may change and nobody can approve it in this run, so it was refused; leave it as it is and say in your report what should change there", rel, first)}
		}
		return Decision{Verdict: SecurityConfirm, Checker: p.Name(), Reason: fmt.Sprintf(
			"%s is in %s/, nodwyn's own folder, which only a person may change; the person is asked, and if they decline leave it as it is", rel, first)}
	case ".git", ".github", ".gitea", "scripts", "Makefile":
		if p.Sandbox {
			return Decision{}
		}
		return Decision{Verdict: SecurityConfirm, Checker: p.Name(), Reason: fmt.Sprintf(
			"%s is one of the repository's protected paths (.git/, .github/, .gitea/, scripts/, Makefile); a write there needs a person's approval, so if it is declined change other files instead, or say in your report what should change there", rel)}
	}
	return Decision{}
}

// ownFolderWord finds nodwyn's own folder named on a command line.
var ownFolderWord = lazyRE(`(?i)\.(?:nodwyn|nibb)\b`)

// readers only read what they are given.
var readers = map[string]bool{
	"cat": true, "less": true, "more": true, "head": true, "tail": true, "ls": true, "grep": true, "egrep": true,
	"fgrep": true, "rg": true, "wc": true, "diff": true, "cmp": true, "stat": true, "file": true, "echo": true,
	"printf": true, "tree": true, "du": true, "realpath": true, "readlink": true, "basename": true, "dirname": true,
	"test": true, "[": true, "true": true, "false": true, "sort": true, "uniq": true, "nl": true, "od": true,
	"xxd": true, "hexdump": true, "sha256sum": true, "md5sum": true, "pwd": true, "cd": true, "git": true,
	"git log": true, "git show": true, "git diff": true, "git status": true, "git blame": true, "git grep": true,
	"git ls-files": true, "git add": true, "git commit": true, "git rev-parse": true,
}

// readersOnly reports whether every program a line runs only reads (git
// by its subcommand: log and diff read, checkout and restore write).
func readersOnly(progs []string) bool {
	for _, p := range progs {
		if !readers[p] {
			return false
		}
	}
	return true
}
