package guard

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when one leaves a goroutine behind:
// an analysis that outlives its time bound (a read that blocks) would.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
