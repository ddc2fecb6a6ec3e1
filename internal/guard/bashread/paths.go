package bashread

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nodwyn/nodwyn/internal/fsview"
)

// walkTree walks the directory root depth first in lexical order, as
// filepath.WalkDir does, through fsys: visit is called for every entry
// below root and says whether to descend into it (a directory) and whether
// to stop the walk. Entries that cannot be listed are skipped. It reports
// whether the walk was stopped.
func walkTree(fsys fsview.FS, root string, visit func(p string, d fs.DirEntry) (descend, stop bool)) bool {
	ents, err := fsys.ReadDir(root)
	if err != nil {
		return false
	}
	for _, d := range ents {
		p := filepath.Join(root, d.Name())
		descend, stop := visit(p, d)
		if stop {
			return true
		}
		if descend && walkTree(fsys, p, visit) {
			return true
		}
	}
	return false
}

// JoinRaw joins dir and p without cleaning, so that physical resolution
// can follow links before applying "..".
func JoinRaw(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if dir == "" {
		dir = "/"
	}
	return dir + "/" + p
}

// Within reports whether p is dir or inside it. Both must be clean.
func Within(p, dir string) bool {
	if dir == "" || p == "" {
		return false
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// WithinFold is within without regard to letter case: a denied directory
// is denied however its name is spelt, since a case-insensitive file
// system (macOS's by default) or bash's nocaseglob reaches ~/.ssh as
// ~/.SSH.
func WithinFold(p, dir string) bool {
	if Within(p, dir) {
		return true
	}
	if dir == "" || dir == "/" || len(p) < len(dir) || !strings.EqualFold(p[:len(dir)], dir) {
		return false
	}
	return len(p) == len(dir) || p[len(dir)] == '/'
}

// Physical resolves an absolute path as the system reaches it: symbolic
// links are followed component by component before a ".." is applied. A
// component that does not exist ends the resolution; the rest is applied
// lexically.
func Physical(p string) string { return physicalDepth(p, 0, nil) }

// lstatCache remembers what one analysis learnt about path components.
// With a view (a working copy's reading, see copyview.go) a path inside the
// copy is looked up in the checkout it copies.
type lstatCache struct {
	m    map[string]lstatEntry
	view *copyView
	fs   fsview.FS // nil: the operating system's
}

func newLstatCache(n int) *lstatCache { return &lstatCache{m: make(map[string]lstatEntry, n)} }

type lstatEntry struct {
	missing bool
	link    string // the link's target, or "" for anything but a link
}

func (c *lstatCache) lstat(p string) lstatEntry {
	if c != nil {
		if e, ok := c.m[p]; ok {
			return e
		}
	}
	var e lstatEntry
	var v *copyView
	if c != nil {
		v = c.view
	}
	switch h, kind := v.host(p); kind {
	case viewRoot:
		// The copy's root is a directory of its own, whatever the
		// checkout's path is made of.
	case viewHidden:
		e.missing = true
	default:
		var fsys fsview.FS = fsview.OS{}
		if c != nil && c.fs != nil {
			fsys = c.fs
		}
		fi, err := fsys.Lstat(h)
		switch {
		case err != nil:
			e.missing = true
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := fsys.ReadLink(h); err == nil && t != "" {
				e.link = t
			}
		}
	}
	if c != nil {
		c.m[p] = e
	}
	return e
}

func physicalDepth(p string, depth int, cache *lstatCache) string {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	parts := strings.Split(p, "/")
	cur := "/"
	for i, c := range parts {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		e := cache.lstat(next)
		if e.missing {
			return filepath.Join(next, strings.Join(parts[i+1:], "/"))
		}
		if e.link != "" && depth <= 40 {
			t := e.link
			if !filepath.IsAbs(t) {
				t = cur + "/" + t
			}
			cur = physicalDepth(t, depth+1, cache)
			continue
		}
		cur = next
	}
	return cur
}
