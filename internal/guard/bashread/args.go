package bashread

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// hasProse reports whether any of words is prose (markProse).
func (an *Reading) hasProse(words []*syntax.Word) bool {
	for _, w := range words {
		if an.prose[w] {
			return true
		}
	}
	return false
}

func (an *Reading) call(c *syntax.CallExpr, stdin string) string {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			an.assign(as, false)
		}
		return ""
	}
	// Assignments before a command are in its environment only.
	saved := an.vars
	if len(c.Assigns) > 0 {
		an.vars = make(map[string]expand.Variable, len(saved))
		for k, v := range saved {
			an.vars[k] = v
		}
		for _, as := range c.Assigns {
			an.assign(as, false)
		}
	}
	var argv []string
	var prose []bool
	if an.hasProse(c.Args) {
		for _, w := range c.Args {
			fs := an.fields([]*syntax.Word{w})
			argv = append(argv, fs...)
			for range fs {
				prose = append(prose, an.prose[w])
			}
		}
	} else {
		argv = an.fields(c.Args)
	}
	an.proseArgs = prose
	out := an.exec(argv, stdin)
	an.vars = saved
	return out
}

// exec judges one command's argv with its standard input and returns its
// output as far as the analysis knows it.
func (an *Reading) exec(argv []string, stdin string) string {
	an.tick()
	prose := an.proseArgs
	an.proseArgs = nil
	if len(argv) == 0 {
		return ""
	}
	allProse := len(argv) > 1 && len(prose) == len(argv)
	for i, w := range argv {
		if i < len(prose) && prose[i] {
			continue // prose no command opens (markProse)
		}
		allProse = allProse && i == 0
		an.judge(w, UseMention)
	}
	prog := argv[0]
	args := argv[1:]
	if strings.Contains(prog, markUnknown) || strings.Contains(prog, markBuilt) {
		an.uncertain = true
		if strings.Contains(prog, markBuilt) {
			an.built = true
		}
		an.operands(args, UseOperand)
		return markUnknown
	}
	base := filepath.Base(prog)
	if len(an.progs) < 256 {
		an.progs = append(an.progs, base)
	}
	if base == "nodwyn" || base == "nibb" {
		// nodwyn itself reads its configuration and data directories:
		// another session's log and transcript, the versions undo kept,
		// the provider's key for a run. Only with a home of the line's
		// own (HOME or XDG_* set on it) is that not the person's.
		sub := ""
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				sub = a
				break
			}
		}
		_, home := an.vars["HOME"]
		_, cfg := an.vars["XDG_CONFIG_HOME"]
		_, data := an.vars["XDG_DATA_HOME"]
		switch sub {
		case "log", "sessions", "undo", "scheme", "run":
			if !(home || (cfg && data)) {
				an.act(ActOwnDirs, base, sub)
			}
		}
	}
	if what := credentialPrinter(base, args); what != "" {
		an.act(ActPrintsSecret, base, what)
	}
	if strings.Contains(prog, "/") {
		an.judge(prog, UseProgram)
		if !Within(filepath.Clean(prog), "/usr") && !Within(filepath.Clean(prog), "/bin") && !Within(filepath.Clean(prog), "/sbin") {
			an.scriptFile(prog, args, false)
		}
	}
	if body, ok := an.funcs[prog]; ok && an.inFunc[prog] < 2 && an.depth < maxDepth {
		an.inFunc[prog]++
		an.depth++
		saved := an.pos
		an.pos = args
		out := an.stmt(body, stdin)
		an.pos = saved
		an.depth--
		an.inFunc[prog]--
		return out
	}

	if out, ok := an.builtin(base, args, stdin, allProse); ok {
		return out
	}
	saved := an.prog
	an.prog = base
	defer func() { an.prog = saved }()
	return an.program(lookup(base), base, args, stdin)
}

func hasAny(args []string, opts ...string) bool {
	for _, a := range args {
		for _, o := range opts {
			if a == o {
				return true
			}
		}
	}
	return false
}

func indexOf(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -1
}

// write records a path the line writes.
func (an *Reading) write(p string) {
	if p == "" || p == "-" || strings.Contains(p, markUnknown) || an.indirect > 0 {
		return
	}
	if !filepath.IsAbs(p) {
		p = JoinRaw(an.cwd, p)
	}
	an.writes = append(an.writes, filepath.Clean(an.unalias(p)))
}

// operands judges a program's arguments (opts with no roles) and returns
// the plain operands.
func (an *Reading) operands(args []string, ro Use) []string { return an.opts(args, ro, nil, nil) }

// opts judges a program's arguments. The value of an option in roles ("-o
// v", "-ov", "--output v", "--output=v", or a long option with one dash
// named in roles as it is) is used in its role: a path read, written or
// searched, a command line (roleRun), text (UseMention); fn, when not
// nil, is told of every such option. Another option's attached value that
// looks like a path is a path it reads. The plain operands (with @file and
// key=value values) are judged in the role ro and returned; with roleNone
// they are returned as they are, for the caller to judge, and with roleRest
// the first one and all that follow are (a wrapper's command).
func (an *Reading) opts(args []string, ro Use, roles map[string]Use, fn func(opt string, r Use, v string)) []string {
	var plain []string
	endOpts := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		isPlain := endOpts || !strings.HasPrefix(a, "-") || a == "-"
		switch {
		case isPlain && ro == roleRest:
			return args[i:]
		case isPlain && ro == roleNone:
			plain = append(plain, a)
		case isPlain:
			if k, v, ok := strings.Cut(a, "="); ok && !strings.Contains(k, "/") && k != "" {
				if an.looksLikePath(v) {
					an.judge(v, ro)
				}
				an.judge(a, UseMention)
				plain = append(plain, a)
				continue
			}
			if v, ok := strings.CutPrefix(a, "@"); ok && v != "" {
				an.judge(v, UseOperand)
				continue
			}
			an.judge(a, ro)
			plain = append(plain, a)
		case a == "--":
			endOpts = true
		default:
			opt, v, attached := a, "", false
			r, ok := roles[a]
			if !ok {
				if opt, v, attached = strings.Cut(a, "="); !strings.HasPrefix(a, "--") {
					opt, v, attached = a[:2], strings.TrimPrefix(a[2:], "="), len(a) > 2
				}
				r, ok = roles[opt]
			}
			if !ok {
				// An attached value that looks like a path.
				if v = strings.TrimPrefix(v, "@"); attached && an.looksLikePath(v) {
					an.judge(v, UseOperand)
				}
				continue
			}
			if !attached {
				if i+1 >= len(args) {
					continue
				}
				i++
				v = args[i]
			}
			switch r {
			case UseOperand, UseRecursive, UseWrite:
				an.judge(v, r)
				if r == UseWrite {
					an.write(v)
				}
			case roleScriptFile:
				an.judge(v, UseOperand)
			case roleRun: // and a path it names (nc -e /bin/sh)
				an.judge(v, UseOperand)
				an.script(v, nil)
			}
			if fn != nil {
				fn(opt, r, v)
			}
		}
	}
	if ro == roleRest {
		return nil
	}
	return plain
}

// optRoles makes an option table from lines "role: -o --opt …", the roles
// named as in roleNames.
func optRoles(lines ...string) map[string]Use {
	m := map[string]Use{}
	for _, l := range lines {
		name, opts, _ := strings.Cut(l, ":")
		r, ok := roleNames[name]
		if !ok {
			panic("bashread: no role " + name)
		}
		for _, o := range strings.Fields(opts) {
			m[o] = r
		}
	}
	return m
}

// looksLikePath reports whether a value may name a file: a path, a
// value the reading cannot know, or a name the Reader's Names wants.
func (an *Reading) looksLikePath(v string) bool {
	return strings.Contains(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, ".") ||
		strings.Contains(v, markUnknown) || strings.Contains(v, markBuilt) || (an.rd.Names != nil && an.rd.Names(v))
}

var recursiveFlag = Lazy(`^-[A-Za-z]*[rRa][A-Za-z]*$|^--recursive$|^--archive$`)

// splitCluster splits a cluster of short options (-xzf) into one word
// each; what follows one that takes a value is its value (-fx.tar).
func splitCluster(a string, roles map[string]Use) []string {
	if _, ok := roles[a]; ok || len(a) <= 2 || a[0] != '-' || a[1] == '-' {
		return []string{a}
	}
	var out []string
	for i := 1; i < len(a); i++ {
		o := "-" + a[i:i+1]
		if _, ok := roles[o]; ok && i+1 < len(a) {
			return append(out, o, a[i+1:])
		}
		out = append(out, o)
	}
	return out
}

// listFile judges every line of a file that lists the paths a program
// archives or copies ("-" is standard input).
func (an *Reading) listFile(name, stdin string) {
	text := stdin
	if name != "-" {
		text = an.readFile(name)
	}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			an.judge(l, UseRecursive)
		}
	}
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
