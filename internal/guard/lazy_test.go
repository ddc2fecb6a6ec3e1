package guard

import (
	"regexp"
	"testing"
	"time"
)

// Compiled at first use, a wrong expression would fail where it is first
// used, not when the package loads: every one compiles here instead.
func TestEveryLazyRegexpCompiles(t *testing.T) {
	if len(lazyREs) < 40 {
		t.Fatalf("%d lazy expressions registered; the guard has more than 40", len(lazyREs))
	}
	for _, l := range lazyREs {
		if _, err := regexp.Compile(l.src); err != nil {
			t.Errorf("%s: %v", l.src, err)
		}
	}
}

// Warm compiles them all in the background; using one meanwhile is safe.
func TestWarmCompilesThemAll(t *testing.T) {
	Warm()
	if !procDenied.MatchString("/proc/1/environ") { // while Warm may be at it
		t.Error("procDenied does not match /proc/1/environ")
	}
	select {
	case <-warmed:
	case <-time.After(20 * time.Second):
		t.Fatal("Warm did not finish")
	}
	for _, l := range lazyREs {
		if l.get() == nil || l.get().String() != l.src {
			t.Errorf("%s: not compiled", l.src)
		}
	}
}
