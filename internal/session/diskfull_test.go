//go:build linux

package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nodwyn/nodwyn/internal/store"
)

// tinyDisk mounts a tmpfs of size bytes at a new directory (root only;
// the test is skipped otherwise) and returns it.
func tinyDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs to fill needs root; the disk-full test is skipped")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); the disk-full test is skipped", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes path until the disk it is on is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return
		}
	}
}

// A session whose disk fills while it works ends saying it can be resumed
// once there is room, with the command; and once room is freed, it is
// (issue 29, item 8).
func TestADiskFullSessionResumesOnceThereIsRoom(t *testing.T) {
	disk := tinyDisk(t, "2m")
	opts := baseOpts(t)
	st, err := store.Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store = st
	filler := filepath.Join(disk, "filler")
	filled := false
	opts.Sinks = append(opts.Sinks, func(ev store.Event) {
		if ev.Type == "tool.result" && !filled {
			filled = true
			fill(t, filler)
		}
	})
	// The reply after the fill is longer than the page a log's last write
	// may have left free: writing it needs room the disk no longer has.
	first := newConsole(t, opts, `
> reply
call shell-exec {"command": "echo one-output"}
> reply
`+strings.Repeat("a reply too long for what is left. ", 400)+`
`)
	out := first.s.Continue(context.Background(), "the task")
	first.s.End(out)
	var sf *StorageFailed
	if out.Status != "failed" || !errors.As(out.Err, &sf) || !errors.Is(out.Err, ErrStorage) || !errors.Is(out.Err, syscall.ENOSPC) {
		t.Fatalf("the outcome on a full disk: %+v", out)
	}
	if sf.ID != first.s.ID || sf.Dir != disk || !strings.Contains(sf.Advice("nodwyn run"), "nodwyn run --resume "+first.s.ID) {
		t.Errorf("StorageFailed %+v, advice %q", sf, sf.Advice("nodwyn run"))
	}
	first.s.Close()

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	opts.Sinks = nil
	opts.ResumeID = first.s.ID
	again := newConsole(t, opts, "> reply\nResumed.\n")
	out = again.s.Continue(context.Background(), "go on")
	read := contents(again.model.Requests()[0].Messages)
	if out.Status != "finished" || len(read) != 4 || read[0] != "the task" || !strings.Contains(read[2], "one-output") || read[3] != "go on" {
		t.Fatalf("resumed: %+v; the model read %q", out, read)
	}
}
