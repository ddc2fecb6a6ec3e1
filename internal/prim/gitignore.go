package prim

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A .gitignore matcher and the walk fs-find and index-grep share.
//
// Rules as git reads them: blank lines and "#" comments skipped, trailing
// spaces dropped unless escaped, "!" negates, a trailing "/" matches
// directories only, a pattern with a "/" before its end is anchored to the
// directory of its .gitignore (a leading "/" only anchors), one without
// matches a name at any depth below it; "*", "?" and "[…]" never match "/",
// "**" as a whole segment matches any number of directories. A deeper
// .gitignore takes precedence over a shallower one, a later line over an
// earlier; nothing under an ignored directory is looked at (git cannot
// re-include it either). The repository's .git/info/exclude is read as the
// root's lowest-precedence file. ".git" itself is always skipped, and so
// are /proc, /sys and /dev in a walk from /.

type ignoreRule struct {
	segs    []string
	negate  bool
	dirOnly bool
}

// ignoreFile is one .gitignore: its rules, and the directory it is in as a
// slash path relative to the walk's ignore root ("" for the root).
type ignoreFile struct {
	base  string
	rules []ignoreRule
}

func parseIgnore(base string, data []byte) ignoreFile {
	f := ignoreFile{base: base}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text()); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	var r ignoreRule
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return r, false
	}
	// Trailing spaces go unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-2] + " "
	}
	if line == "" {
		return r, false
	}
	switch {
	case line[0] == '!':
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, "\\!"), strings.HasPrefix(line, "\\#"):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return r, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	if line == "" {
		return r, false
	}
	r.segs = strings.Split(line, "/")
	if !anchored {
		r.segs = append([]string{"**"}, r.segs...)
	}
	if r.segs[len(r.segs)-1] == "**" { // "dir/**": what is inside, not dir itself
		r.segs = append(r.segs, "*")
	}
	return r, true
}

// ignorer is the stack of .gitignore files from the ignore root down to the
// directory being walked.
type ignorer struct{ files []ignoreFile }

// ignored reports whether the slash path rel (relative to the ignore root)
// is ignored.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	var segs []string
	for i := len(ig.files) - 1; i >= 0; i-- {
		f := &ig.files[i]
		if len(f.rules) == 0 {
			continue
		}
		sub := rel
		if f.base != "" {
			if !strings.HasPrefix(rel, f.base+"/") {
				continue
			}
			sub = rel[len(f.base)+1:]
		}
		segs = strings.Split(sub, "/")
		for j := len(f.rules) - 1; j >= 0; j-- {
			r := &f.rules[j]
			if r.dirOnly && !isDir {
				continue
			}
			if matchSegs(r.segs, segs) {
				return !r.negate
			}
		}
	}
	return false
}

// push reads dir's .gitignore (base is dir relative to the ignore root)
// and reports whether it pushed one.
func (ig *ignorer) push(dir, base string) bool {
	data, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return false
	}
	ig.files = append(ig.files, parseIgnore(base, data))
	return true
}

func (ig *ignorer) pop() { ig.files = ig.files[:len(ig.files)-1] }

// matchGlob matches a slash-separated glob against a slash-separated path:
// "**" as a whole segment matches any number of segments, other segments
// are path.Match patterns, and "{a,b}" alternatives are expanded.
func matchGlob(pattern, name string) bool {
	segs := strings.Split(name, "/")
	for _, p := range expandBraces(pattern) {
		if matchSegs(strings.Split(p, "/"), segs) {
			return true
		}
	}
	return false
}

func matchSegs(p, n []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for len(p) > 0 && p[0] == "**" {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(n); i++ {
				if matchSegs(p, n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, err := path.Match(p[0], n[0]); err != nil || !ok {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(n) == 0
}

// expandBraces expands "{a,b}" groups (not nested within one another).
func expandBraces(p string) []string {
	i := strings.IndexByte(p, '{')
	if i < 0 {
		return []string{p}
	}
	j := strings.IndexByte(p[i:], '}')
	if j < 0 {
		return []string{p}
	}
	j += i
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}

// validGlob reports a malformed glob.
func validGlob(pattern string) error {
	for _, p := range expandBraces(pattern) {
		for _, s := range strings.Split(p, "/") {
			if _, err := path.Match(s, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// walker walks a directory tree the way fs-find and index-grep see it.
type walker struct {
	ctx      context.Context
	root     string // the ignore root: the git work tree's top, or the start
	ig       ignorer
	maxVisit int
	visited  int
	capped   bool                  // stopped at maxVisit
	stop     bool                  // the callback asked to stop
	deny     func(abs string) bool // Options.Deny: left out, not descended into
}

const defaultMaxVisit = 200_000

// pseudoFS are the directories of / a walk from / leaves out: the kernel's
// views, where a read can block (/proc/kmsg) or never end. A walk started
// inside one of them still walks it.
var pseudoFS = map[string]bool{"proc": true, "sys": true, "dev": true}

func skipPseudo(dir, name string) bool { return dir == "/" && pseudoFS[name] }

// ignoreRoot is the top of the git work tree holding dir (the nearest
// ancestor with a .git), or dir itself.
func ignoreRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

func newWalker(ctx context.Context, start string) *walker {
	w := &walker{ctx: ctx, root: ignoreRoot(start), maxVisit: defaultMaxVisit}
	if data, err := os.ReadFile(filepath.Join(w.root, ".git", "info", "exclude")); err == nil {
		w.ig.files = append(w.ig.files, parseIgnore("", data))
	}
	// The .gitignore files of the directories above start, down to it.
	if start != w.root {
		rel, _ := filepath.Rel(w.root, start)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		d, base := w.root, ""
		for _, p := range parts {
			w.ig.push(d, base)
			d = filepath.Join(d, p)
			base = path.Join(base, p)
		}
	}
	return w
}

// rel is abs relative to the ignore root, as a slash path.
func (w *walker) rel(abs string) string {
	r, _ := filepath.Rel(w.root, abs)
	return filepath.ToSlash(r)
}

// walk calls fn for everything below dir that is not ignored, in lexical
// order, directories before their contents; fn returns false to stop the
// walk. Symbolic links are reported, never followed.
func (w *walker) walk(dir string, fn func(abs string, d fs.DirEntry) bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	pushed := w.ig.push(dir, w.baseOf(dir))
	defer func() {
		if pushed {
			w.ig.pop()
		}
	}()
	for _, e := range ents {
		if w.stop || w.capped {
			return
		}
		if w.visited%256 == 0 && w.ctx.Err() != nil {
			w.stop = true
			return
		}
		w.visited++
		if w.visited > w.maxVisit {
			w.capped = true
			return
		}
		name := e.Name()
		if name == ".git" {
			continue
		}
		abs := filepath.Join(dir, name)
		if skipPseudo(dir, name) {
			continue
		}
		if w.ig.ignored(w.rel(abs), e.IsDir()) {
			continue
		}
		if w.deny != nil && w.deny(abs) {
			continue
		}
		if !fn(abs, e) {
			w.stop = true
			return
		}
		if e.IsDir() {
			w.walk(abs, fn)
		}
	}
}

func (w *walker) baseOf(dir string) string {
	if dir == w.root {
		return ""
	}
	return w.rel(dir)
}
