package bashread

import (
	"encoding/base64"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Variables whose value is a command the shell or a program runs.
var commandVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true,
	"GIT_EDITOR": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_PROXY_COMMAND": true,
	"PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "PROMPT_COMMAND": true, "EDITOR": true,
	"VISUAL": true, "LESSOPEN": true, "LESSCLOSE": true, "GIT_SEQUENCE_EDITOR": true, "RSYNC_RSH": true,
	"BROWSER": true, "PS0": true, "PS1": true, "PS4": true,
}

// Variables whose value names a file the shell or the loader reads.
var pathVars = map[string]bool{
	"BASH_ENV": true, "ENV": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"PYTHONSTARTUP": true, "PERL5LIB": true, "PERL5OPT": true, "RUBYOPT": true, "NODE_OPTIONS": true,
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true,
	"GNUPGHOME": true, "AWS_SHARED_CREDENTIALS_FILE": true, "AWS_CONFIG_FILE": true,
	"KUBECONFIG": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "SSH_AUTH_SOCK": true,
	"CURL_HOME": true, "WGETRC": true, "NETRC": true, "INPUTRC": true, "ZDOTDIR": true,
}

var pathListSep = Lazy(`[:\s]+`)

// varCarries judges a variable whose value carries a command or a path.
func (an *Reading) varCarries(name, v string) {
	switch {
	case commandVars[name] || strings.HasPrefix(name, "GIT_CONFIG_VALUE"):
		an.script(v, nil)
	case pathVars[name]:
		for _, p := range pathListSep.Split(v, -1) {
			p = strings.TrimPrefix(p, "--require=")
			if p != "" && !strings.HasPrefix(p, "-") {
				an.judge(p, UseOperand)
			}
		}
	}
}

// script judges text that a shell will run (bash -c, eval, a here-doc fed
// to a shell, a command-carrying option) with the given positional
// arguments; its output is returned.
func (an *Reading) script(text string, pos []string) string {
	return an.runScript(text, pos, false)
}

// scriptHere judges text the current shell runs (eval, source): its cd,
// assignments and functions stay in effect for the rest of the line.
func (an *Reading) scriptHere(text string, pos []string) string {
	return an.runScript(text, pos, true)
}

func (an *Reading) runScript(text string, pos []string, here bool) string {
	if strings.Contains(text, markBuilt) && encoderWords.MatchString(an.line) {
		an.act(ActDecodedScript, "", "")
	}
	if dotglobLine.MatchString(text) {
		an.dotglobSet = 2
	}
	if strings.Contains(text, markUnknown) || strings.Contains(text, markBuilt) {
		an.uncertain = true
		if strings.Contains(text, markBuilt) {
			an.built = true
		}
	}
	if an.depth >= maxDepth {
		an.uncertain = true
		return markUnknown
	}
	an.scanText(text, false)
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		an.uncertain = true
		return markUnknown
	}
	an.promptExpansions(f)
	an.depth++
	defer func() { an.depth-- }()
	run := func() string {
		if pos != nil {
			an.pos = pos
		}
		out := an.stmts(f.Stmts, "")
		syntax.Walk(f, func(n syntax.Node) bool {
			if st, ok := n.(*syntax.Stmt); ok && !an.visited[st] {
				an.sub(func() string { return an.stmt(st, "") })
				return false
			}
			return true
		})
		return out
	}
	if here {
		saved := an.pos
		out := run()
		an.pos = saved
		return out
	}
	return an.sub(run)
}

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

// builtin judges the shell's own builtins, whose effect is on the shell:
// its directory, variables, positional parameters, options and what it
// prints.
func (an *Reading) builtin(base string, args []string, stdin string, allProse bool) (string, bool) {
	switch base {
	case "eval":
		return an.scriptHere(strings.Join(args, " "), an.pos), true
	case "source", ".":
		if len(args) > 0 {
			an.judge(args[0], UseOperand)
			an.scriptFileIn(args[0], args[1:], true, true)
		}
		an.uncertain = an.uncertain || len(args) == 0
		return markUnknown, true
	case "cd", "pushd":
		return an.cd(base, args), true
	case "popd":
		if n := len(an.dirs); n > 0 {
			an.cwd, an.dirs = an.dirs[n-1], an.dirs[:n-1]
		} else {
			an.cwdOK = false
		}
		return "", true
	case "pwd":
		if !an.cwdOK {
			return markUnknown, true
		}
		return an.cwd + "\n", true
	case "echo":
		i := 0
		for i < len(args) && (args[i] == "-n" || args[i] == "-e" || args[i] == "-E" || args[i] == "-ne" || args[i] == "-en") {
			i++
		}
		return strings.Join(args[i:], " ") + "\n", true
	case "printf":
		if allProse {
			if args[0] == "--" {
				args = args[1:]
			}
			return an.format(args[0], args[1:]), true // prose, into a file
		}
		return an.printf(args), true
	case "read", "mapfile", "readarray":
		return an.read(base, args, stdin), true
	case "set":
		if i := indexOf(args, "--"); i >= 0 {
			an.pos = append([]string(nil), args[i+1:]...)
		} else if len(args) > 0 && !strings.HasPrefix(args[0], "-") && !strings.HasPrefix(args[0], "+") {
			an.pos = append([]string(nil), args...)
		}
		return "", true
	case "shift":
		if len(an.pos) > 0 {
			an.pos = an.pos[1:]
		}
		return "", true
	case "export", "declare", "typeset", "local", "readonly":
		for _, a := range args {
			if k, v, ok := strings.Cut(a, "="); ok {
				an.setVar(k, v)
				an.varCarries(k, v)
			}
		}
		return "", true
	case "alias":
		for _, a := range args {
			if _, v, ok := strings.Cut(a, "="); ok {
				an.script(v, nil)
			}
		}
		return "", true
	case "trap":
		if len(args) > 0 {
			an.script(args[0], nil)
		}
		return "", true
	case "shopt", "setopt":
		for _, a := range args {
			if strings.Contains(a, "dotglob") || strings.Contains(strings.ToLower(a), "globdots") || strings.Contains(strings.ToLower(a), "glob_dots") ||
				strings.Contains(a, markUnknown) || strings.Contains(a, markBuilt) {
				an.dotglobSet = 2
			}
		}
		return "", true
	case "true", "false", ":", "exit", "return", "wait", "sleep", "kill", "jobs", "disown", "unset", "umask",
		"ulimit", "hash", "type", "which", "help", "date":
		return "", true
	}
	return "", false
}

// cd follows cd and pushd.
func (an *Reading) cd(base string, args []string) string {
	dir := ""
	for i, a := range args {
		if a == "--" {
			if i+1 < len(args) {
				dir = args[i+1]
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			dir = a
			break
		}
	}
	if base == "pushd" && dir != "-" && (strings.HasPrefix(dir, "+") || strings.HasPrefix(dir, "-")) {
		an.cwdOK = false // a rotation of the directory stack
		return ""
	}
	if dir == "-" {
		dir = an.getVar("OLDPWD")
	}
	if dir == "" {
		dir = an.rd.Home
	}
	// CDPATH: a relative name is looked up in each of its directories
	// first; every candidate is judged, and the first that exists is
	// where cd goes.
	if cdpath := an.getVar("CDPATH"); cdpath != "" && cdpath != markUnknown && !filepath.IsAbs(dir) &&
		!strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") && dir != "." && dir != ".." {
		if strings.Contains(cdpath, markUnknown) || strings.Contains(cdpath, markBuilt) {
			an.uncertain = true
			an.judge(dir, UseOperand)
			an.cwdOK = false
			return ""
		}
		chosen := ""
		for _, c := range strings.Split(cdpath, ":") {
			if c == "" {
				c = "."
			}
			if c == "~" || strings.HasPrefix(c, "~/") {
				c = an.rd.Home + c[1:] // a tilde after ":" in an assignment
			}
			cand := JoinRaw(c, dir)
			if !filepath.IsAbs(c) {
				cand = JoinRaw(an.cwd, cand)
			}
			an.judge(cand, UseOperand)
			if fi, err := an.stat(an.unalias(cand)); chosen == "" && err == nil && fi.IsDir() {
				chosen = cand
			}
		}
		if chosen != "" {
			dir = chosen
		}
	}
	an.judge(dir, UseOperand)
	if base == "pushd" {
		an.dirs = append(an.dirs, an.cwd)
	}
	old, oldOK := an.cwd, an.cwdOK
	an.setCwd(dir)
	an.oldpwd = ""
	if oldOK {
		an.oldpwd = old
	}
	return ""
}

// base64 decodes its standard input with -d.
func (an *Reading) base64(base string, args []string, stdin string) string {
	if !hasAny(args, "-d", "--decode", "-D") {
		return an.generic(base, args, stdin)
	}
	an.operands(args, UseOperand)
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(stdin), ""))
	if err != nil || strings.Contains(stdin, markUnknown) {
		return markBuilt
	}
	s := string(b)
	an.scanText(s, false)
	return s
}

// unhex reverses xxd -r's hex dump and rev's lines.
func (an *Reading) unhex(base string, args []string, stdin string) string {
	if base == "xxd" && !hasAny(args, "-r") {
		return an.generic(base, args, stdin)
	}
	an.operands(args, UseOperand)
	if base == "rev" && !strings.Contains(stdin, markUnknown) {
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(stdin, "\n"), "\n") {
			r := []rune(l)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			lines = append(lines, string(r))
		}
		s := strings.Join(lines, "\n") + "\n"
		an.scanText(s, false)
		return s
	}
	if hasAny(args, "-p", "-ps", "-plain") && !strings.Contains(stdin, markUnknown) {
		if b, err := hex.DecodeString(strings.Join(strings.Fields(stdin), "")); err == nil {
			an.scanText(string(b), false)
			return string(b)
		}
	}
	return markBuilt
}

// remote reports whether an scp or rsync operand names another host.
func remote(a string) bool {
	i := strings.Index(a, ":")
	return !strings.HasPrefix(a, "-") && (strings.HasPrefix(a, "rsync://") || i > 0 && !strings.Contains(a[:i], "/"))
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

// commandCmd: command -v names a command; otherwise command runs it.
func (an *Reading) commandCmd(base string, args []string, stdin string) string {
	if len(args) > 0 && (args[0] == "-v" || args[0] == "-V") {
		return ""
	}
	return an.wrapped(plainWrapper, args, stdin)
}

// parallel runs its operands as a command line, with its input's words.
func (an *Reading) parallel(base string, args []string, stdin string) string {
	an.uncertain = true
	return an.script(strings.Join(an.opts(args, roleRest, nil, nil), " "), nil)
}

func (an *Reading) busybox(base string, args []string, stdin string) string {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return an.exec(args, stdin)
	}
	return ""
}

// watch runs its operands as a command line.
func (an *Reading) watch(base string, args []string, stdin string) string {
	return an.script(strings.Join(an.opts(args, roleRest, lookup(base).roles, nil), " "), nil)
}

// chroot runs its command in a whole tree.
func (an *Reading) chroot(base string, args []string, stdin string) string {
	if len(args) > 0 {
		an.judge(args[0], UseRecursive)
		return an.exec(args[1:], stdin)
	}
	return ""
}

// su and script run -c's command (-qc: a cluster that ends in c).
func (an *Reading) su(base string, args []string, stdin string) string {
	for i, a := range args {
		short := len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, "c")
		if (short || a == "--command") && i+1 < len(args) {
			return an.script(args[i+1], nil)
		}
		if v, ok := strings.CutPrefix(a, "--command="); ok {
			return an.script(v, nil)
		}
	}
	return ""
}

// rsync to or from another host is a network tool, otherwise a copy.
func (an *Reading) rsync(base string, args []string, stdin string) string {
	if slices.ContainsFunc(args, remote) {
		an.reaches(base)
		return an.network(base, args, stdin)
	}
	return an.generic(base, args, stdin)
}

// rm -rf is a hard trigger.
func (an *Reading) rm(base string, args []string, stdin string) string {
	r, f := false, false
	for _, a := range args {
		short := strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--")
		r = r || a == "--recursive" || short && strings.ContainsAny(a, "rR")
		f = f || a == "--force" || short && strings.Contains(a, "f")
	}
	if r && f {
		an.act(ActRemovesTree, base, "")
	}
	return an.generic(base, args, stdin)
}

// dd reads if= and writes of=.
func (an *Reading) dd(base string, args []string, stdin string) string {
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "if":
			an.judge(v, UseOperand)
		case "of":
			an.judge(v, UseWrite)
			an.write(v)
			if strings.HasPrefix(v, "/dev/") {
				an.act(ActDeviceWrite, base, v)
			}
		}
	}
	return markUnknown
}

// envCmd looks through env: its options (-S splits a command line), its
// assignments and the command.
func (an *Reading) envCmd(base string, args []string, stdin string) string {
	saved := an.vars
	an.vars = make(map[string]expand.Variable, len(saved))
	for k, v := range saved {
		an.vars[k] = v
	}
	defer func() { an.vars = saved }()
	split := ""
	rest := an.opts(args, roleRest, lookup(base).roles, func(_ string, r Use, v string) {
		switch r {
		case roleValue:
			split = v
		case roleCwd:
			an.judge(v, UseOperand)
			an.setCwd(v)
		}
	})
	if split != "" {
		return an.envCmd(base, append(strings.Fields(split), rest...), stdin)
	}
	for ; len(rest) > 0 && (rest[0] == "-" || strings.Contains(rest[0], "=")); rest = rest[1:] {
		if k, v, ok := strings.Cut(rest[0], "="); ok {
			an.setVar(k, v)
			an.varCarries(k, v)
		}
	}
	if len(rest) == 0 {
		return ""
	}
	if strings.HasPrefix(rest[0], "-") {
		return an.envCmd(base, rest, stdin) // an option after the assignments
	}
	return an.exec(rest, stdin)
}

// shell judges sh/bash: -c script, a script file, or the script on its
// standard input.
func (an *Reading) shell(base string, args []string, stdin string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c")):
			if i+1 < len(args) {
				var pos []string
				if i+3 <= len(args) {
					pos = args[i+3:]
				}
				if pos == nil {
					pos = []string{}
				}
				return an.script(args[i+1], pos)
			}
			return ""
		case a == "-o" || a == "-O" || a == "--rcfile" || a == "--init-file":
			if i+1 < len(args) {
				an.judge(args[i+1], UseOperand)
			}
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if a == "-s" {
				return an.script(stdin, args[i+1:])
			}
		default:
			an.judge(a, UseOperand)
			an.scriptFile(a, args[i+1:], true)
			return markUnknown
		}
	}
	return an.script(stdin, []string{})
}

// maxScript is how much of a script file the analysis reads.
const maxScript = 64 << 10

// scriptFile judges what a script file that already exists will run: a
// shell script is walked as a line, other code is scanned like a
// one-liner's. Reading a file runs nothing.
func (an *Reading) scriptFile(name string, pos []string, shellScript bool) {
	an.scriptFileIn(name, pos, shellScript, false)
}

// scriptFileIn is scriptFile; with here the script runs in the current
// shell (source, .).
func (an *Reading) scriptFileIn(name string, pos []string, shellScript, here bool) {
	if name == "" || name == "-" || strings.Contains(name, markUnknown) || strings.Contains(name, markBuilt) {
		return
	}
	p := name
	if !filepath.IsAbs(p) {
		p = JoinRaw(an.cwd, p)
	}
	text := an.readFile(p)
	if strings.Contains(text, markUnknown) {
		return // missing, too large, a binary or denied
	}
	first, _, _ := strings.Cut(text, "\n")
	if strings.HasPrefix(first, "#!") {
		shellScript = shebangShell.MatchString(first)
	}
	// What a script does is read as Indirect: its paths are the
	// program's business, as any program's are (the guard judges only
	// what is off limits).
	an.j.Script(an, name, func() {
		an.indirect++
		unc, built := an.uncertain, an.built
		_, written := an.vfiles[an.abs(p)]
		switch {
		case shellScript && here:
			an.scriptHere(text, pos)
		case shellScript:
			an.script(text, pos)
		case written:
			// Code the line itself wrote is read as a one-liner's is.
			an.code(text)
		default:
			an.scanText(text, true)
		}
		an.uncertain, an.built = unc, built
		an.indirect--
	})
}

// encoderWords are the programs that turn an encoded text back into a
// script (a script from awk or sed is ordinary work: awk '{print "mv "$1}' | sh).
var encoderWords = Lazy(`\b(?:base64|base32|basenc|openssl|xxd|uudecode|gunzip|zcat|bzcat|xzcat|unxz|unzstd|zstdcat|uncompress)\b|\b(?:gzip|bzip2|xz|zstd)\s+(?:-\w*d|--decompress)`)

var shebangShell = Lazy(`^#!\s*\S*/(?:env\s+)?(?:ba|da|z|k|a|mk)?sh\b`)

// xargs hands its input's words to the command it runs.
func (an *Reading) xargs(base string, args []string, stdin string) string {
	repl := ""
	cmd := an.opts(args, roleRest, lookup(base).roles, func(opt string, r Use, v string) {
		switch r {
		case roleValue: // -I, --replace
			repl = v
		case UseOperand: // -a, --arg-file
			stdin = an.readFile(v)
		}
	})
	if repl == "" && slices.Contains(args[:len(args)-len(cmd)], "-i") {
		repl = "{}"
	}
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	words := strings.Fields(stdin)
	if strings.Contains(stdin, markTree) {
		// find's names keep their marker: fields split around it.
		words = strings.Fields(strings.ReplaceAll(stdin, markTree, markTree+" "))
		words = joinMarkers(words)
	}
	if len(words) > maxFields {
		words = words[:maxFields]
		an.uncertain = true
	}
	if repl != "" {
		if len(words) == 0 {
			words = []string{""}
		}
		var out strings.Builder
		for _, w := range words {
			argv := make([]string, len(cmd))
			for j, c := range cmd {
				argv[j] = strings.ReplaceAll(c, repl, w)
			}
			out.WriteString(an.exec(argv, ""))
		}
		return out.String()
	}
	return an.exec(append(append([]string(nil), cmd...), words...), "")
}

// joinMarkers glues a lone tree marker back onto the word before it.
func joinMarkers(words []string) []string {
	var out []string
	for _, w := range words {
		if w == markTree && len(out) > 0 {
			out[len(out)-1] += markTree
			continue
		}
		out = append(out, w)
	}
	return out
}

func (an *Reading) printf(args []string) string {
	if len(args) > 1 && args[0] == "-v" {
		if len(args) > 2 {
			an.setVar(args[1], an.format(args[2], args[3:]))
		}
		return ""
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return ""
	}
	s := an.format(args[0], args[1:])
	an.scanText(s, false)
	return s
}

// format is printf's output: the format is reused while arguments remain.
func (an *Reading) format(format string, args []string) string {
	var b strings.Builder
	for i := 0; i < 64; i++ {
		s, n, err := expand.Format(an.cfg(), format, args)
		if err != nil {
			return format + " " + strings.Join(args, " ")
		}
		b.WriteString(s)
		if n <= 0 || n >= len(args) {
			break
		}
		args = args[n:]
	}
	return b.String()
}

// read assigns standard input to variables; every line of it is judged as
// a path, since a while-read loop exists to hand its lines to a command.
func (an *Reading) read(base string, args []string, stdin string) string {
	var names []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if strings.ContainsAny(a, "pdnNtuaC") && i+1 < len(args) && len(a) == 2 {
				if a == "-a" {
					names = append(names, args[i+1])
				}
				i++
			}
			continue
		}
		names = append(names, a)
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
		if base != "read" {
			names = []string{"MAPFILE"}
		}
	}
	lines := strings.Split(strings.TrimSuffix(stdin, "\n"), "\n")
	for _, l := range lines {
		an.judge(l, UseOperand)
	}
	if base != "read" {
		an.vars[names[0]] = expand.Variable{Set: true, Kind: expand.Indexed, List: lines}
		return ""
	}
	first := lines[0]
	if len(lines) > 1 {
		// Later lines reach the loop's body too: the analysis judged
		// them above; the variable gets the first with a marker.
		first += markUnknown
	}
	fs := strings.Fields(first)
	for i, n := range names {
		switch {
		case i < len(fs) && i == len(names)-1:
			an.setVar(n, strings.Join(fs[i:], " "))
		case i < len(fs):
			an.setVar(n, fs[i])
		default:
			an.setVar(n, "")
		}
	}
	return ""
}

// namesOnly judges a program that prints names, not contents; its output
// is what it names.
func (an *Reading) namesOnly(base string, args []string, stdin string) string {
	plain := an.operands(args, UseOperand)
	if base == "fd" || base == "fdfind" {
		if len(plain) > 1 {
			plain = plain[1:]
		} else {
			plain = []string{"."}
		}
	}
	if base == "locate" {
		return markUnknown
	}
	if len(plain) == 0 {
		plain = []string{"."}
	}
	var out strings.Builder
	for _, p := range plain {
		switch base {
		case "realpath", "readlink":
			q := p
			if !filepath.IsAbs(q) {
				q = JoinRaw(an.cwd, q)
			}
			out.WriteString(an.phys(q) + "\n")
		case "dirname":
			out.WriteString(filepath.Dir(p) + "\n")
		case "basename":
			out.WriteString(filepath.Base(p) + "\n")
		default:
			q := p
			if !filepath.IsAbs(q) {
				q = JoinRaw(an.cwd, q)
			}
			if base == "ls" && !strings.ContainsAny(q, markUnknown+markBuilt) {
				if fi, err := an.stat(an.unalias(q)); err == nil && !fi.IsDir() {
					out.WriteString(p + "\n") // ls names a file as it was given
					continue
				}
			}
			out.WriteString(filepath.Clean(q) + "/" + markTree + "\n")
			if base == "ls" || base == "tree" {
				// ls prints the names in a directory, not their paths
				out.WriteString(markTree + "\n")
			}
		}
		if base == "basename" {
			break
		}
	}
	return out.String()
}

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

// link records links and bind mounts the line makes, so that later paths
// through them are judged by where they lead.
func (an *Reading) link(base string, args []string, stdin string) string {
	plain := an.operands(args, UseOperand)
	if base == "mount" && !hasAny(args, "--bind", "-B", "--rbind", "-o") {
		return ""
	}
	if len(plain) >= 2 {
		target := plain[len(plain)-2]
		link := plain[len(plain)-1]
		if !filepath.IsAbs(target) {
			if base == "ln" && !hasAny(args, "-r", "--relative") {
				target = filepath.Join(filepath.Dir(JoinRaw(an.cwd, link)), target)
			} else {
				target = JoinRaw(an.cwd, target)
			}
		}
		if !filepath.IsAbs(link) {
			link = JoinRaw(an.cwd, link)
		}
		an.aliases[filepath.Clean(link)] = filepath.Clean(target)
		an.write(link)
		an.judge(target, UseRecursive)
	}
	return ""
}
