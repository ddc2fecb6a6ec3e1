package guard

import (
	"context"
	"path/filepath"

	"github.com/nodwyn/nodwyn/internal/roles"
)

// ScratchWrites makes a file tool's writes inside the session's scratch
// directory a standing approval: it is outside the folder and short-lived,
// so asking about each file protects nothing. Such writes still count
// against the turn's budget of irreversible actions (Guard.IsScratchWrite),
// and every other checker still judges them: a security confirm, such as
// content that looks like a credential, still asks.
type ScratchWrites struct {
	Scratch string
}

// Name is the checker's name.
func (s *ScratchWrites) Name() string { return "ScratchWrites" }

// Check never objects; for a write inside the scratch directory it says so.
func (s *ScratchWrites) Check(_ context.Context, req Request) Decision {
	if s.covers(req) {
		return Decision{Verdict: Allow, Checker: s.Name(), Reason: "a write inside the scratch directory is approved for the session"}
	}
	return Decision{}
}

func (s *ScratchWrites) covers(req Request) bool {
	p, ok := pathParam(req)
	if s.Scratch == "" || !ok || p.Role != roles.PathWrite {
		return false
	}
	raw := argString(req, p.Param)
	if !filepath.IsAbs(raw) {
		return false
	}
	sp := physical(s.Scratch)
	return within(filepath.Clean(raw), s.Scratch) && within(physical(raw), sp)
}
