package guard

import (
	_ "embed"
	"fmt"
	"os/user"
	"path/filepath"
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
// environment sets NAME: each absolute path of its value (a list, as
// $KUBECONFIG is, split at ':'), with the entry's rest joined on. A
// directory entry that would be the root, the home, the folder or a
// directory above one of them is left out: denying it would deny the work
// itself (GNUPGHOME=$HOME is a mistake, not a place for keys alone).
func envPlaces(opts Options, e CatalogueEntry) []string {
	name, rest, _ := envEntry(e.Path)
	v := opts.Getenv(name)
	if v == "" {
		return nil
	}
	var out []string
	for _, p := range filepath.SplitList(v) {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Join(p, rest)
		if e.Dir || rest == "" {
			broad := p == "/"
			for _, w := range []string{opts.Home, opts.Folder} {
				if w != "" && (w == p || strings.HasPrefix(w, p+string(filepath.Separator))) {
					broad = true
				}
			}
			if broad {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}
