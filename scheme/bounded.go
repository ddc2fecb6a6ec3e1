package scheme

import (
	"context"
	"fmt"
	"math"
)

// Bounds are a CallBounded's budgets of its own. Zero fields are no bound.
type Bounds struct {
	// Steps is a budget of procedure calls, counted as SetStepLimit's (in
	// batches of about a thousand calls, so a call may run up to about a
	// thousand past it).
	Steps int64
	// Memory is how many bytes the Go heap may grow by during the call,
	// measured as SetMemoryLimit's: from the heap at the call's start,
	// only what the call keeps counting.
	Memory int64
}

// bound is one running CallBounded's budgets, in the thread's counters.
type bound struct {
	Bounds
	stepEnd int64   // th.steps past which Steps is used up
	memBase memFrom // the heap at the call's start
}

// CallBounded applies proc to args under ctx, as Call does, with budgets of
// its own: b.Steps procedure calls and b.Memory bytes of heap growth,
// counted from its start. They are besides the budgets of the evaluation it
// runs in, not instead: inside a primitive, what the call uses counts
// against the outer evaluation's step and memory budgets too, and
// whichever runs out first ends it. CallBounded calls nest.
//
// When a budget of its own runs out, the call ends (guard and
// with-exception-handler inside it cannot catch that) and CallBounded
// returns an *Error wrapping ErrStepLimit or ErrMemoryLimit that names the
// innermost position, as an outer evaluation's bound does. Unlike that
// abort, the error is an ordinary one from there on: its Value is an
// *ErrorObject of kind "limit", so a primitive that returns it raises it
// where the primitive was called, and the evaluation that called it goes
// on. Any other end of the call is returned as Apply's are: cancellation,
// an outer budget running out (Value nil) or exit end the outer evaluation
// too when the primitive returns the error unchanged.
//
// It costs tens of nanoseconds more than Call (BenchmarkNestedCall*); a
// memory budget adds a look at the heap at the start (a few hundred
// nanoseconds) and a collection first when the heap has grown more than a
// few megabytes since the last one, as an outer evaluation under
// SetMemoryLimit does (heapBase).
func (in *Interp) CallBounded(ctx context.Context, b Bounds, proc Value, args ...Value) (Value, error) {
	own := &bound{Bounds: b}
	v, err := in.run(ctx, func(th *thread) Value {
		th.pushBound(own)
		defer th.popBound(own)
		return th.apply(proc, args, nil)
	})
	if e, ok := err.(*Error); ok && e.bound == own {
		c := *e
		c.bound, c.Value = nil, &ErrorObject{Message: e.Msg, Kind: "limit", Err: e.Err}
		return nil, &c
	}
	return v, err
}

// pushBound starts counting b from the calls and the heap now.
func (th *thread) pushBound(b *bound) {
	if b.Steps < 0 {
		b.Steps = 0
	}
	if b.Memory < 0 {
		b.Memory = 0
	}
	// the calls made so far, exactly (poll's count, without its checks)
	th.steps += int64(tickInterval - th.tick)
	th.tick = tickInterval
	if b.Steps > 0 {
		b.stepEnd = math.MaxInt64
		if b.Steps < math.MaxInt64-th.steps {
			b.stepEnd = th.steps + b.Steps
		}
	}
	if b.Memory > 0 {
		b.memBase = th.heapBase()
	}
	th.bounds = append(th.bounds, b)
	th.setCaps()
}

// popBound ends b (the innermost bound), on any way out of its call.
func (th *thread) popBound(b *bound) {
	if n := len(th.bounds); n > 0 && th.bounds[n-1] == b {
		th.bounds[n-1] = nil
		th.bounds = th.bounds[:n-1]
	}
	th.setCaps()
}

// setCaps sets stepCap and memCap from the evaluation's own budgets and the
// running bounds.
func (th *thread) setCaps() {
	th.stepCap, th.memCap = 0, 0
	if th.stepLimit > 0 {
		th.stepCap = th.stepLimit
	}
	if th.memLimit > 0 {
		th.memCap = th.memBase.at + uint64(th.memLimit)
	}
	for _, b := range th.bounds {
		if b.Steps > 0 && (th.stepCap == 0 || b.stepEnd < th.stepCap) {
			th.stepCap = b.stepEnd
		}
		if b.Memory > 0 {
			if c := b.memBase.at + uint64(b.Memory); th.memCap == 0 || c < th.memCap {
				th.memCap = c
			}
		}
	}
}

// stepsOut ends the evaluation by the outermost step budget that is used
// up: its abort must pass the calls bounded inside it.
func (th *thread) stepsOut() {
	if th.stepLimit > 0 && th.steps > th.stepLimit {
		th.panicAbort(th.boundErr(fmt.Sprintf("step limit of %d procedure calls exceeded", th.stepLimit), ErrStepLimit, nil))
	}
	for _, b := range th.bounds {
		if b.Steps > 0 && th.steps > b.stepEnd {
			th.panicAbort(th.boundErr(fmt.Sprintf("step limit of %d procedure calls exceeded", b.Steps), ErrStepLimit, b))
		}
	}
}
