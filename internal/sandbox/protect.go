package sandbox

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Protected keeps the parts of the folder that decide what runs next time
// — the repository's .git/config (core.fsmonitor, core.hooksPath, an alias
// or a filter runs a program at the person's next git command) and
// .git/hooks, and nodwyn's own .nodwyn/ — as they were, outside sandbox
// mode, while commands may write the rest of the folder.
//
// The kernel cannot hold this: Landlock only grants, a grant on the folder
// holds for everything beneath it, and git itself replaces files directly
// in .git (index.lock renamed over index), which is the same right that
// would replace .git/config. So the floor lets commands write the folder,
// and Protected undoes what a command changed there after each command and
// when the session ends: a file changed, removed or added, a directory
// replaced by a link. What was there before the session is put back byte
// for byte; what a command added is removed. A root that did not exist
// when the session began (a repository the model itself made with git
// init) is protected from the first check that sees it.
//
// What it leaves open, said in docs/sandbox.md: a command may still run
// what it wrote there within the same command (it is under the floor
// itself), and a person who runs git in the folder while a command of the
// session runs may meet the change before it is undone.
type Protected struct {
	folder string
	mu     sync.Mutex
	roots  []string
	snap   map[string]protEntry // by absolute path, below and including roots
	seen   map[string]bool      // roots snapshotted
}

type protEntry struct {
	mode  fs.FileMode
	data  []byte // a regular file's bytes
	link  string // a link's target
	stamp protStamp
}

// protStamp is what a change to a file alters: a write, a chmod, a rename
// over it all change its ctime, which a command cannot set back.
type protStamp struct {
	ino, size    int64
	ctime, mtime unix.Timespec
}

// protMaxFile is the largest file Protected keeps to put back; a larger
// one is still watched (a change to it is reported) but not restored.
const protMaxFile = 4 << 20

// Protect starts watching the folder's .git/config, .git/hooks and
// .nodwyn/ (and those of the repository's top level when the folder is
// below it), as they are now.
func Protect(folder string) *Protected {
	p := &Protected{folder: folder, snap: map[string]protEntry{}, seen: map[string]bool{}}
	p.roots = protectedRoots(folder)
	p.mu.Lock()
	for _, r := range p.roots {
		p.snapshot(r)
	}
	p.mu.Unlock()
	return p
}

// protectedRoots are the paths Protect watches for folder.
func protectedRoots(folder string) []string {
	roots := []string{filepath.Join(folder, ".nodwyn")}
	var between []string // the .nodwyn/ of each directory up to the work tree's top
	for dir := folder; ; dir = filepath.Dir(dir) {
		if dir != folder {
			between = append(between, filepath.Join(dir, ".nodwyn"))
		}
		git := filepath.Join(dir, ".git")
		if st, err := os.Lstat(git); err == nil {
			// A project's .nodwyn/ is the nearest one up to here
			// (config.FindProject): each of them is watched.
			roots = append(roots, between...)
			gitDir := git
			if st.Mode().IsRegular() {
				// A worktree or a submodule: .git names the directory.
				if b, err := os.ReadFile(git); err == nil {
					if d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
						d = strings.TrimSpace(d)
						if !filepath.IsAbs(d) {
							d = filepath.Join(dir, d)
						}
						gitDir = filepath.Clean(d)
					}
				}
			}
			roots = append(roots, filepath.Join(gitDir, "config"), filepath.Join(gitDir, "hooks"))
			if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				c = filepath.Clean(c)
				roots = append(roots, filepath.Join(c, "config"), filepath.Join(c, "hooks"))
			}
			break
		}
		if dir == "/" || dir == "." {
			break
		}
	}
	if len(roots) == 1 {
		// No repository yet: one made in the folder is watched once it is.
		roots = append(roots, filepath.Join(folder, ".git", "config"), filepath.Join(folder, ".git", "hooks"))
	}
	sort.Strings(roots)
	return roots
}

// Roots are the watched paths.
func (p *Protected) Roots() []string {
	if p == nil {
		return nil
	}
	return append([]string(nil), p.roots...)
}

// snapshot records root and everything beneath it. p.mu is held.
func (p *Protected) snapshot(root string) {
	if _, err := os.Lstat(root); err != nil {
		return
	}
	p.seen[root] = true
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e, ok := readEntry(path); ok {
			p.snap[path] = e
		}
		return nil
	})
}

// readEntry reads path as Protected keeps it.
func readEntry(path string) (protEntry, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return protEntry{}, false
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return protEntry{}, false
	}
	e := protEntry{mode: fi.Mode(), stamp: stampFrom(&st)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		e.link, _ = os.Readlink(path)
	case fi.Mode().IsRegular() && fi.Size() <= protMaxFile:
		e.data, _ = os.ReadFile(path)
	}
	return e, true
}

func stampFrom(st *unix.Stat_t) protStamp {
	return protStamp{ino: int64(st.Ino), size: st.Size, ctime: st.Ctim, mtime: st.Mtim}
}

// Restore puts back what changed under the watched paths since they were
// snapshotted and removes what was added; it returns the paths it found
// changed (relative to the folder where they are inside it), sorted, and
// what it could not put back.
func (p *Protected) Restore() (changed []string, err error) {
	if p == nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	report := map[string]bool{}
	for _, root := range p.roots {
		if !p.seen[root] {
			p.snapshot(root) // appeared since: watched from now on
			continue
		}
		// What is there now that was not, or is not what it was.
		var added []string
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			old, had := p.snap[path]
			if !had {
				added = append(added, path)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			var st unix.Stat_t
			if unix.Lstat(path, &st) != nil {
				return nil
			}
			fi, _ := os.Lstat(path)
			if fi == nil || fi.Mode().Type() != old.mode.Type() {
				added = append(added, path) // replaced by another kind
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if fi.Mode().IsRegular() && stampFrom(&st) != old.stamp {
				now, _ := os.ReadFile(path)
				if fi.Mode() != old.mode || old.data == nil || !bytes.Equal(now, old.data) {
					report[path] = true
					if old.data == nil && old.mode.IsRegular() && old.stamp.size > protMaxFile {
						errs = append(errs, errors.New(path+" changed and is too large to put back"))
						return nil
					}
					if err := putBack(path, old); err != nil {
						errs = append(errs, err)
					} else if e, ok := readEntry(path); ok {
						p.snap[path] = e
					}
				} else if e, ok := readEntry(path); ok {
					p.snap[path] = e // touched, not changed
				}
			} else if fi.Mode()&fs.ModeSymlink != 0 {
				if l, _ := os.Readlink(path); l != old.link {
					report[path] = true
					if err := putBack(path, old); err != nil {
						errs = append(errs, err)
					}
				}
			} else if fi.Mode().Perm() != old.mode.Perm() {
				report[path] = true
				_ = os.Chmod(path, old.mode.Perm())
			}
			return nil
		})
		for _, a := range added {
			report[a] = true
			if err := os.RemoveAll(a); err != nil {
				errs = append(errs, err)
			}
		}
		// What was there and is gone (or was just removed, being another
		// kind now): put back, parents first.
		var missing []string
		for path := range p.snap {
			if path != root && !within(path, root) {
				continue
			}
			if _, err := os.Lstat(path); err != nil {
				missing = append(missing, path)
			}
		}
		sort.Strings(missing)
		for _, m := range missing {
			report[m] = true
			if err := putBack(m, p.snap[m]); err != nil {
				errs = append(errs, err)
			} else if e, ok := readEntry(m); ok {
				p.snap[m] = e
			}
		}
	}
	for path := range report {
		if rel, err := filepath.Rel(p.folder, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel
		}
		changed = append(changed, path)
	}
	sort.Strings(changed)
	return changed, errors.Join(errs...)
}

// putBack makes path what e says it was: a directory, a link, or a file
// with its bytes and mode (written beside it and renamed over it, so a
// reader never sees half of it).
func putBack(path string, e protEntry) error {
	switch {
	case e.mode.IsDir():
		if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
			_ = os.Remove(path)
		}
		if err := os.Mkdir(path, e.mode.Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return os.Chmod(path, e.mode.Perm())
	case e.mode&fs.ModeSymlink != 0:
		_ = os.RemoveAll(path)
		return os.Symlink(e.link, path)
	case e.mode.IsRegular():
		tmp := path + ".nodwyn-restore"
		_ = os.Remove(tmp)
		if err := os.WriteFile(tmp, e.data, e.mode.Perm()); err != nil {
			return err
		}
		if err := os.Chmod(tmp, e.mode.Perm()); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			_ = os.RemoveAll(path)
		}
		if err := os.Rename(tmp, path); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		return nil
	}
	return nil // a socket or a fifo: nothing to put back
}

// RestoreNote is the line a command's result gets when Restore found
// changed paths: what was undone and why, and how a command does what it
// meant to do without it.
func RestoreNote(changed []string, err error) string {
	if len(changed) == 0 && err == nil {
		return ""
	}
	const max = 5
	shown := changed
	if len(shown) > max {
		shown = shown[:max]
	}
	note := "[nodwyn: outside sandbox mode commands may not change .git/config, .git/hooks or .nodwyn/ (what they hold runs at the person's next git command or nodwyn run); undone: " + strings.Join(shown, ", ")
	if len(changed) > max {
		note += ", and more"
	}
	note += ". For one command's git settings use git -c key=value (git -c user.email=a@b commit …)"
	if err != nil {
		note += "; could not undo all of it: " + err.Error()
	}
	return note + "]"
}
