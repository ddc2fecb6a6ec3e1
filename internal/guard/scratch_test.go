package guard

import (
	"os"
	"path/filepath"
	"testing"
)

func TestScratchWritesAreAStandingApproval(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	p := filepath.Join(e.Scratch, "repro.py")
	req := file("fs-write", p)
	d := g.Check(bg, req)
	if d.Verdict != Allow || d.Checker != "ScratchWrites" || d.Reason == "" {
		t.Errorf("fs-write in scratch: %v by %s (%s)", d.Verdict, d.Checker, d.Reason)
	}
	if !g.IsScratchWrite(req) {
		t.Error("IsScratchWrite is false for a write in the scratch directory (it counts against the budget)")
	}
	if g.IsScratchWrite(file("fs-write", "main.go")) || g.IsScratchWrite(file("fs-read", p)) {
		t.Error("IsScratchWrite is true outside the scratch directory or for a read")
	}
	// A security confirm still asks.
	secret := Request{Tool: "fs-write", Args: map[string]any{"path": p, "content": "key = AKIAIOSFODNN7EXAMPLE\n"}}
	if d := g.Check(bg, secret); d.Verdict != SecurityConfirm {
		t.Errorf("a credential written to scratch: %v (%s)", d.Verdict, d.Reason)
	}
	// A link out of the scratch directory is no scratch write.
	if err := os.Symlink("/etc", filepath.Join(e.Scratch, "etc")); err != nil {
		t.Fatal(err)
	}
	out := file("fs-write", filepath.Join(e.Scratch, "etc", "motd"))
	if g.IsScratchWrite(out) || g.Check(bg, out).Verdict != Refuse {
		t.Error("a write through a link out of the scratch directory is approved")
	}
}
