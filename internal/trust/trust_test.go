package trust

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func statuses(t *testing.T, s *Store, dir string) map[string]Status {
	t.Helper()
	p, err := s.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Status{}
	for _, f := range p.Files {
		out[f.Rel] = f.Status
	}
	return out
}

// The files trust covers are config.toml and every Scheme file under
// .nodwyn (what init.scm loads too); a change, an addition or a removal
// of any of them makes the project untrusted again.
func TestTrustCoversEveryProjectFileAndNoticesChanges(t *testing.T) {
	d := t.TempDir()
	proj := filepath.Join(d, "p")
	write(t, filepath.Join(proj, ".nodwyn", "init.scm"), "(load \"lib/util.scm\")\n")
	write(t, filepath.Join(proj, ".nodwyn", "lib", "util.scm"), "(define x 1)\n")
	write(t, filepath.Join(proj, ".nodwyn", "notes.txt"), "not loaded, not covered")
	storePath := filepath.Join(d, "data", "trust.json")
	s, err := Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{".nodwyn/init.scm": New, ".nodwyn/lib/util.scm": New}
	if got := statuses(t, s, proj); !reflect.DeepEqual(got, want) {
		t.Fatalf("before trust: %v", got)
	}
	p, _ := s.Check(proj)
	if err := s.Trust(p); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(storePath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v", fi.Mode())
	}
	s, _ = Open(storePath)
	if p, _ := s.Check(proj); len(p.Untrusted()) != 0 {
		t.Fatalf("after trust: %v", statuses(t, s, proj))
	}
	if got := string(p.Scheme()["lib/util.scm"]); got != "(define x 1)\n" {
		t.Fatalf("Scheme() = %q", got)
	}

	write(t, filepath.Join(proj, ".nodwyn", "lib", "util.scm"), "(define x 2)\n")
	write(t, filepath.Join(proj, ".nodwyn", "config.toml"), "[loop]\nprofile = \"full\"\n")
	os.Remove(filepath.Join(proj, ".nodwyn", "init.scm"))
	want = map[string]Status{".nodwyn/init.scm": Removed, ".nodwyn/lib/util.scm": Changed, ".nodwyn/config.toml": New}
	if got := statuses(t, s, proj); !reflect.DeepEqual(got, want) {
		t.Fatalf("after changes: %v", got)
	}
	p, _ = s.Check(proj)
	for _, f := range p.Files {
		if f.Status != Changed {
			continue
		}
		old, ok := s.Previous(f)
		if !ok {
			t.Fatal("no copy of the trusted version")
		}
		if d := Diff(old, f.Data, 10); !reflect.DeepEqual(d, []string{"+ (define x 2)", "- (define x 1)"}) && !reflect.DeepEqual(d, []string{"- (define x 1)", "+ (define x 2)"}) {
			t.Fatalf("diff %q", d)
		}
	}

	if l := s.List(); len(l) != 1 || l[0] != p.Folder {
		t.Fatalf("list %v", l)
	}
	if had, err := s.Revoke(proj); err != nil || !had {
		t.Fatal(had, err)
	}
	s, _ = Open(storePath)
	if len(s.List()) != 0 {
		t.Fatal("revoke did not persist")
	}
}

// Trust records the bytes that were read and shown, not what is on disk
// when the record is written: a file swapped in between stays untrusted.
func TestTrustRecordsWhatWasRead(t *testing.T) {
	d := t.TempDir()
	proj := filepath.Join(d, "p")
	init := filepath.Join(proj, ".nodwyn", "init.scm")
	write(t, init, "(display \"shown\")")
	s, _ := Open(filepath.Join(d, "trust.json"))
	p, _ := s.Check(proj)
	write(t, init, "(display \"swapped\")")
	if err := s.Trust(p); err != nil {
		t.Fatal(err)
	}
	if got := statuses(t, s, proj)[".nodwyn/init.scm"]; got != Changed {
		t.Fatalf("a file swapped after it was read is %v", got)
	}
}

// A symbolic link in .nodwyn (a way to make a trusted name load a file from
// elsewhere) is an error, not followed.
func TestSymlinksInNodwynAreRefused(t *testing.T) {
	d := t.TempDir()
	proj := filepath.Join(d, "p")
	write(t, filepath.Join(d, "elsewhere.scm"), "(display 1)")
	os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755)
	if err := os.Symlink(filepath.Join(d, "elsewhere.scm"), filepath.Join(proj, ".nodwyn", "init.scm")); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(proj); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("err = %v", err)
	}
	// A folder with no .nodwyn has nothing to trust.
	p, err := Read(d)
	if err != nil || len(p.Files) != 0 {
		t.Fatal(p, err)
	}
}

func TestACorruptRecordIsAnErrorNamingIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trust.json")
	write(t, path, "{not json")
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v", err)
	}
}

func TestDiff(t *testing.T) {
	got := Diff([]byte("a\nb\nc\n"), []byte("a\nx\nc\nd\n"), 10)
	want := []string{"- b", "+ x", "+ d"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q", got)
	}
	if got := Diff(nil, []byte("1\n2\n3\n"), 2); len(got) != 3 || !strings.Contains(got[2], "1 more") {
		t.Fatalf("%q", got)
	}
}
