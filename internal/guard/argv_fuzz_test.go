package guard

import (
	"path/filepath"
	"testing"
	"time"
)

// FuzzArgvAnalysis: the analysis never panics and always returns within
// its bound, whatever the line. Seeded from the suites.
func FuzzArgvAnalysis(f *testing.F) {
	e := newTestEnv(f)
	for _, name := range []string{"exfil.txt", "legit.txt"} {
		for _, l := range readSuite(f, name) {
			f.Add(e.expand(l.Line))
		}
	}
	for _, s := range []string{"", "'", "$(", "${", "{a,b}{c,d}{e,f}", "a=(", "<<EOF", "f(){ f; }; f", "eval eval eval x", "{1..100000}", "$((1/0))", "cat <(<(<(x)))"} {
		f.Add(s)
	}
	const bound = 50 * time.Millisecond
	o := e.opts(false)
	o.AnalysisTimeout = bound
	def := New(o)
	o.Sandbox = true
	sb := New(o)
	o.KernelFloor = true
	sbFloor := New(o)
	o.Sandbox = false
	defFloor := New(o)
	o.KernelFloor = false
	o.RunDirs = []string{filepath.Join(e.Scratch, "nodwyn-wc-copy", filepath.Base(e.Folder))}
	o.Checkout = filepath.Dir(e.Folder)
	wc := New(o) // commands run in a working copy
	for _, s := range []string{"echo 'a ~/.ssh b' > f", "git commit -m 'x ~/.aws y'", "sed -i 's/[[:x/y/' f", "sed -i 's/AKIAIOSFODNN7EXAMPLE/x/;1!{/a/s/b/c/}' f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if d := sbFloor.content.Check(bg, Request{Tool: "shell-exec", Args: map[string]any{"command": line}}); d.Verdict != Allow && d.Verdict != SecurityConfirm {
			t.Fatalf("the content scan of %q gave %v", line, d.Verdict)
		}
		// A working copy's reading only adds refusals and questions.
		if w, d := wc.argv.analyze(line), def.argv.analyze(line); !w.unfinished && !d.unfinished && w.decision.Verdict < d.decision.Verdict {
			t.Fatalf("judging %q with RunDirs gave %v, without %v", line, w.decision.Verdict, d.decision.Verdict)
		}
		for _, g := range []*Guard{def, sb, defFloor, sbFloor, wc} {
			start := time.Now()
			d := g.argv.Judge(line)
			// The bound is enforced by a timer; the slack covers a
			// machine busy with fuzzing workers.
			if el := time.Since(start); el > 2*bound+2*time.Second {
				t.Fatalf("judging %q took %v", line, el)
			}
			if d.Verdict < Allow || d.Verdict > Refuse {
				t.Fatalf("judging %q gave verdict %d", line, d.Verdict)
			}
			if d.Verdict != Allow && d.Reason == "" {
				t.Fatalf("judging %q gave %v without a reason", line, d.Verdict)
			}
		}
	})
}
