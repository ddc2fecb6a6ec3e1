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
// garbage does not count, only what the evaluation keeps; a collection that
// finds less live than the bound counts from lowers its base (rebase). The
// heap is the process's: other goroutines' allocations count too.

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
	in.th.setCaps()
}

// memReading is one look at the heap: its size (live and not yet swept),
// and the live heap the last completed collection found, with that
// collection's number.
type memReading struct{ heap, live, cycle uint64 }

const (
	liveMetric   = "/gc/heap/live:bytes"
	cyclesMetric = "/gc/cycles/total:gc-cycles"
)

func (th *thread) read() memReading {
	if th.memSample == nil {
		th.memSample = []metrics.Sample{{Name: heapMetric}, {Name: liveMetric}, {Name: cyclesMetric}}
	}
	metrics.Read(th.memSample)
	var v [3]uint64
	for i, s := range th.memSample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	return memReading{heap: v[0], live: v[1], cycle: v[2]}
}

// memFrom is where a memory bound counts from: the heap at the start of
// its evaluation, lowered by a later collection that found less live
// (rebase).
type memFrom struct{ at, cycle uint64 }

// memStart takes the heap's size at the start of an outer evaluation, what
// the bound is counted from (heapBase), and sets the caps.
func (th *thread) memStart() {
	th.charged = 0
	if th.memLimit > 0 {
		th.memBase = th.heapBase()
	}
	th.setCaps()
}

// heapBase is the heap's size for a bound to count from. The garbage
// earlier work left must not count in it, so when the heap has grown more
// than memSlack past what was live at the last collection, a collection
// runs first; below that the heap is taken as it is. A session's start
// makes a dozen outer evaluations on a small heap: a collection before
// each cost a millisecond of wall time apiece. What is taken as it is may
// still hold garbage (data live at the last collection and dropped since);
// the first collection during the evaluation shows it, and the base is
// lowered to what that collection found live (rebase), so the garbage
// does not make room for long.
func (th *thread) heapBase() memFrom {
	r := th.read()
	if r.heap > r.live+memSlack {
		runtime.GC()
		r = th.read()
	}
	return memFrom{at: r.heap, cycle: r.cycle}
}

// memSlack is how much heap beyond the last collection's live heap
// heapBase takes as it is.
const memSlack = 4 << 20

// rebase lowers f to what a collection after it found live, when that is
// less: the base held garbage then, or data the evaluation (or the rest of
// the process) dropped; either way the bound counts from what is live. It
// reports whether f changed.
func (f *memFrom) rebase(r memReading) bool {
	if r.cycle == f.cycle {
		return false
	}
	f.cycle = r.cycle
	if r.live >= f.at {
		return false
	}
	f.at = r.live
	return true
}

// rebaseAll rebases every running memory bound on r.
func (th *thread) rebaseAll(r memReading) {
	changed := false
	if th.memLimit > 0 {
		changed = th.memBase.rebase(r)
	}
	for _, b := range th.bounds {
		if b.Memory > 0 && b.memBase.rebase(r) {
			changed = true
		}
	}
	if changed {
		th.setCaps()
	}
}

// checkMemory aborts the evaluation when the heap, plus extra bytes about
// to be allocated, is above a bound (the evaluation's own, or a
// CallBounded's), after a collection.
func (th *thread) checkMemory(extra uint64) {
	r := th.read()
	th.rebaseAll(r)
	if r.heap+extra <= th.memCap {
		return
	}
	runtime.GC() // what is left after a collection is what the evaluation keeps
	r = th.read()
	th.rebaseAll(r)
	h := r.heap + extra
	if h <= th.memCap {
		return
	}
	// The outermost budget that is out ends the evaluation: its abort must
	// pass the calls bounded inside it.
	if th.memLimit > 0 && h > th.memBase.at+uint64(th.memLimit) {
		th.panicAbort(th.memErr(h, th.memBase.at, th.memLimit, nil))
	}
	for _, b := range th.bounds {
		if b.Memory > 0 && h > b.memBase.at+uint64(b.Memory) {
			th.panicAbort(th.memErr(h, b.memBase.at, b.Memory, b))
		}
	}
}

func (th *thread) memErr(h, base uint64, limit int64, b *bound) *abortSig {
	grown := int64(h) - int64(base)
	return th.boundErr(fmt.Sprintf("memory limit exceeded: the evaluation grew the heap by %d MB, more than the %d MB allowed", grown>>20, limit>>20), ErrMemoryLimit, b)
}

// charge notes that a primitive is about to make an object of n bytes:
// with a memory bound, a large object (or many) is checked before it is
// made. Outside an evaluation or without a bound it does nothing.
func (in *Interp) charge(n int) {
	th := in.th
	if th.memCap == 0 || th.active == 0 || n <= 0 {
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
// file and line that was running. b is the CallBounded's bound that ran
// out, nil for the evaluation's own.
func (th *thread) boundErr(msg string, cause error, b *bound) *abortSig {
	e := &Error{Msg: msg, Err: cause, Stack: th.snapshot(nil, ""), bound: b}
	for _, f := range e.Stack {
		if !f.Pos.IsZero() {
			e.Pos = f.Pos
			break
		}
	}
	return &abortSig{err: e}
}
