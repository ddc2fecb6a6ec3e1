package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The reference MCP server, @modelcontextprotocol/server-everything, from
// the npm registry through npx, in a whole run under the confinement, in a
// fresh home and a folder that is no JavaScript project: npx fetches it
// through the session's proxy (npm's registry is allowed for an npx
// server, ~/.npm made for it); the tool the person's allow_tools names
// runs; another is an ordinary confirm, declined unattended; what the
// server sees of the environment is the commands' scrubbed one; no
// process of it outlives the run.
func TestServerEverythingInARun(t *testing.T) {
	ecoNeeds(t)
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("no npx: the reference server is not run")
	}
	folder := ecoFolder(t, map[string]string{"README": "x\n"})
	config := `[mcp.servers.everything]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
init_timeout = "3m"
allow_tools = ["echo", "get-env"]
`
	t.Setenv("NODWYN_TEST_EVERYTHING_SECRET", "sk-everything-canary-0123456789abcdef")
	r := ecoSession(t, folder, config, nil, []string{
		`everything__echo {"message": "hello from nodwyn"}`,
		`everything__get-sum {"a": 2, "b": 3}`,
		`everything__get-env {}`,
	}, nil)
	if !strings.Contains(r.results[0], "hello from nodwyn") {
		t.Errorf("echo: %q", r.results[0])
	}
	if !strings.HasPrefix(r.results[1], "not run: ") || !strings.Contains(r.results[1], "declined") {
		t.Errorf("get-sum, not allowed, was not declined unattended: %q", r.results[1])
	}
	if env := r.results[2]; !strings.Contains(env, "PATH") || strings.Contains(env, "everything-canary") || strings.Contains(env, "NODWYN_TEST_EVERYTHING_SECRET") {
		t.Errorf("the server's environment is not the scrubbed one: %q", env)
	}
	if _, err := os.Stat(filepath.Join(r.home, ".npm")); err != nil {
		t.Errorf("npm's cache was not made for the npx server: %v", err)
	}
	if !allowedConn(r, "registry.npmjs.org") {
		t.Errorf("npx did not fetch the server through the proxy: %v", r.conns)
	}
	out, _ := exec.Command("pgrep", "-f", "server-everything").Output()
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("server-everything processes outlived the run: %s", out)
	}
}
