package guard

// The argv trigger's policy: what the reading of a line (bashread) tells
// it, judged. The reading says what each word names and what the line
// does; this file says what nodwyn makes of it, in words the model can
// act on.

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nodwyn/nodwyn/internal/guard/bashread"
)

// argvJudge judges one reading of a line (bashread.Judge): it keeps the
// strictest finding, the first reason at a level.
type argvJudge struct {
	t    *ArgvTrigger
	r    *bashread.Reading
	best Decision
	// nearDenied is set when an unknown value completes a path in a
	// directory that holds a denied one (~/$(…), $HOME/.s$x).
	nearDenied string
}

func (j *argvJudge) result() *argvResult {
	d := j.best
	if j.floorFollows() {
		// The kernel refuses what such a line really opens in the denied
		// directories: only what it names is refused here. Not another
		// process's /proc entries: Landlock's file rules do not cover them
		// (/proc/<pid>/environ of an unrestricted process was readable under
		// the floor), so a line that cannot be followed and mentions them is
		// refused as without the floor.
		if d.Verdict < Refuse && (j.r.Uncertain() || j.r.Built()) && j.mentionsProc(j.r.ScanLine()) {
			d = Decision{Verdict: Refuse, Reason: "the line builds a path or a command nodwyn cannot follow before it runs, and it mentions /proc and a process's environment, memory or files, which the kernel floor does not cover, so it was refused and nothing of it ran; write the paths out plainly"}
		}
		return j.decided(d)
	}
	if d.Verdict < Refuse && j.nearDenied != "" {
		d = Decision{Verdict: Refuse, Reason: fmt.Sprintf(
			"the line builds a path in %s from a value nodwyn cannot know before it runs, and that directory holds what nodwyn keeps off limits, so it was refused and nothing of it ran; write the path out plainly", j.nearDenied)}
	}
	if d.Verdict < Refuse && (j.r.Uncertain() || j.r.Built()) {
		if m := j.t.mentionsDenied(j.r.ScanLine()); m != "" {
			d = Decision{Verdict: Refuse, Reason: fmt.Sprintf(
				"the line builds a path or a command nodwyn cannot follow before it runs, and it mentions %s, so it was refused and nothing of it ran; write the paths out plainly", m)}
		} else if j.r.Built() && d.Verdict < SecurityConfirm && !j.t.Sandbox {
			d = Decision{Verdict: SecurityConfirm, Reason: "the line passes a program a path that a decoder or an interpreter makes up as it runs, which nodwyn cannot judge before it runs; write the path out plainly"}
		}
	}
	return j.decided(d)
}

func (j *argvJudge) decided(d Decision) *argvResult {
	d.Checker = j.t.Name()
	if d.Verdict == Allow {
		d = Decision{}
	}
	return &argvResult{decision: d, writes: j.r.Writes(), progs: j.r.Progs()}
}

// floorFollows reports whether the kernel floor stands in for the
// analysis where it cannot follow a line: in sandbox mode with the floor
// on, a path or a command the analysis cannot follow is no reason to
// refuse, unless it is about another process's /proc entries (which the
// floor does not cover).
func (j *argvJudge) floorFollows() bool { return j.t.Sandbox && j.t.KernelFloor }

// find records a finding; the strictest wins, the first reason at a level.
func (j *argvJudge) find(v Verdict, reason string) {
	if j.r.Indirect() && v < Refuse {
		return
	}
	if v > j.best.Verdict {
		j.best = Decision{Verdict: v, Reason: reason}
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
func (j *argvJudge) mentionsProc(text string) bool {
	if j.floorFollows() {
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

// deny records a refusal for naming a denied place: dir, the catalogue's
// entry that denies it where there is one.
func (j *argvJudge) deny(path, dir string) {
	what := "credentials, or nodwyn's own configuration and data"
	if j.t.Denylist != nil {
		if e, ok := j.t.Denylist.entries[dir]; ok {
			what = fmt.Sprintf("%s in nodwyn's credential catalogue: %s", e.Path, e.What)
		}
	}
	if j.t.Sandbox {
		j.find(Refuse, fmt.Sprintf("the line names %s, in a directory nodwyn keeps off limits in sandbox mode too (%s: %s), so it was refused and nothing of it ran; do the task without it", path, dir, what))
		return
	}
	j.find(Refuse, fmt.Sprintf("the line names %s, in %s (%s), which nodwyn keeps off limits; nobody can approve that, so it was refused and nothing of it ran; do the task without it", path, dir, what))
}

// checkNearDenied notes a path whose known beginning is a directory that
// holds a denied one and whose rest is unknown.
func (j *argvJudge) checkNearDenied(v string) {
	i := strings.IndexAny(v, bashread.Unknown+bashread.Built)
	if i <= 0 || j.t.Denylist == nil {
		return
	}
	prefix := bashread.Unmark.Replace(v[:i])
	if !filepath.IsAbs(prefix) {
		cwd, cwdOK := j.r.Cwd()
		if !cwdOK {
			return
		}
		prefix = joinRaw(cwd, prefix)
	}
	dir := filepath.Clean(prefix)
	if !strings.HasSuffix(prefix, "/") {
		dir = filepath.Dir(dir)
	}
	if ok, _ := j.t.Denylist.ancestorOfDenied(dir, j.r.Phys(dir)); ok {
		j.nearDenied = dir
	} else if ok, _ := j.t.Denylist.deniedDirWith(dir, j.r.Phys(dir), j.r.Phys); ok {
		j.nearDenied = dir
	}
}

// procUnknown refuses a path that names another process's environment,
// memory or files under /proc whatever the unknown part of it turns out
// to be (/proc/$(pgrep x)/environ): the line names it, so it is refused
// by name, with the kernel floor too.
func (j *argvJudge) procUnknown(v string) {
	if !strings.ContainsAny(v, bashread.Unknown+bashread.Built) {
		return
	}
	p := strings.NewReplacer(bashread.Unknown, "…", bashread.Built, "…", bashread.Tree, "").Replace(v)
	if !filepath.IsAbs(p) {
		cwd, cwdOK := j.r.Cwd()
		if !cwdOK {
			return
		}
		p = joinRaw(cwd, p)
	}
	if p = filepath.Clean(p); procDenied.MatchString(p) {
		j.deny(p, "/proc/*/environ")
	}
}

var systemOK = []string{"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/urandom", "/dev/random", "/dev/fd", "/dev/full"}
var programDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/usr/lib", "/usr/libexec"}

// judgeAbs judges an absolute path (written as raw).
func (j *argvJudge) judgeAbs(p, raw string, ro bashread.Use) {
	for _, s := range systemOK {
		if within(slashes(p), s) && !strings.Contains(p, "..") {
			return
		}
	}
	phys := j.r.Phys(p)
	dl := j.t.Denylist
	if dl != nil {
		if ok, dir := dl.deniedDirWith(p, phys, j.r.Phys); ok {
			j.deny(filepath.Clean(p), dir)
			return
		}
		if ro == bashread.UseRecursive {
			if ok, _ := dl.ancestorOfDenied(p, phys); ok {
				j.find(Refuse, fmt.Sprintf("the line %s %s, and %s %s; nobody can approve that, so it was refused and nothing of it ran; name the files or directories you need instead", j.recVerb(), j.recPath(p), filepath.Clean(p), j.heldDenied(p, phys)))
				return
			}
			if link, dir := j.r.LinkOut(phys, j.linkHit); link != "" {
				j.find(Refuse, fmt.Sprintf("the line %s %s, and the link %s in it leads to %s, which nodwyn keeps off limits because it holds credentials (a program that follows links would read it); nobody can approve that, so it was refused and nothing of it ran; name the files or directories you need instead, or remove the link", j.recVerb(), j.recPath(p), link, dir))
				return
			}
		}
	}
	if ro == bashread.UseMention || j.t.Sandbox || j.r.Indirect() {
		return
	}
	lex := filepath.Clean(p)
	if ro != bashread.UseProgram && DeniedName(lex) {
		j.find(SecurityConfirm, fmt.Sprintf("the line names %s, a credential-shaped file name; a person is asked, so leave credentials alone unless they said otherwise", lex))
	}
	for _, s := range systemOK {
		if within(lex, s) {
			return
		}
	}
	if ro == bashread.UseProgram {
		for _, s := range programDirs {
			if within(lex, s) {
				return
			}
		}
	}
	folder := j.t.Folder
	if folder != "" && folder != "/" && within(lex, folder) && (within(phys, folder) || within(phys, j.r.Phys(folder))) {
		if filepath.IsAbs(raw) && strings.Contains(j.r.Line(), folder) && !(j.t.Scratch != "" && within(lex, j.t.Scratch)) {
			j.find(Refuse, fmt.Sprintf("the line names %s by its absolute path inside the folder; a command already runs in the folder root (%s), so write the path relative to it (for example %s) and run the line again", lex, folder, relOrDot(folder, lex)))
		}
		return
	}
	if j.t.Scratch != "" && within(lex, j.t.Scratch) && within(phys, j.r.Phys(j.t.Scratch)) {
		return
	}
	if j.t.Tmp && within(lex, "/tmp") && within(phys, j.r.Phys("/tmp")) {
		return
	}
	j.find(SecurityConfirm, fmt.Sprintf("the line names %s, outside the folder and the scratch directory; a person is asked (an unattended run declines), so work with files in the folder or in the scratch directory ($TMPDIR) instead", lex))
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
func (j *argvJudge) recVerb() string {
	if v, ok := recVerbs[j.r.Prog()]; ok {
		return v
	}
	if strings.HasPrefix(j.r.Prog(), "python") || j.r.Prog() == "php" {
		return "serves or reads"
	}
	return "reads"
}

// recPath is what a refusal of a recursive use says of the path p: "p
// recursively", or for a word that begins with a value the analysis
// cannot know ("$DIR"/) the word, which is p when that value is empty, as
// an unset variable's is.
func (j *argvJudge) recPath(p string) string {
	p = filepath.Clean(p)
	if j.r.Lead() == "" {
		return p + " recursively"
	}
	return fmt.Sprintf("%s recursively, where … is a value nodwyn cannot know before it runs (when it is empty, as an unset variable is, that is %s)", j.r.Lead(), p)
}

// heldDenied says which place nodwyn keeps off limits the directory p (or
// phys, its resolution) holds: one that is there, in the catalogue's
// order, else the first such place, said to be where it would be.
func (j *argvJudge) heldDenied(p, phys string) string {
	dl := j.t.Denylist
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
		if j.r.Exists(dir) {
			return fmt.Sprintf("holds %s%s, which nodwyn keeps off limits", dir, j.entryWhat(dir))
		}
		if first == "" {
			first = dir
		}
	}
	return fmt.Sprintf("is where %s%s would be, which nodwyn keeps off limits although it is not there yet", first, j.entryWhat(first))
}

// entryWhat is what the catalogue says a denied place holds, in
// parentheses, or "".
func (j *argvJudge) entryWhat(dir string) string {
	if e, ok := j.t.Denylist.Entry(dir); ok && e.What != "" {
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

func isHarmlessDev(v string) bool {
	for _, s := range systemOK {
		if within(filepath.Clean(v), s) {
			return true
		}
	}
	return false
}

// run reads the line and judges what the reading told.
func (j *argvJudge) run() (res *argvResult) {
	err := j.r.Read()
	if err == nil {
		return j.result()
	}
	var perr *bashread.ParseError
	if errors.As(err, &perr) {
		if j.best.Verdict == Refuse {
			return j.result()
		}
		return j.t.failClosed(j.r.Line(), "the line does not parse as bash", perr.Err)
	}
	stopped := errors.Is(err, bashread.ErrStopped)
	if stopped {
		res = j.t.failClosed(j.r.Line(), "the analysis of the line did not finish in time", nil)
		res.timedOut = true
	} else {
		res = j.t.failClosed(j.r.Line(), fmt.Sprintf("the analysis of the line failed (%v)", err), nil)
	}
	// What was found before it stopped still counts.
	if j.best.Verdict > res.decision.Verdict {
		res = j.result()
		res.timedOut = stopped
	}
	res.unfinished = true
	return res
}

// Path judges an absolute path a word names.
func (j *argvJudge) Path(_ *bashread.Reading, p, raw string, ro bashread.Use) { j.judgeAbs(p, raw, ro) }

// Glob refuses a pattern that reaches a denied directory or another
// process's /proc entries, component by component.
func (j *argvJudge) Glob(_ *bashread.Reading, pat, lit string, comps []string) bool {
	dl := j.t.Denylist
	if dl == nil {
		return false
	}
	// A pattern below the scratch directory (a working copy's files)
	// matches nothing above it: a denied directory that holds the
	// scratch directory is not reached (what it matches, links and all,
	// is judged as paths).
	inScratch := dl.excepted(lit, j.r.Phys(lit))
	for _, dir := range dl.Dirs {
		if inScratch && !withinFold(dir, lit) {
			continue
		}
		dc := strings.Split(strings.TrimPrefix(dir, "/"), "/")
		if globReaches(comps, dc, j.r.Dotglob()) {
			j.deny(pat, dir)
			return true
		}
	}
	if procDenied.MatchString(pat) || globReaches(comps, []string{"proc", "x", "environ"}, true) {
		if m, _ := filepath.Match(pat, "/proc/self/environ"); m || procDenied.MatchString(pat) || globReaches(comps, []string{"proc", "self", "environ"}, true) {
			j.deny(pat, "/proc/*/environ")
			return true
		}
	}
	return false
}

// Partial judges a path part of which the reading cannot know.
func (j *argvJudge) Partial(_ *bashread.Reading, v string) {
	j.checkNearDenied(v)
	j.procUnknown(v)
}

// Code refuses code that names a denied directory or another process's
// /proc entries, and asks about code that names a credential-shaped file.
func (j *argvJudge) Code(_ *bashread.Reading, text string, joined bool) {
	for _, n := range j.t.codeNames {
		if strings.Contains(text, n) {
			j.deny(n, n)
			return
		}
	}
	if j.mentionsProc(text) {
		j.deny("/proc", "/proc/*/environ")
	}
	if joined || j.t.Sandbox {
		return
	}
	for _, n := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".pem", ".env", "credentials"} {
		if codeWord(text, n) {
			j.find(SecurityConfirm, fmt.Sprintf("the code on the line mentions %s, a credential-shaped name; a person is asked, so leave credentials alone unless they said otherwise", n))
		}
	}
}

// Act judges what a line does that is no path.
func (j *argvJudge) Act(r *bashread.Reading, a bashread.Act) {
	switch a.Kind {
	case bashread.ActNetwork:
		j.find(Confirm, a.Prog+" reaches the network; a person is asked, since what it sends leaves the machine")
	case bashread.ActSocket:
		j.find(Confirm, "the line opens a network connection ("+a.What+"); a person is asked, since what it sends leaves the machine")
	case bashread.ActDestroys:
		j.find(Confirm, a.Prog+" destroys what is on its target; a person is asked")
	case bashread.ActRemovesTree:
		j.find(Confirm, "rm -rf removes a whole tree for good; a person is asked")
	case bashread.ActDeviceWrite:
		if !isHarmlessDev(a.What) {
			j.find(Confirm, "dd writes to the device "+a.What+", which destroys what is on it; a person is asked")
		}
	case bashread.ActOwnDirs:
		j.find(Refuse, fmt.Sprintf("%s %s reads nodwyn's own configuration and data directories, which nodwyn keeps off limits; nobody can approve that, so it was refused and nothing of it ran; give it a home of its own (HOME=$TMPDIR/h %s %s …) if you are testing nodwyn", a.Prog, a.What, a.Prog, a.What))
	case bashread.ActPrintsSecret:
		j.find(Refuse, fmt.Sprintf("%s reads %s, which nodwyn keeps off limits; nobody can approve that, so it was refused and nothing of it ran; do the task without it", a.Prog, a.What))
	case bashread.ActDecodedScript:
		j.find(Refuse, "the line runs a script that a decoder makes up as it runs, which nodwyn cannot read before it runs, so it was refused and nothing of it ran; write the commands out plainly")
	case bashread.ActPromptExpansion:
		j.find(Refuse, "the line uses a prompt expansion (${...@P}), which expands a value again in ways nodwyn does not follow before it runs, so it was refused and nothing of it ran; write the value out plainly")
	case bashread.ActCodeFillsHome:
		j.find(Refuse, "the code on the line reads files in the home directory by a name it fills in or finds as it runs, which nodwyn cannot check against the directories it keeps off limits, so it was refused and nothing of it ran; write the path out plainly")
	case bashread.ActCodeRunsDecoded:
		j.find(Refuse, "the code on the line runs code it decodes first, which nodwyn cannot read before it runs, so it was refused and nothing of it ran; write the code out plainly")
	case bashread.ActCodeBuildsHome:
		j.find(Refuse, "the code on the line reaches into the home directory with a name it puts together or decodes, which nodwyn cannot check against the directories it keeps off limits, so it was refused and nothing of it ran; write the path out plainly")
	case bashread.ActGitLoses:
		j.find(Confirm, a.What+"; a person is asked")
	case bashread.ActGitPush:
		j.find(Confirm, "git push changes a remote repository; a person is asked")
	case bashread.ActGitRemote:
		j.find(Confirm, "git "+a.Prog+" reaches a remote repository over the network; a person is asked")
	case bashread.ActGitReadsRepo:
		j.gitReadsRepo(r, a.Prog)
	case bashread.ActGitHooks:
		if !j.t.Sandbox {
			j.find(SecurityConfirm, "git is told to run hooks from, or read its configuration (aliases, pager, hooks) from, "+a.What+" (core.hooksPath, include.path, GIT_CONFIG_GLOBAL …); a person is asked")
		}
	case bashread.ActGitRemoteConfig:
		j.find(Confirm, "git -c "+a.What+" changes how git reaches remotes; a person is asked")
	}
}

// gitReadsRepo refuses git sub reading what the repository holds when its
// work tree holds a protected directory (a home directory kept in git).
func (j *argvJudge) gitReadsRepo(r *bashread.Reading, sub string) {
	cwd, cwdOK := r.Cwd()
	dl := j.t.Denylist
	if !cwdOK || dl == nil {
		return
	}
	if ok, dir := dl.ancestorOfDenied(cwd, r.Phys(cwd)); ok && r.GitTopDir(cwd) != "" {
		j.find(Refuse, fmt.Sprintf("git %s reads the repository at %s, which holds %s, a directory nodwyn keeps off limits because it holds credentials; nobody can approve that, so it was refused and nothing of it ran", sub, cwd, dir))
	} else if top := r.GitTopDir(cwd); r.InCopy() && top != "" {
		// A working copy has no .git: git finds the repository of a
		// directory that holds the copy (a home directory kept in git).
		if ok, dir := dl.ancestorOfDenied(top, r.Phys(top)); ok {
			j.find(Refuse, fmt.Sprintf("git %s reads the repository at %s (a working copy has no .git of its own), which holds %s, a directory nodwyn keeps off limits because it holds credentials; nobody can approve that, so it was refused and nothing of it ran; use the git tools, which show the folder's own repository", sub, top, dir))
		}
	}
}

// Script judges a script file the line runs: a finding in it says so.
func (j *argvJudge) Script(_ *bashread.Reading, name string, read func()) {
	before := j.best.Verdict
	read()
	if j.best.Verdict > before {
		j.best.Reason = "the line runs " + name + ", and " + j.best.Reason
	}
}

// Readable: the reading never reads a file in a denied directory (it was
// refused by name already).
func (j *argvJudge) Readable(r *bashread.Reading, p string) bool {
	if dl := j.t.Denylist; dl != nil {
		if ok, _ := dl.deniedDirWith(p, r.Phys(p), r.Phys); ok {
			return false
		}
	}
	return true
}

// linkHit: a link's target leads into a denied directory or to one that
// holds it.
func (j *argvJudge) linkHit(target string) (string, bool) {
	dl := j.t.Denylist
	if ok, dir := dl.deniedDirPhys(target, target); ok {
		return dir, true
	}
	if ok, dir := dl.ancestorOfDenied(target, target); ok {
		return dir, true
	}
	return "", false
}
