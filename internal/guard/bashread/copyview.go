package bashread

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A working copy's reading (Options.RunDirs): a command line runs in a
// copy of the checkout under the scratch directory, not in the folder, so
// a relative path that climbs above the copy's root reaches the scratch
// directory, nodwyn's data directory and whatever holds them. The argv
// trigger walks each line once more for every run directory, from it, and
// a refusal of such a reading counts. What the copy holds is read from the
// checkout it copies (the copy keeps the checkout's files and links, link
// targets as written, and leaves .git out), through a copyView.

// copyView maps a working copy's paths to the checkout it copies.
type copyView struct {
	root     string // the copy's root (its stand-in path), clean
	checkout string // the checkout, clean
}

// viewKind says how a path is looked up through a view.
type viewKind int

const (
	viewHost   viewKind = iota // look up the host path returned
	viewRoot                   // the copy's root: a directory of its own
	viewHidden                 // not in the copy (.git): missing
)

// host returns the path to look up on disk for p, which is p itself
// outside the copy.
func (v *copyView) host(p string) (string, viewKind) {
	if v == nil || !Within(p, v.root) {
		return p, viewHost
	}
	rest := p[len(v.root):]
	if rest == "" {
		return v.checkout, viewRoot
	}
	for _, c := range strings.Split(rest, "/") {
		if c == ".git" {
			return "", viewHidden
		}
	}
	return v.checkout + rest, viewHost
}

// back turns a host path found inside the checkout into the copy's path.
func (v *copyView) back(h string) string {
	if v == nil || !Within(h, v.checkout) {
		return h
	}
	return v.root + h[len(v.checkout):]
}

// newCopyView is the view of the run directory dir, which stands in for
// folder: with the checkout known and dir ending in the folder's path
// relative to it, the copy's root is dir without that ending and it copies
// the checkout; otherwise dir stands for the folder alone.
func newCopyView(dir, folder, checkout string) *copyView {
	if checkout != "" && Within(folder, checkout) {
		if rel, err := filepath.Rel(checkout, folder); err == nil {
			if rel == "." {
				return &copyView{root: dir, checkout: checkout}
			}
			if root, ok := strings.CutSuffix(dir, "/"+rel); ok && root != "" {
				return &copyView{root: root, checkout: checkout}
			}
		}
	}
	return &copyView{root: dir, checkout: folder}
}

// readSmall returns the content of the small regular file p as a command
// reading it would get it, through the view; a FIFO, a device or a file
// over the cap is an error, never a wait (fsview.ReadSmallFile).
func (an *Reading) readSmall(p string, max int64) ([]byte, error) {
	h, kind := an.hostPath(p)
	if kind == viewHidden {
		return nil, os.ErrNotExist
	}
	return an.fs.ReadSmallFile(h, max)
}

// stat describes p as a command reaches it (links followed: phys
// resolves them), through the view.
func (an *Reading) stat(p string) (fs.FileInfo, error) {
	h, kind := an.hostPath(an.phys(p))
	if kind == viewHidden {
		return nil, os.ErrNotExist
	}
	return an.fs.Lstat(h)
}

// readDir lists a directory, through the view (without .git in a copy).
func (an *Reading) readDir(p string) ([]fs.DirEntry, error) {
	h, kind := an.hostPath(p)
	if kind == viewHidden {
		return nil, os.ErrNotExist
	}
	ents, err := an.fs.ReadDir(h)
	if an.lstats.view == nil || h == p {
		return ents, err
	}
	kept := ents[:0]
	for _, e := range ents {
		if e.Name() != ".git" {
			kept = append(kept, e)
		}
	}
	return kept, err
}

// hostPath is p's host path through the reading's view.
func (an *Reading) hostPath(p string) (string, viewKind) {
	if an.lstats == nil {
		return p, viewHost
	}
	return an.lstats.view.host(p)
}
