package guard

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/nodwyn/nodwyn/internal/fsview"
	"go.uber.org/goleak"
)

// TestAFIFOInTheFolderIsJudgedAtOnce: a line that reads a FIFO in the
// folder (cat pipe, bash pipe, xargs -a pipe) is judged without opening it
// for a read that would wait for a writer (an open that waited would take
// the whole analysis bound, 10 s here, and end in a confirm: the verdict
// says which), and no goroutine is left behind. How fast it is judged (the
// issue's target: under 10 ms) is BenchmarkAFIFOLine's.
func TestAFIFOInTheFolderIsJudgedAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newTestEnv(t)
	if err := syscall.Mkfifo(filepath.Join(e.Folder, "pipe"), 0o600); err != nil {
		t.Skip("no mkfifo:", err)
	}
	g := e.guard(false)
	for _, line := range []string{"cat pipe", "bash pipe", "source pipe", "xargs -a pipe echo", "cat < pipe", "python3 pipe", "cat pipe/*", "tar czf x.tgz pipe"} {
		g.argv.lastRes = nil
		if d := judge(t, g, line); d.Verdict != Allow {
			t.Errorf("%q: %v (%s)", line, d.Verdict, d.Reason)
		}
	}
}

// TestTheAnalysisReadsThroughItsFileSystem: the listings and the files
// the analysis reads come from ArgvTrigger.FS (here a map).
func TestTheAnalysisReadsThroughItsFileSystem(t *testing.T) {
	e := newTestEnv(t)
	rel := func(p string) string { return strings.TrimPrefix(filepath.Join(e.Folder, p), "/") }
	m := fstest.MapFS{
		rel("run.sh"):   {Data: []byte("cat ~/.ssh/id_rsa\n")},
		rel("ok.sh"):    {Data: []byte("go test ./...\n")},
		rel("k/id_rsa"): {Data: []byte("key")},
		rel("pipe"):     {Mode: fs.ModeNamedPipe},
		rel("keys"):     {Mode: fs.ModeSymlink, Data: []byte(filepath.Join(e.Home, ".ssh"))},
	}
	g := e.guard(false)
	g.argv.FS = fsview.FromFS(m)
	for line, want := range map[string]Verdict{
		"bash run.sh":  Refuse,          // what the map's script runs
		"bash ok.sh":   Allow,           //
		"cat k/*":      SecurityConfirm, // the map's listing: a credential-shaped name
		"cat pipe":     Allow,           // not a regular file: not read
		"bash main.go": Allow,           // on disk, not in the map: nothing to read
		"cat keys/x":   Refuse,          // the map's link into ~/.ssh, resolved through the seam
	} {
		if d := judge(t, g, line); d.Verdict != want {
			t.Errorf("%q: %v (%s), want %v", line, d.Verdict, d.Reason, want)
		}
	}
	// The same lines against the disk, which holds none of it.
	g = e.guard(false)
	for _, line := range []string{"bash run.sh", "cat k/*", "cat keys/x"} {
		if d := judge(t, g, line); d.Verdict != Allow {
			t.Errorf("on disk %q: %v (%s)", line, d.Verdict, d.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(e.Folder, "run.sh")); err == nil {
		t.Fatal("run.sh is on disk")
	}
}

// BenchmarkAFIFOLine: judging lines that read a FIFO in the folder (target:
// well under 10 ms a line; docs/performance.md).
func BenchmarkAFIFOLine(b *testing.B) {
	e := newTestEnv(b)
	if err := syscall.Mkfifo(filepath.Join(e.Folder, "pipe"), 0o600); err != nil {
		b.Skip("no mkfifo:", err)
	}
	g := e.guard(false)
	lines := []string{"cat pipe", "bash pipe", "xargs -a pipe echo", "cat pipe/*"}
	b.ResetTimer()
	for i := range b.N {
		g.argv.lastRes = nil
		if d := g.Check(bg, shell(lines[i%len(lines)])); d.Verdict != Allow {
			b.Fatal(d.Reason)
		}
	}
}
