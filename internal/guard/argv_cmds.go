package guard

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
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

var pathListSep = regexp.MustCompile(`[:\s]+`)

// varCarries judges a variable whose value carries a command or a path.
func (an *analyzer) varCarries(name, v string) {
	switch {
	case commandVars[name] || strings.HasPrefix(name, "GIT_CONFIG_VALUE"):
		an.script(v, nil)
	case pathVars[name]:
		for _, p := range pathListSep.Split(v, -1) {
			p = strings.TrimPrefix(p, "--require=")
			if p != "" && !strings.HasPrefix(p, "-") {
				an.judge(p, roleOperand)
			}
		}
	}
}

// script judges text that a shell will run (bash -c, eval, a here-doc fed
// to a shell, a command-carrying option) with the given positional
// arguments; its output is returned.
func (an *analyzer) script(text string, pos []string) string {
	return an.runScript(text, pos, false)
}

// scriptHere judges text the current shell runs (eval, source): its cd,
// assignments and functions stay in effect for the rest of the line.
func (an *analyzer) scriptHere(text string, pos []string) string {
	return an.runScript(text, pos, true)
}

func (an *analyzer) runScript(text string, pos []string, here bool) string {
	if strings.Contains(text, markBuilt) && encoderWords.MatchString(an.line) {
		an.find(Refuse, "the line runs a script that a decoder makes up as it runs, which nodwyn cannot read before it runs, so it was refused and nothing of it ran; write the commands out plainly")
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
func (an *analyzer) hasProse(words []*syntax.Word) bool {
	for _, w := range words {
		if an.prose[w] {
			return true
		}
	}
	return false
}

func (an *analyzer) call(c *syntax.CallExpr, stdin string) string {
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
func (an *analyzer) exec(argv []string, stdin string) string {
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
		an.judge(w, roleMention)
	}
	prog := argv[0]
	args := argv[1:]
	if strings.Contains(prog, markUnknown) || strings.Contains(prog, markBuilt) {
		an.uncertain = true
		if strings.Contains(prog, markBuilt) {
			an.built = true
		}
		an.operands(args, roleOperand)
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
				an.find(Refuse, fmt.Sprintf("%s %s reads nodwyn's own configuration and data directories, which nodwyn keeps off limits; nobody can approve that, so it was refused and nothing of it ran; give it a home of its own (HOME=$TMPDIR/h %s %s …) if you are testing nodwyn", base, sub, base, sub))
			}
		}
	}
	if what := credentialPrinter(base, args); what != "" {
		an.find(Refuse, fmt.Sprintf("%s reads %s, which nodwyn keeps off limits; nobody can approve that, so it was refused and nothing of it ran; do the task without it", base, what))
	}
	if strings.Contains(prog, "/") {
		an.judge(prog, roleProgram)
		if !within(filepath.Clean(prog), "/usr") && !within(filepath.Clean(prog), "/bin") && !within(filepath.Clean(prog), "/sbin") {
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
	return an.program(lookup(base), base, args, stdin)
}

// builtin judges the shell's own builtins, whose effect is on the shell:
// its directory, variables, positional parameters, options and what it
// prints.
func (an *analyzer) builtin(base string, args []string, stdin string, allProse bool) (string, bool) {
	switch base {
	case "eval":
		return an.scriptHere(strings.Join(args, " "), an.pos), true
	case "source", ".":
		if len(args) > 0 {
			an.judge(args[0], roleOperand)
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
func (an *analyzer) cd(base string, args []string) string {
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
		dir = an.t.Home
	}
	// CDPATH: a relative name is looked up in each of its directories
	// first; every candidate is judged, and the first that exists is
	// where cd goes.
	if cdpath := an.getVar("CDPATH"); cdpath != "" && cdpath != markUnknown && !filepath.IsAbs(dir) &&
		!strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") && dir != "." && dir != ".." {
		if strings.Contains(cdpath, markUnknown) || strings.Contains(cdpath, markBuilt) {
			an.uncertain = true
			an.judge(dir, roleOperand)
			an.cwdOK = false
			return ""
		}
		chosen := ""
		for _, c := range strings.Split(cdpath, ":") {
			if c == "" {
				c = "."
			}
			if c == "~" || strings.HasPrefix(c, "~/") {
				c = an.t.Home + c[1:] // a tilde after ":" in an assignment
			}
			cand := joinRaw(c, dir)
			if !filepath.IsAbs(c) {
				cand = joinRaw(an.cwd, cand)
			}
			an.judge(cand, roleOperand)
			if fi, err := an.stat(an.unalias(cand)); chosen == "" && err == nil && fi.IsDir() {
				chosen = cand
			}
		}
		if chosen != "" {
			dir = chosen
		}
	}
	an.judge(dir, roleOperand)
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
func (an *analyzer) base64(base string, args []string, stdin string) string {
	if !hasAny(args, "-d", "--decode", "-D") {
		return an.generic(base, args, stdin)
	}
	an.operands(args, roleOperand)
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(stdin), ""))
	if err != nil || strings.Contains(stdin, markUnknown) {
		return markBuilt
	}
	s := string(b)
	an.scanText(s, false)
	return s
}

// unhex reverses xxd -r's hex dump and rev's lines.
func (an *analyzer) unhex(base string, args []string, stdin string) string {
	if base == "xxd" && !hasAny(args, "-r") {
		return an.generic(base, args, stdin)
	}
	an.operands(args, roleOperand)
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

func isHarmlessDev(v string) bool {
	for _, s := range systemOK {
		if within(filepath.Clean(v), s) {
			return true
		}
	}
	return false
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
func (an *analyzer) write(p string) {
	if p == "" || p == "-" || strings.Contains(p, markUnknown) || an.denyOnly > 0 {
		return
	}
	if !filepath.IsAbs(p) {
		p = joinRaw(an.cwd, p)
	}
	an.writes = append(an.writes, filepath.Clean(an.unalias(p)))
}

// operands judges a program's arguments (opts with no roles) and returns
// the plain operands.
func (an *analyzer) operands(args []string, ro role) []string { return an.opts(args, ro, nil, nil) }

// opts judges a program's arguments. The value of an option in roles ("-o
// v", "-ov", "--output v", "--output=v", or a long option with one dash
// named in roles as it is) is used in its role: a path read, written or
// searched, a command line (roleRun), text (roleMention); fn, when not
// nil, is told of every such option. Another option's attached value that
// looks like a path is a path it reads. The plain operands (with @file and
// key=value values) are judged in the role ro and returned; with roleNone
// they are returned as they are, for the caller to judge, and with roleRest
// the first one and all that follow are (a wrapper's command).
func (an *analyzer) opts(args []string, ro role, roles map[string]role, fn func(opt string, r role, v string)) []string {
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
				if looksLikePath(v) {
					an.judge(v, ro)
				}
				an.judge(a, roleMention)
				plain = append(plain, a)
				continue
			}
			if v, ok := strings.CutPrefix(a, "@"); ok && v != "" {
				an.judge(v, roleOperand)
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
				if v = strings.TrimPrefix(v, "@"); attached && looksLikePath(v) {
					an.judge(v, roleOperand)
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
			case roleOperand, roleRecursive, roleWrite:
				an.judge(v, r)
				if r == roleWrite {
					an.write(v)
				}
			case roleScriptFile:
				an.judge(v, roleOperand)
			case roleRun:
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
func optRoles(lines ...string) map[string]role {
	m := map[string]role{}
	for _, l := range lines {
		name, opts, _ := strings.Cut(l, ":")
		r, ok := roleNames[name]
		if !ok {
			panic("guard: no role " + name)
		}
		for _, o := range strings.Fields(opts) {
			m[o] = r
		}
	}
	return m
}

func looksLikePath(v string) bool {
	return strings.Contains(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, ".") ||
		strings.Contains(v, markUnknown) || strings.Contains(v, markBuilt) || DeniedName(v)
}

var recursiveFlag = regexp.MustCompile(`^-[A-Za-z]*[rRa][A-Za-z]*$|^--recursive$|^--archive$`)

// commandCmd: command -v names a command; otherwise command runs it.
func (an *analyzer) commandCmd(base string, args []string, stdin string) string {
	if len(args) > 0 && (args[0] == "-v" || args[0] == "-V") {
		return ""
	}
	return an.wrapped(plainWrapper, args, stdin)
}

// parallel runs its operands as a command line, with its input's words.
func (an *analyzer) parallel(base string, args []string, stdin string) string {
	an.uncertain = true
	return an.script(strings.Join(an.opts(args, roleRest, nil, nil), " "), nil)
}

func (an *analyzer) busybox(base string, args []string, stdin string) string {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return an.exec(args, stdin)
	}
	return ""
}

// watch runs its operands as a command line.
func (an *analyzer) watch(base string, args []string, stdin string) string {
	return an.script(strings.Join(an.opts(args, roleRest, lookup(base).roles, nil), " "), nil)
}

// chroot runs its command in a whole tree.
func (an *analyzer) chroot(base string, args []string, stdin string) string {
	if len(args) > 0 {
		an.judge(args[0], roleRecursive)
		return an.exec(args[1:], stdin)
	}
	return ""
}

// su and script run -c's command (-qc: a cluster that ends in c).
func (an *analyzer) su(base string, args []string, stdin string) string {
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
func (an *analyzer) rsync(base string, args []string, stdin string) string {
	if slices.ContainsFunc(args, remote) {
		an.find(Confirm, "rsync reaches the network; a person is asked, since what it sends leaves the machine")
		return an.network(base, args, stdin)
	}
	return an.generic(base, args, stdin)
}

// rm -rf is a hard trigger.
func (an *analyzer) rm(base string, args []string, stdin string) string {
	r, f := false, false
	for _, a := range args {
		short := strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--")
		r = r || a == "--recursive" || short && strings.ContainsAny(a, "rR")
		f = f || a == "--force" || short && strings.Contains(a, "f")
	}
	if r && f {
		an.find(Confirm, "rm -rf removes a whole tree for good; a person is asked")
	}
	return an.generic(base, args, stdin)
}

// destroys: mkfs and its kin wipe their target.
func (an *analyzer) destroys(base string, args []string, stdin string) string {
	an.find(Confirm, base+" destroys what is on its target; a person is asked")
	an.generic(base, args, stdin)
	return ""
}

// dd reads if= and writes of=.
func (an *analyzer) dd(base string, args []string, stdin string) string {
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "if":
			an.judge(v, roleOperand)
		case "of":
			an.judge(v, roleWrite)
			an.write(v)
			if strings.HasPrefix(v, "/dev/") && !isHarmlessDev(v) {
				an.find(Confirm, "dd writes to the device "+v+", which destroys what is on it; a person is asked")
			}
		}
	}
	return markUnknown
}

// envCmd looks through env: its options (-S splits a command line), its
// assignments and the command.
func (an *analyzer) envCmd(base string, args []string, stdin string) string {
	saved := an.vars
	an.vars = make(map[string]expand.Variable, len(saved))
	for k, v := range saved {
		an.vars[k] = v
	}
	defer func() { an.vars = saved }()
	split := ""
	rest := an.opts(args, roleRest, lookup(base).roles, func(_ string, r role, v string) {
		switch r {
		case roleValue:
			split = v
		case roleCwd:
			an.judge(v, roleOperand)
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
func (an *analyzer) shell(base string, args []string, stdin string) string {
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
				an.judge(args[i+1], roleOperand)
			}
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if a == "-s" {
				return an.script(stdin, args[i+1:])
			}
		default:
			an.judge(a, roleOperand)
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
func (an *analyzer) scriptFile(name string, pos []string, shellScript bool) {
	an.scriptFileIn(name, pos, shellScript, false)
}

// scriptFileIn is scriptFile; with here the script runs in the current
// shell (source, .).
func (an *analyzer) scriptFileIn(name string, pos []string, shellScript, here bool) {
	if name == "" || name == "-" || strings.Contains(name, markUnknown) || strings.Contains(name, markBuilt) {
		return
	}
	p := name
	if !filepath.IsAbs(p) {
		p = joinRaw(an.cwd, p)
	}
	text := an.readFile(p)
	if strings.Contains(text, markUnknown) {
		return // missing, too large, a binary or denied
	}
	first, _, _ := strings.Cut(text, "\n")
	if strings.HasPrefix(first, "#!") {
		shellScript = shebangShell.MatchString(first)
	}
	// Only the denylist judges what a script does: its other paths are
	// the program's business, as any program's are.
	before := an.best.Verdict
	an.denyOnly++
	unc, built := an.uncertain, an.built
	_, written := an.vfiles[an.abs(p)]
	switch {
	case shellScript && here:
		an.scriptHere(text, pos)
	case shellScript:
		an.script(text, pos)
	case written:
		// Code the line itself wrote is judged as a one-liner's is.
		an.code(text)
	default:
		an.scanText(text, true)
	}
	an.uncertain, an.built = unc, built
	an.denyOnly--
	if an.best.Verdict > before {
		an.best.Reason = "the line runs " + name + ", and " + an.best.Reason
	}
}

// encoderWords are the programs that turn an encoded text back into a
// script (a script from awk or sed is ordinary work: awk '{print "mv "$1}' | sh).
var encoderWords = regexp.MustCompile(`\b(?:base64|base32|basenc|openssl|xxd|uudecode|gunzip|zcat|bzcat|xzcat|unxz|unzstd|zstdcat|uncompress)\b|\b(?:gzip|bzip2|xz|zstd)\s+(?:-\w*d|--decompress)`)

var shebangShell = regexp.MustCompile(`^#!\s*\S*/(?:env\s+)?(?:ba|da|z|k|a|mk)?sh\b`)

// xargs hands its input's words to the command it runs.
func (an *analyzer) xargs(base string, args []string, stdin string) string {
	repl := ""
	cmd := an.opts(args, roleRest, lookup(base).roles, func(opt string, r role, v string) {
		switch r {
		case roleValue: // -I, --replace
			repl = v
		case roleOperand: // -a, --arg-file
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

func (an *analyzer) printf(args []string) string {
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
func (an *analyzer) format(format string, args []string) string {
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
func (an *analyzer) read(base string, args []string, stdin string) string {
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
		an.judge(l, roleOperand)
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

// findCmd judges find: its roots, the files its actions write, and
// -exec's command with {} standing for anything under the roots. Its output
// is its roots, marked as trees.
func (an *analyzer) findCmd(base string, args []string, stdin string) string {
	var roots []string
	i := 0
	for i < len(args) && (args[i] == "-H" || args[i] == "-L" || args[i] == "-P" || strings.HasPrefix(args[i], "-O") || args[i] == "-D") {
		if args[i] == "-D" {
			i++
		}
		i++
	}
	for i < len(args) && !strings.HasPrefix(args[i], "-") && args[i] != "(" && args[i] != "!" {
		roots = append(roots, args[i])
		i++
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	for _, r := range roots {
		an.judge(r, roleOperand)
	}
	var out strings.Builder
	for _, r := range roots {
		out.WriteString(strings.TrimSuffix(r, "/") + "/" + markTree + "\n")
	}
	tree := strings.Fields(out.String())
	for ; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			cmd := args[i+1 : j]
			i = j
			for _, t := range tree {
				argv := make([]string, len(cmd))
				for k, c := range cmd {
					argv[k] = strings.ReplaceAll(c, "{}", t)
				}
				an.exec(argv, "")
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				an.judge(args[i+1], roleWrite)
				an.write(args[i+1])
				i++
			}
		case "-newer", "-anewer", "-cnewer", "-samefile":
			if i+1 < len(args) {
				an.judge(args[i+1], roleOperand)
				i++
			}
		case "-delete":
			for _, r := range roots {
				an.write(r)
			}
		}
	}
	return out.String()
}

// namesOnly judges a program that prints names, not contents; its output
// is what it names.
func (an *analyzer) namesOnly(base string, args []string, stdin string) string {
	plain := an.operands(args, roleOperand)
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
				q = joinRaw(an.cwd, q)
			}
			out.WriteString(an.phys(q) + "\n")
		case "dirname":
			out.WriteString(filepath.Dir(p) + "\n")
		case "basename":
			out.WriteString(filepath.Base(p) + "\n")
		default:
			q := p
			if !filepath.IsAbs(q) {
				q = joinRaw(an.cwd, q)
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

// The options of git's subcommands: those that run a command or set a
// configuration value, and what a local clone's source is not.
var (
	gitRoles      = optRoles("run: --upload-pack --receive-pack --exec", "value: -c --config")
	gitFetchRoles = optRoles("run: --upload-pack --receive-pack --exec -u", "value: -c --config",
		"text: -b --branch -o --origin --depth --reference -j --jobs --template --separate-git-dir --filter")
)

// gitCommandKeys are git configuration keys whose value is a command (or a
// path whose content runs).
var gitCommandKeys = regexp.MustCompile(`(?i)^(core\.(fsmonitor|pager|sshcommand|editor|askpass|hookspath|gitproxy|worktree)|diff\..*\.(command|textconv)|diff\.external|merge\..*\.driver|filter\..*\.(clean|smudge|process)|sequence\.editor|credential\..*helper|credential\.helper|uploadpack\.packobjectshook|pager\..*|alias\..*|gpg\.program|gpg\..*\.program|protocol\..*|remote\..*\.(uploadpack|receivepack|proxy)|url\..*|http\..*\.(sslcert|sslkey|cookiefile)|http\.(sslcert|sslkey|cookiefile)|include\.path|includeif\..*)$`)

// git judges git: -C, -c with command-carrying keys, --upload-pack and its
// kin, ext:: transports, and git push as a hard trigger.
func (an *analyzer) git(base string, args []string, stdin string) string {
	saved, savedOK := an.cwd, an.cwdOK
	defer func() { an.cwd, an.cwdOK = saved, savedOK }()
	rest := an.opts(args, roleRest, lookup(base).roles, func(opt string, r role, v string) {
		switch {
		case r == roleCwd:
			an.judge(v, roleOperand)
			an.setCwd(v)
		case opt == "-c":
			an.gitConfig(v)
		case r == roleValue: // --config-env: a value from the environment
			an.uncertain = true
		}
	})
	if len(rest) == 0 {
		return ""
	}
	sub, rest := rest[0], rest[1:]
	if len(an.progs) < 256 {
		an.progs = append(an.progs, "git "+sub)
	}
	roles := gitRoles
	switch sub {
	case "fetch", "clone", "pull", "ls-remote":
		roles = gitFetchRoles
	}
	plain := an.opts(rest, roleNone, roles, func(_ string, r role, v string) {
		if r == roleValue {
			an.gitConfig(v)
		}
	})
	for _, a := range plain {
		if c, ok := strings.CutPrefix(a, "ext::"); ok {
			an.script(strings.ReplaceAll(c, "% ", " "), nil)
		} else if strings.HasPrefix(a, "fd::") {
			an.uncertain = true
		}
	}
	if why := gitDestructive(sub, rest); why != "" {
		an.find(Confirm, why+"; a person is asked")
	}
	switch sub {
	case "push":
		an.find(Confirm, "git push changes a remote repository; a person is asked")
	case "config":
		var kv []string
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") {
				kv = append(kv, a)
			}
		}
		if len(kv) >= 2 {
			an.gitConfig(kv[0] + "=" + strings.Join(kv[1:], " "))
		}
		for j, a := range rest {
			if (a == "-f" || a == "--file") && j+1 < len(rest) {
				an.judge(rest[j+1], roleWrite)
			}
		}
		return markUnknown
	case "clone", "fetch", "pull", "ls-remote", "submodule", "remote":
		an.find(Confirm, "git "+sub+" reaches a remote repository over the network; a person is asked")
		if sub == "clone" {
			// A local clone copies the whole repository it names.
			if len(plain) > 0 && !strings.Contains(plain[0], "://") && !strings.Contains(plain[0], "@") {
				an.judge(plain[0], roleRecursive)
			}
		}
	case "commit", "tag":
		// -m and -F: the message is text; -F's file is read.
		for j, a := range rest {
			if (a == "-F" || a == "--file") && j+1 < len(rest) {
				an.judge(rest[j+1], roleOperand)
			}
		}
		return markUnknown
	case "show", "archive", "cat-file", "bundle", "format-patch", "blame", "grep", "log", "diff", "stash", "ls-tree", "ls-files":
		// What the repository holds is read: a repository whose work
		// tree holds a protected directory (a home directory kept in
		// git) may hold its files.
		if an.cwdOK && an.t.Denylist != nil {
			if ok, dir := an.t.Denylist.ancestorOfDenied(an.cwd, an.phys(an.cwd)); ok && an.gitTop(an.cwd) {
				an.find(Refuse, fmt.Sprintf("git %s reads the repository at %s, which holds %s, a directory nodwyn keeps off limits because it holds credentials; nobody can approve that, so it was refused and nothing of it ran", sub, an.cwd, dir))
			} else if top := an.gitTopDir(an.cwd); an.lstats.view != nil && top != "" {
				// A working copy has no .git: git finds the repository
				// of a directory that holds the copy (a home directory
				// kept in git).
				if ok, dir := an.t.Denylist.ancestorOfDenied(top, an.phys(top)); ok {
					an.find(Refuse, fmt.Sprintf("git %s reads the repository at %s (a working copy has no .git of its own), which holds %s, a directory nodwyn keeps off limits because it holds credentials; nobody can approve that, so it was refused and nothing of it ran; use the git tools, which show the folder's own repository", sub, top, dir))
				}
			}
		}
		if sub == "grep" {
			return an.grep("grep", rest, stdin)
		}
	case "status", "add", "rm", "mv", "checkout", "restore", "switch", "reset", "branch", "rev-parse", "merge", "rebase", "cherry-pick", "init", "apply", "bisect", "worktree", "describe", "shortlog", "am", "clean", "notes":
	}
	an.operands(rest, roleOperand)
	return markUnknown
}

func (an *analyzer) gitConfig(kv string) {
	k, v, _ := strings.Cut(kv, "=")
	an.judge(v, roleMention)
	if !gitCommandKeys.MatchString(k) {
		if looksLikePath(v) {
			an.judge(v, roleOperand)
		}
		return
	}
	lk := strings.ToLower(k)
	switch {
	case strings.HasPrefix(lk, "alias."):
		if s, ok := strings.CutPrefix(v, "!"); ok {
			an.script(s, nil)
		}
	case strings.HasSuffix(lk, "hookspath") || strings.HasSuffix(lk, "worktree") || strings.HasPrefix(lk, "include") || strings.Contains(lk, "ssl") || strings.Contains(lk, "cookiefile"):
		an.judge(v, roleRecursive)
		if lk == "core.hookspath" && !an.t.Sandbox {
			an.find(SecurityConfirm, "git -c core.hooksPath makes git run hooks from "+v+"; a person is asked")
		}
	case strings.HasPrefix(lk, "protocol.") || strings.HasPrefix(lk, "url."):
		an.find(Confirm, "git -c "+k+" changes how git reaches remotes; a person is asked")
	default:
		an.script(v, nil)
	}
}

// The roles of tar's options: extracting or listing, the archive is read
// and -C is where the members are written (the other words are member
// names); creating, the archive is written and what it takes is read
// whole.
var (
	tarRun          = "run: --to-command --use-compress-program -I --info-script --new-volume-script -F --rsh-command --rmt-command"
	tarExtractRoles = optRoles(tarRun, "value: --checkpoint-action", "write: -C --directory", "read: -f --file", "text: --exclude")
	tarCreateRoles  = optRoles(tarRun, "value: --checkpoint-action -T --files-from", "write: -f --file")
)

// tar judges tar by its options' roles, in old-style bundles (czf) and
// clusters (-xzf) too.
func (an *analyzer) tar(base string, args []string, stdin string) string {
	roles, ro := tarCreateRoles, roleRecursive
	if tarExtracts(args) {
		roles, ro = tarExtractRoles, roleMention
	}
	var words []string
	for j, a := range args {
		if j == 0 && tarBundle.MatchString(a) {
			a = "-" + a
		}
		words = append(words, splitCluster(a, roles)...)
	}
	an.opts(words, ro, roles, func(opt string, _ role, v string) {
		switch opt {
		case "--checkpoint-action":
			if c, ok := strings.CutPrefix(v, "exec="); ok {
				an.script(c, nil)
			}
		case "-T", "--files-from":
			an.listFile(v, stdin)
		}
	})
	return markUnknown
}

// splitCluster splits a cluster of short options (-xzf) into one word
// each; what follows one that takes a value is its value (-fx.tar).
func splitCluster(a string, roles map[string]role) []string {
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
func (an *analyzer) listFile(name, stdin string) {
	text := stdin
	if name != "-" {
		text = an.readFile(name)
	}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			an.judge(l, roleRecursive)
		}
	}
}

var sedExec = regexp.MustCompile(`(?:^|[;\n{}])\s*(?:[0-9$]+|/[^/]*/)?(?:,\s*(?:[0-9$]+|/[^/]*/))?\s*e(?:\s+([^;\n}]*))?`)
var sedFile = regexp.MustCompile(`(?:^|[;\n{}]|/[gpIiMm0-9]*)\s*[rRwW]\s+([^;\n}]+)`)

// sed judges sed: its script (e executes, r/w name files), its files.
func (an *analyzer) sed(base string, args []string, stdin string) string {
	var scripts []string
	explicit := false
	files := an.opts(args, roleNone, lookup(base).roles, func(_ string, r role, v string) {
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
		an.judge(s, roleMention)
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
			an.judge(f, roleOperand)
			if strings.ContainsAny(strings.TrimSpace(m[0])[:1], "wW") {
				an.write(f)
			}
		}
	}
	for _, f := range files {
		an.judge(f, roleOperand)
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

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// grep judges grep and its kin: the pattern is text, the rest are paths;
// rg --pre runs a command on every file.
func (an *analyzer) grep(base string, args []string, stdin string) string {
	explicit := false
	rest := an.opts(args, roleNone, lookup(base).roles, func(_ string, r role, v string) {
		if r == roleValue { // rg --pre
			an.exec(append(strings.Fields(v), an.cwd+"/"+markTree), "")
		}
		explicit = explicit || r == roleScript || r == roleScriptFile
	})
	if !explicit && len(rest) > 0 {
		rest = rest[1:]
	}
	rec := lookup(base).rec == recAlways || slices.ContainsFunc(args, func(a string) bool { return recursiveFlag.MatchString(a) && strings.ContainsAny(a, "rR") })
	ro := roleOperand
	if rec {
		ro = roleRecursive
	}
	if plain := an.operands(rest, ro); rec && len(plain) == 0 {
		an.judge(".", roleRecursive)
	}
	return markUnknown
}

// awk judges an awk program as code and its files as operands.
func (an *analyzer) awk(base string, args []string, stdin string) string {
	explicit := false
	rest := an.opts(args, roleNone, lookup(base).roles, func(_ string, r role, _ string) {
		explicit = explicit || r == roleScriptFile
	})
	if !explicit && len(rest) > 0 {
		an.code(awkRegexps(rest[0]))
		rest = rest[1:]
	}
	an.operands(rest, roleOperand)
	return markBuilt
}

// code judges an interpreter's code string.
func (an *analyzer) code(s string) {
	an.scanText(s, true)
	if an.t.Denylist == nil {
		return
	}
	// Encoded literals are judged as the code they decode to.
	an.decodedLiterals(s)
	// String literals put together ('.s' + 'sh', "~/.s" "sh",
	// ''.join(['.','s','s','h'])) are judged joined: all of the code's
	// literals, one after another.
	an.deniedNames(literalConcat(s))
	// Each pattern runs only where one of its literal parts is in the
	// code: a long script written by a here-doc stays within the bound.
	home := homeAccess.MatchString(s)
	switch {
	case home && containsAny(s, "walk(", "glob(", "scandir(", "listdir(", "readdir", "Dir.", "opendir(", "Find.find", "%", "{", "$") &&
		fileRead.MatchString(s) && (homePlaceholder.MatchString(s) || treeWalk.MatchString(s)):
		an.find(Refuse, "the code on the line reads files in the home directory by a name it fills in or finds as it runs, which nodwyn cannot check against the directories it keeps off limits, so it was refused and nothing of it ran; write the path out plainly")
	case containsAny(s, "decode", "hex", "zlib", "marshal", "pack(", "Buffer.from", "atob(") &&
		decodeExec.MatchString(s) && (execCall.MatchString(s) || openDecoded.MatchString(s)):
		an.find(Refuse, "the code on the line runs code it decodes first, which nodwyn cannot read before it runs, so it was refused and nothing of it ran; write the code out plainly")
	case home && containsAny(s, "chr(", "ord(", "\\", "decode", "hex", "rot13", "[::-1]", "reverse", "fromCharCode", "pack(") && obfuscated.MatchString(s):
		an.find(Refuse, "the code on the line reaches into the home directory with a name it puts together or decodes, which nodwyn cannot check against the directories it keeps off limits, so it was refused and nothing of it ran; write the path out plainly")
	}
}

// decodedLiterals judges what base64 literals in text decode to.
func (an *analyzer) decodedLiterals(text string) {
	for _, lit := range b64Literal.FindAllString(text, 64) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			if b, err := enc.DecodeString(lit); err == nil && printable(b) {
				an.scanText(string(b), true)
				break
			}
		}
	}
}

// deniedNames refuses code that holds the name of a denied directory or
// a /proc entry nodwyn keeps off limits.
func (an *analyzer) deniedNames(code string) {
	for _, n := range an.t.codeNames {
		if strings.Contains(code, n) {
			an.deny(n, n)
			return
		}
	}
	if an.mentionsProc(code) {
		an.deny("/proc", "/proc/*/environ")
	}
}

var (
	homePlaceholder = regexp.MustCompile(`["']~/[^"'\n]*(?:%[sr]|\{)|\$\w+/\$\w+`)
	treeWalk        = regexp.MustCompile(`\bwalk\(|\brglob\(|\bglob\(|\bscandir\(|\blistdir\(|readdirSync\(|\breaddir\(|Dir\.(?:glob|children|entries|each_child)|\bopendir\(|\bFind\.find`)
	fileRead        = regexp.MustCompile(`\bopen\(|read_text|read_bytes|readFile|File\.read|file_get_contents|\bsystem\(|popen|subprocess|\bexec|` + "`" + `|copy|shutil|\bsend|urlopen|requests\.`)
	openDecoded     = regexp.MustCompile(`(?:\bopen|readFile\w*|File\.read|file_get_contents)\s*\([^)]*(?:b64decode|b32decode|fromhex|unhexlify|atob|decode_base64|Buffer\.from)`)
	b64Literal      = regexp.MustCompile(`[A-Za-z0-9+/]{6,}={0,2}`)
	decodeExec      = regexp.MustCompile(`b64decode|b32decode|a85decode|fromhex|unhexlify|codecs\.decode|zlib\.decompress|marshal\.loads|pack\(["']H|decode_base64|Buffer\.from\([^)]*base64|atob\(`)
	execCall        = regexp.MustCompile(`\bexec\(|\beval\b|\bcompile\(|Function\(|\bsystem\(|\bpopen|\bspawn|\bsubprocess\b|` + "`")
	homeAccess      = regexp.MustCompile(`expanduser|homedir|Dir\.home|Path\.home|\$ENV\{\s*["']?HOME|ENV\[["']HOME|environ(?:\.get\(|\[)\s*["']HOME|getenv\(\s*["']HOME|process\.env\.HOME|\$HOME|(?:^|[\s"'(=,` + "`" + `])~(?:/|["'])`)
	obfuscated      = regexp.MustCompile(`\bchr\(|\bord\(|\\x[0-9a-fA-F]{2}|\\[0-7]{3}|\\u[0-9a-fA-F]{4}|b64decode|fromhex|unhexlify|rot13|\[::-1\]|\.reverse\(\)|reversed\(|String\.fromCharCode|\bpack\(`)
)

// printable reports whether decoded bytes look like text.
func printable(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < 9 || (c > 13 && c < 32) || c > 126 {
			return false
		}
	}
	return true
}

// interp judges an interpreter: -c/-e code, a script file, code on its
// standard input.
func (an *analyzer) interp(base string, args []string, stdin string) string {
	codeOpts := map[string]bool{"-c": true, "-e": true, "-E": true, "-r": true, "--eval": true, "-p": true, "--print": true}
	sawCode := false
	ro := roleOperand
	var rest []string
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case sawCode:
			rest = append(rest, a)
		case codeOpts[a] && j+1 < len(args):
			an.code(args[j+1])
			sawCode = true
			j++
		case strings.HasPrefix(a, "--eval="):
			an.code(strings.TrimPrefix(a, "--eval="))
			sawCode = true
		case (strings.HasPrefix(base, "perl") || base == "ruby") && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "eE") && j+1 < len(args):
			an.code(args[j+1])
			sawCode = true
			j++
		case a == "-m" && j+1 < len(args):
			if args[j+1] == "http.server" || args[j+1] == "SimpleHTTPServer" {
				ro = roleRecursive // it serves a whole tree
			}
			j++
			sawCode = true
		case (a == "-S" || a == "-t") && base == "php":
			ro = roleRecursive
		case a == "-" || a == "--":
		case strings.HasPrefix(a, "-"):
		default:
			an.judge(a, roleOperand)
			an.scriptFile(a, nil, false)
			sawCode = true
		}
	}
	// A script's or a module's arguments may be paths it reads or serves.
	an.operands(rest, ro)
	if ro == roleRecursive && len(an.operands(rest, roleMention)) == 0 && !hasAny(rest, "--directory", "-d") {
		an.judge(".", roleRecursive)
	}
	if !sawCode || hasAny(args, "-") {
		an.code(stdin)
	}
	return markBuilt
}

// link records links and bind mounts the line makes, so that later paths
// through them are judged by where they lead.
func (an *analyzer) link(base string, args []string, stdin string) string {
	plain := an.operands(args, roleOperand)
	if base == "mount" && !hasAny(args, "--bind", "-B", "--rbind", "-o") {
		return ""
	}
	if len(plain) >= 2 {
		target := plain[len(plain)-2]
		link := plain[len(plain)-1]
		if !filepath.IsAbs(target) {
			if base == "ln" && !hasAny(args, "-r", "--relative") {
				target = filepath.Join(filepath.Dir(joinRaw(an.cwd, link)), target)
			} else {
				target = joinRaw(an.cwd, target)
			}
		}
		if !filepath.IsAbs(link) {
			link = joinRaw(an.cwd, link)
		}
		an.aliases[filepath.Clean(link)] = filepath.Clean(target)
		an.write(link)
		an.judge(target, roleRecursive)
	}
	return ""
}

// network judges a network tool: the local files it reads, writes or
// runs (its options' roles); scp's and rsync's local operands are copied
// whole.
func (an *analyzer) network(base string, args []string, stdin string) string {
	if base == "socat" {
		for _, a := range args {
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				continue
			}
			typ, rest, _ := strings.Cut(a, ":")
			switch strings.ToUpper(typ) {
			case "EXEC", "SYSTEM":
				cmd, _, _ := strings.Cut(rest, ",")
				an.script(cmd, nil)
			case "FILE", "OPEN", "CREATE", "GOPEN", "PIPE", "UNIX-CONNECT", "UNIX-LISTEN":
				p, _, _ := strings.Cut(rest, ",")
				an.judge(p, roleOperand)
			}
		}
		return markUnknown
	}
	ro := roleOperand
	switch base {
	case "ssh", "sftp", "mosh", "scp", "rsync":
		ro = roleNone
	}
	plain := an.opts(args, ro, lookup(base).roles, func(opt string, r role, v string) {
		switch {
		case r != roleValue:
		case opt == "-o": // ssh -o Key=value
			k, v, _ := strings.Cut(v, "=")
			switch strings.ToLower(k) {
			case "proxycommand", "localcommand", "knownhostscommand":
				an.script(v, nil)
			case "identityfile", "userknownhostsfile", "certificatefile", "controlpath":
				an.judge(v, roleOperand)
			}
		case opt == "--files-from":
			an.listFile(v, "")
		default: // curl's data and forms: @file, <file
			if i := strings.Index(v, "@"); i >= 0 {
				f, _, _ := strings.Cut(v[i+1:], ";")
				an.judge(f, roleOperand)
			} else if i := strings.Index(v, "<"); i >= 0 && (opt == "-F" || opt == "--form") {
				an.judge(v[i+1:], roleOperand)
			}
			an.operands([]string{v}, roleOperand)
		}
	})
	if base == "scp" || base == "rsync" {
		for _, a := range plain {
			if !remote(a) {
				an.judge(a, roleRecursive)
			}
		}
	}
	return markUnknown
}

// secretPrinters are programs that print what a protected directory or a
// running credential daemon holds without naming it: when their words (not
// options) hold one of seqs in a row (none: always) and, with opts, one of
// these options (a trailing * a prefix). The floor's file rules do not
// cover a running agent, which hands out what it holds to whoever asks on
// its socket.
var secretPrinters = map[string]struct{ seqs, opts, what string }{
	"gpg":               {opts: "--export-secret-* --export-ssh-key", what: "the secret keys in ~/.gnupg"},
	"gpg2":              {opts: "--export-secret-* --export-ssh-key", what: "the secret keys in ~/.gnupg"},
	"ssh-add":           {what: "the keys the running ssh-agent holds"},
	"gpg-connect-agent": {what: "the secret keys the running gpg-agent holds"},
	"git":               {seqs: "credential fill", what: "the passwords and tokens git's credential helper keeps"},
	"secret-tool":       {seqs: "lookup, search", what: "the secrets the desktop keyring holds"},
	"security":          {seqs: "find-generic-password, find-internet-password", opts: "-w -g", what: "the passwords the keychain holds"},
	"keyctl":            {seqs: "print, read, pipe", what: "the secrets the kernel keyring holds"},
	"aws":               {seqs: "configure get, configure export-credentials", what: "the keys in ~/.aws"},
	"kubectl":           {seqs: "config view", opts: "--raw --raw=* --flatten", what: "the cluster credentials in ~/.kube"},
	"oc":                {seqs: "config view", opts: "--raw --raw=* --flatten", what: "the cluster credentials in ~/.kube"},
	"gcloud":            {seqs: "print-access-token, print-identity-token, config config-helper", what: "an access token made from the credentials in ~/.config/gcloud"},
	"az":                {seqs: "get-access-token", what: "an access token made from the credentials in ~/.azure"},
}

// credentialPrinter reports what a command prints from a protected
// directory without naming it (secretPrinters), or from another process's
// environment or memory.
func credentialPrinter(base string, args []string) string {
	switch base {
	case "ps":
		// BSD-style e (ps e, ps auxe, ps eww) prints every process's
		// environment: /proc/*/environ by another name.
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && strings.Contains(a, "e") && strings.Trim(a, "auxwefhjlmrsvTtSnXZcL") == "" {
				return "other processes' environments (/proc/*/environ)"
			}
		}
	case "gdb", "lldb", "gcore", "pstack", "strace", "ltrace", "eu-stack", "pyrasite", "py-spy":
		// Attaching to a running process reads its memory and environment.
		for i, a := range args {
			if a == "-p" || a == "--pid" || strings.HasPrefix(a, "--pid=") || a == "--attach-pid" || a == "attach" ||
				(base == "gcore" || base == "pstack") && i == len(args)-1 && a != "" && strings.Trim(a, "0123456789$") == "" {
				return "another process's memory and environment (/proc/*/mem, /proc/*/environ)"
			}
		}
	}
	sp, ok := secretPrinters[base]
	if !ok {
		return ""
	}
	var words []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	seq := sp.seqs == ""
	for _, want := range strings.Split(sp.seqs, ", ") {
		w := strings.Fields(want)
		for i := 0; !seq && w != nil && i+len(w) <= len(words); i++ {
			seq = slices.Equal(words[i:i+len(w)], w)
		}
	}
	opt := sp.opts == ""
	for _, o := range strings.Fields(sp.opts) {
		p, prefix := strings.CutSuffix(o, "*")
		opt = opt || slices.ContainsFunc(args, func(a string) bool { return a == o || prefix && strings.HasPrefix(a, p) })
	}
	if seq && opt {
		return sp.what
	}
	return ""
}

// literalConcat returns the contents of the string literals in code, one
// after another ('.s' + 'sh' gives .ssh).
func literalConcat(code string) string {
	var b strings.Builder
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for ; j < len(code) && code[j] != q && code[j] != '\n'; j++ {
			if code[j] == '\\' {
				j++
			}
		}
		if j >= len(code) || code[j] != q {
			continue // no closing quote on the line: not a literal
		}
		b.WriteString(code[i+1 : j])
		i = j
	}
	return b.String()
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

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// gitTop reports whether dir is, or is inside, a git work tree (a .git
// found going up from dir).
func (an *analyzer) gitTop(dir string) bool { return an.gitTopDir(dir) != "" }

// gitTopDir is the directory of the first .git found going up from dir, or
// "".
func (an *analyzer) gitTopDir(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if !an.lstats.lstat(filepath.Join(d, ".git")).missing {
			return d
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// tarBundle is tar's old-style first word (xzf, cvf, tf).
var tarBundle = regexp.MustCompile(`^[A-Za-z]+$`)

// tarExtracts reports whether a tar command extracts or lists (x, t,
// --extract, --get, --list) rather than creates or appends.
func tarExtracts(args []string) bool {
	for j, a := range args {
		switch {
		case a == "--extract" || a == "--get" || a == "--list" || a == "-x" || a == "-t":
			return true
		case a == "--create" || a == "--append" || a == "--update" || a == "-c" || a == "-r" || a == "-u" || a == "-A" || a == "--concatenate":
			return false
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") || j == 0 && tarBundle.MatchString(a):
			c := strings.TrimPrefix(a, "-")
			if strings.ContainsAny(c, "cruA") {
				return false
			}
			if strings.ContainsAny(c, "xt") {
				return true
			}
		}
	}
	return false
}

// gitDestructive names what a git subcommand destroys that no undo can bring
// back, or "" when it is an ordinary, recoverable git operation.
func gitDestructive(sub string, rest []string) string {
	has := func(pred func(string) bool) bool {
		for _, a := range rest {
			if a == "--" {
				break
			}
			if pred(a) {
				return true
			}
		}
		return false
	}
	short := func(c byte) func(string) bool {
		return func(a string) bool {
			return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0
		}
	}
	eq := func(s string) func(string) bool { return func(a string) bool { return a == s } }
	switch sub {
	case "reset":
		if has(eq("--hard")) || has(eq("--merge")) || has(eq("--keep")) {
			return "git reset --hard throws away uncommitted changes for good"
		}
	case "clean":
		dry := has(short('n')) || has(eq("--dry-run"))
		if !dry && (has(short('f')) || has(eq("--force"))) {
			return "git clean -f deletes untracked files for good"
		}
	case "checkout", "restore":
		for j, a := range rest {
			if a == "--" && j+1 < len(rest) || sub == "checkout" && (a == "-f" || a == "--force") {
				return "git " + sub + " overwrites uncommitted changes for good"
			}
		}
		if sub == "restore" && !has(eq("--staged")) {
			return "git restore overwrites uncommitted changes for good"
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			return "git stash " + rest[0] + " throws away stashed changes for good"
		}
	case "branch":
		if has(eq("-D")) || has(func(a string) bool { return a == "--delete" }) && has(func(a string) bool { return a == "--force" || a == "-f" }) {
			return "git branch -D deletes a branch whether or not it was merged"
		}
	}
	return ""
}
