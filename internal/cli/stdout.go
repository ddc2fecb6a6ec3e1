package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nodwyn/nodwyn/internal/session"
)

// errStdoutClosed ends a run whose standard output was closed by its
// reader (`nodwyn run --json | head -1`).
var errStdoutClosed = fmt.Errorf("%w: standard output was closed (SIGPIPE)", session.ErrInterrupted)

// stdoutClosedContext returns a context cancelled (with errStdoutClosed)
// when stdout is a pipe whose reader has gone and a write to it raised
// SIGPIPE: the run stops as on SIGTERM, its commands stopped and its log
// closed, instead of nodwyn dying of the signal. A SIGPIPE from any other
// write (a socket) is ignored; the write fails with EPIPE.
func stdoutClosedContext(parent context.Context, stdout io.Writer) (context.Context, func()) {
	f, ok := stdout.(*os.File)
	if !ok {
		return parent, func() {}
	}
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	// Notify for good: with it, a write to a closed pipe on any descriptor
	// (stdout included) fails with EPIPE rather than killing the process,
	// also after the run.
	signal.Notify(ch, syscall.SIGPIPE)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-done:
				return
			case <-ch:
				if readerGone(f) {
					cancel(errStdoutClosed)
					return
				}
			}
		}
	}()
	// stop waits for the watcher: nothing reads f once it has returned.
	return ctx, func() { close(done); <-exited; cancel(nil) }
}

// readerGone reports whether f is the write end of a pipe with no reader
// left: poll says POLLERR.
func readerGone(f *os.File) bool {
	rc, err := f.SyscallConn() // not f.Fd(), which would make f blocking
	if err != nil {
		return false
	}
	gone := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, 0)
		gone = err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0
	})
	return gone
}
