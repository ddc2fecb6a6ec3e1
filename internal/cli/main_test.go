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
