package launch

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// Nothing a session started outlives nodwyn outside sandbox mode, whatever
// ends nodwyn. At a normal end the session's Close stops its commands (and,
// by the session's mark, what escaped their process groups). For the ends
// where no Go code runs (kill -9, a crash), `nodwyn run` starts a watchdog
// as its session is about to start its first program (a run that starts
// none has none; session.Options.BeforeFirstProcess): its own binary again, in a process group of its own, signals ignored,
// reading a pipe only nodwyn holds. When that pipe closes — nodwyn is gone,
// however — the watchdog stops every process with the session's mark
// (sandbox.StopMarked) and exits. In sandbox mode there is no watchdog:
// background processes keep running after nodwyn, as sandbox mode says.

// watchdogEnv, set in a process's environment, makes nodwyn's binary a
// watchdog for the session whose mark is its value.
const watchdogEnv = "NODWYN_WATCHDOG_FOR"

var (
	// watchdogOK is set when main called RunWatchdog, so the binary
	// answers watchdogEnv (a test binary calling Main directly does not).
	watchdogOK bool
	// watchdogPipes are the write ends of the watchdogs' pipes, held (and
	// never closed) for the life of the process; the daemon's runs add
	// theirs from their own goroutines.
	watchdogPipes   []*os.File
	watchdogPipesMu sync.Mutex
)

// RunWatchdog is the first thing main calls. In a process started as a
// session's watchdog it waits for nodwyn to be gone, stops what the session
// left, and returns true: main then exits. Otherwise it returns false at
// once.
func RunWatchdog() bool {
	mark := os.Getenv(watchdogEnv)
	if mark == "" {
		watchdogOK = true
		return false
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	nodwynGroup, _ := syscall.Getpgid(os.Getppid())
	_, _ = io.Copy(io.Discard, os.Stdin) // until nodwyn is gone
	sandbox.StopMarked(mark, 2*time.Second, nodwynGroup)
	return true
}

// startWatchdog starts the watchdog for the processes with mark. What goes
// wrong is said on stderr and the run goes on without one.
func startWatchdog(mark string, stderr io.Writer) {
	if !watchdogOK || mark == "" || runtime.GOOS != "linux" {
		return // StopMarked reads /proc
	}
	without := func(err error) {
		fmt.Fprintf(stderr, "nodwyn: no watchdog (%v): if nodwyn is killed with SIGKILL, its commands keep running\n", err)
	}
	exe, err := os.Executable()
	if err != nil {
		without(err)
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		without(err)
		return
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{os.Args[0]}
	cmd.Env = []string{watchdogEnv + "=" + mark}
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		without(err)
		return
	}
	go func() { _ = cmd.Wait() }() // reaped should it end first
	watchdogPipesMu.Lock()
	watchdogPipes = append(watchdogPipes, w)
	watchdogPipesMu.Unlock()
}
