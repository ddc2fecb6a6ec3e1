package trust

import (
	"os"
	"path/filepath"
	"testing"
)

func status(t *testing.T, s *Store, dir, rel string) Status {
	t.Helper()
	fs, err := s.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Rel == rel {
			return f.Status
		}
	}
	t.Fatalf("no %s", rel)
	return 0
}

func TestTrustLifecycle(t *testing.T) {
	d := t.TempDir()
	proj := filepath.Join(d, "p")
	os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755)
	init := filepath.Join(proj, ".nodwyn", "init.scm")
	os.WriteFile(init, []byte("(display 1)"), 0o644)
	storePath := filepath.Join(d, "data", "trust.json")
	s, err := Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, proj, ".nodwyn/init.scm"); st != New {
		t.Fatalf("want New, got %v", st)
	}
	if st := status(t, s, proj, ".nodwyn/config.toml"); st != Absent {
		t.Fatalf("want Absent, got %v", st)
	}
	if err := s.Trust(proj); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(storePath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	s, _ = Open(storePath)
	if st := status(t, s, proj, ".nodwyn/init.scm"); st != Trusted {
		t.Fatalf("want Trusted, got %v", st)
	}
	os.WriteFile(init, []byte("(display 2)"), 0o644)
	if st := status(t, s, proj, ".nodwyn/init.scm"); st != Changed {
		t.Fatalf("want Changed, got %v", st)
	}
	if l := s.List(); len(l) != 1 || l[0] != proj {
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
