package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// pidGone waits up to 20 s (a generous bound, polled) for the process whose
// id is in FILE to be gone (a zombie counts as gone): pidgone FILE. With !
// it checks at once that the process is still there.
func pidGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: pidgone FILE")
	}
	var pid int
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
		if err == nil && n > 0 {
			pid = n
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no pid in %s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	alive := func() bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }
	if neg {
		if !alive() {
			ts.Fatalf("process %d is gone", pid)
		}
		return
	}
	for alive() {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			ts.Fatalf("process %d (%s) is still running", pid, cmdline(pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}
