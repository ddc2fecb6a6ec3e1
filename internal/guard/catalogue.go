package guard

import (
	_ "embed"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The credential catalogue (catalogue.txt) is the one table of the places
// that hold credentials: the denylist (PathDenylist), and through it the
// file tools, the argv trigger, the kernel floor (its denied paths) and the
// docs read it. An entry is a directory or a file; the floor denies a file
// as it denies a directory.

//go:embed catalogue.txt
var catalogueText string

// CatalogueEntry is one line of the catalogue: a path as written there
// ("~/.netrc", "$CREDENTIALS_DIRECTORY", "@config"), its kind and what it
// holds.
type CatalogueEntry struct {
	Path string
	Dir  bool // a directory ("dir"); else a file
	What string
}

// Catalogue is the built-in credential catalogue, in its file's order.
var Catalogue = sync.OnceValue(func() []CatalogueEntry {
	es, err := parseCatalogue(catalogueText)
	if err != nil {
		panic(err) // the embedded table; TestCatalogueParses holds it
	}
	return es
})

// parseCatalogue reads the catalogue's lines: "path kind what…".
func parseCatalogue(text string) ([]CatalogueEntry, error) {
	var out []CatalogueEntry
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || (f[1] != "dir" && f[1] != "file") {
			return nil, fmt.Errorf("catalogue.txt:%d: want \"path dir|file what it holds\", got %q", i+1, line)
		}
		p := f[0]
		if _, _, isVar := envEntry(p); !strings.HasPrefix(p, "~/") && !isVar && p != "@config" && p != "@data" && p != "@former" {
			return nil, fmt.Errorf("catalogue.txt:%d: a path is ~/…, $NAME, $NAME/…, @config, @data or @former: %q", i+1, p)
		}
		out = append(out, CatalogueEntry{Path: p, Dir: f[1] == "dir", What: strings.Join(f[2:], " ")})
	}
	return out, nil
}

// catalogued is one place the denylist denies, with the entry that put it
// there (for the refusal's words).
type catalogued struct {
	path  string // absolute, clean
	entry CatalogueEntry
}

// cataloguePaths resolves the catalogue, and the person's own entries
// (Options.Deny), to absolute paths for the session's options: each ~/
// entry in the session's home and in the user's own home from the password
// database when HOME points elsewhere (a harness that gives nodwyn a home
// of its own leaves the user's ~/.ssh where it was).
func cataloguePaths(opts Options) []catalogued {
	var out []catalogued
	add := func(p string, e CatalogueEntry) {
		if p != "" && filepath.IsAbs(p) && filepath.Clean(p) != "/" {
			out = append(out, catalogued{filepath.Clean(p), e})
		}
	}
	homes := []string{opts.Home}
	if u, err := user.Current(); err == nil && u.HomeDir != "" && u.HomeDir != "/" && filepath.Clean(u.HomeDir) != filepath.Clean(opts.Home) {
		homes = append(homes, u.HomeDir)
	}
	// nodwyn's own at their default places in each home too: a run given
	// XDG_CONFIG_HOME elsewhere still keeps the person's own from commands.
	own := []string{".config/nodwyn", ".local/share/nodwyn", ".config/nibb", ".local/share/nibb", ".nibb"}
	resolve := func(e CatalogueEntry) {
		switch {
		case e.Path == "@config":
			add(opts.ConfigDir, e)
			for _, h := range homes {
				if h != "" {
					add(filepath.Join(h, own[0]), e)
				}
			}
		case e.Path == "@data":
			add(opts.DataDir, e)
			for _, h := range homes {
				if h != "" {
					add(filepath.Join(h, own[1]), e)
				}
			}
		case e.Path == "@former":
			for _, d := range []string{opts.ConfigDir, opts.DataDir} {
				if d != "" {
					add(filepath.Join(filepath.Dir(d), "nibb"), e)
				}
			}
			for _, h := range homes {
				if h != "" {
					for _, rel := range own[2:] {
						add(filepath.Join(h, rel), e)
					}
				}
			}
		case e.Path == "$CREDENTIALS_DIRECTORY":
			add(opts.CredentialsDir, e)
		case strings.HasPrefix(e.Path, "$"):
			for _, p := range envPlaces(opts, e) {
				add(p, e)
			}
		case strings.HasPrefix(e.Path, "~/"):
			for _, h := range homes {
				if h != "" {
					add(filepath.Join(h, e.Path[2:]), e)
				}
			}
		case filepath.IsAbs(e.Path):
			add(e.Path, e)
		}
	}
	for _, e := range Catalogue() {
		resolve(e)
	}
	for _, p := range opts.Deny {
		// The person's own: ~/… or absolute (config checks them).
		resolve(CatalogueEntry{Path: p, What: "listed in your config.toml's [sandbox] deny"})
	}
	return out
}

// CatalogueDoc is where a person reads about the catalogue, for refusals.
const CatalogueDoc = "docs/sandbox.md, \"The credential catalogue\"; add your own with [sandbox] deny in your config.toml"

// envEntry splits a catalogue path $NAME or $NAME/rest.
func envEntry(p string) (name, rest string, ok bool) {
	v, found := strings.CutPrefix(p, "$")
	if !found {
		return "", "", false
	}
	name, rest, _ = strings.Cut(v, "/")
	if name == "" {
		return "", "", false
	}
	for i, c := range name {
		if !(c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return "", "", false
		}
	}
	return name, rest, true
}

// envPlaces are the places a $NAME entry names where the person's
// environment sets NAME: each path of its value (a list, as $KUBECONFIG
// is, split at ':'; a relative one from where nodwyn was started), with
// the entry's rest joined on. Left out, by the path as written and as it
// resolves: a place that is the root, the home, the folder, the scratch
// directory or above one of them (GNUPGHOME=$HOME is a mistake, not a
// place for keys alone); one inside the folder or the scratch directory
// (the project's own file, as a project's .npmrc is); and one directly in
// a shared temporary directory (/tmp/key.json): the kernel cannot deny a
// file and still let commands make others beside it, so /tmp would be
// closed to new files.
func envPlaces(opts Options, e CatalogueEntry) []string {
	name, rest, _ := envEntry(e.Path)
	v := opts.Getenv(name)
	if v == "" {
		return nil
	}
	sep := string(filepath.Separator)
	under := func(p, dir string) bool { return dir != "" && (p == dir || strings.HasPrefix(p, dir+sep)) }
	both := func(ws ...string) []string { // as written and as they resolve
		var out []string
		for _, w := range ws {
			if w != "" {
				out = append(out, filepath.Clean(w), physical(w))
			}
		}
		return out
	}
	above := both(opts.Home, opts.Folder, opts.Scratch) // a place may not hold these
	inside := both(opts.Folder, opts.Scratch)           // nor be in these
	temps := []string{"/tmp", "/var/tmp", filepath.Clean(os.TempDir()), physical(os.TempDir())}
	var out []string
places:
	for _, p := range filepath.SplitList(v) {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			abs, err := filepath.Abs(p)
			if err != nil {
				continue
			}
			p = abs
		}
		p = filepath.Join(p, rest)
		for _, q := range []string{p, physical(p)} {
			if q == "/" || slices.Contains(temps, filepath.Dir(q)) {
				continue places
			}
			for _, w := range above {
				if under(w, q) {
					continue places
				}
			}
			for _, w := range inside {
				if under(q, w) {
					continue places
				}
			}
		}
		out = append(out, p)
	}
	return out
}
