package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tmpdir points os.TempDir at a new directory for the test.
func tmpdir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	t.Setenv("TMPDIR", d)
	if os.TempDir() != d {
		t.Fatalf("os.TempDir() = %q after setting TMPDIR=%q", os.TempDir(), d)
	}
	return d
}

func TestMakeScratch(t *testing.T) {
	tmp := tmpdir(t)
	dir, err := MakeScratch("20261202-135501-ab12cd")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != tmp {
		t.Errorf("scratch %s is not in the temporary directory %s", dir, tmp)
	}
	if !strings.HasPrefix(filepath.Base(dir), "nodwyn-scratch-20261202-135501-ab12cd-") {
		t.Errorf("scratch name %s", filepath.Base(dir))
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("scratch mode %v, want a directory 0700", fi.Mode())
	}
	// A resumed session gets a new, empty one.
	dir2, err := MakeScratch("20261202-135501-ab12cd")
	if err != nil || dir2 == dir {
		t.Errorf("second MakeScratch = %q, %v; want a different directory", dir2, err)
	}
}

func TestMakeScratchOddSessionID(t *testing.T) {
	tmp := tmpdir(t)
	dir, err := MakeScratch("a/../b c")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), ScratchPrefix+"a_.._b_c-") {
		t.Errorf("scratch = %s", dir)
	}
}

func TestTouchScratch(t *testing.T) {
	tmpdir(t)
	dir, err := MakeScratch("s1")
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(dir, old, old)
	if err := TouchScratch(dir); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if fi.ModTime().Before(time.Now().Add(-time.Hour)) {
		t.Errorf("mtime %v after touch", fi.ModTime())
	}
	if err := TouchScratch(filepath.Join(dir, "missing")); err == nil {
		t.Error("TouchScratch of a missing directory succeeded")
	}
}

// age sets a path's mtime to d before now (without following a link).
func age(t *testing.T, path string, now time.Time, d time.Duration) {
	t.Helper()
	if err := os.Chtimes(path, now.Add(-d), now.Add(-d)); err != nil {
		t.Fatal(err)
	}
}

func TestSweepScratch(t *testing.T) {
	tmp := tmpdir(t)
	data := filepath.Join(t.TempDir(), "data")
	now := time.Now()
	week := ScratchMaxAge

	stale, _ := MakeScratch("stale")
	os.WriteFile(filepath.Join(stale, "repro.py"), []byte("print(1)"), 0o600)
	os.MkdirAll(filepath.Join(stale, "deep", "er"), 0o700)
	age(t, stale, now, week+time.Hour)

	fresh, _ := MakeScratch("fresh")
	age(t, fresh, now, week-time.Hour)

	// A link named like a scratch directory, to an old directory elsewhere:
	// neither the link nor what it points at is removed.
	target := filepath.Join(t.TempDir(), "nodwyn-scratch-target")
	os.Mkdir(target, 0o700)
	os.WriteFile(filepath.Join(target, "keep"), []byte("k"), 0o600)
	age(t, target, now, 30*24*time.Hour)
	link := filepath.Join(tmp, ScratchPrefix+"link-123")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	// An old directory not named like one.
	other := filepath.Join(tmp, "go-build12345")
	os.Mkdir(other, 0o700)
	age(t, other, now, 30*24*time.Hour)

	// An old file named like one.
	file := filepath.Join(tmp, ScratchPrefix+"file")
	os.WriteFile(file, []byte("f"), 0o600)
	age(t, file, now, 30*24*time.Hour)

	// The old place in the data directory, with a session's leftovers.
	oldPlace := filepath.Join(data, "scratch")
	os.MkdirAll(filepath.Join(oldPlace, "nodwyn-scratch-x-1"), 0o700)
	os.WriteFile(filepath.Join(oldPlace, "nodwyn-scratch-x-1", "f"), []byte("x"), 0o600)

	removed, err := SweepScratch(data, now)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{oldPlace, stale}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, gone := range []string{stale, oldPlace} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", gone, err)
		}
	}
	for _, kept := range []string{fresh, link, target, filepath.Join(target, "keep"), other, file, data} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link %s is no longer a link: %v", link, err)
	}

	// The fresh one goes once it too has been left a week.
	removed, err = SweepScratch(data, now.Add(2*time.Hour))
	if err != nil || len(removed) != 1 || removed[0] != fresh {
		t.Errorf("second sweep removed %v, %v; want %s", removed, err, fresh)
	}
}

func TestSweepScratchKeepsAnotherUsersDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make a directory another user owns")
	}
	tmp := tmpdir(t)
	now := time.Now()
	theirs := filepath.Join(tmp, ScratchPrefix+"theirs-1")
	os.Mkdir(theirs, 0o700)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Skipf("chown: %v", err)
	}
	age(t, theirs, now, 30*24*time.Hour)
	ours := filepath.Join(tmp, ScratchPrefix+"ours-1")
	os.Mkdir(ours, 0o700)
	age(t, ours, now, 30*24*time.Hour)

	removed, err := SweepScratch("", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != ours {
		t.Errorf("removed %v, want only %s", removed, ours)
	}
	if _, err := os.Lstat(theirs); err != nil {
		t.Errorf("another user's directory was removed: %v", err)
	}
}

func TestSweepScratchKeepsOldPlaceHoldingTheTemporaryDirectory(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	tmp := filepath.Join(data, "scratch", "tmp")
	os.MkdirAll(tmp, 0o700)
	t.Setenv("TMPDIR", tmp)
	live, err := MakeScratch("live")
	if err != nil {
		t.Fatal(err)
	}
	removed, err := SweepScratch(data, time.Now())
	if err != nil || len(removed) != 0 {
		t.Errorf("SweepScratch removed %v, %v", removed, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live scratch directory under TMPDIR=%s was removed: %v", tmp, err)
	}
}

func TestSweepScratchWithNothingToDo(t *testing.T) {
	tmpdir(t)
	removed, err := SweepScratch(filepath.Join(t.TempDir(), "no-data-yet"), time.Now())
	if err != nil || len(removed) != 0 {
		t.Errorf("SweepScratch = %v, %v", removed, err)
	}
}

func TestRemoveScratchWithReadOnlyDirectories(t *testing.T) {
	tmpdir(t)
	dir, _ := MakeScratch("ro")
	// What `go mod download` leaves: read-only directories with files in them.
	ro := filepath.Join(dir, "pkg", "mod", "example.com@v1.0.0")
	os.MkdirAll(ro, 0o755)
	os.WriteFile(filepath.Join(ro, "go.mod"), []byte("module example.com\n"), 0o444)
	os.Chmod(ro, 0o555)
	os.Chmod(filepath.Dir(ro), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Dir(ro), 0o755); os.Chmod(ro, 0o755) })
	if err := RemoveScratch(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("scratch still there: %v", err)
	}
}
