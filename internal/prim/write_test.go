package prim

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// backups records what Backup was given, and what the file held on disk
// at that moment.
type backups struct {
	calls  []string
	onDisk []string
	fail   bool
}

func (b *backups) backup(abs string, old []byte) error {
	disk, _ := os.ReadFile(abs)
	b.calls = append(b.calls, abs+"="+string(old))
	b.onDisk = append(b.onDisk, string(disk))
	if b.fail {
		return errors.New("disk full")
	}
	return nil
}

func TestFsWriteCreatesWithParents(t *testing.T) {
	var bk backups
	tools := newTools(t, Options{Backup: bk.backup})
	res := mustOK(t, tools, "fs-write", map[string]any{"path": "deep/er/new.txt", "content": "one\ntwo\n"})
	abs := filepath.Join(tools.opts.Folder, "deep/er/new.txt")
	if res.Output != "wrote deep/er/new.txt: 8 bytes, 2 lines (created)" || !slices.Equal(res.Changed, []string{abs}) {
		t.Errorf("result %+v", res)
	}
	if got := readFile(t, abs); got != "one\ntwo\n" {
		t.Errorf("file holds %q", got)
	}
	if len(bk.calls) != 0 {
		t.Errorf("Backup called for a new file: %v", bk.calls)
	}
}

func TestFsWriteBacksUpBeforeOverwriting(t *testing.T) {
	var bk backups
	tools := newTools(t, Options{Backup: bk.backup})
	abs := writeFile(t, tools.opts.Folder, "x.sh", "old\n")
	os.Chmod(abs, 0o755)
	res := mustOK(t, tools, "fs-write", map[string]any{"path": "x.sh", "content": "new"})
	if res.Output != "wrote x.sh: 3 bytes, 1 line (replaced its previous 4 bytes, 1 line)" {
		t.Errorf("%q", res.Output)
	}
	if !slices.Equal(bk.calls, []string{abs + "=old\n"}) || !slices.Equal(bk.onDisk, []string{"old\n"}) {
		t.Errorf("Backup calls %q, file then %q", bk.calls, bk.onDisk)
	}
	if fi, _ := os.Stat(abs); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want the file's own 0755", fi.Mode())
	}
	// The same content again: nothing written, nothing backed up.
	res = mustOK(t, tools, "fs-write", map[string]any{"path": "x.sh", "content": "new"})
	if !strings.Contains(res.Output, "nothing written") || len(res.Changed) != 0 || len(bk.calls) != 1 {
		t.Errorf("unchanged write: %+v, backups %v", res, bk.calls)
	}
}

func TestFsWriteStopsWhenBackupFails(t *testing.T) {
	bk := backups{fail: true}
	tools := newTools(t, Options{Backup: bk.backup})
	abs := writeFile(t, tools.opts.Folder, "keep.txt", "precious")
	mustFail(t, tools, "fs-write", map[string]any{"path": "keep.txt", "content": "x"}, "could not keep the previous version of keep.txt", "nothing was written", "disk full")
	if got := readFile(t, abs); got != "precious" {
		t.Errorf("written despite the failed backup: %q", got)
	}
}

func TestFsWriteRefusesADirectory(t *testing.T) {
	tools := newTools(t, Options{})
	os.Mkdir(filepath.Join(tools.opts.Folder, "d"), 0o755)
	mustFail(t, tools, "fs-write", map[string]any{"path": "d", "content": "x"}, "d is a directory")
	mustFail(t, tools, "fs-write", map[string]any{"path": "f"}, `missing argument "content"`)
	// Empty content is a file's content.
	mustOK(t, tools, "fs-write", map[string]any{"path": "empty", "content": ""})
}

// A link is written through: the target gets the content and the link stays.
func TestFsWriteWritesThroughASymlink(t *testing.T) {
	tools := newTools(t, Options{})
	target := filepath.Join(t.TempDir(), "target")
	link := filepath.Join(tools.opts.Folder, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	mustOK(t, tools, "fs-write", map[string]any{"path": "link", "content": "one\n"})
	mustOK(t, tools, "fs-edit", map[string]any{"path": "link", "old": "one", "new": "two"})
	if got := readFile(t, target); got != "two\n" {
		t.Errorf("target %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone: %v %v", fi, err)
	}
}
