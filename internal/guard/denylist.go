package guard

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// PathDenylist is the credential denylist: the credential catalogue's
// directories and files (catalogue.txt, resolved for the session) that
// nobody's tool call may reach, and credential-shaped file names. The same
// list serves the file tools, index-grep, fs-find, the argv trigger and
// the kernel floor.
//
// Paths are judged as the system reaches them: links followed before ".."
// is applied. The one exception inside the denied directories is the
// session's scratch directory (Except), and only when both the path and
// what it resolves to are inside it. Credential-shaped names are denied
// everywhere, the scratch directory included.
type PathDenylist struct {
	Dirs   []string // the catalogue's paths, directories and files: absolute, clean; their physical forms included
	Except string   // the session's scratch directory, or ""
	Folder string   // relative file tool paths are relative to it

	exceptPhys string
	entries    map[string]CatalogueEntry // each of Dirs → the entry that put it there
}

// credentialNames are the denylist's name globs.
var credentialNames = []string{
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.ppk",
	"id_*", "*_rsa", "*_dsa", "*_ecdsa", "*_ed25519",
	".env", ".env.*", "*.env",
	"credentials", "credentials.*", ".credentials*",
	".netrc", "_netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc",
	".htpasswd", ".vault-token", "secrets.*", ".secrets*",
}

// sourceExts are the source and documentation extensions exempt from the
// name globs (unless the file is a dotfile).
var sourceExts = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`.go .js .mjs .cjs .ts .tsx .jsx .py .pyi .rb .rs .java .kt .kts
		.c .h .cc .cpp .cxx .hpp .cs .swift .m .php .scala .sh .bash .zsh .fish .scm .ss .rkt .lua .pl .pm
		.md .markdown .rst .adoc .org .html .htm .css .scss .vue .svelte .ex .exs .erl .hs .ml .clj
		.dart .r .jl .sql .proto .tf .nix .el .vim .zig .nim .groovy .gradle .tex`) {
		sourceExts[e] = true
	}
}

// procDenied matches the /proc entries that expose another process's
// environment, memory, root, working directory or open files.
var procDenied = lazyRE(`^/proc/[^/]+/(task/[^/]+/)?(environ|mem|root|cwd|fd|map_files)(/|$)`)

// NewPathDenylist builds the denylist from the session's options: the
// credential catalogue resolved for its home, nodwyn's configuration and
// data directories (where the session found them and at their default
// places), the credentials directory and the person's own entries
// (Options.Deny). Except is the scratch directory.
func NewPathDenylist(opts Options) *PathDenylist {
	opts = withDefaults(opts)
	d := &PathDenylist{Folder: opts.Folder, entries: map[string]CatalogueEntry{}}
	for _, c := range cataloguePaths(opts) {
		for _, q := range []string{c.path, physical(c.path)} {
			if _, dup := d.entries[q]; dup || q == "/" {
				continue
			}
			d.entries[q] = c.entry
			d.Dirs = append(d.Dirs, q)
		}
	}
	if opts.Scratch != "" {
		d.Except = opts.Scratch
		d.exceptPhys = physical(opts.Scratch)
	}
	return d
}

// Entry is the catalogue entry that denies path (one of Dirs), for a
// refusal's words: "~/.netrc (logins for ftp, curl and git)".
func (d *PathDenylist) Entry(path string) (CatalogueEntry, bool) {
	e, ok := d.entries[path]
	return e, ok
}

// why is what a refusal says of the denied path dir: which catalogue entry
// holds it, and where the person reads about it.
func (d *PathDenylist) why(dir string) string {
	e, ok := d.entries[dir]
	if !ok {
		return "which holds credentials"
	}
	return fmt.Sprintf("%s in nodwyn's credential catalogue (%s; see %s)", e.Path, e.What, CatalogueDoc)
}

// excepted reports whether a path, lexically and physically, is inside the
// scratch directory.
func (d *PathDenylist) excepted(lex, phys string) bool {
	return d.Except != "" && within(lex, d.Except) && within(phys, d.exceptPhys)
}

// deniedDir reports the protected directory (or /proc entry) an absolute
// path is in, judged lexically and physically. Names are not judged.
func (d *PathDenylist) deniedDir(p string) (bool, string) {
	return d.deniedDirPhys(p, physical(p))
}

// deniedDirPhys is deniedDir with the physical path already resolved.
func (d *PathDenylist) deniedDirPhys(p, phys string) (bool, string) {
	return d.deniedDirWith(p, phys, physical)
}

// deniedDirWith is deniedDirPhys resolving other forms of p with resolve
// (an analysis's cached resolution, or a working copy's).
func (d *PathDenylist) deniedDirWith(p, phys string, resolve func(string) string) (bool, string) {
	if p == "" || !filepath.IsAbs(p) {
		return false, ""
	}
	lex := filepath.Clean(p)
	// A tool that cleans the path first (filepath.Join) opens lex, and
	// the system then follows its links: newdir/../link/x, where newdir
	// does not exist yet (or a line makes it), reaches through link.
	physLex := phys
	if lex != p && strings.Contains(p, "..") {
		physLex = resolve(lex) // without "..", the same as phys
	}
	for _, q := range []string{lex, phys, physLex, slashes(p)} {
		if procDenied.MatchString(q) {
			return true, q
		}
	}
	if d.excepted(lex, phys) && (physLex == phys || d.excepted(lex, physLex)) {
		return false, ""
	}
	for _, dir := range d.Dirs {
		if withinFold(lex, dir) || withinFold(phys, dir) || withinFold(physLex, dir) {
			return true, dir
		}
	}
	return false, ""
}

// ancestorOfDenied reports whether an absolute path is a directory that
// holds one of the denied directories (the home directory, "/"): copying
// or searching it recursively reaches what the denylist protects.
func (d *PathDenylist) ancestorOfDenied(p, phys string) (bool, string) {
	lex := filepath.Clean(p)
	for _, dir := range d.Dirs {
		for _, q := range []string{lex, phys} {
			if !strings.EqualFold(q, dir) && withinFold(dir, q) {
				return true, dir
			}
		}
	}
	return false, ""
}

// DeniedName reports whether a file's base name is credential-shaped. A
// file with a source or documentation extension that is not a dotfile is
// exempt.
func DeniedName(name string) bool {
	name = filepath.Base(name)
	if name == "" || name == "." || name == "/" || name == ".." {
		return false
	}
	if !strings.HasPrefix(name, ".") && sourceExts[strings.ToLower(filepath.Ext(name))] {
		return false
	}
	lower := strings.ToLower(name)
	for _, g := range credentialGlobs() {
		if g.match(lower) {
			return true
		}
	}
	return false
}

// nameGlob is one of credentialNames, matched without filepath.Match when
// it is a name, a prefix followed by "*" or "*" followed by a suffix (all
// of them are now): DeniedName runs for each path a file tool touches and
// each file a search walks. TestCredentialGlobsMatchAsFilepathMatch holds
// it to filepath.Match's answers.
type nameGlob struct {
	glob        string
	exact       bool
	prefix, suf string
	general     bool // anything else: filepath.Match
}

func (g nameGlob) match(name string) bool {
	switch {
	case g.general:
		ok, _ := filepath.Match(g.glob, name)
		return ok
	case g.exact:
		return name == g.glob
	}
	return len(name) >= len(g.prefix)+len(g.suf) && strings.HasPrefix(name, g.prefix) && strings.HasSuffix(name, g.suf)
}

func compileNameGlob(glob string) nameGlob {
	g := nameGlob{glob: glob}
	switch i := strings.IndexByte(glob, '*'); {
	case strings.ContainsAny(glob, `?[\`) || strings.Count(glob, "*") > 1:
		g.general = true
	case i < 0:
		g.exact = true
	case i == 0:
		g.suf = glob[1:]
	case i == len(glob)-1:
		g.prefix = glob[:i]
	default:
		g.general = true
	}
	return g
}

var credentialGlobs = sync.OnceValue(func() []nameGlob {
	gs := make([]nameGlob, len(credentialNames))
	for i, c := range credentialNames {
		gs[i] = compileNameGlob(c)
	}
	return gs
})

// Denied reports whether a file tool may not touch path, and why. A
// relative path is judged as it is (its base name only); callers make it
// absolute first.
func (d *PathDenylist) Denied(path string) (bool, string) {
	if path == "" || !filepath.IsAbs(path) {
		return d.denied(path, "")
	}
	return d.denied(path, physical(path))
}

// DeniedResolved is Denied for a path the kernel resolved (an open file's
// /proc/self/fd entry): absolute, with no links and no "..", so it is judged
// as it is, without looking at the file system again.
func (d *PathDenylist) DeniedResolved(path string) (bool, string) {
	if !filepath.IsAbs(path) {
		return d.Denied(path)
	}
	return d.denied(path, filepath.Clean(path))
}

// denied is Denied with an absolute path's resolution, phys, made.
func (d *PathDenylist) denied(path, phys string) (bool, string) {
	if path == "" {
		return false, ""
	}
	if filepath.IsAbs(path) {
		if ok, dir := d.deniedDirPhys(path, phys); ok {
			if procDenied.MatchString(dir) {
				return true, fmt.Sprintf("path %s exposes another process's environment, memory or files under /proc; nodwyn never reads it", path)
			}
			return true, fmt.Sprintf("path %s is under %s, %s; nodwyn never reads or writes there, so work with files in the folder or the scratch directory instead", path, dir, d.why(dir))
		}
	}
	lexBase := filepath.Base(filepath.Clean(path))
	physBase := lexBase
	if filepath.IsAbs(path) {
		physBase = filepath.Base(phys)
	}
	for _, b := range []string{lexBase, physBase} {
		if DeniedName(b) {
			return true, fmt.Sprintf("%s has a credential-shaped name (%s); nodwyn's tools never read or write such files, so leave it alone or ask the person to handle it", path, b)
		}
	}
	return false, ""
}

// Name is the checker's name.
func (d *PathDenylist) Name() string { return "PathDenylist" }

// Check refuses a file tool whose path is denied. Relative paths are
// relative to Folder. fs-find and index-grep may start above a denied
// directory (they skip denied files); a root inside one is refused.
func (d *PathDenylist) Check(_ context.Context, req Request) Decision {
	_, abs, ok := toolPath(req, d.Folder)
	if !ok {
		return Decision{}
	}
	// fs-find and index-grep start below a pattern's literal leading
	// directories (homelnk/.ssh/* starts in ~/.ssh): judge where.
	if _, pat := patternOf(req); pat != "" && !filepath.IsAbs(pat) && !strings.Contains(pat, "..") {
		lit := abs
		segs := strings.Split(filepath.ToSlash(pat), "/")
		for _, c := range segs[:len(segs)-1] {
			if strings.ContainsAny(c, "*?[{\\") {
				break
			}
			lit = joinRaw(lit, c)
		}
		if lit != abs {
			if dd, dir := d.deniedDir(lit); dd {
				return Decision{Verdict: Refuse, Checker: d.Name(), Reason: fmt.Sprintf(
					"the %s pattern %q starts in %s, under %s, %s; nodwyn never reads there, so search the folder or the scratch directory instead", req.Tool, pat, lit, dir, d.why(dir))}
			}
		}
	}
	if denied, why := d.Denied(abs); denied {
		if isSearch(req) {
			if dd, _ := d.deniedDir(abs); !dd {
				return Decision{}
			}
		}
		return Decision{Verdict: Refuse, Checker: d.Name(), Reason: why}
	}
	return Decision{}
}

// slashes collapses repeated slashes and "." components without applying
// "..", so /proc/self/cwd/../x still shows what it goes through.
func slashes(p string) string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return "/" + strings.Join(out, "/")
}
