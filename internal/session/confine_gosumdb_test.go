package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/mcp"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// go mod download and go get record the checksum database's latest signed
// tree head in $GOPATH/pkg/sumdb (cmd/go's cfg.SumdbDir), beside the module
// cache, on nearly every download of a new module: without it a fresh
// home's first go mod download fails ("verifying go.mod: …/pkg/sumdb/
// sum.golang.org/latest: no such file or directory"), and so does an older
// home's. The line does what go does there: MkdirAll, then the file.
func TestConfinedWritesLetGoRecordTheChecksumDatabase(t *testing.T) {
	h, home, folder, _ := confinedSession(t, map[string]string{"go.mod": "module example.com/p\n\ngo 1.22\n"}, false)
	o := confinedRun(t, h, home, folder, "mkdir -p ~/go/pkg/sumdb/sum.golang.org && echo 'go.sum database tree' > ~/go/pkg/sumdb/sum.golang.org/latest")
	if o.ExitCode != 0 {
		t.Fatalf("go's checksum database record was refused under write confinement:\n%s", o.Text())
	}
	if _, err := os.Stat(filepath.Join(home, "go", "pkg", "sumdb", "sum.golang.org", "latest")); err != nil {
		t.Fatal(err)
	}
	// The rest of ~/go stays read-only: a command cannot put a program in
	// ~/go/bin, which is on many a person's PATH.
	o = confinedRun(t, h, home, folder, "mkdir -p ~/go/bin && echo x > ~/go/bin/gofmt")
	if _, err := os.Stat(filepath.Join(home, "go", "bin", "gofmt")); err == nil || o.ExitCode == 0 {
		t.Fatalf("a command wrote ~/go/bin under write confinement:\n%s", o.Text())
	}
}

// A cache's location set in nodwyn's own environment (XDG_CACHE_HOME,
// GOPATH, GOMODCACHE, CARGO_HOME, npm_config_cache …) reaches the
// session's commands (prim.ToolchainEnv) unless a command's own
// environment drops it, when its tools write where their defaults are,
// under the home. Both are granted: the defaults, made for the folder's
// ecosystems in a fresh home, and the places nodwyn's environment names.
// Before, a person with XDG_CACHE_HOME
// set could not go test ("failed to initialize build cache at
// ~/.cache/go-build: permission denied"), nor go mod download with GOPATH
// set (as the golang images set it).
func TestConfinedWritesGrantTheCachesCommandsUse(t *testing.T) {
	if _, err := sandbox.LandlockABI(); err != nil {
		t.Skipf("no kernel floor here: %v", err)
	}
	base := t.TempDir()
	home, folder := filepath.Join(base, "home"), filepath.Join(base, "proj")
	for _, d := range []string{home, folder, filepath.Join(base, "tmp")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(folder, "go.mod"), []byte("module example.com/p\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(folder, "package.json"), []byte("{}\n"), 0o644)
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	t.Setenv("HOME", home)
	for k, v := range map[string]string{"XDG_CACHE_HOME": "xdg-cache", "GOPATH": "gopath", "GOMODCACHE": "gomodcache", "npm_config_cache": "npm-cache"} {
		t.Setenv(k, filepath.Join(base, v))
	}
	scratch := filepath.Join(home, ".local/share/nodwyn/scratch/s1")
	os.MkdirAll(scratch, 0o700)
	g := guard.Options{Folder: folder, Home: home, Scratch: scratch, ConfigDir: filepath.Join(home, ".config/nodwyn"), DataDir: filepath.Join(home, ".local/share/nodwyn")}
	f, line, _ := makeFloor(g, false, &confinement{})
	if f == nil {
		t.Fatalf("no floor: %s", line)
	}
	t.Cleanup(f.Close)
	h := sandbox.NewHost(sandbox.HostOptions{Floor: f})
	t.Cleanup(func() { h.Close() })
	// The environment a command gets (prim's scrub of this one): none of
	// the variables above.
	env := prim.ScrubEnv(os.Environ(), prim.DefaultOptions().EnvAllow)
	for _, kv := range env {
		if strings.HasPrefix(kv, "XDG_CACHE_HOME=") || strings.HasPrefix(kv, "GOPATH=") {
			t.Skipf("prim passes %s to commands now: they write where nodwyn's environment says, which is granted", kv)
		}
	}
	for _, p := range []string{"~/.cache/go-build/00", "~/go/pkg/mod/cache/download", "~/go/pkg/sumdb/sum.golang.org", "~/.npm/_cacache"} {
		line := "mkdir -p " + p + " && echo x > " + p + "/f"
		o, err := h.Run(context.Background(), sandbox.Command{Shell: "/bin/bash", Line: line, Dir: folder, Env: env, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if o.ExitCode != 0 {
			t.Errorf("%s, where the command's tool writes, was refused:\n%s", p, o.Text())
		}
	}
}

// An MCP server started with npx fills npm's cache on its first start,
// whatever the folder is: the cache is made and granted for it, as for a
// folder with a package.json, and not for a run with no such server.
func TestAnMCPServersEcosystemGetsItsCache(t *testing.T) {
	base := t.TempDir()
	home, folder := filepath.Join(base, "home"), filepath.Join(base, "proj")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(folder, 0o755)
	t.Setenv("npm_config_cache", "")
	npmCache := filepath.Join(home, ".npm")
	servers := []MCPServer{{Server: mcp.Server{Name: "everything", Command: "/usr/bin/npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}},
		{Server: mcp.Server{Name: "web", URL: "http://127.0.0.1:1/mcp"}}}
	if got := mcpEcosystems(servers); !slices.Equal(got, []string{"npm"}) {
		t.Fatalf("mcpEcosystems = %v", got)
	}
	ws := writableFor(folder, home, nil)
	if _, err := os.Stat(npmCache); err == nil || slices.Contains(ws.made, npmCache) {
		t.Fatalf("~/.npm made for a run with no npx server: %v", ws.made)
	}
	ws = writableFor(folder, home, nil, mcpEcosystems(servers)...)
	if fi, err := os.Stat(npmCache); err != nil || !fi.IsDir() || !slices.Contains(ws.paths, npmCache) {
		t.Fatalf("~/.npm not made and granted for an npx server: %v (paths %v)", err, ws.paths)
	}
}
