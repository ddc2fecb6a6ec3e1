// Package nodwyn holds the Scheme half of nodwyn, embedded in the binary:
// init.scm (the default init), runtime/ (the loop machinery and profiles) and
// prompts/ (every text the loop says to the model). A project overrides any of
// it in its own .nodwyn/init.scm, which is loaded after these.
package nodwyn

import "embed"

// FS is the embedded Scheme tree: init.scm, runtime/*.scm, prompts/*.scm.
//
//go:embed init.scm runtime prompts
var FS embed.FS
