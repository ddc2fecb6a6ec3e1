package prim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

const raceCanary = "CANARY-fs-race-9b2c-kubeconfig"

// raceSetup makes a folder where the directory a (with a decoy config and
// deep/config) and the link b, to a private directory holding the canary,
// are exchanged again and again (renameat2 RENAME_EXCHANGE), as a command
// left running in the background can, until the test ends. It returns the
// folder, the private directory and how many swaps were made so far.
func raceSetup(t *testing.T) (folder, private string, swaps func() int) {
	t.Helper()
	folder, private = t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(private, "deep"), filepath.Join(folder, "a", "deep")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"config", "deep/config"} {
		os.WriteFile(filepath.Join(private, rel), []byte(raceCanary+"\n"), 0o600)
		os.WriteFile(filepath.Join(folder, "a", rel), []byte("decoy\n"), 0o644)
	}
	if err := os.Symlink(private, filepath.Join(folder, "b")); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(folder, "a"), filepath.Join(folder, "b")
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	var n atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
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
	return folder, private, func() int { return int(n.Load()) }
}

// raceConfigs are the ways the file tools run in the race tests: with the
// kernel floor (alone, and with Deny), with Deny only (the check of where
// an opened file really is), and with neither (the race is real).
func raceConfigs(t *testing.T, private string) []struct {
	name   string
	opts   Options
	mustOK bool // no leak allowed
} {
	deny := func(p string) bool { return p == private || strings.HasPrefix(p, private+"/") }
	cs := []struct {
		name   string
		opts   Options
		mustOK bool
	}{
		{"neither", Options{}, false},
		{"deny", Options{Deny: deny}, true},
	}
	if _, err := sandbox.LandlockABI(); err != nil {
		t.Logf("no kernel floor here: %v", err)
		return cs
	}
	f, err := sandbox.NewFloor([]string{private}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close) // its worker thread ends with it, not 10 s idle later (goleak)
	return append(cs,
		struct {
			name   string
			opts   Options
			mustOK bool
		}{"floor", Options{Floor: f}, true},
		struct {
			name   string
			opts   Options
			mustOK bool
		}{"floor+deny", Options{Floor: f, Deny: deny}, true})
}

// fs-read of a/config while a is exchanged with a link to a private
// directory never returns the private file with the floor (or Deny); without
// either it does.
func TestFsReadRaceWithASwappedDirectory(t *testing.T) {
	folder, private, swaps := raceSetup(t)
	for _, c := range raceConfigs(t, private) {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Folder = folder
			tools := newTools(t, c.opts)
			const calls = 300
			leaked, decoys := 0, 0
			for i := range calls {
				path := "a/config"
				if i%2 == 1 {
					path = "a/deep/config"
				}
				res := run(t, tools, "fs-read", map[string]any{"path": path})
				switch {
				case strings.Contains(res.Output, raceCanary):
					leaked++
				case strings.Contains(res.Output, "decoy"):
					decoys++
				}
			}
			t.Logf("%d fs-read calls, %d swaps: %d read the decoy, %d the private file", calls, swaps(), decoys, leaked)
			if c.mustOK && leaked > 0 {
				t.Errorf("fs-read returned the private file in %d of %d calls", leaked, calls)
			}
		})
	}
}

// index-grep over the folder while a is exchanged with a link to a private
// directory never shows the private file's lines with the floor (or Deny).
func TestIndexGrepRaceWithASwappedDirectory(t *testing.T) {
	folder, private, swaps := raceSetup(t)
	for _, c := range raceConfigs(t, private) {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Folder = folder
			tools := newTools(t, c.opts)
			const calls = 300
			leaked := 0
			for range calls {
				res := run(t, tools, "index-grep", map[string]any{"pattern": "CANARY|decoy"})
				if strings.Contains(res.Output, raceCanary) {
					leaked++
				}
			}
			t.Logf("%d index-grep calls, %d swaps: %d showed the private file", calls, swaps(), leaked)
			if c.mustOK && leaked > 0 {
				t.Errorf("index-grep showed the private file in %d of %d calls", leaked, calls)
			}
		})
	}
}

// fs-write and fs-edit of a/config while a is exchanged with a link to a
// private directory never change the private file with the floor (or Deny):
// not written, not truncated, no file made beside it.
func TestFsWriteAndEditRaceWithASwappedDirectory(t *testing.T) {
	folder, private, swaps := raceSetup(t)
	for _, c := range raceConfigs(t, private) {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Folder = folder
			tools := newTools(t, c.opts)
			const calls = 300
			changed := 0
			for i := range calls {
				switch i % 3 {
				case 0:
					run(t, tools, "fs-write", map[string]any{"path": "a/config", "content": "decoy\nwritten\n"})
				case 1: // a new file: made in a, never in the private directory
					run(t, tools, "fs-write", map[string]any{"path": fmt.Sprintf("a/new-%s-%d.txt", c.name, i), "content": "new\n"})
				default:
					run(t, tools, "fs-edit", map[string]any{"path": "a/deep/config", "old": "decoy", "new": "decoy edited"})
				}
				for _, rel := range []string{"config", "deep/config"} {
					if b, err := os.ReadFile(filepath.Join(private, rel)); err != nil || string(b) != raceCanary+"\n" {
						changed++
						os.WriteFile(filepath.Join(private, rel), []byte(raceCanary+"\n"), 0o600)
					}
				}
			}
			made, _ := filepath.Glob(filepath.Join(private, "new-*"))
			changed += len(made)
			for _, m := range made {
				os.Remove(m)
			}
			t.Logf("%d fs-write and fs-edit calls, %d swaps: the private files changed %d times", calls, swaps(), changed)
			if c.mustOK && changed > 0 {
				t.Errorf("the private files were changed %d times in %d calls", changed, calls)
			}
		})
	}
}

// With the floor, fs-write still makes a file directly in a directory that
// holds a denied one (the folder is the home directory), where the floor
// lets no file be made, and in a directory it makes there; a denied path
// stays refused.
func TestFsWriteUnderTheFloorInADirectoryHoldingADeniedOne(t *testing.T) {
	if _, err := sandbox.LandlockABI(); err != nil {
		t.Skipf("no kernel floor here: %v", err)
	}
	folder := t.TempDir()
	denied := filepath.Join(folder, ".ssh")
	if err := os.Mkdir(denied, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := sandbox.NewFloor([]string{denied}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	deny := func(p string) bool { return p == denied || strings.HasPrefix(p, denied+"/") }
	tools := newTools(t, Options{Folder: folder, Floor: f, Deny: deny})
	for _, rel := range []string{"new.txt", "sub/new.txt"} {
		mustOK(t, tools, "fs-write", map[string]any{"path": rel, "content": "one\n"})
		mustOK(t, tools, "fs-write", map[string]any{"path": rel, "content": "two\n"})
		if b, err := os.ReadFile(filepath.Join(folder, rel)); err != nil || string(b) != "two\n" {
			t.Errorf("%s: %q, %v", rel, b, err)
		}
	}
	mustFail(t, tools, "fs-write", map[string]any{"path": ".ssh/config", "content": "x\n"}, ".ssh/config")
	if _, err := os.Lstat(filepath.Join(denied, "config")); !os.IsNotExist(err) {
		t.Errorf(".ssh/config was made: %v", err)
	}
}
