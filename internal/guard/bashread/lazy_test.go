package bashread

import (
	"regexp"
	"testing"
	"time"
)

// Compiled at first use, a wrong expression would fail where it is first
// used, not when the package loads: every one compiles here instead.
func TestEveryLazyRegexpCompiles(t *testing.T) {
	if len(lazyREs) < 30 {
		t.Fatalf("%d lazy expressions registered; the reading has more than 30", len(lazyREs))
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
	if !dotglobLine.MatchString("shopt -s dotglob") { // while Warm may be at it
		t.Error("dotglobLine does not match shopt -s dotglob")
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
