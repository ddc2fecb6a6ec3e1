package bashread

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ---- statements ----

// stmts walks a list of statements with the given standard input and
// returns their output.
func (an *Reading) stmts(list []*syntax.Stmt, stdin string) string {
	var out strings.Builder
	for _, st := range list {
		out.WriteString(an.stmt(st, stdin))
	}
	return out.String()
}

func (an *Reading) stmt(st *syntax.Stmt, stdin string) string {
	if st == nil {
		return ""
	}
	an.tick()
	an.visited[st] = true
	var outFiles []string
	outRedirected, inRedirected := false, false
	for _, r := range st.Redirs {
		in, target, redirOut, isIn := an.redirect(r)
		if isIn {
			stdin = in
			inRedirected = true
		}
		if redirOut {
			outRedirected = true
			if target != "" {
				outFiles = append(outFiles, target)
			}
		}
	}
	if st.Cmd == nil {
		if inRedirected && !outRedirected {
			return stdin // $(<file)
		}
		return ""
	}
	var out string
	if c, ok := st.Cmd.(*syntax.CallExpr); ok && len(c.Args) == 0 && len(c.Assigns) == 0 {
		out = stdin // $(<file)
	} else {
		out = an.command(st.Cmd, stdin)
	}
	if outRedirected {
		// What a command writes to a file earlier in the line is what a
		// later command reads from it.
		for _, f := range outFiles {
			an.vfiles[f] = out
		}
		return ""
	}
	return out
}

// redirect judges a redirection. For input it returns the text that
// becomes standard input; for output to a file, the file (when it is
// standard output that goes there).
func (an *Reading) redirect(r *syntax.Redirect) (stdin, target string, outRedirected, isIn bool) {
	stdout := r.N == nil || r.N.Value == "1"
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return "", "", false, true
		}
		s, err := expand.Document(an.cfg(), r.Hdoc)
		if err != nil {
			an.uncertain = true
		}
		an.scanText(s, false)
		return s, "", false, true
	case syntax.WordHdoc:
		s := an.literal(r.Word)
		an.judge(s, UseMention)
		return s + "\n", "", false, true
	case syntax.DplIn, syntax.DplOut:
		s := an.literal(r.Word)
		if isFD(s) {
			return "", "", r.Op == syntax.DplOut && stdout && s != "1", false
		}
		an.judge(s, UseWrite)
		an.write(s)
		return "", "", stdout, false
	case syntax.RdrIn:
		s := an.literal(r.Word)
		an.judgeRedirPath(s, UseOperand)
		return an.readFile(s), "", false, true
	case syntax.RdrInOut:
		s := an.literal(r.Word)
		an.judgeRedirPath(s, UseWrite)
		an.write(s)
		return an.readFile(s), "", false, true
	default: // >, >>, >|, &>, &>>
		s := an.literal(r.Word)
		an.judgeRedirPath(s, UseWrite)
		an.write(s)
		all := r.Op == syntax.RdrAll || r.Op == syntax.AppAll
		if !stdout && !all {
			return "", "", false, false
		}
		return "", an.abs(s), true, false
	}
}

// abs makes a path absolute against the line's directory.
func (an *Reading) abs(p string) string {
	if p == "" || strings.Contains(p, markUnknown) {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = JoinRaw(an.cwd, p)
	}
	return filepath.Clean(an.unalias(p))
}

// readFile returns what a command reading p gets, as far as the analysis
// can know it without running anything: what the line wrote there
// earlier, or the file's content when it is small and the denylist does
// not protect it.
func (an *Reading) readFile(p string) string {
	a := an.abs(p)
	if a == "" {
		return markUnknown
	}
	if s, ok := an.vfiles[a]; ok {
		return s
	}
	if !an.j.Readable(an, a) {
		return markUnknown // off limits: told by name already; never read
	}
	b, err := an.readSmall(a, maxScript)
	if err != nil || bytes.IndexByte(b, 0) >= 0 {
		return markUnknown
	}
	return string(b)
}

func (an *Reading) judgeRedirPath(s string, ro Use) {
	if strings.HasPrefix(s, "/dev/tcp/") || strings.HasPrefix(s, "/dev/udp/") {
		an.act(ActSocket, "", s)
		return
	}
	an.judge(s, ro)
}

func isFD(s string) bool {
	if s == "-" || s == "" {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (an *Reading) command(cmd syntax.Command, stdin string) string {
	switch c := cmd.(type) {
	case *syntax.CallExpr:
		return an.call(c, stdin)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			left := an.sub(func() string { return an.stmt(c.X, stdin) })
			return an.sub(func() string { return an.stmt(c.Y, left) })
		default:
			return an.stmt(c.X, stdin) + an.stmt(c.Y, stdin)
		}
	case *syntax.Subshell:
		return an.sub(func() string { return an.stmts(c.Stmts, stdin) })
	case *syntax.Block:
		return an.stmts(c.Stmts, stdin)
	case *syntax.IfClause:
		var out string
		for cl := c; cl != nil; cl = cl.Else {
			out += an.stmts(cl.Cond, stdin) + an.stmts(cl.Then, stdin)
		}
		return out
	case *syntax.WhileClause:
		return an.stmts(c.Cond, stdin) + an.stmts(c.Do, stdin)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			var items []string
			if l.InPos.IsValid() || len(l.Items) > 0 {
				items = an.fields(l.Items)
			} else {
				items = an.pos
			}
			for _, it := range items {
				an.judge(it, UseMention)
			}
			var out strings.Builder
			if len(items) == 0 {
				items = []string{""}
			}
			if len(items) > maxLoopItems {
				items = items[:maxLoopItems]
				an.uncertain = true
			}
			for _, it := range items {
				if an.loops++; an.loops > maxLoopBodies {
					an.uncertain = true
					break
				}
				an.setVar(l.Name.Value, it)
				out.WriteString(an.stmts(c.Do, stdin))
			}
			return out.String()
		case *syntax.CStyleLoop:
			return an.stmts(c.Do, stdin)
		}
	case *syntax.CaseClause:
		an.judge(an.literal(c.Word), UseMention)
		var out string
		for _, it := range c.Items {
			out += an.stmts(it.Stmts, stdin)
		}
		return out
	case *syntax.FuncDecl:
		an.funcs[c.Name.Value] = c.Body
		// The body is judged as written, whether or not it is called.
		an.sub(func() string { return an.stmt(c.Body, "") })
		return ""
	case *syntax.DeclClause:
		nameref := c.Variant != nil && c.Variant.Value == "nameref"
		for _, as := range c.Args {
			if as.Name == nil && as.Value != nil {
				if f := an.literal(as.Value); strings.HasPrefix(f, "-") && strings.Contains(f, "n") {
					nameref = true
				}
				continue
			}
			if nameref && as.Name != nil && as.Value != nil && as.Array == nil {
				// declare -n r=HOME: r stands for the variable it names.
				an.vars[as.Name.Value] = expand.Variable{Set: true, Kind: expand.NameRef, Str: an.literal(as.Value)}
				continue
			}
			an.assign(as, true)
		}
		return ""
	case *syntax.TestClause:
		an.testExpr(c.X)
		return ""
	case *syntax.TimeClause:
		return an.stmt(c.Stmt, stdin)
	case *syntax.CoprocClause:
		return an.stmt(c.Stmt, stdin)
	case *syntax.ArithmCmd, *syntax.LetClause:
		return ""
	}
	an.uncertain = true
	return markUnknown
}

func (an *Reading) testExpr(x syntax.TestExpr) {
	switch e := x.(type) {
	case *syntax.BinaryTest:
		an.testExpr(e.X)
		an.testExpr(e.Y)
	case *syntax.UnaryTest:
		an.testExpr(e.X)
	case *syntax.ParenTest:
		an.testExpr(e.X)
	case *syntax.Word:
		an.judge(an.literal(e), UseOperand)
	}
}

// sub runs f in a subshell: assignments, functions and the directory do
// not leak out of it.
func (an *Reading) sub(f func() string) string {
	vars := make(map[string]expand.Variable, len(an.vars))
	for k, v := range an.vars {
		vars[k] = v
	}
	funcs := make(map[string]*syntax.Stmt, len(an.funcs))
	for k, v := range an.funcs {
		funcs[k] = v
	}
	cwd, cwdOK, pos, dirs, oldpwd := an.cwd, an.cwdOK, an.pos, an.dirs, an.oldpwd
	out := f()
	an.vars, an.funcs, an.cwd, an.cwdOK, an.pos, an.dirs, an.oldpwd = vars, funcs, cwd, cwdOK, pos, dirs, oldpwd
	return out
}

func (an *Reading) assign(as *syntax.Assign, decl bool) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	switch {
	case as.Array != nil:
		var list []string
		for _, el := range as.Array.Elems {
			if el.Value != nil {
				list = append(list, an.fields([]*syntax.Word{el.Value})...)
			}
		}
		for _, v := range list {
			an.judge(v, UseMention)
		}
		an.vars[name] = expand.Variable{Set: true, Kind: expand.Indexed, List: list}
		an.varCarries(name, strings.Join(list, " "))
	case as.Index != nil:
		// a[i++]=v: which element is set is arithmetic the analysis does
		// not follow, so the array's value is unknown from here on.
		if as.Value != nil {
			an.judge(an.literal(as.Value), UseMention)
		}
		an.vars[name] = unknownVar()
	case as.Value != nil:
		v := an.literal(as.Value)
		if as.Append {
			v = an.getVar(name) + v
		}
		an.judge(v, UseMention)
		an.setVar(name, v)
		an.varCarries(name, v)
	case as.Naked && !decl:
		an.setVar(name, "")
	}
}

func (an *Reading) setVar(name, v string) {
	an.vars[name] = expand.Variable{Set: true, Kind: expand.String, Str: v}
}

func (an *Reading) getVar(name string) string {
	return an.env().Get(name).String()
}

// ---- expansion ----

// env is the expansion environment: the line's own assignments over the
// few variables a command's scrubbed environment has.
func (an *Reading) env() expand.Environ { return (*anEnv)(an) }

type anEnv Reading

func (e *anEnv) Get(name string) expand.Variable {
	an := (*Reading)(e)
	if v, ok := an.vars[name]; ok {
		return v
	}
	str := func(s string) expand.Variable { return expand.Variable{Set: true, Kind: expand.String, Str: s} }
	switch name {
	case "HOME":
		return str(an.rd.Home)
	case "PWD":
		if !an.cwdOK {
			return str(markUnknown)
		}
		return str(an.cwd)
	case "IFS":
		return str(" \t\n")
	case "TMPDIR":
		if an.rd.Scratch != "" {
			return str(an.rd.Scratch)
		}
		return str("/tmp")
	case "PATH":
		return str("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	case "#":
		return str(fmt.Sprint(len(an.pos)))
	case "@", "*":
		return expand.Variable{Set: true, Kind: expand.Indexed, List: an.pos}
	case "?", "$", "PPID", "RANDOM", "LINENO", "SECONDS", "BASHPID", "!":
		return str("1")
	case "0":
		return str("bash")
	}
	if len(name) > 0 && name[0] >= '1' && name[0] <= '9' {
		var n int
		if _, err := fmt.Sscan(name, &n); err == nil {
			if n <= len(an.pos) {
				return str(an.pos[n-1])
			}
			return expand.Variable{}
		}
	}
	if v, ok := an.rd.Env[name]; ok {
		return str(v)
	}
	if name == "BASH_REMATCH" || name == "MAPFILE" || name == "DIRSTACK" || name == "BASH_ARGV" || name == "COPROC" {
		return unknownVar()
	}
	if name == "OLDPWD" {
		if an.oldpwd == "" || !an.cwdOK {
			return str(markUnknown)
		}
		return str(an.oldpwd)
	}
	if u, ok := strings.CutPrefix(name, "HOME "); ok {
		switch {
		case u == "+":
			return an.env().Get("PWD")
		case u == "-":
			return an.env().Get("OLDPWD")
		case strings.TrimLeft(u, "+-0123456789") == "":
			return str(markUnknown) // the directory stack (~1, ~-2)
		}
		if cur, err := user.Current(); err == nil && cur.Username == u {
			return str(an.rd.Home)
		}
		return expand.Variable{}
	}
	return str(markUnknown)
}

func (e *anEnv) Each(f func(name string, vr expand.Variable) bool) {
	for k, v := range e.vars {
		if !f(k, v) {
			return
		}
	}
}

func (an *Reading) cfg() *expand.Config {
	return &expand.Config{
		Env: an.env(),
		CmdSubst: func(w io.Writer, cs *syntax.CmdSubst) error {
			out := an.sub(func() string { return an.stmts(cs.Stmts, "") })
			_, err := io.WriteString(w, out)
			return err
		},
		ProcSubst: func(ps *syntax.ProcSubst) (string, error) {
			an.sub(func() string { return an.stmts(ps.Stmts, markUnknown) })
			return "/dev/fd/63", nil
		},
	}
}

// fields expands words as a command's arguments (no globbing: patterns
// are judged by judge, component by component).
func (an *Reading) fields(words []*syntax.Word) []string {
	an.tick()
	fs, err := expand.Fields(an.cfg(), words...)
	if err != nil {
		an.uncertain = true
		for _, w := range words {
			fs = append(fs, an.rawWord(w))
		}
	}
	if len(fs) > maxFields {
		fs = fs[:maxFields]
		an.uncertain = true
	}
	return fs
}

// literal expands one word as an assignment's value.
func (an *Reading) literal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	an.tick()
	s, err := expand.Literal(an.cfg(), w)
	if err != nil {
		an.uncertain = true
		return an.rawWord(w)
	}
	return s
}

// rawWord prints a word as written.
func (an *Reading) rawWord(w *syntax.Word) string {
	var b bytes.Buffer
	_ = syntax.NewPrinter().Print(&b, w)
	return b.String()
}

// ---- judging paths ----

// textToken finds path-like tokens in free text: absolute paths and the
// ~ and $HOME forms.
var textToken = Lazy(`(?:~[A-Za-z0-9_.\-]*|\$\{?HOME\}?)?/[^\s'"\x60;|&<>(),:=]*|(?:^|[\s'"=:(])~(?:[\s'"]|$)`)

// scanText judges every path-like token in free text (the raw line, a
// here-doc, an interpreter's code). With code set, absolute tokens are
// also judged as operands, and the names of denied directories anywhere in
// the text count, since code can put a path together.
func (an *Reading) scanText(s string, code bool) {
	if !code && len(s) > 1024 && s != an.line && strings.Contains(an.line, s) {
		return // a quoted here-doc: scanned with the line already
	}
	for _, m := range textToken.FindAllString(s, -1) {
		tok := strings.Trim(m, " \t\n'\"=:(")
		switch {
		case tok == "~" && code && !strings.ContainsAny(m, "'\""):
			continue // awk's match operator, a bitwise not: not the home directory
		case tok == "~":
			tok = an.rd.Home
		case strings.HasPrefix(tok, "~/"):
			tok = an.rd.Home + tok[1:]
		case strings.HasPrefix(tok, "${HOME}"):
			tok = an.rd.Home + tok[len("${HOME}"):]
		case strings.HasPrefix(tok, "$HOME"):
			tok = an.rd.Home + tok[len("$HOME"):]
		case strings.HasPrefix(tok, "~"):
			continue // another user's home: the parsed line judges it
		}
		if code {
			an.judge(tok, UseOperand)
		} else {
			an.judge(tok, UseMention)
		}
	}
	if code {
		an.j.Code(an, s, false)
	}
}

func isIdent(c byte) bool { return isAlnum(c) || c == '_' }

// judge judges one expanded word used in the given role.
func (an *Reading) judge(v string, ro Use) {
	an.tick()
	if v == "" {
		return
	}
	if strings.Contains(v, "\n") {
		for _, part := range strings.Split(v, "\n") {
			an.judge(part, ro)
		}
		return
	}
	if strings.Contains(v, markBuilt) && ro != UseMention {
		an.built = true
	}
	if strings.Contains(v, markUnknown) && ro != UseMention {
		an.uncertain = true
	}
	if ro != UseMention {
		if strings.ContainsAny(v, markUnknown+markBuilt) {
			an.j.Partial(an, v)
		}
	}
	tree := strings.Contains(v, markTree)
	clean := unmark.Replace(v)
	if tree && ro != UseMention {
		ro = UseRecursive
		// "anything under d" followed by more (d/<tree>/id_rsa, or
		// ~/$x/id_rsa with x a name ls printed): anything under d.
		i := strings.Index(v, markTree)
		if rest := unmark.Replace(v[i+len(markTree):]); strings.Trim(rest, "/") != "" {
			prefix := unmark.Replace(v[:i])
			switch {
			case prefix == "":
				prefix = "."
			case !strings.HasSuffix(prefix, "/"):
				prefix = filepath.Dir(prefix)
			}
			an.judge(prefix, UseRecursive)
		}
	}
	// An absolute path inside a word after ":", "=", "," or "@"
	// (src:dst, input=/x, @file, --mount source=/x) is judged against
	// the denylist too.
	if strings.ContainsAny(clean, ":=,@") {
		if j := strings.IndexAny(clean, ":,"); j > 0 && clean[0] == '/' {
			an.judge(clean[:j], UseMention) // /src:/dst
		}
		for i := 0; i+1 < len(clean); i++ {
			if strings.IndexByte(":=,@", clean[i]) >= 0 && clean[i+1] == '/' && (i+2 >= len(clean) || clean[i+2] != '/') {
				part := clean[i+1:]
				if j := strings.IndexAny(part, ":,"); j >= 0 {
					part = part[:j]
				}
				an.judge(part, UseMention)
			}
		}
	}
	if i := strings.Index(clean, "://"); i > 0 {
		if p, ok := strings.CutPrefix(clean, "file://"); ok {
			an.judge(p, ro)
		}
		return
	}
	if strings.ContainsAny(clean, " \t") && ro == UseMention {
		an.scanText(clean, false)
		return
	}
	if clean == "~" || strings.HasPrefix(clean, "~/") {
		// Not expanded by the shell where it stands (quoted, or made by
		// a substitution): a relative name.
		if ro == UseMention {
			return
		}
	}
	if ro == UseMention && !strings.Contains(clean, "/") && !strings.ContainsAny(clean, "*?[") {
		return
	}
	p := clean
	if !filepath.IsAbs(p) {
		if !an.cwdOK && ro != UseMention {
			an.uncertain = true
		}
		p = JoinRaw(an.cwd, p)
	}
	p = an.unalias(p)
	if strings.ContainsAny(clean, "*?[") {
		an.judgeGlob(p, ro)
		return
	}
	if strings.HasPrefix(v, markUnknown) || strings.HasPrefix(v, markBuilt) {
		an.lead = strings.NewReplacer(markUnknown, "…", markBuilt, "…", markTree, "").Replace(v)
	}
	an.j.Path(an, p, clean, ro)
	an.lead = ""
}

// unalias replaces a link the line made earlier by its target.
func (an *Reading) unalias(p string) string {
	lex := filepath.Clean(p)
	for link, target := range an.aliases {
		if Within(lex, link) {
			return target + strings.TrimPrefix(lex, link)
		}
	}
	return p
}

// judgeGlob judges a pattern: component by component against the denied
// directories, and by what it matches on the file system.
func (an *Reading) judgeGlob(p string, ro Use) {
	pat := filepath.Clean(p)
	comps := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	// The literal directory before the first pattern component is named
	// as it is.
	lit := "/"
	for _, c := range comps {
		if strings.ContainsAny(c, "*?[") {
			break
		}
		lit = filepath.Join(lit, c)
	}
	if an.j.Glob(an, pat, lit, comps) {
		return
	}
	if ro != UseMention {
		an.j.Path(an, lit, lit, UseOperand)
	}
	for _, m := range an.glob(comps) {
		an.j.Path(an, m, m, ro)
	}
}

// phys resolves a path physically, remembering what it learnt.
func (an *Reading) phys(p string) string { return physicalDepth(p, 0, an.lstats) }

// glob expands a pattern's components against the file system, bounded in
// directory reads and matches (beyond the bound the line is uncertain).
func (an *Reading) glob(comps []string) []string {
	const maxReads, maxMatches = 32, 256
	matches := []string{"/"}
	reads := 0
	for _, c := range comps {
		var next []string
		for _, m := range matches {
			an.tick()
			if !strings.ContainsAny(c, "*?[") {
				next = append(next, filepath.Join(m, c))
				continue
			}
			if reads >= maxReads {
				an.uncertain = true
				break
			}
			if m == "/proc" || m == "/sys" {
				continue // judged by name above; too large to list
			}
			reads++
			ents, err := an.readDir(m)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(c, ".") && !an.dotglob() {
					continue // * does not match a dotted name unless dotglob is set
				}
				if ok, _ := filepath.Match(c, e.Name()); ok {
					next = append(next, filepath.Join(m, e.Name()))
				}
			}
			if len(next) > maxMatches {
				next = next[:maxMatches]
				an.uncertain = true
			}
		}
		matches = next
	}
	return matches
}

// setCwd follows cd.
func (an *Reading) setCwd(dir string) {
	if strings.ContainsAny(dir, markUnknown+markBuilt+markTree) || strings.ContainsAny(dir, "*?[") {
		an.cwdOK = false
		return
	}
	if dir == "" {
		dir = an.rd.Home
	}
	if !filepath.IsAbs(dir) {
		dir = JoinRaw(an.cwd, dir)
	}
	an.cwd = an.phys(an.unalias(dir))
}

// promptExpansions refuses ${x@P}: a prompt expansion expands the
// variable's value again (parameters, command substitutions, \w), which
// the analysis does not follow.
func (an *Reading) promptExpansions(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps &&
			pe.Exp.Word != nil && pe.Exp.Word.Lit() == "P" {
			an.act(ActPromptExpansion, "", "")
			return false
		}
		return true
	})
}

// LinkOut looks, within a bound, for a symbolic link inside the directory
// root whose resolved target leads where hit says (a repository can carry
// a link such as docs -> ../../.ssh, and zip, cp -L, tar -h, grep -R,
// rsync -L and find -L follow it): hit returns what it found there and
// true. It returns the link and what hit returned, or "". The answer is
// kept by root for the rest of the reading (one judge asks, with one hit).
func (an *Reading) LinkOut(root string, hit func(target string) (string, bool)) (string, string) {
	const maxEntries = 4000
	if an.linkRoots == nil {
		an.linkRoots = map[string][2]string{}
	}
	if r, ok := an.linkRoots[root]; ok {
		return r[0], r[1]
	}
	var found [2]string
	n := 0
	// In a working copy's reading the copy is walked in the checkout it
	// copies (without .git), also when root holds it.
	walks := []string{root}
	if v := an.lstats.view; v != nil && v.root != root && Within(v.root, root) {
		walks = append(walks, v.root)
	}
	for _, w := range walks {
		h, kind := an.hostPath(w)
		if kind == viewHidden || found[0] != "" {
			continue
		}
		inView := kind == viewRoot || h != w
		if fi, err := an.fs.Lstat(h); err != nil || !fi.IsDir() {
			continue
		}
		walkTree(an.fs, h, func(p string, d fs.DirEntry) (descend, stop bool) {
			if n++; n > maxEntries || an.abort.Load() || (n%256 == 0 && time.Now().After(an.deadline)) {
				return false, true
			}
			if d.IsDir() {
				return !(inView && d.Name() == ".git"), false
			}
			if d.Type()&fs.ModeSymlink == 0 {
				return false, false
			}
			// A relative link that does not climb (libx.so -> libx.so.1)
			// stays in the tree, whose other links are looked at in turn.
			if t, err := an.fs.ReadLink(p); err != nil || (!filepath.IsAbs(t) && !slices.Contains(strings.Split(t, "/"), "..")) {
				return false, false
			}
			if inView {
				p = an.lstats.view.back(p)
			}
			if dir, ok := hit(an.phys(p)); ok {
				found = [2]string{p, dir}
				return false, true
			}
			return false, false
		})
	}
	an.linkRoots[root] = found
	return found[0], found[1]
}

// dotglobLine matches a line that may make * match dotted names: dotglob,
// GLOBIGNORE, zsh's globdots or (D), or a file sourced that may set them.
var dotglobLine = Lazy(`dotglob|GLOBIGNORE|globdots|GLOB_DOTS|\(D|\bsource\b|(?:^|[;&|({\s])\.\s|\bzsh\b|\beval\b|\bbash\s+-i`)

// dotglob reports whether a * on the line may match a dotted name.
func (an *Reading) dotglob() bool {
	if an.dotglobSet == 0 {
		an.dotglobSet = 1
		if dotglobLine.MatchString(an.line) {
			an.dotglobSet = 2
		}
	}
	return an.dotglobSet == 2
}

// unknownVar is a variable whose value, as a string or any element of an
// array, the analysis cannot know.
func unknownVar() expand.Variable {
	list := make([]string, 16)
	for i := range list {
		list[i] = markUnknown
	}
	return expand.Variable{Set: true, Kind: expand.Indexed, List: list}
}
