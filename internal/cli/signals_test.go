package cli

import (
	"context"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestStopSignalsSIGHUP sends SIGHUP to the test process while the run's
// signal set is being watched: it must cancel the context, not kill the
// process (which is what an unhandled SIGHUP does).
func TestStopSignalsSIGHUP(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP did not stop the run's context")
	}
}
