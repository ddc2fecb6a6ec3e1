package prim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func startBg(t *testing.T, tools *Tools, command string) (id string, pid int) {
	t.Helper()
	res := mustOK(t, tools, "shell-start", map[string]any{"command": command})
	if _, err := fmt.Sscanf(res.Output, "started %s (pid %d)", &id, &pid); err != nil {
		t.Fatalf("shell-start output %q: %v", res.Output, err)
	}
	killAfter(t, pid)
	return id, pid
}

func TestShellStartReadStop(t *testing.T) {
	tools := newTools(t, Options{})
	id, pid := startBg(t, tools, "echo hello; echo oops >&2; exec sleep 30")
	if id != "bg1" {
		t.Errorf("id %q, want bg1", id)
	}
	out := filepath.Join(tools.opts.Scratch, "shell-bg1.out")
	var res Result
	eventually(t, "the output", func() bool {
		res = mustOK(t, tools, "shell-read", map[string]any{"id": "bg1"})
		return strings.Contains(res.Output, "oops")
	})
	if !strings.HasPrefix(res.Output, "hello\noops\n[bg1 is running (pid ") {
		t.Errorf("shell-read: %q", res.Output)
	}
	if got := readFile(t, out); got != "hello\noops\n" {
		t.Errorf("output file %s holds %q", out, got)
	}
	res = mustOK(t, tools, "shell-stop", map[string]any{"id": "bg1"})
	if !strings.Contains(res.Output, "bg1 has ended: killed by signal 15 (SIGTERM), stopped by shell-stop") {
		t.Errorf("shell-stop: %q", res.Output)
	}
	waitGone(t, pid)
	res = mustOK(t, tools, "shell-stop", map[string]any{"id": "bg1"})
	if !strings.Contains(res.Output, "nothing to stop") {
		t.Errorf("second shell-stop: %q", res.Output)
	}
}

func TestShellReadTailAndExitStatus(t *testing.T) {
	tools := newTools(t, Options{})
	startBg(t, tools, "seq 1 50; exit 4")
	var res Result
	eventually(t, "the process to end", func() bool {
		res = mustOK(t, tools, "shell-read", map[string]any{"id": "bg1", "tail": 3})
		return strings.Contains(res.Output, "has ended")
	})
	if !strings.HasSuffix(res.Output, "48\n49\n50\n[bg1 has ended: exit status 4]") || res.ExitCode != 4 {
		t.Errorf("shell-read tail 3: %q (exit %d)", res.Output, res.ExitCode)
	}
	if !strings.Contains(res.Output, "first 132 bytes of output left out") {
		t.Errorf("no note of what the tail left out: %q", res.Output)
	}
}

func TestShellReadNoOutputYet(t *testing.T) {
	tools := newTools(t, Options{})
	startBg(t, tools, "exec sleep 30")
	res := mustOK(t, tools, "shell-read", map[string]any{"id": "bg1"})
	if !strings.HasPrefix(res.Output, "[no output yet]\n[bg1 is running") {
		t.Errorf("%q", res.Output)
	}
}

func TestShellStartUnknownIDs(t *testing.T) {
	tools := newTools(t, Options{})
	mustFail(t, tools, "shell-read", map[string]any{"id": "bg9"}, "nothing was started with shell-start")
	startBg(t, tools, "true")
	mustFail(t, tools, "shell-stop", map[string]any{"id": "bg9"}, `no process "bg9"; the ids are: bg1`)
	mustFail(t, tools, "shell-start", map[string]any{"command": ""}, "empty")
	mustFail(t, tools, "shell-read", map[string]any{"id": "bg1", "tail": 0}, "positive number of lines")
}

// Close stops shell-start processes in every mode, the children they
// started in their group included.
func TestCloseStopsShellStartProcesses(t *testing.T) {
	for _, sandbox := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			tools, err := New(Options{Folder: t.TempDir(), Scratch: t.TempDir(), Sandbox: sandbox})
			if err != nil {
				t.Fatal(err)
			}
			_, pid := startBg(t, tools, "sleep 30 & echo $! > \"$TMPDIR/child\"; wait")
			child := filepath.Join(tools.opts.Scratch, "child")
			eventually(t, "the child's pid", func() bool {
				b, err := os.ReadFile(child)
				return err == nil && strings.HasSuffix(string(b), "\n")
			})
			cpid := firstInt(t, readFile(t, child))
			killAfter(t, cpid)
			tools.Close()
			waitGone(t, pid)
			waitGone(t, cpid)
		})
	}
}

// Without a scratch directory the output goes to a directory of its own,
// removed by Close.
func TestShellStartWithoutScratch(t *testing.T) {
	tools, err := New(Options{Folder: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, tools, "shell-start", map[string]any{"command": "echo hi"})
	_, path, _ := strings.Cut(res.Output, "its output goes to ")
	path, _, _ = strings.Cut(path, "\n")
	eventually(t, "the output", func() bool { return strings.Contains(readFile(t, path), "hi") })
	tools.Close()
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("the output directory %s is left: %v", filepath.Dir(path), err)
	}
}

// A command that puts a link (to a file nodwyn must not show) in place of
// its own output file gets nothing through shell-read: nodwyn reads the
// file it made, or says it was replaced. A link planted where the output
// file will be is not followed as it is made.
func TestShellReadReadsOnlyTheFileItMade(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("SECRET-canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := newTools(t, Options{})
	res := run(t, tools, "shell-start", map[string]any{"command": `f=$(readlink /proc/$$/fd/1); rm "$f"; ln -s ` + secret + ` "$f"; sleep 5`})
	if res.IsError {
		t.Fatal(res.Output)
	}
	out1 := strings.Fields(strings.SplitAfter(res.Output, "its output goes to ")[1])[0]
	eventually(t, "the command to put a link in place of its output file", func() bool {
		fi, err := os.Lstat(out1)
		return err == nil && fi.Mode()&os.ModeSymlink != 0
	})
	out := run(t, tools, "shell-read", map[string]any{"id": "bg1"})
	if strings.Contains(out.Output, "SECRET-canary") || !strings.Contains(out.Output, "was replaced") {
		t.Errorf("shell-read after the output file was swapped for a link: %q", out.Output)
	}
	// The next output file's name, planted as a link beforehand.
	dir := filepath.Dir(out1)
	if err := os.Symlink(secret, filepath.Join(dir, "shell-bg2.out")); err != nil {
		t.Fatal(err)
	}
	res = run(t, tools, "shell-start", map[string]any{"command": `echo mine`})
	if res.IsError {
		t.Fatal(res.Output)
	}
	// Once it has ended, what it wrote is written.
	_, pid, _ := strings.Cut(res.Output, "(pid ")
	pid, _, _ = strings.Cut(pid, ")")
	waitGone(t, firstInt(t, pid))
	if b, _ := os.ReadFile(secret); string(b) != "SECRET-canary\n" {
		t.Errorf("the file the planted link named was written: %q", b)
	}
	if out := run(t, tools, "shell-read", map[string]any{"id": "bg2"}); strings.Contains(out.Output, "SECRET") || !strings.Contains(out.Output, "mine") {
		t.Errorf("shell-read bg2: %q", out.Output)
	}
}
