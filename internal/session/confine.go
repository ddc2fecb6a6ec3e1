package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nodwyn/nodwyn/internal/prim"
)

// What commands may write outside sandbox mode (issue 28): the folder, the
// session's scratch directory (the floor's exception), the temporary
// directory, the devices a program writes to, the build caches, and what
// the person adds with [sandbox] writable in their own config.toml or
// --writable for one run. Everything else is read-only to commands, by the
// kernel floor (sandbox.Floor.ConfineWrites).

// WidenHint is how the person widens what commands may write; a command
// refused a write is told it.
const WidenHint = `the person widens it with [sandbox] writable = ["~/dir"] in their own config.toml, or --writable DIR for one run`

// writeDevices are the device files and directories programs write to.
var writeDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}

// ecoCache is a build cache of one ecosystem: where it is (made when
// missing and the folder uses the ecosystem, so a fresh home's first build
// can write it in the same command), and the folder's files that mark the
// ecosystem. getenv is one of cacheEnvs.
type ecoCache struct {
	name    string
	dirs    func(home string, getenv func(string) string) []string
	files   func(home string, getenv func(string) string) []string // lock files that must exist to be granted
	markers []string
}

// cacheEnvs are the environments a cache's place is read from, and both
// places are granted: nodwyn's own (the person's settings, GOMODCACHE,
// XDG_CACHE_HOME …) and the one its commands get, which prim scrubs to
// prim.DefaultOptions().EnvAllow, so that their tools write where their
// defaults are, under the home.
func cacheEnvs() []func(string) string {
	cmd := prim.ScrubEnv(os.Environ(), prim.DefaultOptions().EnvAllow)
	return []func(string) string{os.Getenv, func(name string) string {
		for i := len(cmd) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(cmd[i], name+"="); ok {
				return v
			}
		}
		return ""
	}}
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); filepath.IsAbs(v) {
		return v
	}
	return def
}

// goPath is the first $GOPATH, else ~/go (as go env GOPATH says, without
// running go).
func goPath(home string, getenv func(string) string) string {
	if gp := filepath.SplitList(getenv("GOPATH")); len(gp) > 0 && filepath.IsAbs(gp[0]) {
		return gp[0]
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, "go")
}

// goModCache is $GOMODCACHE, else the first $GOPATH's pkg/mod, else
// ~/go/pkg/mod (as go env GOMODCACHE says, without running go).
func goModCache(home string, getenv func(string) string) string {
	if v := getenv("GOMODCACHE"); filepath.IsAbs(v) {
		return v
	}
	if gp := goPath(home, getenv); gp != "" {
		return filepath.Join(gp, "pkg", "mod")
	}
	return ""
}

// goSumdb is where go records the checksum database's latest tree head on
// a download (cmd/go's cfg.SumdbDir: the first $GOPATH's pkg/sumdb, never
// under $GOMODCACHE).
func goSumdb(home string, getenv func(string) string) string {
	if gp := goPath(home, getenv); gp != "" {
		return filepath.Join(gp, "pkg", "sumdb")
	}
	return ""
}

func cargoHome(home string, getenv func(string) string) string {
	return envOr(getenv, "CARGO_HOME", filepath.Join(home, ".cargo"))
}

// cacheHomeIn is $XDG_CACHE_HOME in getenv, else ~/.cache.
func cacheHomeIn(home string, getenv func(string) string) string {
	if x := getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return x
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache")
}

var ecoCaches = []ecoCache{
	{name: "go", markers: []string{"go.mod", "go.work"}, dirs: func(home string, getenv func(string) string) []string {
		d := []string{goModCache(home, getenv), goSumdb(home, getenv)}
		if v := getenv("GOCACHE"); filepath.IsAbs(v) {
			d = append(d, v)
		}
		return d
	}},
	{name: "npm", markers: []string{"package.json"}, dirs: func(home string, getenv func(string) string) []string {
		return []string{envOr(getenv, "npm_config_cache", filepath.Join(home, ".npm"))}
	}},
	{name: "pip", markers: []string{"requirements.txt", "pyproject.toml", "setup.py"}, dirs: func(home string, getenv func(string) string) []string {
		if v := getenv("PIP_CACHE_DIR"); filepath.IsAbs(v) {
			return []string{v}
		}
		return nil // in the cache home
	}},
	{name: "cargo", markers: []string{"Cargo.toml"}, dirs: func(home string, getenv func(string) string) []string {
		c := cargoHome(home, getenv)
		return []string{filepath.Join(c, "registry"), filepath.Join(c, "git")}
	}, files: func(home string, getenv func(string) string) []string {
		c := cargoHome(home, getenv)
		return []string{filepath.Join(c, ".package-cache"), filepath.Join(c, ".package-cache-mutate"), filepath.Join(c, ".global-cache")}
	}},
	{name: "maven", markers: []string{"pom.xml"}, dirs: func(home string, getenv func(string) string) []string {
		return []string{filepath.Join(home, ".m2", "repository")}
	}},
	{name: "gradle", markers: []string{"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"}, dirs: func(home string, getenv func(string) string) []string {
		g := envOr(getenv, "GRADLE_USER_HOME", filepath.Join(home, ".gradle"))
		return []string{filepath.Join(g, "caches"), filepath.Join(g, "wrapper"), filepath.Join(g, "daemon"), filepath.Join(g, "native")}
	}},
}

// writeSet is what commands may write, and what was made for it.
type writeSet struct {
	paths []string // absolute; what does not exist is skipped by the floor
	made  []string // caches made now for the folder's ecosystems
	extra []string // the person's additions, as given
}

// writableFor is the write set of a session in folder with the scratch
// directory scratch (granted by the floor as its exception) and the
// person's additions extra (~/… or absolute; from [sandbox] writable and
// --writable). The caches of the ecosystems the folder uses are made when
// missing; the others are granted where they exist.
//
// also names ecosystems (ecoCache names) used beside the folder's: those
// of the run's MCP servers (mcpEcosystems), whose caches are made too, so
// that `npx -y some-server` in a folder that is no JavaScript project can
// fill ~/.npm on its first start.
func writableFor(folder, home string, extra []string, also ...string) writeSet {
	return writeSetFor(folder, home, extra, true, also...)
}

// mcpEcosystems are the ecosystems whose caches the run's stdio MCP
// servers use, by the program each starts: npx and the like fetch the
// server into npm's cache, uvx into the cache home (granted anyway), go
// run builds into Go's.
func mcpEcosystems(servers []MCPServer) []string {
	var uses []string
	for _, s := range servers {
		if s.Command == "" {
			continue
		}
		switch filepath.Base(s.Command) {
		case "npx", "npm", "node", "pnpm", "pnpx", "yarn", "bunx":
			uses = append(uses, "npm")
		case "go":
			uses = append(uses, "go")
		case "cargo":
			uses = append(uses, "cargo")
		case "uvx", "uv", "pip", "pipx":
			uses = append(uses, "pip")
		case "mvn", "java":
			uses = append(uses, "maven")
		}
	}
	slices.Sort(uses)
	return slices.Compact(uses)
}

// WritesLine says where a session's commands in folder would write, with
// the person's additions extra, without making anything (nodwyn doctor).
func WritesLine(folder, home string, extra []string) string {
	return "commands write only in " + writeSetFor(folder, home, extra, false).summary(folder, home) + " and the scratch directory"
}

// writeSetFor is writableFor, making the folder's missing caches only when
// mk is set.
func writeSetFor(folder, home string, extra []string, mk bool, also ...string) writeSet {
	var ws writeSet
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			ws.paths = append(ws.paths, filepath.Clean(p))
		}
	}
	add(folder)
	add(os.TempDir())
	for _, d := range writeDevices {
		add(d)
	}
	add(cacheHome(home))
	if home == "" {
		return ws.finish(extra, home)
	}
	envs := cacheEnvs()
	// The cache home the commands' tools use (~/.cache when nodwyn's
	// XDG_CACHE_HOME is elsewhere) is made as makeFloor makes nodwyn's.
	if ch := cacheHomeIn(home, envs[1]); ch != "" {
		if _, err := os.Lstat(ch); mk && errors.Is(err, fs.ErrNotExist) && os.MkdirAll(ch, 0o700) == nil {
			ws.made = append(ws.made, ch)
		}
		add(ch)
	}
	for _, e := range ecoCaches {
		uses := slices.Contains(also, e.name) // an MCP server's
		for _, m := range e.markers {
			if _, err := os.Stat(filepath.Join(folder, m)); err == nil {
				uses = true
				break
			}
		}
		var dirs, files []string
		for _, getenv := range envs {
			dirs = append(dirs, e.dirs(home, getenv)...)
			if e.files != nil {
				files = append(files, e.files(home, getenv)...)
			}
		}
		slices.Sort(dirs)
		slices.Sort(files)
		for _, d := range slices.Compact(dirs) {
			if d == "" {
				continue
			}
			if uses && mk {
				if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) && os.MkdirAll(d, 0o755) == nil {
					ws.made = append(ws.made, d)
				}
			}
			add(d)
		}
		for _, f := range slices.Compact(files) {
			if uses && mk {
				if _, err := os.Lstat(filepath.Dir(f)); err == nil {
					if fh, err := os.OpenFile(f, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
						fh.Close()
						ws.made = append(ws.made, f)
					}
				}
			}
			add(f)
		}
	}
	// pnpm's store and yarn's cache outside the cache home, where they are.
	add(filepath.Join(home, ".local", "share", "pnpm"))
	add(filepath.Join(home, ".yarn", "berry", "cache"))
	return ws.finish(extra, home)
}

func (ws writeSet) finish(extra []string, home string) writeSet {
	for _, e := range extra {
		p := e
		if rest, ok := strings.CutPrefix(e, "~/"); ok && home != "" {
			p = filepath.Join(home, rest)
		} else if e == "~" {
			p = home
		}
		if filepath.IsAbs(p) {
			ws.paths = append(ws.paths, filepath.Clean(p))
			ws.extra = append(ws.extra, e)
		}
	}
	sort.Strings(ws.paths)
	ws.paths = slices.Compact(ws.paths)
	return ws
}

// summary is the write set for a person, in a few words: "the folder,
// scratch, /tmp, ~/.cache, ~/go/pkg/mod".
func (ws writeSet) summary(folder, home string) string {
	var parts []string
	seen := map[string]bool{}
	for _, p := range ws.paths {
		if strings.HasPrefix(p, "/dev/") {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		s := p
		switch {
		case p == folder:
			s = "the folder"
		case home != "" && strings.HasPrefix(p, home+"/"):
			s = "~/" + strings.TrimPrefix(p, home+"/")
		}
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	// The folder first, then the rest as sorted.
	for i, s := range parts {
		if s == "the folder" {
			parts = append([]string{s}, append(parts[:i:i], parts[i+1:]...)...)
			break
		}
	}
	return strings.Join(parts, ", ")
}
