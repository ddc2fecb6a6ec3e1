package guard

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nodwyn/nodwyn/internal/fsview"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Markers inside expanded text (private-use code points):
//   - unknown: a value the analysis cannot know (a program's output, an
//     unset variable);
//   - built: a value a decoder or interpreter made up, which may name any
//     path;
//   - tree: "and anything under it", what find or ls print about a root.
const (
	markUnknown = "\U000F0001"
	markBuilt   = "\U000F0002"
	markTree    = "\U000F0003"
)

// path roles: how a word is used.
type role int

const (
	roleMention   role = iota // only the denylist is judged (echo's words, patterns)
	roleOperand               // a path the program reads or names
	roleRecursive             // a path the program copies or searches recursively
	roleWrite                 // a path the program writes
	roleProgram               // the program itself
)

const (
	maxDepth      = 12
	maxFields     = 4096
	maxLoopItems  = 16
	maxLoopBodies = 256
)

type analyzer struct {
	t        *ArgvTrigger
	line     string
	deadline time.Time
	abort    atomic.Bool
	steps    int

	vars       map[string]expand.Variable
	funcs      map[string]*syntax.Stmt
	pos        []string
	cwd        string
	cwdOK      bool
	oldpwd     string // the directory before the last cd, or ""
	dirs       []string
	aliases    map[string]string // a link made earlier in the line → its target
	dotglobSet int               // 0 not yet known, 1 no, 2 yes (see dotglob)
	// linkRoots caches linkOut by directory.
	linkRoots map[string][2]string
	depth     int
	visited   map[*syntax.Stmt]bool
	inFunc    map[string]int
	lstats    *lstatCache
	fs        fsview.FS         // ArgvTrigger.FS, or the OS
	loops     int               // loop bodies walked so far
	vfiles    map[string]string // files the line writes, with what it writes
	// denyOnly > 0 while walking a script file: only refusals count.
	denyOnly int
	// With the kernel floor: the line's prose words (see markProse), the
	// line without them (what is scanned for denied names), and which of
	// the next command's arguments are prose.
	prose     map[*syntax.Word]bool
	scanLine  string
	proseArgs []bool

	best      Decision
	uncertain bool // something on the line could not be followed
	// nearDenied is set when an unknown value completes a path in a
	// directory that holds a denied one (~/$(…), $HOME/.s$x).
	nearDenied string
	built      bool // a path position received a made-up value
	// prog is the program whose arguments are being judged (exec), for
	// the verb of a refusal; lead is, while judgeAbs judges a word that
	// begins with a value the analysis cannot know ("$DIR"/), that word
	// with "…" for the value.
	prog   string
	lead   string
	writes []string
	progs  []string // base names of the programs run
}

func newAnalyzer(t *ArgvTrigger, line string, deadline time.Time) *analyzer {
	t.init()
	cwd := t.Folder
	if cwd == "" {
		cwd = "/"
	}
	an := &analyzer{
		t: t, line: line, deadline: deadline,
		vars: map[string]expand.Variable{}, funcs: map[string]*syntax.Stmt{},
		cwd: cwd, cwdOK: true, aliases: map[string]string{},
		visited: map[*syntax.Stmt]bool{}, inFunc: map[string]int{},
		lstats: t.baseLstats(), fs: t.FS, vfiles: map[string]string{},
		prose: map[*syntax.Word]bool{}, scanLine: line,
	}
	if an.fs == nil {
		an.fs = fsview.OS{}
	}
	return an
}

type stopAnalysis struct{}

// tick stops the analysis when its time is up.
func (an *analyzer) tick() {
	an.steps++
	if an.abort.Load() || (an.steps%16 == 1 && time.Now().After(an.deadline)) {
		panic(stopAnalysis{})
	}
}

func (an *analyzer) run() (res *argvResult) {
	defer func() {
		if r := recover(); r != nil {
			_, stopped := r.(stopAnalysis)
			if stopped {
				res = an.t.failClosed(an.line, "the analysis of the line did not finish in time", nil)
				res.timedOut = true
			} else {
				res = an.t.failClosed(an.line, fmt.Sprintf("the analysis of the line failed (%v)", r), nil)
			}
			// What was found before it stopped still counts.
			if an.best.Verdict > res.decision.Verdict {
				res = an.result()
				res.timedOut = stopped
			}
			res.unfinished = true
		}
	}()
	// Every literal path on the line is judged against the denylist, in
	// comments and quoted text too: naming a denied directory is enough
	// (with the kernel floor, outside prose no command opens).
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(an.line), "")
	if err == nil && an.t.KernelFloor {
		an.scanLine = an.markProse(f)
	}
	an.scanText(an.scanLine, false)
	if err != nil {
		if an.best.Verdict == Refuse {
			return an.result()
		}
		return an.t.failClosed(an.line, "the line does not parse as bash", err)
	}
	an.promptExpansions(f)
	an.stmts(f.Stmts, "")
	// Statements the walk did not reach (inside arithmetic, case patterns,
	// parameter expansions it did not expand) are judged on their own.
	syntax.Walk(f, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok && !an.visited[st] {
			an.stmt(st, "")
			return false
		}
		return true
	})
	return an.result()
}

func (an *analyzer) result() *argvResult {
	d := an.best
	if an.floorFollows() {
		// The kernel refuses what such a line really opens in the denied
		// directories: only what it names is refused here. Not another
		// process's /proc entries: Landlock's file rules do not cover them
		// (/proc/<pid>/environ of an unrestricted process was readable under
		// the floor), so a line that cannot be followed and mentions them is
		// refused as without the floor.
		if d.Verdict < Refuse && (an.uncertain || an.built) && an.mentionsProc(an.scanLine) {
			d = Decision{Verdict: Refuse, Reason: "the line builds a path or a command nodwyn cannot follow before it runs, and it mentions /proc and a process's environment, memory or files, which the kernel floor does not cover, so it was refused and nothing of it ran; write the paths out plainly"}
		}
		return an.decided(d)
	}
	if d.Verdict < Refuse && an.nearDenied != "" {
		d = Decision{Verdict: Refuse, Reason: fmt.Sprintf(
			"the line builds a path in %s from a value nodwyn cannot know before it runs, and that directory holds what nodwyn keeps off limits, so it was refused and nothing of it ran; write the path out plainly", an.nearDenied)}
	}
	if d.Verdict < Refuse && (an.uncertain || an.built) {
		if m := an.t.mentionsDenied(an.scanLine); m != "" {
			d = Decision{Verdict: Refuse, Reason: fmt.Sprintf(
				"the line builds a path or a command nodwyn cannot follow before it runs, and it mentions %s, so it was refused and nothing of it ran; write the paths out plainly", m)}
		} else if an.built && d.Verdict < SecurityConfirm && !an.t.Sandbox {
			d = Decision{Verdict: SecurityConfirm, Reason: "the line passes a program a path that a decoder or an interpreter makes up as it runs, which nodwyn cannot judge before it runs; write the path out plainly"}
		}
	}
	return an.decided(d)
}

func (an *analyzer) decided(d Decision) *argvResult {
	d.Checker = an.t.Name()
	if d.Verdict == Allow {
		d = Decision{}
	}
	return &argvResult{decision: d, writes: an.writes, progs: an.progs}
}

// floorFollows reports whether the kernel floor stands in for the
// analysis where it cannot follow a line: in sandbox mode with the floor
// on, a path or a command the analysis cannot follow is no reason to
// refuse, unless it is about another process's /proc entries (which the
// floor does not cover).
func (an *analyzer) floorFollows() bool { return an.t.Sandbox && an.t.KernelFloor }

// find records a finding; the strictest wins, the first reason at a level.
func (an *analyzer) find(v Verdict, reason string) {
	if an.denyOnly > 0 && v < Refuse {
		return
	}
	if v > an.best.Verdict {
		an.best = Decision{Verdict: v, Reason: reason}
	}
}

// ---- statements ----

// stmts walks a list of statements with the given standard input and
// returns their output.
func (an *analyzer) stmts(list []*syntax.Stmt, stdin string) string {
	var out strings.Builder
	for _, st := range list {
		out.WriteString(an.stmt(st, stdin))
	}
	return out.String()
}

func (an *analyzer) stmt(st *syntax.Stmt, stdin string) string {
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
func (an *analyzer) redirect(r *syntax.Redirect) (stdin, target string, outRedirected, isIn bool) {
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
		an.judge(s, roleMention)
		return s + "\n", "", false, true
	case syntax.DplIn, syntax.DplOut:
		s := an.literal(r.Word)
		if isFD(s) {
			return "", "", r.Op == syntax.DplOut && stdout && s != "1", false
		}
		an.judge(s, roleWrite)
		an.write(s)
		return "", "", stdout, false
	case syntax.RdrIn:
		s := an.literal(r.Word)
		an.judgeRedirPath(s, roleOperand)
		return an.readFile(s), "", false, true
	case syntax.RdrInOut:
		s := an.literal(r.Word)
		an.judgeRedirPath(s, roleWrite)
		an.write(s)
		return an.readFile(s), "", false, true
	default: // >, >>, >|, &>, &>>
		s := an.literal(r.Word)
		an.judgeRedirPath(s, roleWrite)
		an.write(s)
		all := r.Op == syntax.RdrAll || r.Op == syntax.AppAll
		if !stdout && !all {
			return "", "", false, false
		}
		return "", an.abs(s), true, false
	}
}

// abs makes a path absolute against the line's directory.
func (an *analyzer) abs(p string) string {
	if p == "" || strings.Contains(p, markUnknown) {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = joinRaw(an.cwd, p)
	}
	return filepath.Clean(an.unalias(p))
}

// readFile returns what a command reading p gets, as far as the analysis
// can know it without running anything: what the line wrote there
// earlier, or the file's content when it is small and the denylist does
// not protect it.
func (an *analyzer) readFile(p string) string {
	a := an.abs(p)
	if a == "" {
		return markUnknown
	}
	if s, ok := an.vfiles[a]; ok {
		return s
	}
	if dl := an.t.Denylist; dl != nil {
		if ok, _ := dl.deniedDirWith(a, an.phys(a), an.phys); ok {
			return markUnknown // refused by name already; never read
		}
	}
	b, err := an.readSmall(a, maxScript)
	if err != nil || bytes.IndexByte(b, 0) >= 0 {
		return markUnknown
	}
	return string(b)
}

func (an *analyzer) judgeRedirPath(s string, ro role) {
	if strings.HasPrefix(s, "/dev/tcp/") || strings.HasPrefix(s, "/dev/udp/") {
		an.find(Confirm, "the line opens a network connection ("+s+"); a person is asked, since what it sends leaves the machine")
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

func (an *analyzer) command(cmd syntax.Command, stdin string) string {
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
				an.judge(it, roleMention)
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
		an.judge(an.literal(c.Word), roleMention)
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

func (an *analyzer) testExpr(x syntax.TestExpr) {
	switch e := x.(type) {
	case *syntax.BinaryTest:
		an.testExpr(e.X)
		an.testExpr(e.Y)
	case *syntax.UnaryTest:
		an.testExpr(e.X)
	case *syntax.ParenTest:
		an.testExpr(e.X)
	case *syntax.Word:
		an.judge(an.literal(e), roleOperand)
	}
}

// sub runs f in a subshell: assignments, functions and the directory do
// not leak out of it.
func (an *analyzer) sub(f func() string) string {
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

func (an *analyzer) assign(as *syntax.Assign, decl bool) {
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
			an.judge(v, roleMention)
		}
		an.vars[name] = expand.Variable{Set: true, Kind: expand.Indexed, List: list}
		an.varCarries(name, strings.Join(list, " "))
	case as.Index != nil:
		// a[i++]=v: which element is set is arithmetic the analysis does
		// not follow, so the array's value is unknown from here on.
		if as.Value != nil {
			an.judge(an.literal(as.Value), roleMention)
		}
		an.vars[name] = unknownVar()
	case as.Value != nil:
		v := an.literal(as.Value)
		if as.Append {
			v = an.getVar(name) + v
		}
		an.judge(v, roleMention)
		an.setVar(name, v)
		an.varCarries(name, v)
	case as.Naked && !decl:
		an.setVar(name, "")
	}
}

func (an *analyzer) setVar(name, v string) {
	an.vars[name] = expand.Variable{Set: true, Kind: expand.String, Str: v}
}

func (an *analyzer) getVar(name string) string {
	return an.env().Get(name).String()
}

// ---- expansion ----

// env is the expansion environment: the line's own assignments over the
// few variables a command's scrubbed environment has.
func (an *analyzer) env() expand.Environ { return (*anEnv)(an) }

type anEnv analyzer

func (e *anEnv) Get(name string) expand.Variable {
	an := (*analyzer)(e)
	if v, ok := an.vars[name]; ok {
		return v
	}
	str := func(s string) expand.Variable { return expand.Variable{Set: true, Kind: expand.String, Str: s} }
	switch name {
	case "HOME":
		return str(an.t.Home)
	case "PWD":
		if !an.cwdOK {
			return str(markUnknown)
		}
		return str(an.cwd)
	case "IFS":
		return str(" \t\n")
	case "TMPDIR":
		if an.t.Scratch != "" {
			return str(an.t.Scratch)
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
	if v, ok := an.t.Env[name]; ok {
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
			return str(an.t.Home)
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

func (an *analyzer) cfg() *expand.Config {
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
func (an *analyzer) fields(words []*syntax.Word) []string {
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
func (an *analyzer) literal(w *syntax.Word) string {
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
func (an *analyzer) rawWord(w *syntax.Word) string {
	var b bytes.Buffer
	_ = syntax.NewPrinter().Print(&b, w)
	return b.String()
}

// ---- judging paths ----

// textToken finds path-like tokens in free text: absolute paths and the
// ~ and $HOME forms.
var textToken = lazyRE(`(?:~[A-Za-z0-9_.\-]*|\$\{?HOME\}?)?/[^\s'"\x60;|&<>(),:=]*|(?:^|[\s'"=:(])~(?:[\s'"]|$)`)

// scanText judges every path-like token in free text (the raw line, a
// here-doc, an interpreter's code). With code set, absolute tokens are
// also judged as operands, and the names of denied directories anywhere in
// the text count, since code can put a path together.
func (an *analyzer) scanText(s string, code bool) {
	if !code && len(s) > 1024 && s != an.line && strings.Contains(an.line, s) {
		return // a quoted here-doc: scanned with the line already
	}
	for _, m := range textToken.FindAllString(s, -1) {
		tok := strings.Trim(m, " \t\n'\"=:(")
		switch {
		case tok == "~" && code && !strings.ContainsAny(m, "'\""):
			continue // awk's match operator, a bitwise not: not the home directory
		case tok == "~":
			tok = an.t.Home
		case strings.HasPrefix(tok, "~/"):
			tok = an.t.Home + tok[1:]
		case strings.HasPrefix(tok, "${HOME}"):
			tok = an.t.Home + tok[len("${HOME}"):]
		case strings.HasPrefix(tok, "$HOME"):
			tok = an.t.Home + tok[len("$HOME"):]
		case strings.HasPrefix(tok, "~"):
			continue // another user's home: the parsed line judges it
		}
		if code {
			an.judge(tok, roleOperand)
		} else {
			an.judge(tok, roleMention)
		}
	}
	if code {
		for _, n := range an.t.codeNames {
			if strings.Contains(s, n) {
				an.deny(n, n)
				return
			}
		}
		if an.mentionsProc(s) {
			an.deny("/proc", "/proc/*/environ")
		}
		if !an.t.Sandbox {
			for _, n := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".pem", ".env", "credentials"} {
				if codeWord(s, n) {
					an.find(SecurityConfirm, fmt.Sprintf("the code on the line mentions %s, a credential-shaped name; a person is asked, so leave credentials alone unless they said otherwise", n))
				}
			}
		}
	}
}

var procWords = lazyRE(`\b(environ|mem|cwd|root|fd)\b`)

// procPath is the narrower reading with the kernel floor in sandbox mode:
// /proc followed on the same line by one of procWords (/proc/%d/environ,
// os.path.join("/proc", pid, "environ")), so a script that reads
// os.environ and, elsewhere, /proc/cpuinfo is not refused for it.
var procPath = lazyRE(`/proc\b[^\n]{0,60}?\b(environ|mem|cwd|root|fd)\b`)

// mentionsProc reports whether text is about another process's /proc
// entries: procWords anywhere with /proc, or with the floor in sandbox
// mode the narrower procPath.
func (an *analyzer) mentionsProc(text string) bool {
	if an.floorFollows() {
		return procPath.MatchString(text)
	}
	return strings.Contains(text, "/proc") && procWords.MatchString(text)
}

// codeWord reports whether code contains name not glued to a longer
// identifier (os.environ is not .env).
func codeWord(code, name string) bool {
	for i := 0; ; {
		j := strings.Index(code[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		before := j == 0 || !isIdent(code[j-1])
		after := end >= len(code) || !isIdent(code[end])
		if (before || name[0] == '.') && after {
			return true
		}
		i = j + 1
	}
}

func isIdent(c byte) bool { return isAlnum(c) || c == '_' }

// deny records a refusal for naming a denied directory.
func (an *analyzer) deny(path, dir string) {
	if an.t.Sandbox {
		an.find(Refuse, fmt.Sprintf("the line names %s, in a directory nodwyn keeps off limits in sandbox mode too (%s: credentials, or nodwyn's own configuration and data), so it was refused and nothing of it ran; do the task without it", path, dir))
		return
	}
	an.find(Refuse, fmt.Sprintf("the line names %s, in %s, a directory nodwyn keeps off limits because it holds credentials or nodwyn's own configuration and data; nobody can approve that, so it was refused and nothing of it ran; do the task without it", path, dir))
}

// checkNearDenied notes a path whose known beginning is a directory that
// holds a denied one and whose rest is unknown.
func (an *analyzer) checkNearDenied(v string) {
	i := strings.IndexAny(v, markUnknown+markBuilt)
	if i <= 0 || an.t.Denylist == nil {
		return
	}
	prefix := unmark.Replace(v[:i])
	if !filepath.IsAbs(prefix) {
		if !an.cwdOK {
			return
		}
		prefix = joinRaw(an.cwd, prefix)
	}
	dir := filepath.Clean(prefix)
	if !strings.HasSuffix(prefix, "/") {
		dir = filepath.Dir(dir)
	}
	if ok, _ := an.t.Denylist.ancestorOfDenied(dir, an.phys(dir)); ok {
		an.nearDenied = dir
	} else if ok, _ := an.t.Denylist.deniedDirWith(dir, an.phys(dir), an.phys); ok {
		an.nearDenied = dir
	}
}

var unmark = strings.NewReplacer(markUnknown, "", markBuilt, "", markTree, "")

// procUnknown refuses a path that names another process's environment,
// memory or files under /proc whatever the unknown part of it turns out
// to be (/proc/$(pgrep x)/environ): the line names it, so it is refused
// by name, with the kernel floor too.
func (an *analyzer) procUnknown(v string) {
	if !strings.ContainsAny(v, markUnknown+markBuilt) {
		return
	}
	p := strings.NewReplacer(markUnknown, "…", markBuilt, "…", markTree, "").Replace(v)
	if !filepath.IsAbs(p) {
		if !an.cwdOK {
			return
		}
		p = joinRaw(an.cwd, p)
	}
	if p = filepath.Clean(p); procDenied.MatchString(p) {
		an.deny(p, "/proc/*/environ")
	}
}

// judge judges one expanded word used in the given role.
func (an *analyzer) judge(v string, ro role) {
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
	if strings.Contains(v, markBuilt) && ro != roleMention {
		an.built = true
	}
	if strings.Contains(v, markUnknown) && ro != roleMention {
		an.uncertain = true
	}
	if ro != roleMention {
		an.checkNearDenied(v)
		an.procUnknown(v)
	}
	tree := strings.Contains(v, markTree)
	clean := unmark.Replace(v)
	if tree && ro != roleMention {
		ro = roleRecursive
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
			an.judge(prefix, roleRecursive)
		}
	}
	// An absolute path inside a word after ":", "=", "," or "@"
	// (src:dst, input=/x, @file, --mount source=/x) is judged against
	// the denylist too.
	if strings.ContainsAny(clean, ":=,@") {
		if j := strings.IndexAny(clean, ":,"); j > 0 && clean[0] == '/' {
			an.judge(clean[:j], roleMention) // /src:/dst
		}
		for i := 0; i+1 < len(clean); i++ {
			if strings.IndexByte(":=,@", clean[i]) >= 0 && clean[i+1] == '/' && (i+2 >= len(clean) || clean[i+2] != '/') {
				part := clean[i+1:]
				if j := strings.IndexAny(part, ":,"); j >= 0 {
					part = part[:j]
				}
				an.judge(part, roleMention)
			}
		}
	}
	if i := strings.Index(clean, "://"); i > 0 {
		if p, ok := strings.CutPrefix(clean, "file://"); ok {
			an.judge(p, ro)
		}
		return
	}
	if strings.ContainsAny(clean, " \t") && ro == roleMention {
		an.scanText(clean, false)
		return
	}
	if clean == "~" || strings.HasPrefix(clean, "~/") {
		// Not expanded by the shell where it stands (quoted, or made by
		// a substitution): a relative name.
		if ro == roleMention {
			return
		}
	}
	if ro == roleMention && !strings.Contains(clean, "/") && !strings.ContainsAny(clean, "*?[") {
		return
	}
	p := clean
	if !filepath.IsAbs(p) {
		if !an.cwdOK && ro != roleMention {
			an.uncertain = true
		}
		p = joinRaw(an.cwd, p)
	}
	p = an.unalias(p)
	if strings.ContainsAny(clean, "*?[") {
		an.judgeGlob(p, ro)
		return
	}
	if strings.HasPrefix(v, markUnknown) || strings.HasPrefix(v, markBuilt) {
		an.lead = strings.NewReplacer(markUnknown, "…", markBuilt, "…", markTree, "").Replace(v)
	}
	an.judgeAbs(p, clean, ro)
	an.lead = ""
}

// unalias replaces a link the line made earlier by its target.
func (an *analyzer) unalias(p string) string {
	lex := filepath.Clean(p)
	for link, target := range an.aliases {
		if within(lex, link) {
			return target + strings.TrimPrefix(lex, link)
		}
	}
	return p
}

var systemOK = []string{"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/urandom", "/dev/random", "/dev/fd", "/dev/full"}
var programDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/usr/lib", "/usr/libexec"}

// judgeAbs judges an absolute path (written as raw).
func (an *analyzer) judgeAbs(p, raw string, ro role) {
	for _, s := range systemOK {
		if within(slashes(p), s) && !strings.Contains(p, "..") {
			return
		}
	}
	phys := an.phys(p)
	dl := an.t.Denylist
	if dl != nil {
		if ok, dir := dl.deniedDirWith(p, phys, an.phys); ok {
			an.deny(filepath.Clean(p), dir)
			return
		}
		if ro == roleRecursive {
			if ok, _ := dl.ancestorOfDenied(p, phys); ok {
				an.find(Refuse, fmt.Sprintf("the line %s %s, and %s %s; nobody can approve that, so it was refused and nothing of it ran; name the files or directories you need instead", an.recVerb(), an.recPath(p), filepath.Clean(p), an.heldDenied(p, phys)))
				return
			}
			if link, dir := an.linkOut(phys); link != "" {
				an.find(Refuse, fmt.Sprintf("the line %s %s, and the link %s in it leads to %s, which nodwyn keeps off limits because it holds credentials (a program that follows links would read it); nobody can approve that, so it was refused and nothing of it ran; name the files or directories you need instead, or remove the link", an.recVerb(), an.recPath(p), link, dir))
				return
			}
		}
	}
	if ro == roleMention || an.t.Sandbox || an.denyOnly > 0 {
		return
	}
	lex := filepath.Clean(p)
	if ro != roleProgram && DeniedName(lex) {
		an.find(SecurityConfirm, fmt.Sprintf("the line names %s, a credential-shaped file name; a person is asked, so leave credentials alone unless they said otherwise", lex))
	}
	for _, s := range systemOK {
		if within(lex, s) {
			return
		}
	}
	if ro == roleProgram {
		for _, s := range programDirs {
			if within(lex, s) {
				return
			}
		}
	}
	folder := an.t.Folder
	if folder != "" && folder != "/" && within(lex, folder) && (within(phys, folder) || within(phys, an.phys(folder))) {
		if filepath.IsAbs(raw) && strings.Contains(an.line, folder) && !(an.t.Scratch != "" && within(lex, an.t.Scratch)) {
			an.find(Refuse, fmt.Sprintf("the line names %s by its absolute path inside the folder; a command already runs in the folder root (%s), so write the path relative to it (for example %s) and run the line again", lex, folder, relOrDot(folder, lex)))
		}
		return
	}
	if an.t.Scratch != "" && within(lex, an.t.Scratch) && within(phys, an.phys(an.t.Scratch)) {
		return
	}
	if an.t.Tmp && within(lex, "/tmp") && within(phys, an.phys("/tmp")) {
		return
	}
	an.find(SecurityConfirm, fmt.Sprintf("the line names %s, outside the folder and the scratch directory; a person is asked (an unattended run declines), so work with files in the folder or in the scratch directory ($TMPDIR) instead", lex))
}

// recVerbs says what a program does with what it takes recursively, for
// a refusal's words ("the line removes / recursively").
var recVerbs = map[string]string{
	"rm": "removes", "shred": "destroys", "chmod": "changes the modes of", "chown": "changes the owner of",
	"cp": "copies", "rsync": "copies", "scp": "copies", "rclone": "copies", "mv": "moves",
	"tar": "archives", "bsdtar": "archives", "gtar": "archives", "zip": "archives", "7z": "archives", "7za": "archives",
	"cpio": "archives", "restic": "backs up", "borg": "backs up", "duplicity": "backs up", "mksquashfs": "archives",
	"grep": "searches", "egrep": "searches", "fgrep": "searches", "rg": "searches", "ag": "searches",
	"ack": "searches", "zgrep": "searches",
	"ls": "lists", "tree": "lists", "find": "lists", "fd": "lists", "fdfind": "lists", "du": "lists",
	"diff": "compares",
}

// recVerb is what the program being judged does with a tree.
func (an *analyzer) recVerb() string {
	if v, ok := recVerbs[an.prog]; ok {
		return v
	}
	if strings.HasPrefix(an.prog, "python") || an.prog == "php" {
		return "serves or reads"
	}
	return "reads"
}

// recPath is what a refusal of a recursive use says of the path p: "p
// recursively", or for a word that begins with a value the analysis
// cannot know ("$DIR"/) the word, which is p when that value is empty, as
// an unset variable's is.
func (an *analyzer) recPath(p string) string {
	p = filepath.Clean(p)
	if an.lead == "" {
		return p + " recursively"
	}
	return fmt.Sprintf("%s recursively, where … is a value nodwyn cannot know before it runs (when it is empty, as an unset variable is, that is %s)", an.lead, p)
}

// heldDenied says which place nodwyn keeps off limits the directory p (or
// phys, its resolution) holds: one that is there, in the catalogue's
// order, else the first such place, said to be where it would be.
func (an *analyzer) heldDenied(p, phys string) string {
	dl := an.t.Denylist
	lex := filepath.Clean(p)
	var first string
	for _, dir := range dl.Dirs {
		held := false
		for _, q := range []string{lex, phys} {
			if !strings.EqualFold(q, dir) && withinFold(dir, q) {
				held = true
			}
		}
		if !held {
			continue
		}
		if !an.lstats.lstat(dir).missing {
			return fmt.Sprintf("holds %s%s, which nodwyn keeps off limits", dir, an.entryWhat(dir))
		}
		if first == "" {
			first = dir
		}
	}
	return fmt.Sprintf("is where %s%s would be, which nodwyn keeps off limits although it is not there yet", first, an.entryWhat(first))
}

// entryWhat is what the catalogue says a denied place holds, in
// parentheses, or "".
func (an *analyzer) entryWhat(dir string) string {
	if e, ok := an.t.Denylist.Entry(dir); ok && e.What != "" {
		return " (" + e.What + ")"
	}
	return ""
}

func relOrDot(folder, p string) string {
	r, err := filepath.Rel(folder, p)
	if err != nil || r == "." {
		return "."
	}
	return "./" + r
}

// judgeGlob judges a pattern: component by component against the denied
// directories, and by what it matches on the file system.
func (an *analyzer) judgeGlob(p string, ro role) {
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
	if dl := an.t.Denylist; dl != nil {
		// A pattern below the scratch directory (a working copy's
		// files) matches nothing above it: a denied directory that
		// holds the scratch directory is not reached (what it matches,
		// links and all, is judged below).
		inScratch := dl.excepted(lit, an.phys(lit))
		for _, dir := range dl.Dirs {
			if inScratch && !withinFold(dir, lit) {
				continue
			}
			dc := strings.Split(strings.TrimPrefix(dir, "/"), "/")
			if globReaches(comps, dc, an.dotglob()) {
				an.deny(pat, dir)
				return
			}
		}
		if procDenied.MatchString(pat) || globReaches(comps, []string{"proc", "x", "environ"}, true) {
			if m, _ := filepath.Match(pat, "/proc/self/environ"); m || procDenied.MatchString(pat) || globReaches(comps, []string{"proc", "self", "environ"}, true) {
				an.deny(pat, "/proc/*/environ")
				return
			}
		}
	}
	if ro != roleMention {
		an.judgeAbs(lit, lit, roleOperand)
	}
	for _, m := range an.glob(comps) {
		an.judgeAbs(m, m, ro)
	}
}

// phys resolves a path physically, remembering what it learnt.
func (an *analyzer) phys(p string) string { return physicalDepth(p, 0, an.lstats) }

// glob expands a pattern's components against the file system, bounded in
// directory reads and matches (beyond the bound the line is uncertain).
func (an *analyzer) glob(comps []string) []string {
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

// globReaches reports whether a pattern's components match a directory's
// components, or its leading ones (a pattern that stops at or below the
// directory), with "**" matching any number of components.
func globReaches(pat, dir []string, dots bool) bool {
	if len(dir) == 0 {
		return true
	}
	if len(pat) == 0 {
		return false
	}
	if pat[0] == "**" {
		for i := 0; i <= len(dir); i++ {
			if globReaches(pat[1:], dir[i:], dots) {
				return true
			}
		}
		return false
	}
	if strings.HasPrefix(dir[0], ".") && !strings.HasPrefix(pat[0], ".") && !strings.HasPrefix(pat[0], "[") && !dots {
		return false // * and ? do not match a leading dot unless dotglob is set
	}
	ok, err := filepath.Match(pat[0], dir[0])
	if err == nil && !ok {
		// nocaseglob, or a case-insensitive file system
		ok, _ = filepath.Match(strings.ToLower(pat[0]), strings.ToLower(dir[0]))
	}
	if err != nil || !ok {
		// "*" matches a dotted name here too: dotglob may be set.
		if !(dots && strings.HasPrefix(dir[0], ".") && dotMatch(pat[0], dir[0])) {
			return false
		}
	}
	return globReaches(pat[1:], dir[1:], dots)
}

func dotMatch(pat, name string) bool {
	ok, _ := filepath.Match(pat, strings.TrimPrefix(name, "."))
	return ok && strings.HasPrefix(pat, "*")
}

// setCwd follows cd.
func (an *analyzer) setCwd(dir string) {
	if strings.ContainsAny(dir, markUnknown+markBuilt+markTree) || strings.ContainsAny(dir, "*?[") {
		an.cwdOK = false
		return
	}
	if dir == "" {
		dir = an.t.Home
	}
	if !filepath.IsAbs(dir) {
		dir = joinRaw(an.cwd, dir)
	}
	an.cwd = an.phys(an.unalias(dir))
}

// promptExpansions refuses ${x@P}: a prompt expansion expands the
// variable's value again (parameters, command substitutions, \w), which
// the analysis does not follow.
func (an *analyzer) promptExpansions(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps &&
			pe.Exp.Word != nil && pe.Exp.Word.Lit() == "P" {
			an.find(Refuse, "the line uses a prompt expansion (${...@P}), which expands a value again in ways nodwyn does not follow before it runs, so it was refused and nothing of it ran; write the value out plainly")
			return false
		}
		return true
	})
}

// linkOut looks, within a bound, for a symbolic link inside the directory
// root that leads into a denied directory or to one that holds it (a
// repository can carry a link such as docs -> ../../.ssh, and zip, cp -L,
// tar -h, grep -R, rsync -L and find -L follow it). It returns the link
// and the directory, or "".
func (an *analyzer) linkOut(root string) (string, string) {
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
	if v := an.lstats.view; v != nil && v.root != root && within(v.root, root) {
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
			target := an.phys(p)
			dl := an.t.Denylist
			if ok, dir := dl.deniedDirPhys(target, target); ok {
				found = [2]string{p, dir}
				return false, true
			}
			if ok, dir := dl.ancestorOfDenied(target, target); ok {
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
var dotglobLine = lazyRE(`dotglob|GLOBIGNORE|globdots|GLOB_DOTS|\(D|\bsource\b|(?:^|[;&|({\s])\.\s|\bzsh\b|\beval\b|\bbash\s+-i`)

// dotglob reports whether a * on the line may match a dotted name.
func (an *analyzer) dotglob() bool {
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
