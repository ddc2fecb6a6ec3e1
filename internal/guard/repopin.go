package guard

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// RepoPin keeps the file tools inside the folder. A path must be inside the
// folder or the session's scratch directory (absolute paths only reach the
// scratch directory; relative ones are relative to the folder), or /tmp
// when Tmp is set (a lean session nobody approves). Symbolic links are
// resolved, so a link never escapes. Command lines are the argv trigger's.
//
// With Sandbox every path is inside, absolute or relative to the folder: the
// machine is the run's. A read-only mount stays read-only; the write fails
// as it would for anyone.
type RepoPin struct {
	Folder, Scratch string
	Tmp             bool
	Sandbox         bool
}

// Name is the checker's name.
func (p *RepoPin) Name() string { return "RepoPin" }

// Check refuses a file tool's path outside the folder and the scratch
// directory.
func (p *RepoPin) Check(_ context.Context, req Request) Decision {
	if d := p.checkPattern(req); d.Verdict != Allow {
		return d
	}
	raw, abs, ok := toolPath(req, p.Folder)
	if !ok || p.Sandbox {
		return Decision{}
	}
	if p.inside(abs, filepath.IsAbs(raw)) {
		return Decision{}
	}
	where := "the folder " + p.Folder
	if p.Scratch != "" {
		where += " or the scratch directory " + p.Scratch
	}
	if p.Tmp {
		where += " or /tmp"
	}
	return Decision{Verdict: Refuse, Checker: p.Name(), Reason: fmt.Sprintf(
		"path %s is outside %s, and a file tool reaches nothing else (links are followed); use a path relative to the folder, or an absolute one in the scratch directory for throwaway files", raw, where)}
}

// inside reports whether the absolute path is inside one of the pin's
// roots, lexically and as the system reaches it. Scratch and /tmp count
// only for absolute paths.
func (p *RepoPin) inside(abs string, absolute bool) bool {
	lex := filepath.Clean(abs)
	phys := physical(abs)
	if strings.Contains(abs, "..") && physical(lex) != phys && !p.inside(lex, absolute) {
		return false // the tool opens lex, and the system follows its links
	}
	roots := []string{p.Folder}
	if absolute {
		if p.Scratch != "" {
			roots = append(roots, p.Scratch)
		}
		if p.Tmp {
			roots = append(roots, "/tmp")
		}
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		if within(lex, r) && (within(phys, r) || within(phys, physical(r))) {
			return true
		}
	}
	return false
}

// checkPattern refuses an fs-find pattern or an index-grep glob that
// leaves the directory it searches: patterns are relative to path.
func (p *RepoPin) checkPattern(req Request) Decision {
	name, pat := patternOf(req)
	if pat == "" {
		return Decision{}
	}
	escapes := filepath.IsAbs(pat) || strings.HasPrefix(pat, "~")
	for _, c := range strings.Split(filepath.ToSlash(pat), "/") {
		if c == ".." {
			escapes = true
		}
	}
	if !escapes {
		return Decision{}
	}
	return Decision{Verdict: Refuse, Checker: p.Name(), Reason: fmt.Sprintf(
		"the %s %q leaves the directory %s searches; a %s is matched below path, so set path to the directory to search and give a %s relative to it", name, pat, req.Tool, name, name)}
}
