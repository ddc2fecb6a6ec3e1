package guard

import (
	"sort"
	"testing"
	"time"
)

// BenchmarkArgvTypicalLine judges a typical line with no substitutions
// (the cache is defeated so every iteration analyses it).
func BenchmarkArgvTypicalLine(b *testing.B) {
	e := newTestEnv(b)
	g := e.guard(false)
	lines := []string{
		"go test -run TestX -count=1 ./internal/guard/ 2>&1 | tail -20",
		"go test -run TestX -count=1 ./internal/guard/ 2>&1 | tail -21",
	}
	var all []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		g.argv.Judge(lines[i%2])
		all = append(all, time.Since(start))
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(all[len(all)/2].Nanoseconds())/1e3, "median-µs")
}

// BenchmarkArgvSuite judges every line of both suites and reports the
// median and the slowest line.
func BenchmarkArgvSuite(b *testing.B) {
	e := newTestEnv(b)
	var lines []string
	for _, name := range []string{"exfil.txt", "legit.txt"} {
		for _, l := range readSuite(b, name) {
			lines = append(lines, e.expand(l.Line))
		}
	}
	worst := map[string]time.Duration{}
	var all []time.Duration
	for b.Loop() {
		for _, sandbox := range []bool{false, true} {
			g := e.guard(sandbox)
			for _, l := range lines {
				start := time.Now()
				g.argv.Judge(l)
				d := time.Since(start)
				all = append(all, d)
				if d > worst[l] {
					worst[l] = d
				}
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	var slowLine string
	var slow time.Duration
	for l, d := range worst {
		if d > slow {
			slowLine, slow = l, d
		}
	}
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "median-µs/line")
	b.ReportMetric(float64(slow.Microseconds()), "slowest-µs/line")
	b.Logf("slowest line (%v): %q", slow, slowLine)
}
