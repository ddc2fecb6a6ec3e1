package prim

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("finding a session's processes by their mark reads /proc: Linux only")
	}
}

// readPid waits for a command to have written a pid to a file.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	eventually(t, "the pid file "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// A double-forked setsid daemon leaves the command's process group and
// session and holds none of its pipes; outside sandbox mode Close still
// stops it, found by the session's mark in its environment.
func TestCloseStopsADoubleForkedSetsidDaemon(t *testing.T) {
	t.Parallel()
	needProc(t)
	tools := newTools(t, Options{})
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	shell(t, tools, "setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "+pidFile+"' </dev/null >/dev/null 2>&1 & until [ -s "+pidFile+" ]; do sleep 0.05; done")
	pid := readPid(t, pidFile)
	killAfter(t, pid)
	if !pidAlive(pid) {
		t.Fatalf("the daemon ended with its command")
	}
	tools.Close()
	waitGone(t, pid)
}

// In sandbox mode the same daemon keeps running after Close.
func TestSandboxCloseLeavesADoubleForkedDaemon(t *testing.T) {
	t.Parallel()
	needProc(t)
	tools := newTools(t, Options{Sandbox: true})
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	shell(t, tools, "setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "+pidFile+"' </dev/null >/dev/null 2>&1 & until [ -s "+pidFile+" ]; do sleep 0.05; done")
	pid := readPid(t, pidFile)
	killAfter(t, pid)
	tools.Close()
	if !pidAlive(pid) {
		t.Fatal("sandbox mode: Close stopped the daemon")
	}
	if n := StopMarked(tools.Mark(), tools.host.StopGrace()); n == 0 {
		t.Errorf("StopMarked found nothing with the mark")
	}
	waitGone(t, pid)
	waitDrains(t, tools)
}

// Every program a tool starts has the session's mark, and only that
// session's: another session's mark finds nothing of it.
func TestEveryCommandHasTheSessionsMark(t *testing.T) {
	t.Parallel()
	a, b := newTools(t, Options{}), newTools(t, Options{})
	if a.Mark() == "" || a.Mark() == b.Mark() {
		t.Fatalf("marks %q and %q", a.Mark(), b.Mark())
	}
	res := shell(t, a, "echo $"+MarkEnv)
	if got := strings.TrimSpace(strings.Split(res.Output, "\n")[0]); got != a.Mark() {
		t.Errorf("the command's %s = %q, want %q", MarkEnv, got, a.Mark())
	}
}
