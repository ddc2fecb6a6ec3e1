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
// The checkout is read, and the copy written, one name at a time from an
// open directory, never following a link (the checkout's own name aside):
// a directory that a running command swaps for a link while the copy is
// made (a link to ~/.ssh, exchanged with renameat2) is left out, not
// followed, on either side. On an error the partial copy is removed.
func CopyCheckout(ctx context.Context, checkout, base string, env []string, skip func(rel string) bool) (*WorkDir, error) {
	return copyCheckout(ctx, checkout, base, env, skip, nil)
}

// copyCheckout is CopyCheckout with git run under floor (nil: none): the
// checkout's .git/config is the model's to write, and what git reads by it
// (core.excludesFile) must be what a command may read.
func copyCheckout(ctx context.Context, checkout, base string, env []string, skip func(rel string) bool, floor *Floor) (*WorkDir, error) {
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
	listed, inGit, err := gitListing(ctx, src, env, floor)
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
	err = c.root()
	if err == nil && inGit {
		err = c.copyListed(listed)
	} else if err == nil {
		var f int
		if f, err = openSource(c.at[0].src, ".", unix.O_RDONLY|unix.O_DIRECTORY); err == nil {
			err = c.walk(os.NewFile(uintptr(f), src), c.at[0].dst, ".", false)
		} else {
			err = fmt.Errorf("sandbox: copying %s: %w", src, err)
		}
	}
	c.close()
	if err != nil {
		_ = w.Remove()
		return nil, err
	}
	return w, nil
}

// floorOutput is cmd.Output() with cmd started under f (nil: plainly).
func floorOutput(f *Floor, cmd *exec.Cmd) ([]byte, error) {
	if f == nil {
		return cmd.Output()
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := StartFloored(f, cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	return out.Bytes(), err
}

// gitListing is what git lists to copy in dir (sorted, unique,
// slash-separated, relative to dir); inGit is false where git is not
// installed or dir is not in a work tree.
func gitListing(ctx context.Context, dir string, env []string, floor *Floor) (listed []string, inGit bool, err error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, false, nil
	}
	env = copyGitEnv(env)
	top := exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--show-toplevel")
	top.Env = env
	out, err := floorOutput(floor, top)
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
	out, err = floorOutput(floor, ls)
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

// copier makes one working copy. It reads the checkout and writes the copy
// through directory descriptors, one name at a time, never following a
// link on the way (openat with O_NOFOLLOW at every level): a directory that
// a running command swaps for a link (to ~/.ssh, say) while the copy is
// made is not followed, whether on the checkout's side or the copy's.
type copier struct {
	ctx      context.Context
	src, dst string
	real     string // src with its links resolved (src where that failed)
	w        *WorkDir
	skip     func(rel string) bool
	dirs     map[string]bool // source directory (rel) → it is a real directory, made in the copy
	walked   map[string]bool // directories copied whole: what is listed under them is already there
	// at are the directories copyListed is in, from the root down: each
	// one below the root opened from the one above.
	at []level
}

// A level is one directory of the checkout, opened as a path (O_PATH: its
// search permission is enough), and the same directory in the copy.
type level struct {
	rel      string
	src, dst int
}

// root opens the checkout (named through a link, perhaps) and the copy:
// the first level.
func (c *copier) root() error {
	src, err := unix.Open(c.src, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: opening the checkout %s: %w", c.src, err)
	}
	dst, err := unix.Open(c.dst, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(src)
		return fmt.Errorf("sandbox: opening the working copy %s: %w", c.dst, err)
	}
	c.at = []level{{rel: ".", src: src, dst: dst}}
	return nil
}

// close closes the levels' descriptors, the root's too.
func (c *copier) close() {
	for _, l := range c.at {
		unix.Close(l.src)
		unix.Close(l.dst)
	}
	c.at = nil
}

// copyListed copies git's listing.
func (c *copier) copyListed(listed []string) error {
	for _, rel := range listed {
		if err := c.ctx.Err(); err != nil {
			return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
		}
		ok, err := c.enter(path.Dir(rel))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		top, name := c.at[len(c.at)-1], path.Base(rel)
		var st unix.Stat_t
		err = unix.Fstatat(top.src, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, fs.ErrNotExist) {
			continue // tracked, deleted in the work tree
		}
		if errors.Is(err, fs.ErrPermission) {
			c.unreadable(rel)
			continue
		}
		if err != nil {
			return fmt.Errorf("sandbox: copying %s: %w", c.src, &os.PathError{Op: "lstat", Path: filepath.Join(c.src, rel), Err: err})
		}
		if c.excluded(rel) {
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			c.walked[rel] = true
			if err := c.dir(top.src, top.dst, name, rel, true); err != nil {
				return err
			}
			continue
		}
		// Not a directory in the copy, whatever it is when a path under it
		// comes (a link that has become a directory since).
		c.dirs[rel] = false
		if err := c.entry(top.src, top.dst, name, rel, modeOf(st.Mode)); err != nil {
			return err
		}
	}
	return nil
}

// modeOf is the fs.FileMode of a stat's st_mode (the type and permission
// bits).
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFREG:
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	default:
		mode |= fs.ModeDevice
	}
	return mode
}

// under reports whether the slash path rel is dir or below it.
func under(rel, dir string) bool {
	return dir == "." || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// enter makes the source directory rel the one copyListed is in, and
// reports whether it is a real directory (itself and every directory above
// it, none a link, none copied whole already, none excluded), making it in
// the copy if so.
func (c *copier) enter(rel string) (bool, error) {
	for len(c.at) > 1 && !under(rel, c.at[len(c.at)-1].rel) {
		l := c.at[len(c.at)-1]
		unix.Close(l.src)
		unix.Close(l.dst)
		c.at = c.at[:len(c.at)-1]
	}
	for {
		top := c.at[len(c.at)-1]
		if top.rel == rel {
			return true, nil
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(rel, top.rel+"/"), "/")
		if top.rel == "." {
			name, _, _ = strings.Cut(rel, "/")
		}
		sub := path.Join(top.rel, name)
		ok, seen := c.dirs[sub]
		if seen && !ok {
			return false, nil
		}
		if !seen && (c.walked[sub] || c.excluded(sub)) {
			c.dirs[sub] = false
			return false, nil
		}
		src, err := openSource(top.src, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		if err != nil { // gone, a link or not a directory (any more)
			c.dirs[sub] = false
			return false, nil
		}
		var st unix.Stat_t
		if err := unix.Fstat(src, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(src)
			c.dirs[sub] = false
			return false, nil
		}
		var dst int
		if seen { // made already, left since
			dst, err = unix.Openat(top.dst, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				err = fmt.Errorf("sandbox: opening %s in the working copy: %w", sub, err)
			}
		} else {
			dst, err = c.mkdir(top.dst, name, sub, modeOf(st.Mode))
		}
		if err != nil {
			unix.Close(src)
			return false, err
		}
		c.dirs[sub] = true
		c.at = append(c.at, level{rel: sub, src: src, dst: dst})
	}
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

// openSource opens the entry name of the checkout's directory dir (a
// descriptor) to copy it; a test replaces it to see what a refused open
// does.
var openSource = func(dir int, name string, flag int) (int, error) {
	return unix.Openat(dir, name, flag|unix.O_CLOEXEC, 0)
}

// excluded asks skip about rel, counting a yes.
func (c *copier) excluded(rel string) bool {
	if c.skip != nil && c.skip(rel) {
		c.w.Excluded++
		return true
	}
	return false
}

// dir copies the directory name of the checkout's directory src, rel from
// the checkout's root, into the copy's directory dst, leaving out the
// entries named .git when noGit. A directory that has become a link or
// something else since it was seen is left out, not followed; one that
// cannot be opened for want of permission is left empty.
func (c *copier) dir(src, dst int, name, rel string, noGit bool) error {
	from := filepath.Join(c.src, rel)
	s, err := openSource(src, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var st unix.Stat_t
	if err == nil {
		if serr := unix.Fstat(s, &st); serr != nil {
			unix.Close(s)
			return fmt.Errorf("sandbox: copying %s: %w", from, serr)
		}
	} else if serr := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		st.Mode = unix.S_IFDIR | 0o700 // the mode of a directory it cannot open
	}
	mode := modeOf(st.Mode)
	d, merr := c.mkdir(dst, name, rel, mode)
	if merr != nil {
		if err == nil {
			unix.Close(s)
		}
		return merr
	}
	defer unix.Close(d)
	if errors.Is(err, fs.ErrPermission) {
		c.unreadable(rel)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: copying %s: %w", c.src, &os.PathError{Op: "open", Path: from, Err: err})
	}
	return c.walk(os.NewFile(uintptr(s), from), d, rel, noGit)
}

// walk copies the entries of the source directory rel, opened for reading
// as f (which it closes), into the copy's directory dst, leaving out those
// named .git when noGit.
func (c *copier) walk(f *os.File, dst int, rel string, noGit bool) error {
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("sandbox: copying %s: %w", c.src, err)
	}
	src := int(f.Fd())
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
			if err := c.dir(src, dst, e.Name(), sub, noGit); err != nil {
				return err
			}
			continue
		}
		if err := c.entry(src, dst, e.Name(), sub, e.Type()); err != nil {
			return err
		}
	}
	return nil
}

// entry copies one non-directory, name in the checkout's directory src (rel
// from its root), into the copy's directory dst: a regular file, a link, or
// counts another type as skipped.
func (c *copier) entry(src, dst int, name, rel string, mode fs.FileMode) error {
	switch {
	case mode.IsRegular():
		return c.file(src, dst, name, rel)
	case mode&fs.ModeSymlink != 0:
		target, err := readlinkAt(src, name)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, fs.ErrNotExist) {
			return nil // not a link any more, or gone: left out
		}
		if err != nil {
			return fmt.Errorf("sandbox: copying the link %s: %w", filepath.Join(c.src, rel), err)
		}
		if err := unix.Symlinkat(c.linkTarget(rel, target), dst, name); err != nil {
			return fmt.Errorf("sandbox: recreating the link %s in the working copy: %w", rel, err)
		}
		c.w.Links++
	default:
		c.w.Skipped++
	}
	return nil
}

// readlinkAt is the target of the link name in the directory dir.
func readlinkAt(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
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

// file copies the regular file name of the checkout's directory src (rel
// from its root) into the copy's directory dst, cloning it where the file
// system can. It is opened without following a link and without blocking
// (in case it was swapped for a FIFO), and copied only if it is still a
// regular file.
func (c *copier) file(src, dst int, name, rel string) error {
	from := filepath.Join(c.src, rel)
	sfd, err := openSource(src, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, fs.ErrNotExist) {
			return nil // became a link since it was listed (not followed), or gone
		}
		if errors.Is(err, fs.ErrPermission) {
			c.unreadable(rel)
			return nil
		}
		return fmt.Errorf("sandbox: copying %s: %w", c.src, &os.PathError{Op: "open", Path: from, Err: err})
	}
	s := os.NewFile(uintptr(sfd), from)
	defer s.Close()
	fi, err := s.Stat()
	if err != nil {
		return fmt.Errorf("sandbox: copying %s: %w", from, err)
	}
	if !fi.Mode().IsRegular() {
		c.w.Skipped++
		return nil
	}
	dfd, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox: copying %s into the working copy: %w", from, err)
	}
	d := os.NewFile(uintptr(dfd), filepath.Join(c.dst, rel))
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

// mkdir makes the directory name, rel from the root, in the copy's
// directory dst with its source's permission bits plus u+rwx, and returns
// it opened.
func (c *copier) mkdir(dst int, name, rel string, mode fs.FileMode) (int, error) {
	if err := unix.Mkdirat(dst, name, 0o700); err != nil {
		return -1, fmt.Errorf("sandbox: making %s in the working copy: %w", rel, err)
	}
	d, err := unix.Openat(dst, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("sandbox: opening %s in the working copy: %w", rel, err)
	}
	if perm := uint32(mode.Perm() | 0o700); perm != 0o700 {
		if err := unix.Fchmod(d, perm); err != nil {
			unix.Close(d)
			return -1, fmt.Errorf("sandbox: the mode of %s in the working copy: %w", rel, err)
		}
	}
	return d, nil
}
