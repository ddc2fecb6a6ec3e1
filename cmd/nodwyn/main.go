// Command nodwyn is a coding-agent runtime whose loop is scripted in an
// embedded Scheme. See README.md, or run `nodwyn --help`.
package main

import (
	"os"
	"runtime"

	"github.com/nodwyn/nodwyn/internal/cli"
)

// The main goroutine keeps the main thread, so no other goroutine ever runs
// on it: the kernel floor restricts a fresh thread for each command, and the
// main thread is the process's identity for /proc and ptrace (a restricted
// one would put nodwyn in the command's Landlock domain). The floor checks
// for it too. The main goroutine only waits there: nodwyn's work runs on a
// goroutine of its own, which any thread may run. (Run on the locked main
// thread, each time it waited — for the model, a file, a channel — the
// runtime handed its processor to another thread and woke the main thread
// again for it: 0.1 ms a turn.)
func init() { runtime.LockOSThread() }

func main() {
	if cli.RunWatchdog() { // started by a run as its watchdog: nothing else
		return
	}
	cli.CleanEnvironment()
	code := make(chan int, 1)
	go func() { code <- cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, cli.Getenv) }()
	os.Exit(<-code)
}
