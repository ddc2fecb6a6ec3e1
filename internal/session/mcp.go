package session

import (
	"context"
	"errors"
	"time"

	"github.com/nodwyn/nodwyn/internal/mcp"
)

// MCPServer is one declared MCP server with the person's allowances.
type MCPServer struct {
	mcp.Server          // internal/mcp's declaration (Name, Command, Args, Env, URL, Headers, ...)
	Allow      bool     // all its tools run without a confirm
	AllowTools []string // these remote tool names run without a confirm
	Origin     string   // "<file>:<line>" for messages
	// InitTimeout bounds its start, initialize and tools/list; 0 is
	// internal/mcp's default.
	InitTimeout time.Duration
}

// ProbeMCP starts the servers exactly as a session of opts would (same
// seam: kernel floor, namespaces, scrubbed environment, confinement of its
// mode), waits until each is ready or left out, returns their status and
// tools, and stops them all. doctor and `nodwyn mcp list` call it.
func ProbeMCP(ctx context.Context, opts Options) ([]mcp.Status, []mcp.Tool, error) {
	return nil, nil, errors.New("ProbeMCP: not yet")
}
