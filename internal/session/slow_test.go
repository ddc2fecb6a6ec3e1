package session

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
