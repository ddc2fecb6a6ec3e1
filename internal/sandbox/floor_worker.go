package sandbox

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The file tools' opens (Do) run on a restricted thread too. Making one
// for each call, restricting it and letting it end cost a call 175 µs
// (BenchmarkFloorDo); so a thread restricted by the current ruleset is
// kept and given the calls, one at a time, while the ruleset stays current
// and for a while after the last call. A call that finds it busy, or the
// ruleset since rebuilt, gets a fresh thread as before. Commands are
// never started from it: fork copies the thread's domain either way, and
// Start's thread ends with the command's start.

// workerIdle is how long a worker thread waits for another call.
const workerIdle = 10 * time.Second

// floorWorker is a thread restricted by one build of the ruleset.
type floorWorker struct {
	built *ruleset    // the build (f.last) it is restricted by
	jobs  chan func() // the calls, run on the thread
	mu    sync.Mutex  // held by the call being given the thread; by the worker, for good, once it ends
	quit  chan struct{}
	once  sync.Once
}

func (w *floorWorker) retire() { w.once.Do(func() { close(w.quit) }) }

// worker is the worker restricted by the current ruleset, started if there
// is none (nil when it cannot be: the caller takes a fresh thread).
func (f *Floor) worker() *floorWorker {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refresh() != nil {
		return nil
	}
	if f.w != nil && f.w.built == f.last {
		return f.w
	}
	if f.w != nil {
		f.w.retire()
		f.w = nil
	}
	fd, err := unix.FcntlInt(uintptr(f.last.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	w := &floorWorker{built: f.last, jobs: make(chan func()), quit: make(chan struct{})}
	ready := make(chan error, 1)
	go f.runWorker(w, &ruleset{fd: fd}, ready)
	if err := <-ready; err != nil {
		return nil
	}
	f.w = w
	return w
}

// runWorker restricts a thread of its own by rs (never the main thread)
// and runs w's calls on it until w is retired or idle; the thread then
// ends with the goroutine.
func (f *Floor) runWorker(w *floorWorker, rs *ruleset, ready chan<- error) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		go f.runWorker(w, rs, ready)
		runtime.UnlockOSThread()
		return
	}
	err := rs.restrict(f.nnp)
	rs.close()
	ready <- err
	if err != nil {
		return
	}
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case job := <-w.jobs:
			job()
			idle.Reset(workerIdle)
		case <-w.quit:
			if w.mu.TryLock() { // no call is being given the thread
				return
			}
			runtime.Gosched()
		case <-idle.C:
			if w.mu.TryLock() {
				f.mu.Lock()
				if f.w == w {
					f.w = nil
				}
				f.mu.Unlock()
				return
			}
			idle.Reset(workerIdle)
		}
	}
}

// doOnWorker runs fn on the current ruleset's worker thread; ok is false
// when there is none free (the caller takes a fresh thread).
func (f *Floor) doOnWorker(fn func() error) (err error, ok bool) {
	w := f.worker()
	if w == nil || !w.mu.TryLock() {
		return nil, false
	}
	defer w.mu.Unlock()
	done := make(chan error, 1)
	w.jobs <- func() { done <- fn() }
	return <-done, true
}
