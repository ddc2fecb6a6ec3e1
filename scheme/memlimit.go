package scheme

import (
	"fmt"
	"runtime"
	"runtime/metrics"
)

// The memory bound (SetMemoryLimit). The interpreter does not count its own
// allocations one by one (that would cost every cons); it reads the Go
// heap's size, which is cheap (a few hundred nanoseconds), at the points
// where evaluation can have made a lot of new data:
//
//   - every poll of the evaluator (about a thousand procedure calls),
//   - in long primitive loops, where they check for cancellation,
//   - before a primitive makes a large object (make-vector, make-list,
//     make-string, string-append, ...), counting the object about to be made,
//     once a megabyte of such objects has been asked for since the last
//     look.
//
// A reading above the bound is confirmed after a garbage collection, so
// garbage does not count, only what the evaluation keeps. The heap is the
// process's: other goroutines' allocations count too.

const heapMetric = "/memory/classes/heap/objects:bytes"

// chargeEvery is how many bytes of large objects primitives may ask for
// between two looks at the heap.
const chargeEvery = 1 << 20

// SetMemoryLimit bounds how much the Go heap may grow during each later
// outer Eval, Load or Call: more than n bytes above the heap at its start
// ends the evaluation with an error wrapping ErrMemoryLimit, which guard
// and with-exception-handler cannot catch. 0 removes the bound. Without a
// bound nothing is measured; with one, each outer evaluation measures from
// the heap at its start, collected first when it holds much garbage
// (memStart).
func (in *Interp) SetMemoryLimit(n int64) {
	if n < 0 {
		n = 0
	}
	in.th.memLimit = n
}

// heap returns the bytes of heap objects now (live and not yet swept).
func (th *thread) heap() uint64 {
	if th.memSample == nil {
		th.memSample = []metrics.Sample{{Name: heapMetric}}
	}
	metrics.Read(th.memSample)
	if v := th.memSample[0].Value; v.Kind() == metrics.KindUint64 {
		return v.Uint64()
	}
	return 0
}

// memStart takes the heap's size at the start of an outer evaluation, what
// the bound is counted from. The garbage earlier work left must not count
// in it, so when the heap has grown more than memSlack past what was live
// at the last collection, a collection runs first; below that the heap is
// taken as it is (the bound is then stricter by at most memSlack). A
// session's start makes a dozen outer evaluations on a small heap: a
// collection before each cost a millisecond of wall time apiece.
func (th *thread) memStart() {
	th.charged = 0
	if th.memLimit > 0 {
		h := th.heap()
		if h > th.liveAtLastGC()+memSlack {
			runtime.GC()
			h = th.heap()
		}
		th.memBase = h
	}
}

// memSlack is how much heap beyond the last collection's live heap
// memStart takes as it is.
const memSlack = 4 << 20

const liveMetric = "/gc/heap/live:bytes"

// liveAtLastGC is the heap that was live when the last collection ended
// (0 before the first).
func (th *thread) liveAtLastGC() uint64 {
	s := []metrics.Sample{{Name: liveMetric}}
	metrics.Read(s)
	if v := s[0].Value; v.Kind() == metrics.KindUint64 {
		return v.Uint64()
	}
	return 0
}

// checkMemory aborts the evaluation when the heap, plus extra bytes about
// to be allocated, is above the bound, after a collection.
func (th *thread) checkMemory(extra uint64) {
	limit := th.memBase + uint64(th.memLimit)
	if h := th.heap(); h+extra <= limit {
		return
	}
	runtime.GC() // what is left after a collection is what the evaluation keeps
	h := th.heap()
	if h+extra <= limit {
		return
	}
	grown := int64(h+extra) - int64(th.memBase)
	th.panicAbort(th.boundErr(fmt.Sprintf("memory limit exceeded: the evaluation grew the heap by %d MB, more than the %d MB allowed", grown>>20, th.memLimit>>20), ErrMemoryLimit))
}

// charge notes that a primitive is about to make an object of n bytes:
// with a memory bound, a large object (or many) is checked before it is
// made. Outside an evaluation or without a bound it does nothing.
func (in *Interp) charge(n int) {
	th := in.th
	if th.memLimit <= 0 || th.active == 0 || n <= 0 {
		return
	}
	th.charged += int64(n)
	if th.charged < chargeEvery {
		return
	}
	th.charged = 0
	th.checkMemory(uint64(n))
}

// checkAlloc is checkSize for a primitive about to make n elements of
// about elem bytes each, charged to the memory bound.
func (in *Interp) checkAlloc(proc string, n, elem int) error {
	if err := checkSize(proc, n); err != nil {
		return err
	}
	in.charge(n * elem)
	return nil
}

// Bytes per element that checkAlloc charges.
const (
	pairBytes  = 48 // a *Pair in its size class
	valueBytes = 16 // a Value (interface) slot of a vector
)

// boundErr is the abort of an evaluation that ran out of a bound (steps,
// memory): its position is the innermost call's, so the message names the
// file and line that was running.
func (th *thread) boundErr(msg string, cause error) *abortSig {
	e := &Error{Msg: msg, Err: cause, Stack: th.snapshot(nil, "")}
	for _, f := range e.Stack {
		if !f.Pos.IsZero() {
			e.Pos = f.Pos
			break
		}
	}
	return &abortSig{err: e}
}
