package prim

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nodwyn/nodwyn/internal/roles"
)

// fs-find {pattern, path}: the paths below path (default the folder) that
// match the glob pattern, honouring .gitignore, shown relative to the
// folder, directories with a trailing "/". The pattern is matched against
// the path relative to the search directory; one with no "/" is matched
// against the name at any depth ("*.go" finds every Go file). "**" matches
// any number of directories, "{a,b}" either alternative.

const maxFindResults = 1000

func init() {
	Register(Tool{Name: "fs-find", Order: 33, Run: (*Tools).fsFind, Params: []Param{
		{Name: "pattern", Type: String, Role: roles.Pattern, Required: true},
		{Name: "path", Type: String, Role: roles.PathSearch},
	}})
}

func (t *Tools) fsFind(ctx context.Context, a Args) (Result, error) {
	pattern := a.Str("pattern")
	dirArg := a.Str("path")
	pattern = filepath.ToSlash(pattern)
	dotSlash := strings.HasPrefix(pattern, "./") // "./x" means x in the directory itself
	pattern = strings.TrimPrefix(pattern, "./")
	if pattern == "" {
		return failf("fs-find: the pattern is empty; give a glob such as \"**/*.go\""), nil
	}
	dir := t.opts.Folder
	if dirArg != "" {
		dir = Resolve(t.opts.Folder, dirArg)
	}
	if filepath.IsAbs(pattern) { // an absolute pattern names its own directory
		if dirArg == "" {
			dir = "/"
		}
		if r, err := filepath.Rel(dir, pattern); err == nil && !strings.HasPrefix(r, "..") {
			pattern, dotSlash = filepath.ToSlash(r), true
		} else {
			return failf("fs-find: the pattern %s is not inside the directory %s; give the directory as path and a relative pattern", pattern, dir), nil
		}
	}
	if err := validGlob(pattern); err != nil {
		return failf("fs-find: bad pattern %q: %v", pattern, err), nil
	}
	return t.flooredErr("fs-find", func() (Result, error) { return t.find(ctx, pattern, dir, dotSlash) })
}

// find is fs-find's work, under the kernel floor: the pattern relative to
// dir.
func (t *Tools) find(ctx context.Context, pattern, dir string, dotSlash bool) (Result, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return failf("fs-find: %v", cleanErr(err)), nil
	}
	if !fi.IsDir() {
		return failf("fs-find: %s is not a directory; give a directory as path", t.rel(dir)), nil
	}

	// Start the walk below the pattern's literal leading directories.
	start, anchored := dir, dotSlash || strings.Contains(pattern, "/")
	if anchored && !strings.Contains(pattern, "{") {
		segs := strings.Split(pattern, "/")
		for len(segs) > 1 && !strings.ContainsAny(segs[0], `*?[\`) {
			next := filepath.Join(start, segs[0])
			if st, err := os.Stat(next); err != nil || !st.IsDir() {
				break
			}
			start = next
			segs = segs[1:]
		}
	}

	var found []string
	total := 0
	w := newWalker(ctx, start)
	w.deny = t.opts.Deny
	w.walk(start, func(abs string, d fs.DirEntry) bool {
		r, _ := filepath.Rel(dir, abs)
		r = filepath.ToSlash(r)
		if !anchored {
			r = d.Name()
		}
		if matchGlob(pattern, r) {
			total++
			if len(found) < maxFindResults {
				s := t.rel(abs)
				if d.IsDir() {
					s += "/"
				}
				found = append(found, s)
			}
		}
		return true
	})
	if err := ctx.Err(); err != nil {
		return Result{Output: "[cancelled]", IsError: true}, err
	}
	var b strings.Builder
	for _, f := range found {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	where := t.rel(dir)
	if total == 0 {
		fmt.Fprintf(&b, "[no path below %s matches %q (files .gitignore names are left out)]", where, pattern)
	} else if total > len(found) {
		fmt.Fprintf(&b, "[%d of %d matches shown; narrow the pattern or give a path]", len(found), total)
	}
	if w.capped {
		fmt.Fprintf(&b, "\n[the search stopped after %d entries; give a narrower path]", w.maxVisit)
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n")}, nil
}

// cleanErr words a file error for the model: "no such file: x" rather than
// "stat /abs/x: no such file or directory".
func cleanErr(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		switch {
		case os.IsNotExist(pe.Err):
			return "no such file or directory: " + pe.Path
		case os.IsPermission(pe.Err):
			return "permission denied: " + pe.Path
		}
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
