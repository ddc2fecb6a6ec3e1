package bench

import "go.starlark.net/syntax"

// starlarkOpts allows recursion, which Starlark forbids by default.
func starlarkOpts() *syntax.FileOptions { return &syntax.FileOptions{Recursion: true, While: true} }
