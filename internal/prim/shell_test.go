package prim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

func shell(t testing.TB, tools *Tools, command string) Result {
	t.Helper()
	return run(t, tools, "shell-exec", map[string]any{"command": command})
}

// firstInt reads the number on the output's first line (a PID the command echoed).
func firstInt(t testing.TB, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("no number on the first line of %q", out)
	}
	return n
}

func TestShellExecOutputInOrderAndExitStatus(t *testing.T) {
	tools := newTools(t, Options{})
	res := shell(t, tools, "echo one; echo two >&2; echo three; exit 3")
	if res.IsError || res.ExitCode != 3 {
		t.Errorf("IsError=%v ExitCode=%d, want false and 3", res.IsError, res.ExitCode)
	}
	if want := "one\ntwo\nthree\n[exit status 3]"; res.Output != want {
		t.Errorf("output %q, want %q", res.Output, want)
	}
	res = shell(t, tools, "printf 'no newline'")
	if want := "no newline\n[exit status 0]"; res.Output != want || res.ExitCode != 0 {
		t.Errorf("output %q (exit %d), want %q", res.Output, res.ExitCode, want)
	}
	if res := shell(t, tools, "true"); res.Output != "[exit status 0]" {
		t.Errorf("no output: %q", res.Output)
	}
}

func TestShellExecRunsInTheFolder(t *testing.T) {
	tools := newTools(t, Options{})
	writeFile(t, tools.opts.Folder, "marker.txt", "here\n")
	res := shell(t, tools, "pwd; cat marker.txt")
	if !strings.Contains(res.Output, tools.opts.Folder+"\nhere\n") {
		t.Errorf("not run in the folder: %q", res.Output)
	}
}

func TestShellExecReportsASignal(t *testing.T) {
	tools := newTools(t, Options{})
	res := shell(t, tools, "kill -SEGV $$")
	if res.ExitCode != 128+11 || !strings.Contains(res.Output, "[killed by signal 11 (SIGSEGV)]") {
		t.Errorf("exit %d, output %q", res.ExitCode, res.Output)
	}
}

func TestShellExecRefusesAnEmptyCommandAndABadTimeout(t *testing.T) {
	tools := newTools(t, Options{})
	mustFail(t, tools, "shell-exec", map[string]any{"command": "  "}, "empty")
	mustFail(t, tools, "shell-exec", map[string]any{}, `missing argument "command"`)
	mustFail(t, tools, "shell-exec", map[string]any{"command": "true", "timeout": 0.0}, "positive number of seconds")
}

func TestShellExecUsesShWhenAsked(t *testing.T) {
	tools := newTools(t, Options{Shell: "/bin/sh"})
	res := shell(t, tools, "echo $0")
	if !strings.HasPrefix(res.Output, "/bin/sh\n") {
		t.Errorf("output %q, want the shell /bin/sh", res.Output)
	}
}

func TestShellExecCutsLongOutputInTheMiddle(t *testing.T) {
	tools := newTools(t, Options{MaxOutput: 1000})
	res := shell(t, tools, "seq 1 100000")
	if !strings.HasPrefix(res.Output, "1\n2\n3\n") || !strings.HasSuffix(res.Output, "\n99999\n100000\n[exit status 0]") {
		t.Errorf("head or tail lost: %q…%q", res.Output[:20], res.Output[len(res.Output)-40:])
	}
	if !strings.Contains(res.Output, " bytes of output left out ...]") || len(res.Output) > 1200 {
		t.Errorf("not cut (%d bytes): %q", len(res.Output), res.Output)
	}
	// Output under the cap is whole.
	if res := shell(t, tools, "seq 1 100"); strings.Contains(res.Output, "left out") {
		t.Errorf("short output cut: %q", res.Output)
	}
}

// The default (runStopping): a command that leaves a background child
// holding its stdout returns about a second after its own program exits,
// and the child is stopped.
func TestShellExecBackgroundChildHoldingStdoutIsStopped(t *testing.T) {
	t.Parallel()
	for _, command := range []string{
		"sleep 30 & echo $!",
		"nohup sh -c 'sleep 30' & echo $!",
		"(trap '' TERM; sleep 30) & echo $!", // ignores SIGTERM: SIGKILL after the grace
	} {
		t.Run(command, func(t *testing.T) {
			tools := newTools(t, Options{})
			start := time.Now()
			res := shell(t, tools, command)
			took := time.Since(start)
			pid := firstInt(t, res.Output)
			killAfter(t, pid)
			if took > 5*time.Second {
				t.Errorf("returned after %v; the background child held it", took)
			}
			if res.ExitCode != 0 || !strings.HasSuffix(res.Output, "[exit status 0]") {
				t.Errorf("output %q", res.Output)
			}
			waitGone(t, pid)
		})
	}
}

// What a command leaves in its process group without holding the pipe is
// stopped as well.
func TestShellExecStopsTheGroupEvenWhenThePipeIsClosed(t *testing.T) {
	tools := newTools(t, Options{})
	res := shell(t, tools, "sleep 30 >/dev/null 2>&1 & echo $!")
	pid := firstInt(t, res.Output)
	killAfter(t, pid)
	waitGone(t, pid)
}

// A process that left the command's group (setsid) but holds its output
// is not stopped as the call returns, and is stopped by Close.
func TestCloseStopsWhatEscapedTheGroupButHoldsThePipe(t *testing.T) {
	t.Parallel()
	tools, err := New(Options{Folder: t.TempDir(), Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res := shell(t, tools, "setsid sleep 30 & echo $!")
	pid := firstInt(t, res.Output)
	killAfter(t, pid)
	if !pidAlive(pid) {
		t.Fatalf("the setsid child ended with its command")
	}
	tools.Close()
	waitGone(t, pid)
}

// A server started in the background prints its address after the
// command's own program has exited: the address is still in the result.
func TestShellExecKeepsWhatABackgroundServerPrintsFirst(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			tools := newTools(t, Options{Sandbox: sandbox})
			res := shell(t, tools, `(sleep 0.2; echo "listening on 127.0.0.1:8931"; exec sleep 30) & echo $!`)
			pid := firstInt(t, res.Output)
			killAfter(t, pid)
			if !strings.Contains(res.Output, "listening on 127.0.0.1:8931\n") {
				t.Errorf("the address is not in the result: %q", res.Output)
			}
			if sandbox {
				if !pidAlive(pid) {
					t.Error("sandbox mode: the server was stopped")
				}
				killGroupOf(pid)
				waitDrains(t, tools)
			} else {
				waitGone(t, pid)
			}
		})
	}
}

func waitDrains(t testing.TB, tools *Tools) {
	t.Helper()
	if !tools.host.WaitDrains(10 * time.Second) {
		t.Fatal("the pipes' drains did not end after their holders did")
	}
}

func TestShellExecTimeLimitStopsTheCommandInTheFullProfile(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			tools := newTools(t, Options{Sandbox: sandbox})
			res := run(t, tools, "shell-exec", map[string]any{"command": "echo $$; sleep 30", "timeout": 1})
			pgid := firstInt(t, res.Output)
			killAfter(t, pgid)
			if !strings.HasSuffix(res.Output, "[timed out after 1s; the process was stopped]") || res.IsError {
				t.Errorf("output %q, IsError %v", res.Output, res.IsError)
			}
			eventually(t, "the group to end", func() bool { return !groupAlive(pgid) })
		})
	}
}

func TestShellExecTimeLimitLeavesTheCommandRunningInTheLeanProfile(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			tools, err := New(Options{Folder: t.TempDir(), Scratch: t.TempDir(), LeaveRunning: true, Sandbox: sandbox})
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, tools, "shell-exec", map[string]any{"command": "echo $$; sleep 30", "timeout": 1})
			pgid := firstInt(t, res.Output)
			killAfter(t, pgid)
			if !strings.Contains(res.Output, "[timed out after 1s; the command is still running") || res.ExitCode != -1 {
				t.Errorf("output %q, exit %d", res.Output, res.ExitCode)
			}
			if !groupAlive(pgid) {
				t.Fatal("lean: the command was stopped at its time limit")
			}
			tools.Close()
			if groupAlive(pgid) {
				t.Error("Close left the lean command running")
			}
			waitDrains(t, tools)
		})
	}
}

func TestShellExecTimeoutArgumentIsCappedByMaxTimeout(t *testing.T) {
	t.Parallel()
	tools := newTools(t, Options{Timeout: time.Second, MaxTimeout: time.Second})
	res := run(t, tools, "shell-exec", map[string]any{"command": "sleep 30", "timeout": 3600})
	if !strings.Contains(res.Output, "timed out after 1s") {
		t.Errorf("output %q", res.Output)
	}
}

func TestShellExecCancelStopsTheGroup(t *testing.T) {
	for _, sandbox := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			tools := newTools(t, Options{Sandbox: sandbox})
			pidFile := filepath.Join(tools.opts.Scratch, "pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for ctx.Err() == nil {
					if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
						cancel()
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			res, err := tools.Run(ctx, "shell-exec", map[string]any{"command": "sleep 30 & echo $! > \"$TMPDIR/pid\"; wait"})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if !strings.HasSuffix(res.Output, "[cancelled; the process was stopped]") {
				t.Errorf("output %q", res.Output)
			}
			pid := firstInt(t, readFile(t, pidFile))
			killAfter(t, pid)
			waitGone(t, pid)
		})
	}
}

func TestShellExecEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("FOO_TOKEN", "tok")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("MY_SECRET", "sec")
	t.Setenv("LC_PASSWORD", "allow-listed by LC_* but secret-shaped")
	t.Setenv("NOT_ALLOWED", "x")
	t.Setenv("LC_TIME", "C")
	tools := newTools(t, Options{ExtraEnv: []string{"EXTRA=1"}})
	res := shell(t, tools, "env")
	env := map[string]string{}
	for _, line := range strings.Split(res.Output, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	for _, gone := range []string{"FOO_TOKEN", "OPENAI_API_KEY", "MY_SECRET", "LC_PASSWORD", "NOT_ALLOWED"} {
		if _, ok := env[gone]; ok {
			t.Errorf("%s reached the command", gone)
		}
	}
	for _, k := range []string{"PATH", "HOME"} {
		if env[k] != os.Getenv(k) {
			t.Errorf("%s = %q, want %q", k, env[k], os.Getenv(k))
		}
	}
	if env["LC_TIME"] != "C" || env["EXTRA"] != "1" {
		t.Errorf("LC_TIME=%q EXTRA=%q", env["LC_TIME"], env["EXTRA"])
	}
	if env["TMPDIR"] != tools.opts.Scratch {
		t.Errorf("TMPDIR = %q, want the scratch directory %q", env["TMPDIR"], tools.opts.Scratch)
	}
}

func TestShellExecTempFilesGoToTheScratchDirectory(t *testing.T) {
	tools := newTools(t, Options{})
	res := shell(t, tools, "mktemp")
	if !strings.HasPrefix(res.Output, tools.opts.Scratch+"/") {
		t.Errorf("mktemp made %q, not in %s", res.Output, tools.opts.Scratch)
	}
}

func TestShellExecStdinIsEmpty(t *testing.T) {
	tools := newTools(t, Options{})
	res := shell(t, tools, "cat; echo done")
	if res.Output != "done\n[exit status 0]" {
		t.Errorf("output %q", res.Output)
	}
}

// BenchmarkShellExecTrue is shell-exec of `true` without and with the
// kernel floor (denying the credential directories of this machine's home
// and a directory that exists, as a session's denylist does), in one run:
// the difference is the floor's cost per command (target: ≤ 3 ms).
func BenchmarkShellExecTrue(b *testing.B) {
	for _, floor := range []bool{false, true} {
		opts := Options{}
		name := "floor=off"
		if floor {
			if _, err := sandbox.LandlockABI(); err != nil {
				b.Logf("no kernel floor here: %v", err)
				continue
			}
			home, _ := os.UserHomeDir()
			// A denied directory that exists, in a quiet place: under /tmp,
			// whose entries other programs change all the time, every
			// command would find an ancestor changed and build again
			// (BenchmarkFloorBuild is that cost).
			quiet, err := os.MkdirTemp("/var/tmp", "nodwyn-bench-")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(quiet) })
			deny := []string{filepath.Join(quiet, "denied")}
			os.Mkdir(deny[0], 0o700)
			for _, rel := range []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".config/nodwyn", ".local/share/nodwyn"} {
				deny = append(deny, filepath.Join(home, rel))
			}
			f, err := sandbox.NewFloor(deny, nil)
			if err != nil {
				b.Fatal(err)
			}
			opts.Floor, name = f, "floor=on"
		}
		b.Run(name, func(b *testing.B) {
			tools := newTools(b, opts)
			args := map[string]any{"command": "true"}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tools.Run(ctx, "shell-exec", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
