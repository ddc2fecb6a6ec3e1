package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// WorkDir is an ephemeral copy of a checkout (from [CopyCheckout]), or,
// from [NoSandbox.Materialize], the checkout itself, which Remove leaves
// alone.
type WorkDir struct {
	Path      string // the copy's root directory (absolute)
	Checkout  string // the checkout it is a copy of (absolute, cleaned)
	Files     int    // regular files copied
	Links     int    // symbolic links recreated
	Bytes     int64  // bytes of regular files
	Reflinked int    // files cloned with FICLONE rather than copied
	Skipped   int    // FIFOs, sockets and devices left out (never opened)
	Excluded  int    // files, links and directories left out because skip said so
	// Unreadable counts the files left out, and the directories left empty,
	// because opening them was refused (EACCES, EPERM: a root-owned 0600
	// file); UnreadablePaths are the first few of them (relative to the
	// checkout, slash-separated).
	Unreadable      int
	UnreadablePaths []string

	inPlace bool // Path is the checkout itself: Remove removes nothing
}

// Remove deletes the copy with whatever the command left in it: where a
// directory's permissions keep its entries from being removed, it gives
// every directory in the copy u+rwx (never following a link) and tries
// again. Safe to call twice; a WorkDir that is the checkout itself
// (NoSandbox) is never removed.
func (w *WorkDir) Remove() error {
	if w == nil || w.inPlace || w.Path == "" {
		return nil
	}
	if err := os.RemoveAll(w.Path); err == nil {
		return nil
	}
	_ = filepath.WalkDir(w.Path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if info, ierr := d.Info(); ierr == nil && info.Mode().Perm()&0o700 != 0o700 {
				_ = os.Chmod(p, info.Mode().Perm()|0o700)
			}
		}
		return nil
	})
	if err := os.RemoveAll(w.Path); err != nil {
		return fmt.Errorf("sandbox: removing the working copy %s: %w", w.Path, err)
	}
	return nil
}

// gitRelocating are the variables that would make git read another
// repository than the checkout's own; CopyCheckout's git runs without them.
var gitRelocating = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE"}

// copyGitEnv is env without the relocating variables, with git's prompts
// and optional locks off.
func copyGitEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(gitRelocating, name) {
			out = append(out, kv)
		}
	}
	return append(out, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}

// CopyCheckout copies checkout into a new directory made under base
// (os.MkdirTemp(base, "nodwyn-wc-"), mode 0700; base "" is os.TempDir()).
//
// In a git work tree (git -C checkout rev-parse --show-toplevel succeeds) it
// copies what git ls-files -z --cached --others --exclude-standard lists,
// run in checkout: tracked files and untracked ones that are not ignored,
// under checkout only when it is a subdirectory of the work tree. A tracked
// file deleted in the work tree is skipped; .git is never copied. A
// directory in the listing (a submodule's gitlink, an untracked nested
// repository) is copied by walking it, leaving out every entry named .git.
// Where git is not installed, or checkout is not in a work tree, the whole
// folder is copied. git runs with env (the caller's scrubbed environment)
// minus GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_COMMON_DIR,
// GIT_OBJECT_DIRECTORY and GIT_NAMESPACE, with GIT_TERMINAL_PROMPT=0 and
// GIT_OPTIONAL_LOCKS=0, within ctx.
//
// Regular files are cloned with FICLONE where the file system can (counted
// in Reflinked), else copied (copy_file_range); the copy keeps the
// permission bits (mode & 0777, so the exec bits exactly), not setuid,
// setgid or sticky. Symbolic links are recreated and never followed: their
// targets are never read or copied, and a listed path under a linked
// directory is left out. A link's target is resolved
// lexically from the link's place in the checkout (the checkout as given and
// as its real path): a target inside the checkout is the same place in the
// copy (a relative target is kept as written unless it climbs out on the
// way, an absolute one, or one that climbs out and back, becomes
// relative), a target outside it is its absolute path (a relative target
// that climbs out of the checkout is made absolute, so it reaches what it
// reached from the checkout). Directories get their source's permission bits
// plus u+rwx. FIFOs, sockets and devices are never opened, only counted in
// Skipped. A file or directory that cannot be opened for want of permission
// (EACCES, EPERM) is left out (a directory is left empty) and counted in
// Unreadable, with the first few paths in UnreadablePaths; any other error
// fails the copy. skip, when not nil, is asked for every path
// (slash-separated, relative to checkout) before it is copied, and a path it
// is true for is left out (a directory with all it holds).
//
// On an error the partial copy is removed. It is not a security boundary:
// a directory swapped for a link while the copy is made can still be
// followed.
func CopyCheckout(ctx context.Context, checkout, base string, env []string, skip func(rel string) bool) (*WorkDir, error) {
	abs, err := filepath.Abs(checkout)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the checkout %q: %w", checkout, err)
	}
	src := filepath.Clean(abs)
	fi, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the checkout: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: the checkout %s is not a directory", src)
	}
	listed, inGit, err := gitListing(ctx, src, env)
	if err != nil {
		return nil, err
	}
	if base == "" {
		base = os.TempDir()
	}
	dst, err := os.MkdirTemp(base, "nodwyn-wc-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: making the working copy under %s: %w", base, err)
	}
	if dst, err = filepath.Abs(dst); err != nil {
		_ = os.RemoveAll(dst)
		return nil, fmt.Errorf("sandbox: the working copy: %w", err)
	}
	w := &WorkDir{Path: dst, Checkout: src}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		real = src
	}
	c := &copier{ctx: ctx, src: src, real: real, dst: dst, w: w, skip: skip, dirs: map[string]bool{".": true}, walked: map[string]bool{}}
	if inGit {
		err = c.copyListed(listed)
	} else {
		err = c.walk(".", false)
	}
	if err == nil {
		err = c.setDirModes()
	}
	if err != nil {
		_ = w.Remove()
		return nil, err
	}
	return w, nil
}

// gitListing is what git lists to copy in dir (sorted, unique,
// slash-separated, relative to dir); inGit is false where git is not
// installed or dir is not in a work tree.
func gitListing(ctx context.Context, dir string, env []string) (listed []string, inGit bool, err error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, false, nil
	}
	env = copyGitEnv(env)
	top := exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--show-toplevel")
	top.Env = env
	out, err := top.Output()
	if ctx.Err() != nil {
		return nil, false, fmt.Errorf("sandbox: git rev-parse in %s: %w", dir, ctx.Err())
	}
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return nil, false, nil
	}
	ls := exec.CommandContext(ctx, git, "-C", dir, "-c", "core.fsmonitor=false", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Env = env
	var stderr bytes.Buffer
	ls.Stderr = &stderr
	out, err = ls.Output()
	if ctx.Err() != nil {
		return nil, false, fmt.Errorf("sandbox: git ls-files in %s: %w", dir, ctx.Err())
	}
	if err != nil {
		return nil, false, fmt.Errorf("sandbox: git ls-files in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	for p := range strings.SplitSeq(string(out), "\x00") {
		p = strings.TrimSuffix(p, "/")
		if p != "" && filepath.IsLocal(p) {
			listed = append(listed, path.Clean(p))
		}
	}
	slices.Sort(listed)
	return slices.Compact(listed), true, nil
}

// copier makes one working copy.
type copier struct {
	ctx      context.Context
	src, dst string
	real     string // src with its links resolved (src where that failed)
	w        *WorkDir
	skip     func(rel string) bool
	dirs     map[string]bool // source directory (rel) → it is a real directory, made in the copy
	walked   map[string]bool // directories copied whole: what is listed under them is already there
	modes    []dirMode       // directories made, in the order made
}

type dirMode struct {
	rel  string
	perm fs.FileMode
}

// copyListed copies git's listing.
func (c *copier) copyListed(listed []string) error {
	for _, rel := range listed {
		if err := c.ctx.Err(); err != nil {
			return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
		}
		ok, err := c.parent(path.Dir(rel))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		fi, err := os.Lstat(filepath.Join(c.src, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue // tracked, deleted in the work tree
		}
		if errors.Is(err, fs.ErrPermission) {
			c.unreadable(rel)
			continue
		}
		if err != nil {
			return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
		}
		if c.excluded(rel) {
			continue
		}
		if fi.IsDir() {
			c.walked[rel] = true
			if err := c.mkdir(rel, fi.Mode()); err != nil {
				return err
			}
			if err := c.walk(rel, true); err != nil {
				return err
			}
			continue
		}
		if err := c.entry(rel, fi.Mode()); err != nil {
			return err
		}
	}
	return nil
}

// parent reports whether rel, a directory of the source, is a real
// directory (itself and every directory above it, none a link, none copied
// whole already, none excluded), making it in the copy if so.
func (c *copier) parent(rel string) (bool, error) {
	if ok, seen := c.dirs[rel]; seen {
		return ok, nil
	}
	up, err := c.parent(path.Dir(rel))
	if err != nil || !up {
		c.dirs[rel] = false
		return false, err
	}
	if c.walked[rel] || c.excluded(rel) {
		c.dirs[rel] = false
		return false, nil
	}
	fi, err := os.Lstat(filepath.Join(c.src, rel))
	if err != nil || !fi.IsDir() {
		c.dirs[rel] = false
		return false, nil
	}
	if err := c.mkdir(rel, fi.Mode()); err != nil {
		return false, err
	}
	c.dirs[rel] = true
	return true, nil
}

// maxUnreadablePaths is how many paths UnreadablePaths keeps.
const maxUnreadablePaths = 5

// unreadable counts rel as left out for want of permission.
func (c *copier) unreadable(rel string) {
	c.w.Unreadable++
	if len(c.w.UnreadablePaths) < maxUnreadablePaths {
		c.w.UnreadablePaths = append(c.w.UnreadablePaths, rel)
	}
}

// openSource opens a file or directory of the checkout to copy it; a test
// replaces it to see what a refused open does.
var openSource = func(name string, flag int) (*os.File, error) { return os.OpenFile(name, flag, 0) }

// excluded asks skip about rel, counting a yes.
func (c *copier) excluded(rel string) bool {
	if c.skip != nil && c.skip(rel) {
		c.w.Excluded++
		return true
	}
	return false
}

// walk copies the entries of the source directory rel (made in the copy
// already), leaving out those named .git when noGit.
func (c *copier) walk(rel string, noGit bool) error {
	flag := os.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW
	if rel == "." {
		flag &^= syscall.O_NOFOLLOW // the checkout may be named through a link
	}
	d, err := openSource(filepath.Join(c.src, rel), flag)
	if errors.Is(err, fs.ErrPermission) {
		c.unreadable(rel)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if err := c.ctx.Err(); err != nil {
			return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
		}
		if noGit && e.Name() == ".git" {
			continue
		}
		sub := path.Join(rel, e.Name())
		if c.excluded(sub) {
			continue
		}
		if e.IsDir() {
			info, err := e.Info()
			if err != nil {
				return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
			}
			if err := c.mkdir(sub, info.Mode()); err != nil {
				return err
			}
			if err := c.walk(sub, noGit); err != nil {
				return err
			}
			continue
		}
		if err := c.entry(sub, e.Type()); err != nil {
			return err
		}
	}
	return nil
}

// entry copies one non-directory: a regular file, a link, or counts another
// type as skipped.
func (c *copier) entry(rel string, mode fs.FileMode) error {
	switch {
	case mode.IsRegular():
		return c.file(rel)
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(filepath.Join(c.src, rel))
		if err != nil {
			return fmt.Errorf("sandbox: copying the link %s: %w", filepath.Join(c.src, rel), err)
		}
		if err := os.Symlink(c.linkTarget(rel, target), filepath.Join(c.dst, rel)); err != nil {
			return fmt.Errorf("sandbox: recreating the link %s in the working copy: %w", rel, err)
		}
		c.w.Links++
	default:
		c.w.Skipped++
	}
	return nil
}

// linkTarget is the target the link rel, whose target text is target, gets
// in the copy (see CopyCheckout): resolved lexically from the link's place
// in the checkout, a target inside it is the same place in the copy,
// relative; one outside it is its absolute path.
func (c *copier) linkTarget(rel, target string) string {
	to := filepath.Clean(target)
	if !filepath.IsAbs(to) {
		to = filepath.Join(c.src, filepath.Dir(rel), target)
	}
	for _, root := range []string{c.src, c.real} {
		in, err := filepath.Rel(root, to)
		if err != nil || !filepath.IsLocal(in) {
			continue
		}
		if !filepath.IsAbs(target) && staysUnder(filepath.Dir(rel), target) {
			return target // the same place in the copy as written
		}
		if r, err := filepath.Rel(filepath.Dir(rel), in); err == nil {
			return r
		}
	}
	return to
}

// staysUnder reports whether the relative target, followed lexically from
// the directory dir (relative to the root), never climbs above the root on
// the way (../name/x from the root's top leaves it and comes back).
func staysUnder(dir, target string) bool {
	depth := 0
	if dir != "." {
		depth = len(strings.Split(dir, string(filepath.Separator)))
	}
	for _, part := range strings.Split(target, string(filepath.Separator)) {
		switch part {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return false
			}
		default:
			depth++
		}
	}
	return true
}

// file copies the regular file rel, cloning it where the file system can.
// It is opened without following a link and without blocking (in case it
// was swapped for a FIFO), and copied only if it is still a regular file.
func (c *copier) file(rel string) error {
	from := filepath.Join(c.src, rel)
	s, err := openSource(from, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil // became a link since it was listed: not followed
		}
		if errors.Is(err, fs.ErrPermission) {
			c.unreadable(rel)
			return nil
		}
		return fmt.Errorf("sandbox: copying %s: %w", from, err)
	}
	defer s.Close()
	fi, err := s.Stat()
	if err != nil {
		return fmt.Errorf("sandbox: copying %s: %w", from, err)
	}
	if !fi.Mode().IsRegular() {
		c.w.Skipped++
		return nil
	}
	to := filepath.Join(c.dst, rel)
	d, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox: copying %s into the working copy: %w", from, err)
	}
	if unix.IoctlFileClone(int(d.Fd()), int(s.Fd())) == nil {
		c.w.Reflinked++
	} else if _, err := io.Copy(d, s); err != nil {
		d.Close()
		return fmt.Errorf("sandbox: copying %s into the working copy: %w", from, err)
	}
	if err := d.Chmod(fi.Mode().Perm()); err != nil {
		d.Close()
		return fmt.Errorf("sandbox: copying the mode of %s: %w", from, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("sandbox: copying %s into the working copy: %w", from, err)
	}
	c.w.Files++
	c.w.Bytes += fi.Size()
	return nil
}

// mkdir makes the directory rel in the copy, u+rwx until setDirModes.
func (c *copier) mkdir(rel string, mode fs.FileMode) error {
	if err := os.Mkdir(filepath.Join(c.dst, rel), 0o700); err != nil {
		return fmt.Errorf("sandbox: making %s in the working copy: %w", rel, err)
	}
	c.modes = append(c.modes, dirMode{rel: rel, perm: mode.Perm() | 0o700})
	return nil
}

// setDirModes gives the directories made their source's permission bits
// plus u+rwx.
func (c *copier) setDirModes() error {
	for _, m := range c.modes {
		if m.perm == 0o700 {
			continue
		}
		if err := os.Chmod(filepath.Join(c.dst, m.rel), m.perm); err != nil {
			return fmt.Errorf("sandbox: the mode of %s in the working copy: %w", m.rel, err)
		}
	}
	return nil
}
