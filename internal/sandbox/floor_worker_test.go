package sandbox

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Do's kept thread holds the floor as what it was built from changes: a
// denied directory that appears after the thread was restricted is denied
// to the next call (a new build, a new thread), and the caller itself is
// never restricted.
func TestFloorDoHoldsAsTheRulesetChanges(t *testing.T) {
	needFloor(t)
	dir := t.TempDir()
	denied := filepath.Join(dir, "secret")
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := NewFloor([]string{denied}, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) func() error {
		return func() error { _, err := os.ReadFile(p); return err }
	}
	var tids []int
	for range 3 {
		if err := f.Do(func() error { tids = append(tids, unix.Gettid()); return read(file)() }); err != nil {
			t.Fatalf("an ordinary file through Do: %v", err)
		}
	}
	for _, tid := range tids {
		if tid == unix.Gettid() || tid == unix.Getpid() {
			t.Fatal("Do ran on the caller's thread or the main thread")
		}
	}
	// The denied directory appears, with a key in it.
	if err := os.Mkdir(denied, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(denied, "key")
	if err := os.WriteFile(key, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Do(read(key)); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("the key through Do: %v, want permission denied", err)
	}
	if err := f.Do(read(file)); err != nil {
		t.Fatalf("an ordinary file after the rebuild: %v", err)
	}
	if _, err := os.ReadFile(key); err != nil {
		t.Fatalf("the caller is restricted: %v", err)
	}
}

// A call that blocks (a FIFO no one writes yet) does not hold up the
// others: they run on fresh threads, under the floor all the same. The
// ruleset stays as it was throughout (in a quiet place, its stamps
// trusted), so the others find the kept thread busy rather than a new
// build with a new thread.
func TestFloorDoCallsRunAlongsideABlockedOne(t *testing.T) {
	needFloor(t)
	_, dir := quietCanaryHome(t)
	denied := filepath.Join(dir, "secret")
	if err := os.Mkdir(denied, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(denied, "key")
	os.WriteFile(key, []byte("k"), 0o600)
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("a\n"), 0o644)
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := NewFloor([]string{denied}, nil)
	if err != nil {
		t.Fatal(err)
	}
	builds := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.builds }
	f.Do(func() error { return nil })
	f.mu.Lock()
	stamped := slices.Collect(maps.Keys(f.last.stamps))
	f.mu.Unlock()
	untilTrusted(stamped...)
	n := builds()
	blocked := make(chan error, 1)
	go func() {
		blocked <- f.Do(func() error { _, err := os.ReadFile(fifo); return err })
	}()
	// The FIFO's reader is waiting once a writer can open it without
	// waiting (ENXIO until then). The write end stays open: the reader
	// then waits in read, for data and an end only the test gives.
	var w *os.File
	deadline := time.Now().Add(20 * time.Second)
	for {
		w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the call through Do never opened the FIFO")
		}
		select {
		case err := <-blocked:
			t.Fatalf("the call reading the FIFO ended before it was written: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := f.Do(func() error { _, err := os.ReadFile(file); return err }); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			if err := f.Do(func() error { _, err := os.ReadFile(key); return err }); !errors.Is(err, fs.ErrPermission) {
				errs <- errors.New("the key was read, or failed otherwise: " + errString(err))
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("calls waited on the blocked one")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if b := builds() - n; b != 1 {
		t.Logf("%d builds for the calls (a stamped directory changed meanwhile?): they may have had a new thread rather than one of their own", b)
	}
	select {
	case err := <-blocked:
		t.Fatalf("the call reading the FIFO ended before it was written: %v", err)
	default:
	}
	w.Write([]byte("x"))
	w.Close()
	if err := <-blocked; err != nil {
		t.Errorf("the FIFO through Do: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// Close gives back the floor's descriptors (a daemon makes a floor for
// each session), and a floor used after it builds its ruleset anew.
func TestFloorCloseGivesBackItsDescriptors(t *testing.T) {
	needFloor(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("a\n"), 0o644)
	fds := func() int { ents, _ := os.ReadDir("/proc/self/fd"); return len(ents) }
	before := fds()
	for range 5 {
		f, err := NewFloor([]string{filepath.Join(dir, "secret")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Do(func() error { _, err := os.ReadFile(file); return err }); err != nil {
			t.Fatal(err)
		}
		f.Close()
		f.Close() // twice is harmless
		if err := f.Do(func() error { _, err := os.ReadFile(file); return err }); err != nil {
			t.Fatalf("after Close: %v", err)
		}
		f.Close()
	}
	if after := fds(); after > before+1 {
		t.Errorf("%d descriptors open after five floors were closed, %d before", after, before)
	}
	var nilFloor *Floor
	nilFloor.Close()
}
