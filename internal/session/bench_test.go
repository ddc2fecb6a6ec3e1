package session

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/provider"
)

// BenchmarkTwentyTurns runs a whole session in-process: 20 model turns of
// `shell-exec true` (numbered, so no two are the same call) with the scripted model, then a final reply. It reports
// the loop's own cost per turn (overhead-µs/turn: everything but the time
// inside the tool, i.e. Scheme, guard, events, log, state) next to the total.
// "default" is a person's run with the whole confinement (the kernel
// floor with write confinement, the session's namespaces, the egress
// proxy and the direct-connect note); "no-floor" the same run with
// --no-kernel-floor: their tool-µs/turn differ by what the confinement
// costs a command (issue 28: within 0.5 ms).
func BenchmarkTwentyTurns(b *testing.B) {
	b.Run("default", func(b *testing.B) { benchTwentyTurns(b, false, false) })
	b.Run("no-floor", func(b *testing.B) { benchTwentyTurns(b, false, true) })
	b.Run("sandbox", func(b *testing.B) { benchTwentyTurns(b, true, false) })
}

func benchTwentyTurns(b *testing.B, sandbox, noFloor bool) {
	var sb strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&sb, "> reply\ncall shell-exec {\"command\": \"true #%d\"}\n", i) // numbered, or the progress guard stops the run
	}
	sb.WriteString("> reply\ndone\n")
	text := sb.String()
	folder, dirs, st := benchEnv(b)
	b.ReportAllocs()
	var overhead, tools time.Duration
	for i := 0; i < b.N; i++ {
		model, err := provider.ParseScript("bench", []byte(text))
		if err != nil {
			b.Fatal(err)
		}
		s, err := New(context.Background(), Options{Folder: folder, Instruction: "bench", Dirs: dirs, Store: st, Unattended: true, Sandbox: sandbox, NoKernelFloor: noFloor, Model: model})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		out := s.Run(context.Background())
		total := time.Since(start)
		want := 21
		if sandbox {
			want = 22 // the finish check asks once more
		}
		if out.Status != "finished" || len(model.Requests()) != want {
			b.Fatalf("status %s after %d requests: %s", out.Status, len(model.Requests()), out.Text)
		}
		overhead += total - s.toolTime
		tools += s.toolTime
		if sandbox {
			os.RemoveAll(s.Scratch()) // kept by a sandbox session
		}
		s.Close()
	}
	b.ReportMetric(float64(overhead.Microseconds())/float64(b.N*20), "overhead-µs/turn")
	b.ReportMetric(float64(tools.Microseconds())/float64(b.N*20), "tool-µs/turn")
}

// BenchmarkNewSession is the in-process start-up: scratch directory, the
// Scheme environment with the whole init chain, guard and tools.
func BenchmarkNewSession(b *testing.B) {
	folder, dirs, st := benchEnv(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s, err := New(context.Background(), Options{Folder: folder, Instruction: "x", Dirs: dirs, Store: st, Unattended: true, Model: provider.NewScript(nil)})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

func benchEnv(b *testing.B) (string, configDirs, *storeT) {
	b.Helper()
	root := b.TempDir()
	b.Setenv("HOME", root+"/home")
	b.Setenv("TMPDIR", root)
	b.Setenv("XDG_CONFIG_HOME", root+"/home/.config")
	b.Setenv("XDG_DATA_HOME", root+"/home/.local/share")
	folder := root + "/proj"
	if err := mkdirs(folder, root+"/home"); err != nil {
		b.Fatal(err)
	}
	dirs, st, err := openDirs(root + "/home")
	if err != nil {
		b.Fatal(fmt.Errorf("bench env: %w", err))
	}
	return folder, dirs, st
}
