package scheme

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// reverse and list-copy of a cycle say so at once: they used to make pairs
// up to the 16M-element bound first, hundreds of megabytes for a cycle of
// three.
func TestACycleIsRefusedWithoutCopyingIt(t *testing.T) {
	in := New()
	for _, expr := range []string{
		"(let ((l (list 1 2 3))) (set-cdr! (cddr l) l) (reverse l))",
		"(let ((l (list 1 2 3))) (set-cdr! (cddr l) l) (list-copy (cons 0 l)))",
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := in.Eval(context.Background(), expr, "t")
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "circular") {
			t.Errorf("%s: %v, want an error that says circular", expr, err)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
			t.Errorf("%s: %d MB allocated to find the cycle", expr, grown>>20)
		}
	}
}
