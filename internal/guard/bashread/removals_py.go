package bashread

import (
	"strings"
)

// Python code that replaces a key in a file (a sanitizing task's
// s = s.replace('AKIA…', '<placeholder>'), re.sub('AKIA…', 'x', s), or a
// table of replacements walked with .items()) names the key only as what
// it replaces: blankPyRemovals blanks such literals, as blankSubstPatterns
// blanks a sed s command's pattern, and what is left is what the code
// writes or sends. Code that runs other code, reaches the network or
// defines functions or classes (a replace of its own) is left as it is.

// pyLit is a string literal in Python code: its span (prefix and quotes
// included) and whether it is a plain one (no f prefix, no backslash).
type pyLit struct {
	lo, hi int
	plain  bool
}

// pyLits returns the string literals of Python code, skipping comments,
// and false when the code does not tokenize (an unclosed string).
func pyLits(code string) ([]pyLit, bool) {
	var out []pyLit
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == '#':
			for i < len(code) && code[i] != '\n' {
				i++
			}
			continue
		case c == '\'' || c == '"':
		case isPyPrefix(code, i):
		default:
			i++
			continue
		}
		lo := i
		fstr := false
		for i < len(code) && code[i] != '\'' && code[i] != '"' {
			fstr = fstr || code[i] == 'f' || code[i] == 'F'
			i++
		}
		q := string(code[i])
		if strings.HasPrefix(code[i:], q+q+q) {
			q = q + q + q
		}
		i += len(q)
		backslash := false
		closed := false
		for i < len(code) {
			if code[i] == '\\' {
				backslash = true
				i += 2
				continue
			}
			if len(q) == 1 && code[i] == '\n' {
				return nil, false
			}
			if strings.HasPrefix(code[i:], q) {
				i += len(q)
				closed = true
				break
			}
			i++
		}
		if !closed {
			return nil, false
		}
		out = append(out, pyLit{lo: lo, hi: i, plain: !fstr && !backslash})
	}
	return out, true
}

// isPyPrefix reports whether a string prefix (r, b, u, f and their pairs)
// starts at code[i] and is followed by a quote, at the start of a token.
func isPyPrefix(code string, i int) bool {
	if i > 0 && (isIdent(code[i-1]) || code[i-1] == '.') {
		return false
	}
	j := i
	for j < len(code) && j-i < 2 && strings.IndexByte("rRbBuUfF", code[j]) >= 0 {
		j++
	}
	return j > i && j < len(code) && (code[j] == '\'' || code[j] == '"')
}

var (
	// pyUnsafe: code that could do with a key more than replace it
	// (re.compile is not the builtin compile).
	pyUnsafe      = Lazy(`(?:^|[^.\w])compile\s*\(|\b(?:exec|eval|__import__|getattr|globals|locals|def|class|lambda|socket|urllib|urllib3|requests|httpx|http|smtplib|ftplib|telnetlib|subprocess|system|popen|spawn\w*|pty|ctypes|pickle|marshal|webbrowser|xmlrpc|asyncio)\b`)
	pyReplaceCall = Lazy(`\.\s*replace\s*\(\s*$`)
	pyReSubCall   = Lazy(`\bre\s*\.\s*subn?\s*\(\s*$`)
	pyCompileCall = Lazy(`\bre\s*\.\s*compile\s*\(\s*$`)
	pyCompileSub  = Lazy(`^\s*(?:,\s*[\w.|\s]+)?\)\s*\.\s*subn?\s*\(\s*`)
	pyDictStart   = Lazy(`\b([A-Za-z_]\w*)\s*=\s*\{\s*$`)
	pyIdent       = Lazy(`[A-Za-z_]\w*`)
)

// blankPyRemovals returns Python code with the literals it only replaces
// blanked (see above), or the code as it is.
func blankPyRemovals(code string) string {
	if pyUnsafe.MatchString(code) {
		return code
	}
	lits, ok := pyLits(code)
	if !ok {
		return code
	}
	blank := make([]bool, len(lits))
	// nextLit is the literal that starts right after position at
	// (after blanks and sep), or -1.
	nextLit := func(k int, at int, sep string) int {
		rest := strings.TrimLeft(code[at:], " \t\n")
		if sep != "" {
			if !strings.HasPrefix(rest, sep) {
				return -1
			}
			rest = strings.TrimLeft(rest[len(sep):], " \t\n")
		}
		pos := len(code) - len(rest)
		for j := k + 1; j < len(lits); j++ {
			if lits[j].lo == pos {
				return j
			}
			if lits[j].lo > pos {
				break
			}
		}
		return -1
	}
	for k, l := range lits {
		if !l.plain {
			continue
		}
		before := code[max(0, l.lo-64):l.lo]
		switch {
		case pyReplaceCall.MatchString(before):
			// str.replace(old, new): new cannot take anything of old.
			if strings.HasPrefix(strings.TrimLeft(code[l.hi:], " \t\n"), ",") {
				blank[k] = true
			}
		case pyReSubCall.MatchString(before):
			// re.sub(pattern, repl, …): a repl without a backslash takes
			// no group of the match.
			if r := nextLit(k, l.hi, ","); r >= 0 && lits[r].plain {
				blank[k] = true
			}
		case pyCompileCall.MatchString(before):
			// re.compile(pattern[, flags]).sub(repl, …)
			m := pyCompileSub.FindString(code[l.hi:min(len(code), l.hi+256)])
			if m == "" {
				continue
			}
			if r := nextLit(k, l.hi+len(m), ""); r >= 0 && lits[r].plain {
				blank[k] = true
			}
		}
	}
	// A table of replacements: NAME = {'old': 'new', …} used only as
	// for a, b in NAME.items(): s = s.replace(a, b) (or re.sub(a, b, s)).
	for k, l := range lits {
		m := pyDictStart.FindStringSubmatch(code[max(0, l.lo-128):l.lo])
		if m == nil || !l.plain {
			continue
		}
		name := m[1]
		var keys []int
		j, ok := k, true
		for {
			keys = append(keys, j)
			v := nextLit(j, lits[j].hi, ":")
			if v < 0 || !lits[v].plain {
				ok = false
				break
			}
			rest := strings.TrimLeft(code[lits[v].hi:], " \t\n")
			if strings.HasPrefix(rest, ",") {
				rest = strings.TrimLeft(rest[1:], " \t\n")
			}
			if strings.HasPrefix(rest, "}") {
				break
			}
			if j = nextLit(v, lits[v].hi, ","); j < 0 || !lits[j].plain {
				ok = false
				break
			}
		}
		if ok && pyTableUse(withoutLits(code, lits), name) {
			for _, j := range keys {
				blank[j] = true
			}
		}
	}
	b := []byte(code)
	changed := false
	for k, l := range lits {
		if blank[k] {
			for i := l.lo; i < l.hi; i++ {
				b[i] = ' '
			}
			changed = true
		}
	}
	if !changed {
		return code
	}
	return string(b)
}

// withoutLits is code with its string literals blanked.
func withoutLits(code string, lits []pyLit) string {
	b := []byte(code)
	for _, l := range lits {
		for i := l.lo; i < l.hi; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// pyTableUse reports whether the table name is used in code (its string
// literals blanked) only where it is made and in for a, b in name.items(): x = x.replace(a, b) (or
// x = re.sub(a, b, x)), the loop's names used nowhere else.
func pyTableUse(code, name string) bool {
	count := map[string]int{}
	for _, id := range pyIdent.FindAllString(code, -1) {
		count[id]++
	}
	if count[name] != 2 {
		return false
	}
	for _, m := range pyTableLoop.FindAllStringSubmatch(code, -1) {
		a, bName := m[1], m[2]
		old, repl := m[5], m[6]
		if m[7] != "" {
			old, repl = m[7], m[8]
		}
		if m[3] == name && old == a && repl == bName && a != bName && count[a] == 2 && count[bName] == 2 {
			return true
		}
	}
	return false
}

// pyTableLoop is for a, b in NAME.items(): x = x.replace(a, b), or
// x = re.sub(a, b, x).
var pyTableLoop = Lazy(`\bfor\s+([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s+in\s+([A-Za-z_]\w*)\s*\.\s*items\s*\(\s*\)\s*:\s*([A-Za-z_]\w*)\s*=\s*(?:[A-Za-z_]\w*\s*\.\s*replace\s*\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)|re\s*\.\s*sub\s*\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*,\s*[A-Za-z_]\w*\s*\))`)
