package cli

import (
	"maps"
	"strings"
	"testing"
)

// nodwyn guard --tool maps its line by prim's table: a tool's command line,
// or else its path, its other required strings empty; a tool with neither,
// or one that is not in the table, is a usage error.
func TestGuardToolArgumentsComeFromTheTable(t *testing.T) {
	for tool, want := range map[string]map[string]any{
		"shell-exec": {"command": "L"},
		"self-check": {"command": "L"},
		"run-tests":  {"command": "L"},
		"fs-read":    {"path": "L"},
		"fs-write":   {"path": "L", "content": ""},
		"fs-edit":    {"path": "L", "old": "", "new": ""},
		"fs-find":    {"pattern": "", "path": "L"},
		"index-grep": {"pattern": "", "path": "L"},
		"git-diff":   {"path": "L"},
	} {
		req, err := guardRequest(tool, "L")
		if err != nil || req.Tool != tool || !maps.Equal(req.Args, want) {
			t.Errorf("%s: %+v, %v; want %v", tool, req, err, want)
		}
	}
	for tool, msg := range map[string]string{"git-status": "nothing to judge", "fs-delete": "no such tool; the tools are: shell-exec, shell-start"} {
		if _, err := guardRequest(tool, "L"); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", tool, err, msg)
		}
	}
}
