package sandbox

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// copyGit runs git in dir with a config of the test's own (no system or
// user config, a name and address for commits).
func copyGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

// write makes the file rel under dir (and its directories) with content and perm.
func write(t *testing.T, dir, rel, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, at string) {
	t.Helper()
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}

// tree describes everything under dir: rel → "f <perm> <content>",
// "l <target>", "d <perm>" or "o".
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "f " + fi.Mode().Perm().String() + " " + string(b)
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "l " + target
		case fi.IsDir():
			out[rel] = "d " + fi.Mode().Perm().String()
		default:
			out[rel] = "o"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyOf(t *testing.T, checkout string, skip func(string) bool) *WorkDir {
	t.Helper()
	w, err := CopyCheckout(context.Background(), checkout, t.TempDir(), os.Environ(), skip)
	if err != nil {
		t.Fatalf("CopyCheckout(%s): %v", checkout, err)
	}
	t.Cleanup(func() { _ = w.Remove() })
	if !filepath.IsAbs(w.Path) || !strings.HasPrefix(filepath.Base(w.Path), "nodwyn-wc-") {
		t.Errorf("Path %q: want an absolute nodwyn-wc-* directory", w.Path)
	}
	if fi, err := os.Stat(w.Path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the copy's root: %v, %v; want mode 0700", fi, err)
	}
	return w
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// gitCheckout is a work tree with a tracked file, a tracked file in a
// directory, an untracked file, ignored ones, and a tracked file deleted
// in the work tree.
func gitCheckout(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	copyGit(t, repo, "init", "-q")
	write(t, repo, "a.txt", "alpha\n", 0o644)
	write(t, repo, "dir/b.txt", "bee\n", 0o644)
	write(t, repo, "gone.txt", "deleted later\n", 0o644)
	write(t, repo, ".gitignore", "ignored.txt\nbuild/\n", 0o644)
	copyGit(t, repo, "add", "-A")
	copyGit(t, repo, "commit", "-qm", "first")
	if err := os.Remove(filepath.Join(repo, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, repo, "new.txt", "untracked\n", 0o644)
	write(t, repo, "dir/new2.txt", "untracked too\n", 0o644)
	write(t, repo, "ignored.txt", "ignored\n", 0o644)
	write(t, repo, "build/out.o", "object\n", 0o644)
	write(t, repo, "dir/ignored.txt", "ignored too\n", 0o644)
	return repo
}

// In a work tree the copy holds the tracked and the untracked-but-not-
// ignored files: not the ignored ones, not a tracked file deleted in the
// work tree, not .git.
func TestCopyCheckoutTakesWhatGitLists(t *testing.T) {
	repo := gitCheckout(t)
	w := copyOf(t, repo, nil)
	sameTree(t, "the copy", tree(t, w.Path), map[string]string{
		".gitignore":   "f -rw-r--r-- ignored.txt\nbuild/\n",
		"a.txt":        "f -rw-r--r-- alpha\n",
		"dir":          "d -rwxr-xr-x",
		"dir/b.txt":    "f -rw-r--r-- bee\n",
		"dir/new2.txt": "f -rw-r--r-- untracked too\n",
		"new.txt":      "f -rw-r--r-- untracked\n",
	})
	if w.Checkout != repo || w.Files != 5 || w.Links != 0 || w.Bytes != int64(len("ignored.txt\nbuild/\nalpha\nbee\nuntracked too\nuntracked\n")) {
		t.Errorf("counts: %+v", w)
	}
}

// A checkout below the work tree's top copies only what is under it, at
// the copy's root.
func TestCopyCheckoutOfASubdirectory(t *testing.T) {
	repo := gitCheckout(t)
	w := copyOf(t, filepath.Join(repo, "dir")+"/", nil)
	sameTree(t, "the copy of dir", tree(t, w.Path), map[string]string{
		"b.txt":    "f -rw-r--r-- bee\n",
		"new2.txt": "f -rw-r--r-- untracked too\n",
	})
	if w.Checkout != filepath.Join(repo, "dir") {
		t.Errorf("Checkout %q: want it cleaned", w.Checkout)
	}
}

// Outside a work tree the whole folder is copied, hidden files and empty
// directories included; where git is not installed a work tree is too.
func TestCopyCheckoutWholeFolder(t *testing.T) {
	plain := t.TempDir()
	write(t, plain, "a.txt", "alpha\n", 0o644)
	write(t, plain, ".hidden", "h\n", 0o600)
	write(t, plain, ".gitignore", "a.txt\n", 0o644)
	write(t, plain, "sub/deep/x", "x\n", 0o644)
	if err := os.Mkdir(filepath.Join(plain, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := copyOf(t, plain, nil)
	sameTree(t, "the copy of a plain folder", tree(t, w.Path), tree(t, plain))
	if w.Files != 4 {
		t.Errorf("Files %d, want 4", w.Files)
	}

	repo := gitCheckout(t)
	t.Setenv("PATH", t.TempDir()) // no git
	w = copyOf(t, repo, nil)
	want := tree(t, repo)
	sameTree(t, "the copy of a work tree without git", tree(t, w.Path), want)
	if _, ok := want[".git/HEAD"]; !ok {
		t.Errorf("no .git/HEAD in the work tree: %v", slices.Sorted(maps.Keys(want)))
	}
}

// Links are recreated with the same target and never followed: not a link
// to a file or a directory out of the folder, not a dangling one, and not
// a directory that git lists a tracked file under but that has become a
// link since.
func TestCopyCheckoutNeverFollowsLinks(t *testing.T) {
	const canary = "CANARY-7f3a-private-key"
	home := t.TempDir()
	write(t, home, "id_ed25519", canary, 0o600)
	write(t, home, "ssh/f.txt", canary, 0o600)

	for _, git := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "git"}[git]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.txt", "alpha\n", 0o644)
			write(t, dir, "sub/f.txt", "tracked\n", 0o644)
			link(t, filepath.Join(home, "id_ed25519"), filepath.Join(dir, "key"))
			link(t, filepath.Join(home, "ssh"), filepath.Join(dir, "dotssh"))
			link(t, "nowhere/missing", filepath.Join(dir, "dangling"))
			link(t, "a.txt", filepath.Join(dir, "rel"))
			if git {
				copyGit(t, dir, "init", "-q")
				copyGit(t, dir, "add", "-A")
				copyGit(t, dir, "commit", "-qm", "first")
			}
			// sub/ becomes a link to the private directory: git still
			// lists the tracked sub/f.txt.
			if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			link(t, filepath.Join(home, "ssh"), filepath.Join(dir, "sub"))

			w := copyOf(t, dir, nil)
			got := tree(t, w.Path)
			sameTree(t, "the copy", got, map[string]string{
				"a.txt":    "f -rw-r--r-- alpha\n",
				"key":      "l " + filepath.Join(home, "id_ed25519"),
				"dotssh":   "l " + filepath.Join(home, "ssh"),
				"dangling": "l nowhere/missing",
				"rel":      "l a.txt",
				"sub":      "l " + filepath.Join(home, "ssh"),
			})
			for rel, d := range got {
				if strings.HasPrefix(d, "f ") && strings.Contains(d, canary) {
					t.Errorf("the canary's content is in the copy's %s", rel)
				}
			}
			if w.Links != 5 || w.Files != 1 {
				t.Errorf("counts: %+v", w)
			}
		})
	}
}

// A link is resolved lexically from its place in the checkout: a target in
// the checkout is the same place in the copy (an absolute one made relative,
// a relative one kept as written unless it climbs out on the way), a target
// out of it is its absolute path, so what is written through a link to the
// checkout stays in the copy. The same with the checkout named through a link.
func TestCopyCheckoutLinksIntoTheCheckoutStayInTheCopy(t *testing.T) {
	for _, git := range []bool{false, true} {
		for _, alias := range []bool{false, true} {
			name := map[bool]string{false: "plain", true: "git"}[git] + map[bool]string{false: "", true: "-alias"}[alias]
			t.Run(name, func(t *testing.T) {
				parent := t.TempDir()
				dir := filepath.Join(parent, "ck")
				write(t, dir, "data/keep.txt", "keep\n", 0o644)
				write(t, dir, "deep/f.txt", "f\n", 0o644)
				link(t, filepath.Join(dir, "data"), filepath.Join(dir, "out"))
				link(t, filepath.Join(dir, "data", "keep.txt"), filepath.Join(dir, "outf"))
				link(t, dir+"/", filepath.Join(dir, "self"))
				link(t, filepath.Join(dir, "data", "keep.txt"), filepath.Join(dir, "deep", "abs"))
				link(t, "../data", filepath.Join(dir, "deep", "up"))
				link(t, "../../x", filepath.Join(dir, "deep", "climb"))
				link(t, "../ck/data", filepath.Join(dir, "reenter"))
				link(t, "../outside", filepath.Join(dir, "sibling"))
				if git {
					copyGit(t, dir, "init", "-q")
					copyGit(t, dir, "add", "-A")
					copyGit(t, dir, "commit", "-qm", "first")
				}
				checkout := dir
				if alias {
					checkout = filepath.Join(t.TempDir(), "alias")
					link(t, dir, checkout)
				}
				w := copyOf(t, checkout, nil)
				got := tree(t, w.Path)
				want := map[string]string{
					"data":          "d -rwxr-xr-x",
					"data/keep.txt": "f -rw-r--r-- keep\n",
					"deep":          "d -rwxr-xr-x",
					"deep/f.txt":    "f -rw-r--r-- f\n",
					"out":           "l data",
					"outf":          "l data/keep.txt",
					"self":          "l .",
					"deep/abs":      "l ../data/keep.txt",
					"deep/up":       "l ../data",
					"deep/climb":    "l " + filepath.Join(parent, "x"),
					"reenter":       "l data",
					"sibling":       "l " + filepath.Join(parent, "outside"),
				}
				if alias {
					// The checkout is named as the alias: a relative link
					// that climbs out resolves from there.
					want["deep/climb"] = "l " + filepath.Join(filepath.Dir(checkout), "x")
					want["sibling"] = "l " + filepath.Join(filepath.Dir(checkout), "outside")
					want["reenter"] = "l " + filepath.Join(filepath.Dir(checkout), "ck", "data")
				}
				sameTree(t, "the copy", got, want)
				if err := os.WriteFile(filepath.Join(w.Path, "out", "keep.txt"), []byte("pwned\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(w.Path, "deep", "abs"), []byte("pwned too\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "data", "keep.txt")); string(b) != "keep\n" {
					t.Errorf("writing through the copy's links changed the checkout's data/keep.txt: %q", b)
				}
				if b, _ := os.ReadFile(filepath.Join(w.Path, "data", "keep.txt")); string(b) != "pwned too\n" {
					t.Errorf("the copy's data/keep.txt: %q", b)
				}
			})
		}
	}
}

// A FIFO neither blocks the copy nor is copied; it is counted.
func TestCopyCheckoutSkipsFIFOs(t *testing.T) {
	for _, git := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "git"}[git]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.txt", "alpha\n", 0o644)
			if git {
				copyGit(t, dir, "init", "-q")
			}
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			type result struct {
				w   *WorkDir
				err error
			}
			done := make(chan result, 1)
			go func() {
				w, err := CopyCheckout(context.Background(), dir, t.TempDir(), os.Environ(), nil)
				done <- result{w, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute): // a safety bound: opening the FIFO would block for ever
				// Unblock the copy (a writer opens the FIFO) so the test can end.
				if f, err := os.OpenFile(filepath.Join(dir, "pipe"), os.O_WRONLY, 0); err == nil {
					f.Close()
				}
				t.Fatal("CopyCheckout blocked on a FIFO")
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.w.Remove()
			if _, err := os.Lstat(filepath.Join(r.w.Path, "pipe")); !os.IsNotExist(err) {
				t.Errorf("the FIFO is in the copy: %v", err)
			}
			if !git && r.w.Skipped != 1 {
				t.Errorf("Skipped %d, want 1", r.w.Skipped)
			}
			if r.w.Files != 1 {
				t.Errorf("Files %d, want 1", r.w.Files)
			}
		})
	}
}

// Permission bits are kept, the exec bits exactly; a directory keeps its
// source's bits; the copy of a plain folder hashes as the folder does.
func TestCopyCheckoutKeepsModes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, dir, "owner-only", "o\n", 0o700)
	write(t, dir, "group.txt", "g\n", 0o640)
	write(t, dir, "readonly.txt", "r\n", 0o444)
	write(t, dir, "bin/tool", "t\n", 0o711)
	if err := os.Chmod(filepath.Join(dir, "bin"), 0o750); err != nil {
		t.Fatal(err)
	}
	w := copyOf(t, dir, nil)
	sameTree(t, "the copy", tree(t, w.Path), tree(t, dir))
	out, err := exec.Command(filepath.Join(w.Path, "run.sh")).Output()
	if err != nil || string(out) != "hi\n" {
		t.Errorf("run.sh in the copy: %q, %v", out, err)
	}
	h1, err1 := HashDir(dir)
	h2, err2 := HashDir(w.Path)
	if err1 != nil || err2 != nil || h1 != h2 {
		t.Errorf("hash of the folder %s (%v), of its copy %s (%v)", h1, err1, h2, err2)
	}
}

// A directory without u+rwx in the source is u+rwx in the copy, with its
// other bits kept.
func TestCopyCheckoutGivesDirectoriesUserRWX(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ro/f", "f\n", 0o644)
	if err := os.Chmod(filepath.Join(dir, "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "ro"), 0o755) })
	w := copyOf(t, dir, nil)
	if d := tree(t, w.Path)["ro"]; d != "d -rwxr-xr-x" {
		t.Errorf("ro in the copy: %q, want d -rwxr-xr-x", d)
	}
}

// skip leaves out what it is true for: a file, and a directory with all it
// holds, in either kind of checkout.
func TestCopyCheckoutLeavesOutWhatSkipSays(t *testing.T) {
	for _, git := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "git"}[git]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.txt", "alpha\n", 0o644)
			write(t, dir, "secret.env", "X=1\n", 0o600)
			write(t, dir, "private/deep/p.txt", "p\n", 0o644)
			write(t, dir, "keep/secret.env", "kept: not the top one\n", 0o644)
			if git {
				copyGit(t, dir, "init", "-q")
				copyGit(t, dir, "add", "-A")
				copyGit(t, dir, "commit", "-qm", "first")
			}
			var asked []string
			w := copyOf(t, dir, func(rel string) bool {
				asked = append(asked, rel)
				return rel == "secret.env" || rel == "private"
			})
			sameTree(t, "the copy", tree(t, w.Path), map[string]string{
				"a.txt":           "f -rw-r--r-- alpha\n",
				"keep":            "d -rwxr-xr-x",
				"keep/secret.env": "f -rw-r--r-- kept: not the top one\n",
			})
			if w.Excluded != 2 {
				t.Errorf("Excluded %d, want 2 (asked %q)", w.Excluded, asked)
			}
			if slices.Contains(asked, "private/deep") || slices.Contains(asked, "private/deep/p.txt") {
				t.Errorf("skip asked about what is under a left-out directory: %q", asked)
			}
		})
	}
}

// A submodule (a gitlink) is copied by walking its directory, without its
// .git.
func TestCopyCheckoutCopiesASubmodulesFiles(t *testing.T) {
	repo := t.TempDir()
	copyGit(t, repo, "init", "-q")
	write(t, repo, "top.txt", "top\n", 0o644)
	lib := filepath.Join(repo, "lib")
	write(t, lib, "lib.go", "package lib\n", 0o644)
	write(t, lib, "inner/x.txt", "x\n", 0o644)
	copyGit(t, lib, "init", "-q")
	copyGit(t, lib, "add", "-A")
	copyGit(t, lib, "commit", "-qm", "lib")
	copyGit(t, repo, "add", "-A") // lib becomes a gitlink
	copyGit(t, repo, "commit", "-qm", "top")
	w := copyOf(t, repo, nil)
	sameTree(t, "the copy", tree(t, w.Path), map[string]string{
		"top.txt":         "f -rw-r--r-- top\n",
		"lib":             "d -rwxr-xr-x",
		"lib/lib.go":      "f -rw-r--r-- package lib\n",
		"lib/inner":       "d -rwxr-xr-x",
		"lib/inner/x.txt": "f -rw-r--r-- x\n",
	})
}

// What is written, deleted or chmod-ed in the copy leaves the checkout as
// it was, cloned files included.
func TestWritingInTheCopyLeavesTheCheckout(t *testing.T) {
	repo := gitCheckout(t)
	before, err := HashDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	w := copyOf(t, repo, nil)
	write(t, w.Path, "a.txt", "changed\n", 0o644)
	f, err := os.OpenFile(filepath.Join(w.Path, "dir/b.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("appended\n")
	f.Close()
	for _, err := range []error{
		os.Remove(filepath.Join(w.Path, "new.txt")),
		os.Chmod(filepath.Join(w.Path, ".gitignore"), 0o755),
		os.WriteFile(filepath.Join(w.Path, "made.txt"), []byte("new\n"), 0o644),
		os.Mkdir(filepath.Join(w.Path, "made"), 0o755),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	after, err := HashDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the checkout's hash changed: %s → %s", before, after)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\n" {
		t.Errorf("a.txt in the checkout: %q", b)
	}
}

// Remove deletes a copy whose directories the command made read-only,
// and is safe twice; it changes nothing a link in the copy points at; a
// WorkDir that is the checkout itself is never removed.
func TestRemove(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "keep.txt", "keep\n", 0o444)
	if err := os.Chmod(outside, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(outside, 0o755) })

	dir := t.TempDir()
	write(t, dir, "a.txt", "alpha\n", 0o644)
	w := copyOf(t, dir, nil)
	write(t, w.Path, "ro/deeper/f", "f\n", 0o444)
	link(t, outside, filepath.Join(w.Path, "ro", "out"))
	for _, d := range []string{"ro/deeper", "ro", "."} {
		if err := os.Chmod(filepath.Join(w.Path, d), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Lstat(w.Path); !os.IsNotExist(err) {
		t.Errorf("the copy is still there: %v", err)
	}
	if err := w.Remove(); err != nil {
		t.Errorf("the second Remove: %v", err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("the directory a link pointed at: %v, %v; want it unchanged (0555)", fi, err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep.txt")); err != nil || string(b) != "keep\n" {
		t.Errorf("keep.txt out of the copy: %q, %v", b, err)
	}

	inPlace := &WorkDir{Path: dir, Checkout: dir, inPlace: true}
	if err := inPlace.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Errorf("Remove of the checkout itself removed it: %v", err)
	}
	var none *WorkDir
	if err := none.Remove(); err != nil {
		t.Errorf("Remove of a nil WorkDir: %v", err)
	}
}

// A checkout that is not a directory, and a cancelled context, are errors
// that leave no copy behind.
func TestCopyCheckoutErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "file", "f\n", 0o644)
	base := t.TempDir()
	if _, err := CopyCheckout(context.Background(), filepath.Join(dir, "file"), base, nil, nil); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file as the checkout: %v", err)
	}
	if _, err := CopyCheckout(context.Background(), filepath.Join(dir, "missing"), base, nil, nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing checkout: %v", err)
	}
	for _, git := range []bool{false, true} {
		if git {
			copyGit(t, dir, "init", "-q")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := CopyCheckout(ctx, dir, base, nil, nil); err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("git %v, cancelled: %v", git, err)
		}
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("left under base: %v", entries)
	}
}

// git runs with the caller's environment minus what would point it at
// another repository.
func TestCopyCheckoutIgnoresGitDirInTheEnvironment(t *testing.T) {
	repo := gitCheckout(t)
	other := t.TempDir()
	copyGit(t, other, "init", "-q")
	env := append(os.Environ(), "GIT_DIR="+filepath.Join(other, ".git"), "GIT_WORK_TREE="+other)
	w, err := CopyCheckout(context.Background(), repo, t.TempDir(), env, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Remove()
	if _, ok := tree(t, w.Path)["ignored.txt"]; ok || w.Files != 5 {
		t.Errorf("the copy was not made from the checkout's own repository: %+v %v", w, slices.Sorted(maps.Keys(tree(t, w.Path))))
	}
}

// refuseOpen makes openSource refuse the paths whose base name is in
// refused with its error, for the test's length.
func refuseOpen(t *testing.T, refused map[string]error) {
	t.Helper()
	orig := openSource
	openSource = func(dir int, name string, flag int) (int, error) {
		if err, ok := refused[name]; ok {
			return -1, err
		}
		return orig(dir, name, flag)
	}
	t.Cleanup(func() { openSource = orig })
}

// A file or directory that cannot be opened for want of permission (a
// root-owned 0600 file, as a user) is left out and named; the rest is
// copied. Root reads everything, so the refusal is injected.
func TestCopyCheckoutLeavesOutWhatItCannotRead(t *testing.T) {
	for _, git := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "git"}[git]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.txt", "alpha\n", 0o644)
			write(t, dir, "secret.txt", "root's\n", 0o600)
			write(t, dir, "sub/other.txt", "root's too\n", 0o600)
			write(t, dir, "sub/b.txt", "bee\n", 0o644)
			write(t, dir, "locked/x.txt", "x\n", 0o644)
			if git {
				copyGit(t, dir, "init", "-q")
			}
			refused := map[string]error{"secret.txt": syscall.EACCES, "other.txt": syscall.EPERM}
			if !git {
				refused["locked"] = syscall.EACCES // walked only without git
			}
			refuseOpen(t, refused)
			w := copyOf(t, dir, nil)
			want := map[string]string{
				"a.txt":     "f -rw-r--r-- alpha\n",
				"sub":       "d -rwxr-xr-x",
				"sub/b.txt": "f -rw-r--r-- bee\n",
				"locked":    "d -rwxr-xr-x",
			}
			wantPaths := []string{"locked", "secret.txt", "sub/other.txt"}
			if git {
				want["locked/x.txt"] = "f -rw-r--r-- x\n"
				wantPaths = wantPaths[1:]
			}
			sameTree(t, "the copy", tree(t, w.Path), want)
			if w.Unreadable != len(wantPaths) || !slices.Equal(w.UnreadablePaths, wantPaths) {
				t.Errorf("Unreadable %d %q, want %q", w.Unreadable, w.UnreadablePaths, wantPaths)
			}
		})
	}
}

// Only a refused open is left out: another error fails the copy, which is
// removed.
func TestCopyCheckoutFailsOnOtherOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "alpha\n", 0o644)
	write(t, dir, "bad.txt", "bad\n", 0o644)
	refuseOpen(t, map[string]error{"bad.txt": syscall.EIO})
	base := t.TempDir()
	w, err := CopyCheckout(context.Background(), dir, base, os.Environ(), nil)
	if err == nil || !strings.Contains(err.Error(), "bad.txt") || !errors.Is(err, syscall.EIO) {
		t.Fatalf("CopyCheckout: %v, %v; want bad.txt's EIO", w, err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("the partial copy is left: %v", ents)
	}
}

// At most a few unreadable paths are named; all are counted.
func TestCopyCheckoutNamesAFewUnreadablePaths(t *testing.T) {
	dir := t.TempDir()
	refused := map[string]error{}
	for i := range 2 * maxUnreadablePaths {
		name := "f" + strconv.Itoa(10+i)
		write(t, dir, name, "x", 0o600)
		refused[name] = syscall.EACCES
	}
	refuseOpen(t, refused)
	w := copyOf(t, dir, nil)
	if w.Unreadable != 2*maxUnreadablePaths || len(w.UnreadablePaths) != maxUnreadablePaths || w.UnreadablePaths[0] != "f10" {
		t.Errorf("Unreadable %d %q", w.Unreadable, w.UnreadablePaths)
	}
}

// exchange swaps the names a and b (renameat2 RENAME_EXCHANGE) again and
// again until the test ends, as a command left running in the background
// can, and returns how many swaps it made so far.
func exchange(t *testing.T, a, b string) func() int {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	var n atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) == nil {
				n.Add(1)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return func() int { return int(n.Load()) }
}

// A directory exchanged again and again with a link to a private directory
// while copies are made is never followed: the private file is never in a
// copy, whichever side of the swap the copier meets.
func TestCopyCheckoutRaceWithALinkSwappedForADirectory(t *testing.T) {
	const canary = "CANARY-race-5d1e-kubeconfig"
	private := t.TempDir()
	write(t, private, "config", canary, 0o600)
	write(t, private, "deep/config", canary, 0o600)
	for _, git := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "git"}[git]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "README", "readme\n", 0o644)
			write(t, dir, "d/config", "decoy\n", 0o644)
			write(t, dir, "d/deep/config", "decoy\n", 0o644)
			link(t, private, filepath.Join(dir, "l"))
			if git {
				copyGit(t, dir, "init", "-q")
				copyGit(t, dir, "add", "-A")
				copyGit(t, dir, "commit", "-qm", "first")
			}
			swaps := exchange(t, filepath.Join(dir, "d"), filepath.Join(dir, "l"))
			base := t.TempDir()
			// The swapping goroutine holds a core for as long as the
			// copies take: make test makes 30, make test-slow 150.
			copies := slowCount(30, 150)
			leaked, decoys, failed := 0, 0, 0
			var firstErr error
			for range copies {
				w, err := CopyCheckout(context.Background(), dir, base, os.Environ(), nil)
				if err != nil { // a race can fail a copy; only a leak fails the test
					if failed++; firstErr == nil {
						firstErr = err
					}
					continue
				}
				got := tree(t, w.Path)
				for _, d := range got {
					if strings.Contains(d, canary) {
						leaked++
						break
					}
				}
				if strings.Contains(got["d/config"], "decoy") || strings.Contains(got["l/config"], "decoy") {
					decoys++
				}
				if err := w.Remove(); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%d copies, %d swaps: %d with the decoy copied, %d with the private file, %d failed (%v)", copies, swaps(), decoys, leaked, failed, firstErr)
			if leaked > 0 {
				t.Errorf("the private file was copied in %d of %d copies", leaked, copies)
			}
		})
	}
}
