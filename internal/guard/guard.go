// Package guard judges every tool call before it runs.
//
// A Guard holds the built-in checkers (RepoPin, PathDenylist, ArgvTrigger,
// ProtectedPaths, ScratchWrites and ContentScan, L1) and any project
// checkers a project's Scheme added. Guard.Check returns the strictest
// decision of them all: a project checker can refuse or ask, never allow
// what a built-in checker refused or asks about. Sandbox mode is a flag on
// each checker that it changes (RepoPin, ArgvTrigger, ProtectedPaths), not
// a second guard. AutoAllow and Approvals are the confirm policy.
//
// Nothing here runs a command. The argv trigger has a line read by
// bashread, which parses it with mvdan.cc/sh/v3 and walks it statement by
// statement with an expansion environment of its own (the line's
// assignments, ~ and $HOME, positional parameters, functions, what echo,
// printf, cat, find, base64 -d and friends print, what the line wrote to
// a file earlier); it reads directory listings to expand globs and small
// files a line reads or runs (never inside a denied directory: the judge
// says which it may read), and that is all. bashread tells what each word
// names and what the line does; argv_judge.go decides.
//
// Known limits: a program or interpreter can compute a path as it runs;
// code strings are scanned for paths, denied names, decode-and-run and
// home paths put together from pieces, not interpreted. What a line makes
// as it runs (a link from an earlier call, a program's output) is judged
// as it is when the call is made, as the seed says. A value the analysis
// cannot know refuses only where it completes a path in a directory that
// holds a denied one, or on a line that names a denied name. Recursive
// copies and searches of a directory that holds a denied one ("/", the
// home directory), or a link to one within a bounded look (4000 entries),
// are refused in both modes; a copy or extraction into "/" is a write,
// not a search. A root that is wholly a value the analysis cannot know
// (find "$DIR") is that unknown directory, as cp -r "$DIR" copies it, not
// "/"; a word that puts a slash after such a value ("$DIR"/) is "/" when
// the value is empty, as an unset variable's is, and is judged as "/". A * matches no dotted name unless the line may set
// dotglob. Code a line writes and then runs is judged as a one-liner's
// is; code in files from earlier calls only by the denylist's names and
// paths. Only the session's home
// directory's credential directories are denied, not other users'.
// The denied directories are matched without regard to letter case (a
// case-insensitive file system, nocaseglob); other paths byte for byte.
//
// With the kernel floor (Options.KernelFloor, set by the session only when
// Landlock really denies the denylist's directories to every command the
// run starts; Landlock's ptrace rule keeps a command from attaching to a
// process outside its own domain, nodwyn included, but reading another
// process's /proc/<pid>/environ was not refused on the kernel tested) what
// the analysis merely cannot follow in the denied directories is the
// kernel's to refuse. In sandbox mode a line that builds a path or a
// command from a value the analysis cannot know is no longer refused for
// that (testdata/exfil.txt tags those lines "floor:"), unless it mentions
// /proc and a process's environ, mem, fd, cwd or root, which stay refused
// as without the floor, and the content scan does not ask about a sed s command
// that removes a key (the key in its pattern, not in its replacement), nor
// about Python that replaces one (str.replace, re.sub, a table of
// replacements walked with .items(); see bashread/removals_py.go). In
// both modes a denied directory named only in prose no command opens (a
// quoted sentence without expansions echoed or printf'd into a file, git
// commit's or git tag's -m) is no reason to refuse. What a line names as a
// path a command opens, copies or searches (a denied directory, and
// /proc/*/environ even with a pid it cannot know) is refused in every mode,
// so that the model is told why before anything runs; an analysis that
// fails or times out is judged as without the floor. The floor's file
// rules do not reach what a running agent hands out on its socket: asking
// gpg-agent (gpg --export-secret-keys, gpg-connect-agent), ssh-agent
// (ssh-add), git's credential helper (git credential fill), the desktop
// keyring (secret-tool lookup), the macOS keychain (security
// find-*-password -w) or the kernel keyring (keyctl print) is refused in
// every mode, floor or not; other clients of such daemons are not known to
// the guard.
//
// In a working copy (Options.RunDirs) a command line runs in a copy of the
// checkout under the scratch directory, so the argv trigger also walks it
// from there, the copy's files, listings and links read from the checkout
// (links keep their targets as written, so one that climbs leads
// elsewhere from the copy); a refusal of that reading counts, and where
// the line writes is still judged from the folder. A pattern below the
// scratch directory does not reach the denied directory that holds it.
package guard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/roles"
)

// Verdict is what a checker decided about a tool call.
type Verdict int

// The verdicts, from the most to the least permissive.
const (
	Allow Verdict = iota
	Confirm
	SecurityConfirm
	Refuse
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Confirm:
		return "confirm"
	case SecurityConfirm:
		return "security-confirm"
	case Refuse:
		return "refuse"
	}
	return "unknown"
}

// Request is one tool call: the tool's name and its decoded JSON arguments.
// What each argument is to the checkers is its role (Options.Tools; by
// default DefaultTools: shell-exec/shell-start/run-tests {command};
// self-check {command} (the contract's check, put there by the session);
// fs-read {path}; fs-write {path, content}; fs-edit {path, new}; fs-find
// {pattern, path}; index-grep {path, glob}; git-diff {path}).
type Request struct {
	Tool string
	Args map[string]any

	roles toolRoles // the guard's, set by Guard.Check; nil: DefaultTools
}

// Decision is a checker's judgement. Reason is read by the model, so it
// says what to do instead.
type Decision struct {
	Verdict Verdict
	Checker string
	Reason  string
}

// Options configure a guard from the session's resolved options.
type Options struct {
	Folder, Scratch    string // absolute; Scratch may be ""
	Home               string // the user's home (default os.UserHomeDir)
	ConfigDir, DataDir string // nodwyn's, as the session resolved them
	CredentialsDir     string // $CREDENTIALS_DIRECTORY if set
	// Deny are the person's own additions to the credential catalogue
	// ([sandbox] deny in their config.toml; never a project's): ~/… or
	// absolute paths, denied as the catalogue's are.
	Deny []string
	// Getenv reads the variables that move a catalogued place out of the
	// home ($CARGO_HOME, $GNUPGHOME, $KUBECONFIG …: catalogue.txt's $NAME
	// entries). nil: os.Getenv.
	Getenv          func(string) string
	Sandbox         bool
	Unattended      bool
	Lean            bool
	Secrets         []string      // exact secret values nodwyn knows
	AnalysisTimeout time.Duration // argv analysis bound (default 200ms)
	// KernelFloor is set by the session when the kernel floor (Landlock
	// denying the same credential denylist to every command nodwyn runs)
	// is really on for the run; nothing a project or its Scheme supplies
	// sets it. With it the argv trigger no longer refuses, in sandbox
	// mode, what it merely cannot follow, nor, in any mode, prose that
	// names a denied directory; see the known limits above.
	KernelFloor bool
	// RunDirs are other directories the folder's commands run in, as the
	// folder's stand-in: a working copy's place ([sandbox] mode =
	// "working_copy" runs every command line in a fresh copy of the
	// checkout at <scratch>/nodwyn-wc-<random>/<the folder relative to
	// the checkout>; the session passes the same path with nodwyn-wc-copy
	// for the random name, since a relative path that climbs above the
	// copy's root lands on the same place whatever the name). A command
	// line's relative paths (operands, redirections, cd, what a line
	// builds from $PWD) are judged against each of them too, for the
	// denylist and the other refusals of what a line names, and the
	// strictest verdict wins; what a line writes inside the copy is not
	// judged there (it is thrown away with the copy): for the checks of
	// where a write lands (ProtectedPaths, outside the folder), the
	// folder's reading stays what counts. The file tools work in the
	// folder itself and are judged against it alone. Empty: commands run
	// in the folder.
	RunDirs []string
	// Checkout is the directory the working copies copy (the folder or
	// an ancestor of it; "" for the folder): a run directory that ends in
	// the folder's path relative to it is read, for what the copy holds
	// (files, listings, links with their targets as written, no .git),
	// as a copy of it.
	Checkout string
	// Tools are the roles of the tools' parameters (a path read or
	// written, a command line, a pattern, content written): the session's
	// from prim's table. nil: DefaultTools.
	Tools []ToolParam
	// Denylist, when set, is NewPathDenylist of these options made already
	// (the session makes it once, for the kernel floor too): resolving its
	// paths is most of what New costs.
	Denylist *PathDenylist
}

// Checker judges a request. A Decision with Verdict Allow means "no
// objection".
type Checker interface {
	Name() string
	// Check judges req under ctx, the run's context (with its deadline): a
	// checker that calls out (Scheme, a process) stops when the run does.
	Check(ctx context.Context, req Request) Decision
}

// Guard is the set of checkers a session consults before every tool call.
type Guard struct {
	opts     Options
	roles    toolRoles
	deny     *PathDenylist
	pin      *RepoPin
	argv     *ArgvTrigger
	prot     *ProtectedPaths
	scratch  *ScratchWrites
	content  *ContentScan
	builtins []Checker

	mu      sync.Mutex
	project []Checker
}

// New assembles the built-in checkers from opts. Empty fields get their
// defaults: Home from os.UserHomeDir, ConfigDir and DataDir from the XDG
// variables, CredentialsDir from $CREDENTIALS_DIRECTORY.
func New(opts Options) *Guard {
	opts = withDefaults(opts)
	g := &Guard{opts: opts, roles: defaultRoles}
	if opts.Tools != nil {
		g.roles = newRoles(opts.Tools)
	}
	g.deny = opts.Denylist
	if g.deny == nil {
		g.deny = NewPathDenylist(opts)
	}
	g.pin = &RepoPin{Folder: opts.Folder, Scratch: opts.Scratch, Tmp: opts.Lean && opts.Unattended, Sandbox: opts.Sandbox}
	g.argv = &ArgvTrigger{
		Folder: opts.Folder, Scratch: opts.Scratch, Home: opts.Home,
		Tmp: opts.Lean && opts.Unattended, Sandbox: opts.Sandbox, KernelFloor: opts.KernelFloor,
		Denylist: g.deny, Timeout: opts.AnalysisTimeout, Env: knownEnv(opts),
		RunDirs: opts.RunDirs, Checkout: opts.Checkout,
	}
	g.prot = &ProtectedPaths{Folder: opts.Folder, Sandbox: opts.Sandbox, Unattended: opts.Unattended, Argv: g.argv}
	g.scratch = &ScratchWrites{Scratch: opts.Scratch}
	g.content = NewContentScan(opts.Secrets)
	g.content.KeyRemovals = opts.Sandbox && opts.KernelFloor
	g.builtins = []Checker{g.deny, g.pin, g.prot, g.argv, g.content, g.scratch}
	return g
}

func withDefaults(opts Options) Options {
	if opts.Home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			opts.Home = h
		}
	}
	if opts.Home != "" {
		opts.Home = filepath.Clean(opts.Home)
	}
	if opts.ConfigDir == "" {
		if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			opts.ConfigDir = filepath.Join(x, "nodwyn")
		} else if opts.Home != "" {
			opts.ConfigDir = filepath.Join(opts.Home, ".config", "nodwyn")
		}
	}
	if opts.DataDir == "" {
		if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
			opts.DataDir = filepath.Join(x, "nodwyn")
		} else if opts.Home != "" {
			opts.DataDir = filepath.Join(opts.Home, ".local", "share", "nodwyn")
		}
	}
	if opts.CredentialsDir == "" {
		opts.CredentialsDir = os.Getenv("CREDENTIALS_DIRECTORY")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.AnalysisTimeout <= 0 {
		opts.AnalysisTimeout = 200 * time.Millisecond
	}
	var runDirs []string
	for _, d := range opts.RunDirs {
		if filepath.IsAbs(d) && filepath.Clean(d) != "/" {
			runDirs = append(runDirs, filepath.Clean(d))
		}
	}
	opts.RunDirs = runDirs
	for _, p := range []*string{&opts.Folder, &opts.Scratch, &opts.ConfigDir, &opts.DataDir, &opts.CredentialsDir, &opts.Checkout} {
		if *p != "" && filepath.IsAbs(*p) {
			*p = filepath.Clean(*p)
		} else {
			*p = ""
		}
	}
	return opts
}

// knownEnv is what the analysis assumes of the variables that lead to
// nodwyn's own directories, so that $XDG_CONFIG_HOME/nodwyn is judged as
// the configuration directory it is.
func knownEnv(opts Options) map[string]string {
	env := map[string]string{}
	if opts.ConfigDir != "" && filepath.Base(opts.ConfigDir) == "nodwyn" {
		env["XDG_CONFIG_HOME"] = filepath.Dir(opts.ConfigDir)
	}
	if opts.DataDir != "" && filepath.Base(opts.DataDir) == "nodwyn" {
		env["XDG_DATA_HOME"] = filepath.Dir(opts.DataDir)
	}
	if opts.CredentialsDir != "" {
		env["CREDENTIALS_DIRECTORY"] = opts.CredentialsDir
	}
	if opts.Home != "" && opts.Home != "/" {
		env["USER"] = filepath.Base(opts.Home)
		env["LOGNAME"] = env["USER"]
	}
	return env
}

// Options returns the options the guard was built with, defaults filled in.
func (g *Guard) Options() Options { return g.opts }

// Check returns the strictest decision of all checkers, built-ins first.
// A project checker's Allow means nothing; its Confirm or Refuse counts
// when it is stricter than what the built-ins decided. When nothing objects
// the decision is Allow, with ScratchWrites' reason for a write inside the
// scratch directory.
func (g *Guard) Check(ctx context.Context, req Request) Decision {
	req.roles = g.roles
	best := g.checkBuiltins(ctx, req)
	g.mu.Lock()
	project := append([]Checker(nil), g.project...)
	g.mu.Unlock()
	for _, c := range project {
		d := safeCheck(ctx, c, req)
		if d.Verdict > best.Verdict {
			best = d
		}
	}
	return best
}

// CheckArg judges one value as the built-in checkers judge a tool's
// argument named name with the role: a path read, searched or written, a
// command, content written. A project checker that sends values elsewhere
// (the MCP tools' checker sends a call's arguments to a server) judges
// them by the guard's own rules with it, not with a guard of its own;
// project checkers are not asked (they judge the call itself).
func (g *Guard) CheckArg(ctx context.Context, role roles.Role, name, value string) Decision {
	const tool = "(argument)"
	return g.checkBuiltins(ctx, Request{Tool: tool, Args: map[string]any{name: value},
		roles: newRoles([]ToolParam{{Tool: tool, Param: name, Role: role, Required: true}})})
}

// checkBuiltins is the strictest decision of the built-in checkers.
func (g *Guard) checkBuiltins(ctx context.Context, req Request) Decision {
	best := Decision{Verdict: Allow}
	for _, c := range g.builtins {
		d := c.Check(ctx, req)
		if d.Checker == "" {
			d.Checker = c.Name()
		}
		if d.Verdict > best.Verdict || (best.Verdict == Allow && best.Reason == "" && d.Reason != "") {
			best = d
		}
	}
	return best
}

// safeCheck runs a project checker; one that panics refuses.
func safeCheck(ctx context.Context, c Checker, req Request) (d Decision) {
	name := "project"
	defer func() {
		if r := recover(); r != nil {
			d = Decision{Verdict: Refuse, Checker: name, Reason: "a project checker failed while judging this call, so it was refused; fix the checker in .nodwyn/ or ask the person"}
		}
	}()
	name = c.Name()
	d = c.Check(ctx, req)
	if d.Checker == "" {
		d.Checker = name
	}
	if d.Verdict < Allow || d.Verdict > Refuse {
		d.Verdict = Refuse
	}
	return d
}

// AddChecker adds a project checker. It can refuse or ask; an Allow from it
// means nothing.
func (g *Guard) AddChecker(c Checker) {
	if c == nil {
		return
	}
	g.mu.Lock()
	g.project = append(g.project, c)
	g.mu.Unlock()
}

// Denylist returns the credential denylist, for fs-find and index-grep to
// skip denied files.
func (g *Guard) Denylist() *PathDenylist { return g.deny }

// Redact replaces credentials in s with [REDACTED:kind] (ingress redaction).
func (g *Guard) Redact(s string) string { return g.content.Redact(s) }

// IsScratchWrite reports whether req writes a file inside the scratch
// directory: a standing approval that still counts against the turn's
// budget of irreversible actions.
func (g *Guard) IsScratchWrite(req Request) bool {
	req.roles = g.roles
	return g.scratch.covers(req)
}

// argString returns a string argument of req.
func argString(req Request, name string) string {
	if req.Args == nil {
		return ""
	}
	switch v := req.Args[name].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// ToolParam is a tool's parameter that has a role (the roles package's
// vocabulary, which prim's table and define-tool use too: the session hands
// the guard its tools' roles as data, and guard imports nothing of prim). A
// path that is not Required names the folder when the call leaves it out.
type ToolParam struct {
	Tool, Param string
	Role        roles.Role
	Required    bool
}

// DefaultTools are the roles of nodwyn's tools, for a guard whose Options
// name none (the guard's own tests, a caller without prim's table). The
// session hands the guard its table's roles instead; a test there checks
// that these agree with it.
func DefaultTools() []ToolParam {
	return []ToolParam{
		{"shell-exec", "command", roles.Command, true},
		{"shell-start", "command", roles.Command, true},
		{"fs-read", "path", roles.PathRead, true},
		{"fs-write", "path", roles.PathWrite, true},
		{"fs-write", "content", roles.Content, true},
		{"fs-edit", "path", roles.PathWrite, true},
		{"fs-edit", "new", roles.Content, true},
		{"fs-find", "pattern", roles.Pattern, true},
		{"fs-find", "path", roles.PathSearch, false},
		{"index-grep", "path", roles.PathSearch, false},
		{"index-grep", "glob", roles.Pattern, false},
		{"self-check", "command", roles.Command, false},
		{"run-tests", "command", roles.Command, true},
		{"git-diff", "path", roles.PathSearch, false},
	}
}

// toolRoles is a table of ToolParams by tool.
type toolRoles map[string][]ToolParam

func newRoles(ps []ToolParam) toolRoles {
	r := toolRoles{}
	for _, p := range ps {
		if p.Tool != "" && p.Param != "" && p.Role != "" {
			r[p.Tool] = append(r[p.Tool], p)
		}
	}
	return r
}

var defaultRoles = newRoles(DefaultTools())

// param returns the tool's first parameter with one of the roles.
func (r toolRoles) param(tool string, rs ...roles.Role) (ToolParam, bool) {
	for _, p := range r[tool] {
		for _, role := range rs {
			if p.Role == role {
				return p, true
			}
		}
	}
	return ToolParam{}, false
}

// rolesOf is the table req is judged by: the guard's (Guard.Check puts it
// in the request), else DefaultTools.
func rolesOf(req Request) toolRoles {
	if req.roles != nil {
		return req.roles
	}
	return defaultRoles
}

// pathParam is the tool's path parameter, if it has one.
func pathParam(req Request) (ToolParam, bool) {
	return rolesOf(req).param(req.Tool, roles.PathRead, roles.PathSearch, roles.PathWrite)
}

// isSearch: the tool walks below its path and leaves out what is denied.
func isSearch(req Request) bool {
	_, ok := rolesOf(req).param(req.Tool, roles.PathSearch)
	return ok
}

// patternOf is the tool's pattern parameter and its value, if it has one.
func patternOf(req Request) (name, pat string) {
	if p, ok := rolesOf(req).param(req.Tool, roles.Pattern); ok {
		return p.Param, argString(req, p.Param)
	}
	return "", ""
}

// isWrite: the tool writes the file its path names.
func isWrite(req Request) bool {
	_, ok := rolesOf(req).param(req.Tool, roles.PathWrite)
	return ok
}

// isShell: the tool runs a command line. The session puts self-check's
// command (the contract's check) in its arguments before the guard is
// asked.
func isShell(req Request) bool {
	_, ok := rolesOf(req).param(req.Tool, roles.Command)
	return ok
}

// commandLine is the command line a tool runs, if it runs one.
func commandLine(req Request) (string, bool) {
	p, ok := rolesOf(req).param(req.Tool, roles.Command)
	if !ok {
		return "", false
	}
	return argString(req, p.Param), true
}

// toolPath returns the absolute lexical path a file tool names, relative
// paths taken relative to folder, and whether the tool names one at all.
// A path that is not required (fs-find's, index-grep's, git-diff's)
// defaults to the folder.
func toolPath(req Request, folder string) (raw string, abs string, ok bool) {
	p, ok := pathParam(req)
	if !ok {
		return "", "", false
	}
	raw = argString(req, p.Param)
	if raw == "" {
		if !p.Required {
			return ".", folder, folder != ""
		}
		return "", "", false
	}
	if strings.HasPrefix(raw, "~") {
		// The file tools do not expand "~"; it is a relative name.
		return raw, joinRaw(folder, raw), true
	}
	if filepath.IsAbs(raw) {
		return raw, raw, true
	}
	return raw, joinRaw(folder, raw), true
}
