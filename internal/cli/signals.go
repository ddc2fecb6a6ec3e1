package cli

import (
	"os"
	"syscall"
)

// stopSignals end a run the way an interrupt does: the session is stopped,
// its commands' process groups are stopped, and the run exits with the
// interrupted exit code. SIGHUP (the terminal went away) is handled like
// SIGTERM rather than killing nodwyn outright and leaving commands behind.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
