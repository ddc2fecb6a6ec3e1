package cli

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/session"
)

// A write to a stdout whose reader has gone raises SIGPIPE: the run's
// context is cancelled as interrupted, and the process is not killed.
func TestStdoutClosedByItsReaderInterruptsTheRun(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, stop := stdoutClosedContext(context.Background(), w)
	defer stop()
	if readerGone(w) {
		t.Fatal("readerGone with the reader still open")
	}
	r.Close()
	if !readerGone(w) {
		t.Fatal("readerGone is false with the reader closed")
	}
	if _, err := w.Write([]byte("event\n")); err == nil {
		t.Fatal("a write to a pipe with no reader succeeded")
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run's context was not cancelled")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, session.ErrInterrupted) {
		t.Errorf("cause %v, want one that is session.ErrInterrupted", cause)
	}
}

// A SIGPIPE from another pipe (a socket, a command's pipe) leaves the run
// alone.
func TestSIGPIPEFromAnotherPipeLeavesTheRunAlone(t *testing.T) {
	_, out, err := os.Pipe() // stdout: its reader stays open
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, stop := stdoutClosedContext(context.Background(), out)
	defer stop()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	_, _ = w.Write([]byte("x"))
	w.Close()
	select {
	case <-ctx.Done():
		t.Fatalf("cancelled: %v", context.Cause(ctx))
	case <-time.After(200 * time.Millisecond): // a bound on a negative, not a timing
	}
}
