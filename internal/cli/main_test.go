package cli

import (
	"os"
	"testing"

	"github.com/nodwyn/nodwyn/internal/mcp/mcptest"
)

// TestMain: the test binary is also the MCP test server, run with
// NODWYN_MCPTEST set (a config's command = os.Args[0]).
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	os.Exit(m.Run())
}

// scratchInTest sets TMPDIR to a directory of the test's own for its
// length: a sandbox-mode run keeps its scratch directory when it ends
// (docs/sandbox.md), and in the test's directory it goes with it instead
// of piling up in /tmp.
func scratchInTest(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
}
