// Package bashread reads a bash command line without running it: what
// each word names, in which use (a path a program reads, writes, copies
// or searches whole; a program; a command line it runs; mere text), and
// what the line does that is no path (reaches the network, destroys a
// disk, prints a credential it does not name).
//
// A line is parsed with mvdan.cc/sh/v3 and walked statement by statement
// with an expansion environment of its own: the line's assignments, ~ and
// $HOME, positional parameters, functions, what echo, printf, cat, find,
// base64 -d and friends print, what the line wrote to a file earlier, and
// what feeds what (a pipe into xargs, $(…), a script handed to bash -c,
// sh -c, eval or a shell reading its input). Wrappers (env, timeout,
// sudo, xargs, find -exec, …) are looked through; options and variables
// that carry a command (git -c core.fsmonitor=…, BASH_ENV, PAGER, …) are
// read as commands. What the reading knows of each program is one entry
// in programs (table.go); the programs whose arguments need code of their
// own have a parser, one file per family (git.go, text.go, …).
//
// The reading decides nothing. It tells a Judge (the guard's argv
// trigger) of every path and every act as it finds them, in order, and
// asks it only which files it may read to follow what feeds what
// (Judge.Readable: never a file the policy keeps off limits). It reads the
// file system (directory listings for globs, links, small files a line
// reads or runs) through fsview, and that is all. It imports nothing of
// the policy (deps_test.go).
package bashread

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodwyn/nodwyn/internal/fsview"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Markers inside expanded text (private-use code points):
//   - Unknown: a value the reading cannot know (a program's output, an
//     unset variable);
//   - Built: a value a decoder or interpreter made up, which may name any
//     path;
//   - Tree: "and anything under it", what find or ls print about a root.
const (
	Unknown = "\U000F0001"
	Built   = "\U000F0002"
	Tree    = "\U000F0003"

	markUnknown = Unknown
	markBuilt   = Built
	markTree    = Tree
)

// Unmark removes the markers from text.
var Unmark = strings.NewReplacer(markUnknown, "", markBuilt, "", markTree, "")

// Ellipsis writes the values the reading cannot know as "…".
var Ellipsis = strings.NewReplacer(markUnknown, "…", markBuilt, "…", markTree, "")

var unmark = Unmark

// Use is how a word is used.
type Use int

// The uses a Judge is told of.
const (
	UseMention   Use = iota // named only (echo's words, patterns): only what is off limits by name matters
	UseOperand              // a path the program reads or names
	UseRecursive            // a path the program copies or searches recursively
	UseWrite                // a path the program writes
	UseProgram              // the program itself
)

const (
	maxDepth      = 12
	maxFields     = 4096
	maxLoopItems  = 16
	maxLoopBodies = 256
)

// A Judge is told what a reading finds, as it finds it; the reading
// passes itself, so the judge can ask where it stands (Cwd, Phys, Prog,
// …). Judge is the guard's argv trigger: the reading decides nothing.
type Judge interface {
	// Path: a word names the absolute path p (lexical, links the line
	// made replaced by their targets; not yet resolved: Phys), written
	// as raw, in the use u.
	Path(r *Reading, p, raw string, u Use)
	// Glob: a word is the pattern pat (absolute, clean; comps its
	// components, lit the literal directory before the first pattern
	// component). Returning true stops the reading of it there (the judge
	// refused it by name); else lit and what the pattern matches on the
	// file system are told as paths.
	Glob(r *Reading, pat, lit string, comps []string) bool
	// Partial: a word in a path's use holds a value the reading cannot
	// know (v has Unknown or Built markers).
	Partial(r *Reading, v string)
	// Code: code the line runs (an interpreter's, a script file's) holds
	// text; joined: text is the code's string literals one after another
	// ('.s' + 'sh' gives .ssh), not the code itself.
	Code(r *Reading, text string, joined bool)
	// Act: the line does something that is no path.
	Act(r *Reading, a Act)
	// Script: the line runs the script file name; read reads it, and
	// what is told meanwhile is of the script (Indirect).
	Script(r *Reading, name string, read func())
	// Readable: whether the reading may read the file p (absolute,
	// clean) to know what it feeds the line.
	Readable(r *Reading, p string) bool
}

// An Act is what a line does that is no path.
type Act struct {
	Kind ActKind
	Prog string // the program (its base name), or "git push"'s "push" for the Git kinds
	What string // the kind's detail (see each kind)
}

// ActKind says what an Act is.
type ActKind int

// The acts.
const (
	ActNetwork         ActKind = iota + 1 // Prog reaches the network
	ActSocket                             // a redirection opens the network connection What (/dev/tcp/…)
	ActDestroys                           // Prog destroys what is on its target (the table's destroys)
	ActRemovesTree                        // rm -rf
	ActDeviceWrite                        // dd writes the device What (/dev/…)
	ActOwnDirs                            // Prog (nodwyn) runs its subcommand What, which reads nodwyn's own directories, with no home of the line's own
	ActPrintsSecret                       // Prog prints What, a credential it does not name
	ActDecodedScript                      // the line runs a script a decoder makes up
	ActPromptExpansion                    // ${x@P}: a value expanded again
	ActCodeFillsHome                      // code reads files in the home directory by a name it fills in or finds
	ActCodeRunsDecoded                    // code runs code it decodes first
	ActCodeBuildsHome                     // code reaches the home directory with a name it puts together or decodes
	ActGitLoses                           // a git subcommand loses work for good; What says how
	ActGitPush                            // git push
	ActGitRemote                          // git What reaches a remote repository
	ActGitReadsRepo                       // git What reads the repository the line is in (Cwd)
	ActGitHooks                           // git -c core.hooksPath=What
	ActGitRemoteConfig                    // git -c What (protocol.*, url.*) changes how git reaches remotes
)

// A Reader reads lines for one folder; it keeps what it learnt of the
// folder's and the scratch directory's path components. Set its fields
// before the first reading.
type Reader struct {
	// Folder is where a line runs ("" is /); Home is ~ and $HOME;
	// Scratch is $TMPDIR (else /tmp).
	Folder, Scratch, Home string
	// Env holds variables a command may see whose values are known
	// (XDG_CONFIG_HOME, …).
	Env map[string]string
	// Names reports whether a bare name (an option's value with no
	// slash) is to be told as a path all the same (the guard's
	// credential-shaped names).
	Names func(name string) bool
	// Prose: find the line's prose (markProse), which no command opens;
	// ScanLine is then the line without it.
	Prose bool
	// RunDirs are directories the folder's commands run in instead of
	// it, Checkout what they are copies of (a working copy's reading,
	// copyview.go).
	RunDirs  []string
	Checkout string
	// FS is the file system read (listings, links, small files); nil is
	// the operating system's. The components of paths are still resolved
	// through it (lstatCache).
	FS fsview.FS

	once  sync.Once
	mu    sync.Mutex
	base  *lstatCache // the folder's and scratch directory's components
	views []*copyView // RunDirs' views
}

func (rd *Reader) init() {
	rd.once.Do(func() {
		rd.base = newLstatCache(16)
		rd.base.fs = rd.FS
		for _, root := range []string{rd.Folder, rd.Scratch} {
			if root != "" {
				physicalDepth(root, 0, rd.base)
			}
		}
		for _, dir := range rd.RunDirs {
			rd.views = append(rd.views, newCopyView(dir, rd.Folder, rd.Checkout))
		}
	})
}

// baseLstats returns a fresh cache holding what is known of the folder's
// and scratch directory's components, which every line resolves.
func (rd *Reader) baseLstats() *lstatCache {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	c := newLstatCache(len(rd.base.m) + 16)
	c.fs = rd.FS
	for k, v := range rd.base.m {
		c.m[k] = v
	}
	return c
}

// Reading is one reading of a line (Reader.Read): its walk's state.
type Reading struct {
	rd       *Reader
	j        Judge
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
	// linkRoots caches LinkOut by directory.
	linkRoots map[string][2]string
	depth     int
	visited   map[*syntax.Stmt]bool
	inFunc    map[string]int
	lstats    *lstatCache
	fs        fsview.FS         // Reader.FS, or the OS
	loops     int               // loop bodies walked so far
	vfiles    map[string]string // files the line writes, with what it writes
	// indirect > 0 while reading a script file the line runs, or a line
	// read from a run directory (Indirect).
	indirect int
	// With Prose: the line's prose words (see markProse), the line
	// without them (what is scanned for names), and which of the next
	// command's arguments are prose.
	prose     map[*syntax.Word]bool
	scanLine  string
	proseArgs []bool

	uncertain bool // something on the line could not be followed
	built     bool // a path position received a made-up value
	// prog is the program whose arguments are being read (exec); lead
	// is, while a word that begins with a value the reading cannot know
	// ("$DIR"/) is told, that word with "…" for the value.
	prog   string
	lead   string
	writes []string
	progs  []string // base names of the programs run
}

// NewReading prepares the reading of line, told to j, which stops at the
// deadline (and at Abort). run is -1 for the line as it runs in the
// folder, else the index of the run directory (RunDirs) it is read from:
// such a reading is Indirect throughout.
func (rd *Reader) NewReading(line string, deadline time.Time, j Judge, run int) *Reading {
	rd.init()
	cwd := rd.Folder
	if cwd == "" {
		cwd = "/"
	}
	an := &Reading{
		rd: rd, j: j, line: line, deadline: deadline,
		vars: map[string]expand.Variable{}, funcs: map[string]*syntax.Stmt{},
		cwd: cwd, cwdOK: true, aliases: map[string]string{},
		visited: map[*syntax.Stmt]bool{}, inFunc: map[string]int{},
		lstats: rd.baseLstats(), fs: rd.FS, vfiles: map[string]string{},
		prose: map[*syntax.Word]bool{}, scanLine: line,
	}
	if an.fs == nil {
		an.fs = fsview.OS{}
	}
	if run >= 0 {
		an.cwd, an.lstats.view = rd.RunDirs[run], rd.views[run]
		an.indirect = 1
	}
	return an
}

type stopAnalysis struct{}

// ErrStopped: the reading stopped at its deadline or at Abort.
var ErrStopped = errors.New("the reading stopped before its end")

// A ParseError: the line does not parse as bash (its raw text was still
// scanned for paths).
type ParseError struct{ Err error }

func (e *ParseError) Error() string { return e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// A Failure: the reading (or its judge) panicked with Value.
type Failure struct{ Value any }

func (e *Failure) Error() string { return fmt.Sprint(e.Value) }

// tick stops the reading when its time is up.
func (an *Reading) tick() {
	an.steps++
	if an.abort.Load() || (an.steps%16 == 1 && time.Now().After(an.deadline)) {
		panic(stopAnalysis{})
	}
}

// Abort stops the reading at its next step (from another goroutine).
func (an *Reading) Abort() { an.abort.Store(true) }

// Read reads the line, telling the judge what it finds. It returns nil,
// ErrStopped, a *ParseError or a *Failure; what was told before it
// stopped stands.
func (an *Reading) Read() (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, stopped := r.(stopAnalysis); stopped {
				err = ErrStopped
			} else {
				err = &Failure{Value: r}
			}
		}
	}()
	// Every literal path on the line is told, in comments and quoted
	// text too: naming a denied directory is enough (with Prose, outside
	// prose no command opens).
	f, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(an.line), "")
	if perr == nil && an.rd.Prose {
		an.scanLine = an.markProse(f)
	}
	an.scanText(an.scanLine, false)
	if perr != nil {
		return &ParseError{Err: perr}
	}
	an.promptExpansions(f)
	an.stmts(f.Stmts, "")
	// Statements the walk did not reach (inside arithmetic, case patterns,
	// parameter expansions it did not expand) are read on their own.
	syntax.Walk(f, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok && !an.visited[st] {
			an.stmt(st, "")
			return false
		}
		return true
	})
	return nil
}

// act tells the judge of an act.
func (an *Reading) act(k ActKind, prog, what string) {
	an.j.Act(an, Act{Kind: k, Prog: prog, What: what})
}

// Line is the line read.
func (an *Reading) Line() string { return an.line }

// ScanLine is the line as scanned for names: without its prose (Prose).
func (an *Reading) ScanLine() string { return an.scanLine }

// Cwd is the directory the reading stands in, and whether it knows it.
func (an *Reading) Cwd() (string, bool) { return an.cwd, an.cwdOK }

// Prog is the program whose arguments are being read (a base name).
func (an *Reading) Prog() string { return an.prog }

// Lead is, while a word that begins with a value the reading cannot
// know ("$DIR"/) is told, that word with "…" for the value; else "".
func (an *Reading) Lead() string { return an.lead }

// Indirect reports whether what is told now is read from a script file
// the line runs, or from a run directory (NewReading), rather than from
// the line as it runs in the folder.
func (an *Reading) Indirect() bool { return an.indirect > 0 }

// InCopy reports whether the line is read from a run directory.
func (an *Reading) InCopy() bool { return an.lstats.view != nil }

// Uncertain reports whether something on the line could not be followed
// (a value it cannot know in a path's or a program's place, a bound
// reached, a script that does not parse).
func (an *Reading) Uncertain() bool { return an.uncertain }

// Built reports whether a path's place received a value a decoder or an
// interpreter makes up as it runs.
func (an *Reading) Built() bool { return an.built }

// Writes are the absolute paths the line writes (not those of Indirect
// readings).
func (an *Reading) Writes() []string { return an.writes }

// Progs are the programs the line runs, by base name ("git sub" for git).
func (an *Reading) Progs() []string { return an.progs }

// Phys resolves the absolute path p as the system reaches it (links
// followed component by component before ".."), through the reading's
// file system and view.
func (an *Reading) Phys(p string) string { return an.phys(p) }

// Exists reports whether p's last component is there (an lstat).
func (an *Reading) Exists(p string) bool { return !an.lstats.lstat(p).missing }

// Dotglob reports whether a * on the line may match a dotted name.
func (an *Reading) Dotglob() bool { return an.dotglob() }

// GitTopDir is the directory of the first .git found going up from dir,
// or "".
func (an *Reading) GitTopDir(dir string) string { return an.gitTopDir(dir) }
