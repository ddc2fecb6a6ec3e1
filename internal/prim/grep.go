package prim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/nodwyn/nodwyn/internal/fsview"
	"github.com/nodwyn/nodwyn/internal/roles"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// index-grep {pattern, path, glob, ignore_case}: the lines matching a Go
// regular expression in the files below path (default the folder, or one
// file), as "path:line: text", honouring .gitignore, skipping binary files
// and files over maxGrepFileSize. glob filters the files, as fs-find's
// pattern does (no "/": by name). Capped at maxGrepMatches lines and
// maxGrepBytes of output, with a note.

const (
	maxGrepMatches  = 500
	maxGrepBytes    = 64 << 10
	maxGrepLine     = 300
	maxGrepFileSize = 16 << 20
)

func init() {
	Register(Tool{Name: "index-grep", Order: 34, Run: (*Tools).indexGrep, Params: []Param{
		{Name: "pattern", Type: String, Required: true},
		{Name: "path", Type: String, Role: roles.PathSearch},
		{Name: "glob", Type: String, Role: roles.Pattern},
		{Name: "ignore_case", Type: Boolean},
	}})
}

func (t *Tools) indexGrep(ctx context.Context, a Args) (Result, error) {
	pattern := a.Str("pattern")
	pathArg := a.Str("path")
	glob := strings.TrimPrefix(filepath.ToSlash(a.Str("glob")), "./")
	fold := a.Bool("ignore_case")
	if pattern == "" {
		return failf("index-grep: the pattern is empty"), nil
	}
	expr := pattern
	if fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return failf("index-grep: bad regular expression %q: %v (Go RE2 syntax: escape literal ( [ { . * + ? with a backslash)", pattern, err), nil
	}
	// A whole-file look first skips files without a match; (?m) keeps ^ and
	// $ at line ends so it never misses what the line scan would find.
	var pre *regexp.Regexp
	if !strings.Contains(pattern, `\A`) && !strings.Contains(pattern, `\z`) {
		pre, _ = regexp.Compile("(?m)" + expr)
	}
	if glob != "" {
		if err := validGlob(glob); err != nil {
			return failf("index-grep: bad glob %q: %v", glob, err), nil
		}
	}
	root := t.opts.Folder
	if pathArg != "" {
		root = Resolve(t.opts.Folder, pathArg)
	}
	return t.flooredErr("index-grep", func() (Result, error) { return t.grep(ctx, pattern, root, glob, re, pre) })
}

// grep is index-grep's work, under the kernel floor.
func (t *Tools) grep(ctx context.Context, pattern, root, glob string, re, pre *regexp.Regexp) (Result, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return failf("index-grep: %v", cleanErr(err)), nil
	}

	g := grepper{t: t, re: re, pre: pre}
	if !fi.IsDir() {
		g.file(root)
	} else {
		w := newWalker(ctx, root)
		w.deny = t.opts.Deny
		w.walk(root, func(abs string, d fs.DirEntry) bool {
			if !d.Type().IsRegular() {
				return true
			}
			if glob != "" {
				name := d.Name()
				if strings.Contains(glob, "/") {
					r, _ := filepath.Rel(root, abs)
					name = filepath.ToSlash(r)
				}
				if !matchGlob(glob, name) {
					return true
				}
			}
			g.file(abs)
			return !g.full
		})
		g.capped = w.capped
	}
	if err := ctx.Err(); err != nil {
		return Result{Output: "[cancelled]", IsError: true}, err
	}
	out := &g.out
	switch {
	case g.matches == 0:
		fmt.Fprintf(out, "[no match for %q in %d files below %s", pattern, g.files, t.rel(root))
		if g.binary > 0 || g.large > 0 {
			fmt.Fprintf(out, "; %d binary and %d very large files skipped", g.binary, g.large)
		}
		out.WriteString("]")
	case g.full:
		fmt.Fprintf(out, "[stopped at %d matching lines (%d bytes); there are more: narrow the pattern, path or glob]", g.matches, out.Len())
	default:
		fmt.Fprintf(out, "[%d matching lines in %d files]", g.matches, g.inFiles)
	}
	if g.capped {
		fmt.Fprintf(out, "\n[the search stopped after %d entries; give a narrower path]", defaultMaxVisit)
	}
	return Result{Output: out.String()}, nil
}

type grepper struct {
	t       *Tools
	re, pre *regexp.Regexp
	out     strings.Builder
	matches int
	files   int // searched
	inFiles int // with a match
	binary  int
	large   int
	full    bool
	capped  bool
}

func (g *grepper) file(abs string) {
	if g.full {
		return
	}
	f, fi, err := fsview.OpenRead(abs)
	if err != nil {
		return
	}
	defer f.Close()
	if g.t.deniedOpen(f) != "" || !fi.Mode().IsRegular() {
		return
	}
	data, err := fsview.ReadCapped(f, abs, fi, maxGrepFileSize)
	if errors.Is(err, fsview.ErrTooLarge) {
		g.large++
		return
	}
	if err != nil {
		return
	}
	if isBinary(data) {
		g.binary++
		return
	}
	g.files++
	if g.pre != nil && !g.pre.Match(data) {
		return
	}
	name := g.t.rel(abs)
	found := false
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !g.re.Match(line) {
			continue
		}
		text := string(line)
		if len(text) > maxGrepLine {
			text = toValid(text[:maxGrepLine]) + "…"
		}
		entry := fmt.Sprintf("%s:%d: %s\n", name, n, text)
		if g.matches >= maxGrepMatches || g.out.Len()+len(entry) > maxGrepBytes {
			g.full = true
			return
		}
		if !found {
			found = true
			g.inFiles++
		}
		g.matches++
		g.out.WriteString(entry)
	}
}

// isBinary reports whether data looks like a binary file: a NUL byte in
// its first 8000 bytes, as git decides.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}
