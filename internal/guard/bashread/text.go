package bashread

// The text tools whose script is code of its own: sed (e executes, r/w
// name files), grep and its kin (rg --pre runs a command), awk.

import (
	"slices"
	"strings"
)

var sedExec = Lazy(`(?:^|[;\n{}])\s*(?:[0-9$]+|/[^/]*/)?(?:,\s*(?:[0-9$]+|/[^/]*/))?\s*e(?:\s+([^;\n}]*))?`)
var sedFile = Lazy(`(?:^|[;\n{}]|/[gpIiMm0-9]*)\s*[rRwW]\s+([^;\n}]+)`)

// sed judges sed: its script (e executes, r/w name files), its files.
func (an *Reading) sed(base string, args []string, stdin string) string {
	var scripts []string
	explicit := false
	files := an.opts(args, roleNone, lookup(base).roles, func(_ string, r Use, v string) {
		explicit = true
		if r == roleScript {
			scripts = append(scripts, v)
		} else {
			an.uncertain = true // -f: a script file, not read here
		}
	})
	if !explicit && len(files) > 0 {
		scripts, files = files[:1], files[1:]
	}
	inPlace := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") })
	for _, s := range scripts {
		an.judge(s, UseMention)
		for _, m := range sedExec.FindAllStringSubmatch(s, -1) {
			if strings.TrimSpace(m[1]) != "" {
				an.script(m[1], nil)
			} else {
				an.built = true
			}
		}
		if sedSubst(s) {
			an.built = true
		}
		for _, m := range sedFile.FindAllStringSubmatch(s, -1) {
			f := strings.TrimSpace(m[1])
			an.judge(f, UseOperand)
			if strings.ContainsAny(strings.TrimSpace(m[0])[:1], "wW") {
				an.write(f)
			}
		}
	}
	for _, f := range files {
		an.judge(f, UseOperand)
		if inPlace {
			an.write(f)
		}
	}
	return markBuilt
}

// sedSubst reports whether a sed script has an s command with the e flag.
func sedSubst(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != 's' || i+1 >= len(s) || (i > 0 && isAlnum(s[i-1])) {
			continue
		}
		d := s[i+1]
		if isAlnum(d) || d == ' ' || d == '\n' || d == '\\' {
			continue
		}
		n, j := 0, i+2
		for ; j < len(s) && n < 2; j++ {
			if s[j] == '\\' {
				j++
				continue
			}
			if s[j] == d {
				n++
			}
		}
		if n < 2 {
			continue
		}
		for ; j < len(s) && strings.IndexByte("gpIiMm0123456789ew", s[j]) >= 0; j++ {
			if s[j] == 'e' {
				return true
			}
			if s[j] == 'w' {
				break
			}
		}
	}
	return false
}

// grep judges grep and its kin: the pattern is text, the rest are paths;
// rg --pre runs a command on every file.
func (an *Reading) grep(base string, args []string, stdin string) string {
	explicit := false
	rest := an.opts(args, roleNone, lookup(base).roles, func(_ string, r Use, v string) {
		if r == roleValue { // rg --pre
			an.exec(append(strings.Fields(v), an.cwd+"/"+markTree), "")
		}
		explicit = explicit || r == roleScript || r == roleScriptFile
	})
	if !explicit && len(rest) > 0 {
		rest = rest[1:]
	}
	rec := lookup(base).rec == recAlways || slices.ContainsFunc(args, func(a string) bool { return recursiveFlag.MatchString(a) && strings.ContainsAny(a, "rR") })
	ro := UseOperand
	if rec {
		ro = UseRecursive
	}
	if plain := an.operands(rest, ro); rec && len(plain) == 0 {
		an.judge(".", UseRecursive)
	}
	return markUnknown
}

// awk judges an awk program as code and its files as operands.
func (an *Reading) awk(base string, args []string, stdin string) string {
	explicit := false
	rest := an.opts(args, roleNone, lookup(base).roles, func(_ string, r Use, _ string) {
		explicit = explicit || r == roleScriptFile
	})
	if !explicit && len(rest) > 0 {
		an.code(awkRegexps(rest[0]))
		rest = rest[1:]
	}
	an.operands(rest, UseOperand)
	return markBuilt
}

// awkRegexps blanks an awk program's regular expression literals (/func/,
// $1 ~ /^x/), which are patterns, not paths; quoted strings stay.
func awkRegexps(code string) string {
	b := []byte(code)
	prev := byte('\n')
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			prev = '"'
			continue
		case c == '/' && strings.IndexByte("\n({,;~!&|}", prev) >= 0:
			j := i + 1
			for ; j < len(b) && b[j] != '/' && b[j] != '\n'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j < len(b) && b[j] == '/' {
				for k := i; k <= j; k++ {
					b[k] = ' '
				}
				i = j
				prev = ')'
				continue
			}
		}
		if c != ' ' && c != '\t' {
			prev = c
		}
	}
	return string(b)
}
