package provider

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// idleWatch cuts an attempt that has gone quiet, by two clocks that one
// timer checks:
//
//   - the wire: no byte of the response for idle — not its head, not a
//     byte of its body, comments and pings included. A reply that comes a
//     byte at a time is not idle, however long each of its events takes.
//   - the reply: bytes come, but nothing of the reply for idle — no event
//     but pings, and no event under way (a line that is no comment, begun
//     and not yet handled). A server that keeps its connection open with
//     ": ping" lines or Anthropic's ping events while the model never
//     answers is stalled.
//
// The reader of the body marks the wire (sawBytes, from headBody); the SSE
// reader marks an event under way (partial); the providers' handlers mark
// the reply (capture.data). Times are kept as offsets from start, so that
// the reader's goroutine stores them and the timer's reads them without a
// lock.
type idleWatch struct {
	idle  time.Duration
	start time.Time
	cut   func(error) // cancels the attempt with its cause

	lastByte  atomic.Int64 // offset of the last byte read (or the request, before any)
	lastReply atomic.Int64 // offset of the last part of the reply (or the request, before any)
	partial   atomic.Bool  // an event's lines have begun and it is not handled yet

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// errOnlyPings is the cause of an attempt the reply clock cut: it wraps
// ErrIdleTimeout, since what runs out is the same setting.
var errOnlyPings = fmt.Errorf("%w: only pings", ErrIdleTimeout)

// startIdleWatch starts both clocks now; cut is called at most once.
func startIdleWatch(idle time.Duration, cut func(error)) *idleWatch {
	w := &idleWatch{idle: idle, start: time.Now(), cut: cut}
	w.mu.Lock()
	w.timer = time.AfterFunc(idle, w.check)
	w.mu.Unlock()
	return w
}

func (w *idleWatch) now() int64 { return int64(time.Since(w.start)) }

// sawBytes resets the wire clock.
func (w *idleWatch) sawBytes() { w.lastByte.Store(w.now()) }

// sawReply resets both clocks: a part of the reply came (the response's
// head, or an event that is no ping).
func (w *idleWatch) sawReply() {
	t := w.now()
	w.lastByte.Store(t)
	w.lastReply.Store(t)
}

// check runs when a clock may have run out: it cuts the attempt, or sets
// the timer for the next time one may.
func (w *idleWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	now, idle := w.now(), int64(w.idle)
	byteDue := w.lastByte.Load() + idle
	replyDue := w.lastReply.Load() + idle
	partial := w.partial.Load()
	switch {
	case now >= byteDue:
		w.stopped = true
		w.cut(ErrIdleTimeout)
		return
	case now >= replyDue && !partial:
		w.stopped = true
		w.cut(errOnlyPings)
		return
	}
	next := byteDue
	if !partial && replyDue < next {
		next = replyDue
	}
	w.timer.Reset(time.Duration(next - now))
}

// stop ends the watch: the attempt is over.
func (w *idleWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}
