package fsview

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// A FIFO with no writer: an open that waits would wait for ever (it is
// let go when the test ends, by a writer that opens and closes).
func TestReadSmallFileNeverWaitsOnAFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no mkfifo:", err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := ReadSmallFile(p, 1<<10); !errors.Is(err, ErrNotRegular) {
			t.Errorf("a FIFO: %v, want ErrNotRegular", err)
		}
		f, fi, err := OpenRead(p)
		if err != nil {
			t.Error(err)
			return
		}
		f.Close()
		if fi.Mode().IsRegular() {
			t.Error("OpenRead says a FIFO is regular")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO with no writer is waiting for one")
	}
}

func TestReadSmallFileCapsAndFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadSmallFile(filepath.Join(dir, "l"), 5); err != nil || string(b) != "hello" {
		t.Errorf("through a link: %q, %v", b, err)
	}
	if _, err := ReadSmallFile(p, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v, want ErrTooLarge", err)
	}
	if _, err := ReadSmallFile(dir, 4); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v, want ErrNotRegular", err)
	}
}

func TestFromFS(t *testing.T) {
	m := FromFS(fstest.MapFS{
		"a/f":    {Data: []byte("x")},
		"a/link": {Data: []byte("f"), Mode: os.ModeSymlink},
	})
	if b, err := m.ReadSmallFile("/a/f", 10); err != nil || string(b) != "x" {
		t.Errorf("ReadSmallFile: %q, %v", b, err)
	}
	if fi, err := m.Lstat("/a/link"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Lstat: %v, %v", fi, err)
	}
	if tgt, err := m.ReadLink("/a/link"); err != nil || tgt != "f" {
		t.Errorf("ReadLink: %q, %v", tgt, err)
	}
	if ents, err := m.ReadDir("/a"); err != nil || len(ents) != 2 {
		t.Errorf("ReadDir: %v, %v", ents, err)
	}
	if _, err := m.ReadSmallFile("/a", 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
}
