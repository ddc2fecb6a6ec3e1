package sandbox

import (
	"os"
	"testing"
)

// slowTest skips a for-real suite that takes tens of seconds unless
// NODWYN_SLOW_TESTS=1 (make test-slow, which .ci/run runs after make
// test): make test stays within its few minutes on a fresh machine.
func slowTest(t *testing.T) {
	t.Helper()
	if os.Getenv("NODWYN_SLOW_TESTS") != "1" {
		t.Skip("a slow for-real suite: make test-slow runs it (NODWYN_SLOW_TESTS=1)")
	}
}

// slowCount is fast under make test and slow under make test-slow
// (NODWYN_SLOW_TESTS=1): the rounds of a test that holds a core while it
// runs, a few under make test, all of them under make test-slow.
func slowCount(fast, slow int) int {
	if os.Getenv("NODWYN_SLOW_TESTS") == "1" {
		return slow
	}
	return fast
}
