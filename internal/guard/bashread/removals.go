package bashread

import (
	"path"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// WithoutRemovedKeys returns a command line with the pattern of every sed
// s command that removes what it matches blanked: the s command's
// replacement takes nothing of the match (no & and no \0-\9), its flags
// run nothing and write nothing (no e, no w), and its script is a plain
// word of sed's own commands. What remains is what the line sends or
// writes: a key the line removes from a file (sed -i 's/AKIA…/<placeholder>/'
// config.py, the work of a sanitizing task) is not in it; a key it writes
// (in a replacement, an a/i/c text, an echo) is. Python's code (-c, or a
// literal here-document it reads) has the literals it only replaces
// blanked the same way (blankPyRemovals). A line that does not parse is
// returned as it is.
func WithoutRemovedKeys(line string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return line
	}
	type edit struct {
		lo, hi int
		text   string
	}
	var edits []edit
	syntax.Walk(f, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok {
			// python3 - <<'EOF' … EOF: the code is the here-document.
			if c, ok := st.Cmd.(*syntax.CallExpr); ok && pyCode(c.Args) == nil && pyRuns(c.Args) {
				for _, r := range st.Redirs {
					if v, ok := hdocLiteral(r); ok {
						if b := blankPyRemovals(v); b != v {
							edits = append(edits, edit{int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset()), b})
						}
					}
				}
			}
			return true
		}
		c, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		if w := pyCode(c.Args); w != nil && quotedLiteral(w) {
			if v, err := expand.Literal(&expand.Config{}, w); err == nil {
				if b := blankPyRemovals(v); b != v {
					edits = append(edits, edit{int(w.Pos().Offset()), int(w.End().Offset()), b})
				}
			}
			return true
		}
		for i, w := range c.Args {
			if name, _ := plainWord(w); (name != "sed" && name != "gsed") || !sedRuns(c.Args[:i]) {
				continue
			}
			for _, sw := range sedScripts(c.Args[i+1:]) {
				if !quotedLiteral(sw) {
					continue
				}
				v, err := expand.Literal(&expand.Config{}, sw)
				if err != nil {
					continue
				}
				if b, ok := blankSubstPatterns(v); ok && b != v {
					edits = append(edits, edit{int(sw.Pos().Offset()), int(sw.End().Offset()), b})
				}
			}
			break
		}
		return true
	})
	if len(edits) == 0 {
		return line
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].lo < edits[j].lo })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		if e.lo < last || e.hi > len(line) {
			continue
		}
		b.WriteString(line[last:e.lo])
		b.WriteString(e.text)
		last = e.hi
	}
	b.WriteString(line[last:])
	return b.String()
}

// pyAt is the word of a command that runs Python (python, python3,
// python3.12) directly, by find -exec, xargs or sudo, or -1.
func pyAt(args []*syntax.Word) int {
	for i, w := range args {
		name, _ := plainWord(w)
		if name = path.Base(name); strings.HasPrefix(name, "python") && strings.Trim(name[len("python"):], "0123456789.") == "" {
			if sedRuns(args[:i]) {
				return i
			}
			return -1
		}
	}
	return -1
}

// pyRuns reports whether the command runs Python with nothing but its
// flags (so that it reads its code from standard input, or "-").
func pyRuns(args []*syntax.Word) bool {
	i := pyAt(args)
	if i < 0 {
		return false
	}
	for _, w := range args[i+1:] {
		a, ok := plainWord(w)
		if !ok || a != "-" && !pyFlag.MatchString(a) {
			return false
		}
	}
	return true
}

// pyFlag is a cluster of Python's flags that take no value.
var pyFlag = Lazy(`^-[bBdEhiIOqsSuvx]+$`)

// pyCode is the word of Python's -c code, or nil.
func pyCode(args []*syntax.Word) *syntax.Word {
	i := pyAt(args)
	if i < 0 {
		return nil
	}
	for j := i + 1; j+1 < len(args); j++ {
		a, ok := plainWord(args[j])
		switch {
		case ok && a == "-c":
			return args[j+1]
		case ok && pyFlag.MatchString(a):
		default:
			return nil
		}
	}
	return nil
}

// hdocLiteral returns a here-document's text when it is literal: its
// delimiter quoted, or no expansion and no backslash in it.
func hdocLiteral(r *syntax.Redirect) (string, bool) {
	if (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) || r.Hdoc == nil || r.Word == nil {
		return "", false
	}
	quoted := false
	for _, p := range r.Word.Parts {
		switch x := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.Contains(x.Value, `\`)
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || !quoted && strings.Contains(l.Value, `\`) {
			return "", false
		}
		b.WriteString(l.Value)
	}
	return b.String(), true
}

// quotedLiteral reports whether w is made of literals and quoted literals
// with backslash escapes (a double-quoted sed script: "s/a\/b/c/").
func quotedLiteral(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if !plainLit(x.Value) {
				return false
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			if x.Dollar {
				return false
			}
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// sedRuns reports whether the words before "sed" run it: nothing, or
// find's -exec, xargs (with its options) or sudo.
func sedRuns(before []*syntax.Word) bool {
	if len(before) == 0 {
		return true
	}
	var ws []string
	for _, w := range before {
		v, ok := plainWord(w)
		if !ok {
			return false
		}
		ws = append(ws, v)
	}
	switch ws[len(ws)-1] {
	case "-exec", "-execdir", "xargs", "sudo":
		return true
	}
	for i := len(ws) - 1; i >= 0; i-- {
		switch {
		case ws[i] == "xargs":
			return true
		case strings.HasPrefix(ws[i], "-"):
		case i > 0 && (ws[i-1] == "-n" || ws[i-1] == "-P" || ws[i-1] == "-I" || ws[i-1] == "-L" || ws[i-1] == "-d"):
		default:
			return false
		}
	}
	return false
}

// sedScripts returns the words of sed's arguments that are its scripts.
func sedScripts(args []*syntax.Word) []*syntax.Word {
	var scripts []*syntax.Word
	explicit := false
	for j := 0; j < len(args); j++ {
		a, plain := plainWord(args[j])
		switch {
		case !plain:
			if !explicit && len(scripts) == 0 {
				return nil // the first operand is the script, and unknown
			}
		case a == "-e" || a == "--expression" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && !strings.HasPrefix(a, "-i") && strings.HasSuffix(a, "e"):
			explicit = true
			if j+1 < len(args) {
				scripts = append(scripts, args[j+1])
				j++
			}
		case a == "-f" || a == "--file" || strings.HasPrefix(a, "--expression=") || strings.HasPrefix(a, "--file="):
			explicit = true
		case strings.HasPrefix(a, "-") && a != "-":
		case !explicit && len(scripts) == 0:
			scripts = append(scripts, args[j])
			return scripts
		}
	}
	return scripts
}

// blankSubstPatterns returns a sed script with the pattern of each s
// command whose replacement takes nothing of the match blanked, and
// whether the script holds only commands it knows.
func blankSubstPatterns(s string) (string, bool) {
	b := []byte(s)
	i := 0
	skip := func(set string) {
		for i < len(b) && strings.IndexByte(set, b[i]) >= 0 {
			i++
		}
	}
	for {
		skip(" \t\n;{}")
		if i >= len(b) {
			return string(b), true
		}
		for k := 0; k < 2; k++ {
			if !sedAddress(b, &i) {
				return "", false
			}
			skip(" \t")
			if k == 0 && i < len(b) && b[i] == ',' {
				i++
				skip(" \t")
				continue
			}
			break
		}
		if i < len(b) && b[i] == '!' {
			i++
			skip(" \t")
		}
		if i >= len(b) {
			return "", false
		}
		switch c := b[i]; {
		case c == 's':
			if !sedSubstBlank(b, &i) {
				return "", false
			}
		case strings.IndexByte("pdgGhHxnNPDz=l", c) >= 0:
			i++
		case c == 'q' || c == 'Q':
			i++
			skip(" \t0123456789")
		case c == '{' || c == '}':
		default:
			return "", false
		}
	}
}

// sedAddress skips a sed address at b[*i], if any: a line number (with
// ~step), $, or /regexp/ (\cregexpc) with I or M.
func sedAddress(b []byte, i *int) bool {
	switch {
	case *i >= len(b):
		return true
	case b[*i] >= '0' && b[*i] <= '9':
		for *i < len(b) && (b[*i] >= '0' && b[*i] <= '9' || b[*i] == '~') {
			*i++
		}
	case b[*i] == '$':
		*i++
	case b[*i] == '/' || b[*i] == '\\':
		d := byte('/')
		if b[*i] == '\\' {
			if *i+1 >= len(b) {
				return false
			}
			*i++
			d = b[*i]
		}
		end, ok := sedRegexEnd(b, *i+1, d)
		if !ok {
			return false
		}
		*i = end + 1
		for *i < len(b) && (b[*i] == 'I' || b[*i] == 'M') {
			*i++
		}
	}
	return true
}

// sedRegexEnd returns the index of the delimiter d that ends a regexp
// starting at b[from]: escapes and bracket expressions do not end it.
func sedRegexEnd(b []byte, from int, d byte) (int, bool) {
	if d == '\n' || d == '\\' || d == '[' {
		return 0, false
	}
	for j := from; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '[':
			k := j + 1
			if k < len(b) && b[k] == '^' {
				k++
			}
			if k < len(b) && b[k] == ']' {
				k++
			}
			for k < len(b) && b[k] != ']' {
				if b[k] == '[' && k+1 < len(b) && strings.IndexByte(":.=", b[k+1]) >= 0 {
					close := strings.Index(string(b[k+2:]), string(b[k+1])+"]")
					if close < 0 {
						return 0, false
					}
					k += 2 + close + 2
					continue
				}
				k++
			}
			if k >= len(b) {
				return 0, false
			}
			j = k
		case d:
			return j, true
		}
	}
	return 0, false
}

// sedSubstBlank reads the s command at b[*i] and blanks its pattern when
// its replacement takes nothing of the match and its flags neither run
// nor write anything.
func sedSubstBlank(b []byte, i *int) bool {
	if *i+1 >= len(b) {
		return false
	}
	d := b[*i+1]
	lo := *i + 2
	end, ok := sedRegexEnd(b, lo, d)
	if !ok {
		return false
	}
	takes := false
	j := end + 1
	for ; j < len(b) && b[j] != d; j++ {
		switch {
		case b[j] == '\\' && j+1 < len(b):
			if b[j+1] >= '0' && b[j+1] <= '9' {
				takes = true
			}
			j++
		case b[j] == '&':
			takes = true
		}
	}
	if j >= len(b) {
		return false
	}
	j++
	for ; j < len(b); j++ {
		c := b[j]
		if c == 'e' || c == 'w' || c == 'W' {
			return false
		}
		if strings.IndexByte("gpiIMm0123456789", c) < 0 {
			break
		}
	}
	if !takes {
		for k := lo; k < end; k++ {
			b[k] = ' '
		}
	}
	*i = j
	return true
}
