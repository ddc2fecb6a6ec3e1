// Command nodwyn is a coding-agent runtime whose loop is scripted in an
// embedded Scheme. See README.md, or run `nodwyn --help`.
package main

import (
	"os"

	"github.com/nodwyn/nodwyn/internal/cli"
)

func main() {
	if cli.RunWatchdog() { // started by a run as its watchdog: nothing else
		return
	}
	cli.CleanEnvironment()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, cli.Getenv))
}
