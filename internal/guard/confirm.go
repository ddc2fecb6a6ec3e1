package guard

import (
	"context"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nodwyn/nodwyn/internal/guard/bashread"
)

// Mode is how confirms are answered in a run.
type Mode struct {
	Unattended, Yolo, NoConfirm bool
}

// AutoAllow answers a decision without a person where the run's mode
// decides it. Allow is yes and Refuse no. --no-confirm declines every
// confirm. Unattended, an ordinary confirm is answered by --yolo and a
// security confirm is always declined. Attended (and not --no-confirm), a
// person answers: decided is false.
func AutoAllow(d Decision, m Mode) (answer bool, decided bool) {
	switch d.Verdict {
	case Allow:
		return true, true
	case Refuse:
		return false, true
	}
	if m.NoConfirm {
		return false, true
	}
	if m.Unattended {
		if d.Verdict == SecurityConfirm {
			return false, true
		}
		return m.Yolo, true
	}
	return false, false
}

// Approval kinds for Approvals.Add.
const (
	ApprovePrefix  = "prefix"  // a command line beginning with these words
	ApproveCommand = "command" // the same as ApprovePrefix
	ApprovePath    = "path"    // a file tool's path, or anything under it
)

// Approvals are the standing approvals a person gave "always for this
// session": a command prefix or a path. They answer ordinary confirms
// only: a request the guard judges a security confirm or a refusal is
// never covered. With a Guard (NewApprovals) Covers re-judges the request
// to make sure; the zero value matches prefixes and paths only, for a
// caller that asks about ordinary confirms alone (or use CoversDecision).
type Approvals struct {
	Guard *Guard // when set, Covers re-judges the request with it

	mu       sync.Mutex
	prefixes [][]string
	paths    []string
}

// NewApprovals returns an empty set of approvals checked against g.
func NewApprovals(g *Guard) *Approvals { return &Approvals{Guard: g} }

// Add records a standing approval of kind "prefix" (or "command") or
// "path"; other kinds are ignored.
func (a *Approvals) Add(kind, value string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch kind {
	case ApprovePrefix, ApproveCommand:
		if w := strings.Fields(value); len(w) > 0 {
			a.prefixes = append(a.prefixes, w)
		}
	case ApprovePath:
		if value != "" {
			a.paths = append(a.paths, filepath.Clean(value))
		}
	}
}

// AddFor records the standing approval a person's "always" gives req: its
// command line as given ("always" for `rm -rf build` must not approve
// every rm), else the path its file tool names.
func (a *Approvals) AddFor(req Request) {
	req = a.judged(req)
	if line, ok := commandLine(req); ok {
		a.Add(ApprovePrefix, strings.TrimSpace(line))
	} else if p, ok := pathParam(req); ok {
		a.Add(ApprovePath, argString(req, p.Param))
	}
}

// judged is req with the roles of the guard the approvals are checked
// against.
func (a *Approvals) judged(req Request) Request {
	if a.Guard != nil {
		req.roles = a.Guard.roles
	}
	return req
}

// Covers reports whether a standing approval answers req. A command line
// is covered only when it is one simple command (no pipes, lists,
// substitutions or redirections) whose words begin with an approved
// prefix; a file tool's path when it is an approved path or under one.
func (a *Approvals) Covers(ctx context.Context, req Request) bool {
	if a == nil {
		return false
	}
	if a.Guard == nil {
		return a.matches(req)
	}
	return a.CoversDecision(req, a.Guard.Check(ctx, req))
}

// CoversDecision is Covers for a request the guard already judged: only an
// ordinary confirm can be covered.
func (a *Approvals) CoversDecision(req Request, d Decision) bool {
	if a == nil || d.Verdict != Confirm {
		return false
	}
	return a.matches(req)
}

// matches reports whether an approved prefix or path matches req.
func (a *Approvals) matches(req Request) bool {
	req = a.judged(req)
	a.mu.Lock()
	defer a.mu.Unlock()
	if line, ok := commandLine(req); ok {
		words, ok := bashread.SimpleWords(line)
		if !ok {
			return false
		}
	next:
		for _, p := range a.prefixes {
			if len(words) < len(p) {
				continue
			}
			for i := range p {
				if words[i] != p[i] {
					continue next
				}
			}
			return true
		}
		return false
	}
	if p, ok := pathParam(req); ok {
		path := argString(req, p.Param)
		if path == "" {
			return false
		}
		folder := ""
		if a.Guard != nil {
			folder = a.Guard.opts.Folder
		}
		abs := path
		if !filepath.IsAbs(path) && folder != "" {
			abs = filepath.Join(folder, path)
		}
		for _, p := range a.paths {
			pa := p
			if !filepath.IsAbs(p) && folder != "" {
				pa = filepath.Join(folder, p)
			}
			if within(filepath.Clean(abs), pa) {
				return true
			}
		}
	}
	return false
}
