package guard

import (
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
func (p *ProtectedPaths) Check(req Request) Decision {
	var targets []string
	switch {
	case writeTools[req.Tool]:
		_, abs, ok := toolPath(req, p.Folder)
		if !ok {
			return Decision{}
		}
		targets = []string{abs}
	case isShell(req.Tool) && p.Argv != nil:
		targets = p.Argv.analyze(argString(req, "command")).writes
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
	for _, q := range []string{filepath.Clean(abs), physical(abs)} {
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
