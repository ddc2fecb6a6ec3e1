package nodwyn

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The packages' dependencies, as docs/architecture.md draws them (the idea
// of tailscale's deptest). Each package lists the imports outside the
// standard library it may have; a package not listed here fails the test
// until it is given a line (and the docs a sentence).
const mod = "github.com/nodwyn/nodwyn"

var allowedImports = map[string][]string{
	// The interpreter stands alone: other programs can adopt it.
	"scheme": {},
	// Plain storage and configuration: the standard library (and the TOML
	// reader).
	"internal/store":   {mod + "/internal/termtext", mod + "/internal/event"},
	"internal/config":  {"github.com/BurntSushi/toml"},
	"internal/trust":   {},
	"internal/journal": {},
	"internal/fsview":  {"golang.org/x/sys/*"},
	// What another party chose, escaped for a terminal: a leaf that cli and
	// store ('nodwyn log') both print through.
	"internal/termtext": {},
	// The session's egress proxy and its allowlist: the standard library.
	"internal/egress": {},
	// The MCP client: the go-sdk.
	"internal/mcp": {"github.com/modelcontextprotocol/go-sdk/*"},
	// mcptest is the MCP server the tests start (a re-exec of the test binary).
	"internal/mcp/mcptest": {"github.com/modelcontextprotocol/go-sdk/*"},
	// The system keychain (go-keyring; godbus only to read its errors), and
	// the tests' private Secret Service.
	"internal/keychain":              {"github.com/zalando/go-keyring", "github.com/godbus/dbus/v5"},
	"internal/keychain/keychaintest": {},
	// The daemon's wire: JSON-RPC 2.0 on a unix socket, knowing nothing of
	// runs.
	"internal/rpc": {"golang.org/x/sys/*"},
	// Execution: the kernel's interfaces.
	"internal/sandbox": {"golang.org/x/sys/*"},
	// The tools run programs through the seam and read paths as the guard's
	// analysis does (fsview).
	"internal/prim": {mod + "/internal/sandbox", mod + "/internal/fsview", mod + "/internal/roles", "golang.org/x/sys/*"},
	// The types of a run's events (docs/events.md), which the session writes
	// and the display, the trajectory, the daemon and 'nodwyn log' read: a
	// leaf.
	"internal/event": {},
	// The one vocabulary of tool parameters' roles, which prim's table,
	// define-tool and the guard share: a leaf.
	"internal/roles": {},
	// The guard knows tools only as data (guard.Options.Tools) and reads the
	// file system through fsview: it never imports prim, scheme or session.
	// It reads a command line through bashread, and judges what that tells.
	"internal/guard": {mod + "/internal/fsview", mod + "/internal/guard/bashread", mod + "/internal/roles"},
	// The reading of a bash line: the only importer of mvdan.cc/sh. It
	// decides nothing, so it never reaches the guard's policy.
	"internal/guard/bashread": {"mvdan.cc/sh/v3/*", mod + "/internal/fsview"},
	// The providers' wire layer: nodwyn's own on net/http, no SDK; x/crypto
	// only for the CA roots a static binary embeds.
	"internal/provider": {"golang.org/x/crypto/*"},
	// The session joins the interpreter and the domain packages; it is the
	// only package that imports scheme (see TestOnlySessionImportsScheme).
	"internal/session": {mod, mod + "/scheme", mod + "/internal/config", mod + "/internal/fsview", mod + "/internal/guard", mod + "/internal/journal",
		mod + "/internal/prim", mod + "/internal/provider", mod + "/internal/sandbox", mod + "/internal/store", mod + "/internal/egress", mod + "/internal/roles", mod + "/internal/mcp",
		mod + "/internal/event"},
	// The run, whoever asked for it (nodwyn run, the console, the daemon):
	// its Spec, and the one path from it to a session. No kong, no rpc: the
	// command line and the daemon's wire are its callers'.
	"internal/launch": {"golang.org/x/sys/*",
		mod + "/internal/config", mod + "/internal/guard", mod + "/internal/keychain", mod + "/internal/mcp", mod + "/internal/provider",
		mod + "/internal/sandbox", mod + "/internal/session", mod + "/internal/store", mod + "/internal/termtext", mod + "/internal/trust",
		mod + "/internal/event"},
	// The daemon, split as tailscale splits ipnserver / localapi / ipnlocal
	// / apitype: the server (socket, token, admission), its method table
	// and handlers, its runs, and the wire types its client shares.
	"internal/daemon": {"golang.org/x/sys/*", mod + "/internal/config", mod + "/internal/daemon/methods", mod + "/internal/daemon/runs",
		mod + "/internal/daemon/wire", mod + "/internal/launch", mod + "/internal/rpc", mod + "/internal/sandbox", mod + "/internal/store"},
	"internal/daemon/methods": {mod + "/internal/daemon/runs", mod + "/internal/daemon/wire", mod + "/internal/launch", mod + "/internal/rpc",
		mod + "/internal/session", mod + "/internal/store"},
	"internal/daemon/runs": {mod + "/internal/config", mod + "/internal/daemon/wire", mod + "/internal/guard", mod + "/internal/launch",
		mod + "/internal/session", mod + "/internal/store", mod + "/internal/event"},
	"internal/daemon/wire": {mod + "/internal/launch", mod + "/internal/store"},
	// The command line: everything but the interpreter (through session).
	"internal/cli": {"github.com/alecthomas/kong", "golang.org/x/sys/*", "golang.org/x/term",
		mod + "/internal/config", mod + "/internal/daemon", mod + "/internal/daemon/methods", mod + "/internal/daemon/wire",
		mod + "/internal/egress", mod + "/internal/guard", mod + "/internal/journal", mod + "/internal/keychain", mod + "/internal/launch", mod + "/internal/mcp", mod + "/internal/prim",
		mod + "/internal/provider", mod + "/internal/roles", mod + "/internal/rpc", mod + "/internal/sandbox", mod + "/internal/session", mod + "/internal/store", mod + "/internal/termtext", mod + "/internal/trust",
		mod + "/internal/event"},
	"cmd/nodwyn": {mod + "/internal/cli"},
	".":          {},
}

// neverReaches: packages that must not be among a package's dependencies
// at any depth.
var neverReaches = map[string][]string{
	"internal/guard":          {"internal/prim", "scheme", "internal/session", "internal/cli", "internal/provider"},
	"internal/guard/bashread": {"internal/guard", "internal/prim", "scheme", "internal/session", "internal/cli", "internal/provider"},
	"internal/prim":           {"scheme", "internal/session", "internal/guard", "internal/cli"},
	"internal/sandbox":        {"scheme", "internal/session", "internal/guard", "internal/prim"},
	"internal/egress":         {"scheme", "internal/session", "internal/guard", "internal/prim"},
	"internal/mcp":            {"scheme", "internal/session", "internal/guard", "internal/prim"},
	"internal/provider":       {"scheme", "internal/session", "internal/guard", "internal/prim"},
	"internal/store":          {"scheme", "internal/session"},
	"internal/rpc":            {"scheme", "internal/session", "internal/guard", "internal/prim"},
	"internal/config":         {"scheme", "internal/session"},
	"internal/keychain":       {"scheme", "internal/session", "internal/guard", "internal/prim", "internal/config"},
	"internal/launch":         {"internal/cli", "internal/rpc", "internal/daemon"},
	"internal/daemon/runs":    {"internal/cli", "internal/rpc"},
	"internal/daemon/wire":    {"internal/cli", "internal/rpc"},
}

type listed struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
}

func goList(t *testing.T) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Standard,Imports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) string {
	if path == mod {
		return "."
	}
	return strings.TrimPrefix(path, mod+"/")
}

func allowed(imp string, list []string) bool {
	for _, a := range list {
		if a == imp || (strings.HasSuffix(a, "/*") && strings.HasPrefix(imp, strings.TrimSuffix(a, "*"))) {
			return true
		}
	}
	return false
}

// isStd: an import path with no dot in its first element is the standard
// library's.
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func TestPackageDependencies(t *testing.T) {
	for _, p := range goList(t) {
		name := rel(p.ImportPath)
		if strings.HasPrefix(name, "bench") {
			continue // benchmarks only
		}
		list, ok := allowedImports[name]
		if !ok {
			t.Errorf("%s is not in deps_test.go's table: give it a line (what it may import) and docs/architecture.md a sentence", name)
			continue
		}
		for _, imp := range p.Imports {
			if isStd(imp) || allowed(imp, list) {
				continue
			}
			t.Errorf("%s imports %s, which its line in deps_test.go does not allow (see docs/architecture.md, \"Packages\")", name, imp)
		}
		for _, never := range neverReaches[name] {
			if slices.Contains(p.Deps, mod+"/"+never) {
				t.Errorf("%s depends on %s (at some depth), which it must never reach", name, never)
			}
		}
	}
}

// Only session imports scheme: the CLI reaches the interpreter through
// the session, so nothing else can make an interpreter with powers of its
// own (file access: scheme.Options.Files).
func TestOnlySessionImportsScheme(t *testing.T) {
	for _, p := range goList(t) {
		name := rel(p.ImportPath)
		if name == "internal/session" || strings.HasPrefix(name, "bench") {
			continue
		}
		if slices.Contains(p.Imports, mod+"/scheme") {
			t.Errorf("%s imports scheme; only internal/session may (it joins the interpreter and the domain packages)", name)
		}
	}
}

// The table catches what it is for: a package that imports what its line
// does not allow.
func TestAllowedImportsRefuses(t *testing.T) {
	if allowed(mod+"/internal/prim", allowedImports["internal/guard"]) {
		t.Error("the guard's line allows prim")
	}
	if allowed("github.com/BurntSushi/toml", allowedImports["internal/store"]) {
		t.Error("store's line allows toml")
	}
	if !allowed("golang.org/x/sys/unix", allowedImports["internal/sandbox"]) || !allowed("mvdan.cc/sh/v3/syntax", allowedImports["internal/guard/bashread"]) {
		t.Error("a wildcard line does not match")
	}
	if !isStd("net/http") || isStd("golang.org/x/term") {
		t.Error("isStd")
	}
}
