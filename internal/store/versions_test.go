package store

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edit does what a file tool does: back up, then write.
func edit(t *testing.T, s *Store, session, path, content string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Backup(session, path, old); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, content, 0o644)
}

func TestBackupVersionsRestore(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.go")
	b := filepath.Join(dir, "b.go")
	writeFile(t, a, "one\n", 0o640)
	writeFile(t, b, "bee\n", 0o644)

	edit(t, s, "s1", a, "two\n")
	edit(t, s, "s1", b, "bee 2\n")
	edit(t, s, "s2", a, "three\n")

	vs, err := s.Versions(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].ID != 3 || vs[1].ID != 1 {
		t.Fatalf("Versions(a) = %+v, want ids 3 then 1", vs)
	}
	if vs[0].Session != "s2" || vs[0].Path != a || vs[0].Size != 4 || len(vs[0].SHA) != 64 || vs[0].Time.IsZero() {
		t.Errorf("newest version of a = %+v", vs[0])
	}
	all, err := s.Versions("")
	if err != nil || len(all) != 3 || all[0].ID != 3 || all[2].ID != 1 {
		t.Fatalf("Versions(\"\") = %+v, %v", all, err)
	}

	// Back to the first content: "one".
	if err := s.Restore(vs[1]); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, a); got != "one\n" {
		t.Errorf("after Restore: %q, want one", got)
	}
	fi, _ := os.Stat(a)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("Restore changed the mode to %v", fi.Mode().Perm())
	}
	// What was there ("three") was kept first, so the restore can be undone.
	vs, _ = s.Versions(a)
	if vs[0].Session != "restore" {
		t.Fatalf("newest version after Restore = %+v, want one by restore", vs[0])
	}
	if err := s.Restore(vs[0]); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, a); got != "three\n" {
		t.Errorf("after undoing the restore: %q, want three", got)
	}
	// b was not touched by any of that.
	if got := readString(t, b); got != "bee 2\n" {
		t.Errorf("b = %q", got)
	}
}

func TestVersionsOfARelativePath(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x.txt"), "x", 0o644)
	edit(t, s, "s1", filepath.Join(dir, "x.txt"), "y")
	t.Chdir(dir)
	vs, err := s.Versions("x.txt")
	if err != nil || len(vs) != 1 {
		t.Errorf("Versions(relative) = %+v, %v", vs, err)
	}
}

func TestBackupKeepsEachContentOnce(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	for i := range 5 {
		if err := s.Backup("s1", filepath.Join(dir, "f"+string(rune('a'+i))), []byte("same content")); err != nil {
			t.Fatal(err)
		}
	}
	var blobs int
	filepath.WalkDir(s.blobsDir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			blobs++
			if fi, _ := d.Info(); fi.Mode().Perm() != 0o600 {
				t.Errorf("blob %s mode %v", p, fi.Mode().Perm())
			}
		}
		return nil
	})
	if blobs != 1 {
		t.Errorf("%d blobs for one content, want 1", blobs)
	}
	if vs, _ := s.Versions(""); len(vs) != 5 {
		t.Errorf("%d versions, want 5", len(vs))
	}
}

func TestBackupRefusesARelativePath(t *testing.T) {
	s := openStore(t)
	if err := s.Backup("s1", "rel/path.go", []byte("x")); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("Backup of a relative path = %v", err)
	}
}

func TestBackupAbsentRestoreRemovesTheFile(t *testing.T) {
	s := openStore(t)
	p := filepath.Join(t.TempDir(), "new.go")
	if err := s.BackupAbsent("s1", p); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "created by a tool", 0o644)
	vs, _ := s.Versions(p)
	if len(vs) != 1 || !vs[0].Absent {
		t.Fatalf("Versions = %+v", vs)
	}
	if err := s.Restore(vs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("file still there after restoring its absence: %v", err)
	}
	// The removed content was kept and comes back.
	vs, _ = s.Versions(p)
	if len(vs) != 2 || vs[0].Absent {
		t.Fatalf("Versions = %+v", vs)
	}
	if err := s.Restore(vs[0]); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != "created by a tool" {
		t.Errorf("got %q", got)
	}
}

func TestRestoreRecreatesADeletedFileAndDirectory(t *testing.T) {
	s := openStore(t)
	dir := filepath.Join(t.TempDir(), "pkg")
	os.Mkdir(dir, 0o755)
	p := filepath.Join(dir, "f.go")
	writeFile(t, p, "package f\n", 0o644)
	edit(t, s, "s1", p, "package g\n")
	os.RemoveAll(dir)
	vs, _ := s.Versions(p)
	if err := s.Restore(vs[0]); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != "package f\n" {
		t.Errorf("got %q", got)
	}
}

func TestRestoreRefusesALinkOrDirectory(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	writeFile(t, p, "old", 0o644)
	edit(t, s, "s1", p, "new")
	vs, _ := s.Versions(p)

	target := filepath.Join(dir, "elsewhere")
	writeFile(t, target, "not to be overwritten", 0o644)
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(vs[0]); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Restore onto a link = %v", err)
	}
	if got := readString(t, target); got != "not to be overwritten" {
		t.Errorf("link target changed to %q", got)
	}
	os.Remove(p)
	os.Mkdir(p, 0o755)
	if err := s.Restore(vs[0]); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("Restore onto a directory = %v", err)
	}
}

func TestRestoreRefusesDamagedContent(t *testing.T) {
	s := openStore(t)
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "old", 0o644)
	edit(t, s, "s1", p, "new")
	vs, _ := s.Versions(p)
	if err := os.WriteFile(s.blobPath(vs[0].SHA), []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(vs[0]); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Restore of a damaged blob = %v", err)
	}
	if got := readString(t, p); got != "new" {
		t.Errorf("file changed to %q", got)
	}
}

func TestRestoreOfTheCurrentContentIsANoOp(t *testing.T) {
	s := openStore(t)
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "same", 0o644)
	if err := s.Backup("s1", p, []byte("same")); err != nil {
		t.Fatal(err)
	}
	vs, _ := s.Versions(p)
	if err := s.Restore(vs[0]); err != nil {
		t.Fatal(err)
	}
	if vs2, _ := s.Versions(p); len(vs2) != 1 {
		t.Errorf("a no-op restore kept %d versions", len(vs2))
	}
}

func TestBackupConcurrentNumbersAreUnique(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate Stores on one directory, as separate sessions would be.
			s2 := &Store{Root: s.Root}
			if err := s2.Backup("s", filepath.Join(dir, "f"), []byte{byte(i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	vs, err := s.Versions("")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, v := range vs {
		if seen[v.ID] {
			t.Fatalf("id %d given twice", v.ID)
		}
		seen[v.ID] = true
	}
	if len(vs) != n || !seen[1] || !seen[n] {
		t.Errorf("%d versions with ids %v, want 1..%d", len(vs), seen, n)
	}
}

func TestVersionsToleratesACutLastEntry(t *testing.T) {
	s := openStore(t)
	p := filepath.Join(t.TempDir(), "f")
	if err := s.Backup("s1", p, []byte("a")); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(s.indexPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":2,"sess`)
	f.Close()
	if vs, err := s.Versions(""); err != nil || len(vs) != 1 {
		t.Fatalf("Versions = %+v, %v", vs, err)
	}
	if err := s.Backup("s1", p, []byte("b")); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Versions("")
	if err != nil || len(vs) != 2 || vs[0].ID != 2 {
		t.Fatalf("after a new backup: %+v, %v", vs, err)
	}
}

func TestVersionsOfAnEmptyStore(t *testing.T) {
	s := openStore(t)
	vs, err := s.Versions("")
	if err != nil || len(vs) != 0 {
		t.Errorf("Versions = %v, %v", vs, err)
	}
}
