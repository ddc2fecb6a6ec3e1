package bashread

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Prose: with the kernel floor on, a denied directory named only in text
// that no command opens is no reason to refuse. Prose is a quoted
// sentence (single quotes, or double quotes without expansions, holding a
// blank) that is
//   - an argument of echo, or every argument of printf (a format or an
//     argument that is no sentence holding no "/" or "~"), on a statement
//     whose standard output goes to a file named plainly (not /dev/…, not
//     a process substitution, not moved again by >&N);
//   - the message of git commit or git tag given as -m, --message or a
//     cluster of flags ending in m (-am), in the word after it.
//
// A line that may make echo, printf or git something else (an alias, a
// function of that name, enable, hash, PATH set on the line) has no prose.
// The raw line is scanned for denied names without the prose words, and
// the walk does not judge them; what they write to a file is still what a
// later command on the line reads from it.

// proseOff matches a line on which echo, printf or git may not be the
// programs they are.
var proseOff = Lazy(`\b(?:alias|enable|hash)\b|PATH\+?=|\b(?:echo|printf|git)\s*\(\s*\)|\bfunction\s+(?:echo|printf|git)\b`)

// markProse records the prose words of the parsed line in an.prose and
// returns the line with them blanked.
func (an *Reading) markProse(f *syntax.File) string {
	if proseOff.MatchString(an.line) {
		return an.line
	}
	var words []*syntax.Word
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		c, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(c.Args) < 2 {
			return true
		}
		switch c.Args[0].Lit() {
		case "echo":
			if stdoutToFile(st) {
				for _, w := range c.Args[1:] {
					if proseWord(w) {
						words = append(words, w)
					}
				}
			}
		case "printf":
			if !stdoutToFile(st) {
				break
			}
			args := c.Args[1:]
			if a, _ := plainWord(args[0]); a == "--" {
				args = args[1:]
			} else if strings.HasPrefix(a, "-") {
				break // printf -v sets a variable
			}
			// A format or an argument that is no sentence names no
			// path either.
			all := len(args) > 0
			for _, w := range args {
				v, plain := plainWord(w)
				all = all && (proseWord(w) || plain && !strings.ContainsAny(v, "/~"))
			}
			if all {
				words = append(words, c.Args[1:]...)
			}
		case "git":
			words = append(words, commitMessages(c.Args[1:])...)
		}
		return true
	})
	if len(words) == 0 {
		return an.line
	}
	b := []byte(an.line)
	for _, w := range words {
		an.prose[w] = true
		lo, hi := int(w.Pos().Offset()), int(w.End().Offset())
		for i := lo; i < hi && i < len(b); i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// proseWord reports whether w is a quoted sentence without expansions.
func proseWord(w *syntax.Word) bool {
	quoted, blank := false, false
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.SglQuoted:
			if x.Dollar {
				return false
			}
			quoted = true
			blank = blank || strings.ContainsAny(x.Value, " \t\n")
		case *syntax.DblQuoted:
			if x.Dollar {
				return false
			}
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return false
				}
				blank = blank || strings.ContainsAny(l.Value, " \t\n")
			}
			quoted = true
		case *syntax.Lit:
			if !plainLit(x.Value) {
				return false
			}
		default:
			return false
		}
	}
	return quoted && blank
}

// plainLit reports whether an unquoted literal stays as it is written:
// no tilde, pattern or brace for the shell to expand.
func plainLit(s string) bool { return !strings.ContainsAny(s, "~*?[{") }

// stdoutToFile reports whether a statement's standard output goes to a
// file named plainly, and nowhere else.
func stdoutToFile(st *syntax.Stmt) bool {
	toFile := false
	for _, r := range st.Redirs {
		fd1 := r.N == nil || r.N.Value == "1"
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if !fd1 {
				continue
			}
			name, ok := plainWord(r.Word)
			if !ok || name == "" || strings.HasPrefix(name, "/dev/") || strings.HasPrefix(name, "/proc/") {
				return false
			}
			toFile = true
		case syntax.DplOut:
			if fd1 {
				return false
			}
		}
	}
	return toFile
}

// plainWord returns the value of a word made of literals and quoted
// literals only.
func plainWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if !plainLit(x.Value) || strings.Contains(x.Value, `\`) {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(l.Value, `\`) {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// commitMessageFlag matches git commit's and git tag's short flags that
// take no value, ending in m (-m, -am, -sm).
var commitMessageFlag = Lazy(`^-[asnvqef]*m$`)

// commitMessages returns the message words of git commit or git tag
// (args follow "git").
func commitMessages(args []*syntax.Word) []*syntax.Word {
	i := 0
	for i < len(args) {
		a, ok := plainWord(args[i])
		if !ok {
			return nil
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		if a == "-C" || a == "-c" {
			i++
		}
		i++
	}
	if i >= len(args) {
		return nil
	}
	if sub, _ := plainWord(args[i]); sub != "commit" && sub != "tag" {
		return nil
	}
	var out []*syntax.Word
	rest := args[i+1:]
	for j := 0; j+1 < len(rest); j++ {
		a, ok := plainWord(rest[j])
		if !ok || !(a == "--message" || commitMessageFlag.MatchString(a)) {
			continue
		}
		if proseWord(rest[j+1]) {
			out = append(out, rest[j+1])
		}
		j++
	}
	return out
}
