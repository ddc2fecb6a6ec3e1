package guard

import (
	"strings"
	"testing"
)

func TestExfiltrationSuiteIsRefused(t *testing.T) {
	e := newTestEnv(t)
	lines := readSuite(t, "exfil.txt")
	if len(lines) < 120 {
		t.Fatalf("exfil.txt has %d lines, want at least 120", len(lines))
	}
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		for _, l := range lines {
			line := e.expand(l.Line)
			d := g.Check(bg, shell(line))
			ok := d.Verdict == Refuse
			if l.Tag == "sc" && !sandbox {
				ok = d.Verdict >= SecurityConfirm
			}
			if !ok {
				t.Errorf("sandbox=%v exfil.txt:%d %q: got %v (%s: %s), want refuse", sandbox, l.No, l.Line, d.Verdict, d.Checker, d.Reason)
			}
			if ans, decided := AutoAllow(d, Mode{Unattended: true, Yolo: true}); ans || !decided {
				t.Errorf("sandbox=%v exfil.txt:%d %q: an unattended --yolo run would run it", sandbox, l.No, l.Line)
			}
			if strings.Contains(d.Reason, canary) {
				t.Errorf("exfil.txt:%d: the reason leaks the canary", l.No)
			}
		}
	}
}

func TestLegitimateWorkIsNotRefused(t *testing.T) {
	e := newTestEnv(t)
	lines := readSuite(t, "legit.txt")
	if len(lines) < 60 {
		t.Fatalf("legit.txt has %d lines, want at least 60", len(lines))
	}
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		for _, l := range lines {
			line := e.expand(l.Line)
			d := g.Check(bg, shell(line))
			var ok bool
			switch {
			case l.Tag == "A":
				ok = d.Verdict == Allow
			case l.Tag == "C":
				ok = d.Verdict == Confirm
			case l.Tag == "S" && sandbox:
				ok = d.Verdict == Allow
			case l.Tag == "S":
				ok = d.Verdict == SecurityConfirm
			default:
				t.Fatalf("legit.txt:%d: unknown tag %q", l.No, l.Tag)
			}
			if !ok {
				t.Errorf("sandbox=%v legit.txt:%d [%s] %q: got %v (%s: %s)", sandbox, l.No, l.Tag, l.Line, d.Verdict, d.Checker, d.Reason)
			}
		}
	}
}

// TestExfiltrationSuiteWithTheKernelFloor: with the floor on in sandbox
// mode a line tagged "floor:" in exfil.txt is allowed (the analysis cannot
// follow it, and the kernel refuses what it opens); every other line is
// refused as without the floor. In default mode with the floor every line
// is refused or, tagged "sc:", asked about, as without it.
func TestExfiltrationSuiteWithTheKernelFloor(t *testing.T) {
	e := newTestEnv(t)
	lines := readSuite(t, "exfil.txt")
	tagged := 0
	for _, sandbox := range []bool{false, true} {
		g := e.floorGuard(sandbox)
		for _, l := range lines {
			d := g.Check(bg, shell(e.expand(l.Line)))
			want, ok := "refuse", d.Verdict == Refuse
			switch {
			case l.Tag == "floor" && sandbox:
				want, ok = "allow", d.Verdict == Allow
			case l.Tag == "sc" && !sandbox:
				want, ok = "security-confirm or refuse", d.Verdict >= SecurityConfirm
			}
			if !ok {
				t.Errorf("floor sandbox=%v exfil.txt:%d [%s] %q: got %v (%s: %s), want %s", sandbox, l.No, l.Tag, l.Line, d.Verdict, d.Checker, d.Reason, want)
			}
			if l.Tag == "floor" && sandbox {
				tagged++
			}
		}
	}
	if tagged == 0 {
		t.Error("exfil.txt tags no line floor:")
	}
}

// TestLegitimateWorkWithTheKernelFloor: the floor only takes refusals and
// questions away; every line of legit.txt is judged as without it.
func TestLegitimateWorkWithTheKernelFloor(t *testing.T) {
	e := newTestEnv(t)
	for _, sandbox := range []bool{false, true} {
		plain, floor := e.guard(sandbox), e.floorGuard(sandbox)
		for _, l := range readSuite(t, "legit.txt") {
			line := e.expand(l.Line)
			want, got := plain.Check(bg, shell(line)), floor.Check(bg, shell(line))
			if got.Verdict != want.Verdict {
				t.Errorf("sandbox=%v legit.txt:%d %q: %v with the floor (%s: %s), %v without", sandbox, l.No, l.Line, got.Verdict, got.Checker, got.Reason, want.Verdict)
			}
		}
	}
}
