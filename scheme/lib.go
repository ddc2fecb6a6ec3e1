package scheme

import "fmt"

// stdlibTable is built once per process; it is never modified afterwards, so
// every interpreter shares the same *Primitive values.
var stdlibTable = buildStdlib()

// stdlibPrimitives returns the standard library procedures that New installs
// into every interpreter. The slice and the primitives are shared: callers
// must not modify them.
func stdlibPrimitives() []*Primitive { return stdlibTable }

func buildStdlib() []*Primitive {
	groups := []func() []*Primitive{
		numberPrimitives,
		booleanSymbolPrimitives,
		listPrimitives,
		srfi1Primitives,
		charPrimitives,
		stringPrimitives,
		vectorPrimitives,
		bytevectorPrimitives,
		hashTablePrimitives,
		portPrimitives,
		filePrimitives,
		formatPrimitives,
		jsonPrimitives,
	}
	var all []*Primitive
	seen := map[string]bool{}
	for _, g := range groups {
		for _, p := range g() {
			if seen[p.Name] {
				panic(fmt.Sprintf("scheme: standard library defines %s twice", p.Name))
			}
			seen[p.Name] = true
			all = append(all, p)
		}
	}
	return all
}

// prim is a short constructor for table entries.
func prim(name string, minArgs, maxArgs int, doc string, fn func(in *Interp, args []Value) (Value, error)) *Primitive {
	return &Primitive{Name: name, MinArgs: minArgs, MaxArgs: maxArgs, Doc: doc, Fn: fn}
}

// alias makes a second name for an existing primitive's function.
func alias(name string, p *Primitive) *Primitive {
	return &Primitive{Name: name, MinArgs: p.MinArgs, MaxArgs: p.MaxArgs, Doc: p.Doc, Fn: p.Fn}
}

// Helpers shared by the library files.

// argIndex checks an index argument: an exact integer 0 <= i < n (or <= n
// when inclusive).
func argIndex(proc string, v Value, n int, inclusive bool) (int, error) {
	i, ok := v.(int)
	if !ok {
		return 0, WrongType(proc, "an exact integer", v)
	}
	if i < 0 || i > n || (i == n && !inclusive) {
		return 0, Errorf("%s: index out of range: %d (length %d)", proc, i, n)
	}
	return i, nil
}

// argRange parses optional start and end arguments (args[from], args[from+1])
// against a length n.
func argRange(proc string, args []Value, from, n int) (start, end int, err error) {
	start, end = 0, n
	if len(args) > from {
		if start, err = argIndex(proc, args[from], n, true); err != nil {
			return
		}
	}
	if len(args) > from+1 {
		if end, err = argIndex(proc, args[from+1], n, true); err != nil {
			return
		}
	}
	if start > end {
		err = Errorf("%s: start %d is after end %d", proc, start, end)
	}
	return
}

func argString(proc string, v Value) (*String, error) {
	s, ok := v.(*String)
	if !ok {
		return nil, WrongType(proc, "a string", v)
	}
	return s, nil
}

func argProc(proc string, v Value) error {
	if !IsProcedure(v) {
		return WrongType(proc, "a procedure", v)
	}
	return nil
}

func argList(proc string, v Value) ([]Value, error) {
	l, ok := ListToSlice(v)
	if !ok {
		return nil, WrongType(proc, "a list", v)
	}
	return l, nil
}

// maxAlloc bounds the number of elements (list pairs, vector slots,
// characters, bytes) a single primitive call creates, so that a script asking
// for a giant object gets an error instead of exhausting the host's memory.
const maxAlloc = 1 << 24

// maxStringBytes bounds the length in bytes of a string that string-append
// makes.
const maxStringBytes = 1 << 26

// checkSize returns the error for a size above maxAlloc.
func checkSize(proc string, n int) error {
	if n > maxAlloc {
		return Errorf("%s: too large: %d elements (the limit is %d)", proc, n, maxAlloc)
	}
	return nil
}

// checkCancel aborts the evaluation (as the evaluator's own poll does) when
// its context has been cancelled. Primitives that loop over data of
// unbounded size call it every so often (see pollMask), so cancellation
// reaches a long-running primitive too. Outside an evaluation it does
// nothing.
func (in *Interp) checkCancel() {
	if th := in.th; th != nil && th.active > 0 {
		if th.cancelled.Load() {
			th.abortCancelled()
		}
		if th.memCap > 0 {
			th.checkMemory(0)
		}
	}
}

// pollMask: long primitive loops call checkCancel when i&pollMask == 0.
const pollMask = 1<<14 - 1
