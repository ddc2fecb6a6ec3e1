package prim

import "github.com/nodwyn/nodwyn/internal/sandbox"

// The process helpers the tests use, from the sandbox that now owns them.
var (
	pidAlive   = sandbox.PidAlive
	groupAlive = sandbox.GroupAlive
	StopMarked = sandbox.StopMarked
)

const MarkEnv = sandbox.MarkEnv
