// Package scheme is an embeddable Scheme interpreter (R7RS-small core) that
// imports only the Go standard library.
//
// # Design
//
// Source is read with positions (every pair the reader makes carries
// file:line:col), expanded (core forms are compiled directly; syntax-rules
// macros are hygienic by renaming), resolved at compile time (locals to frame
// slots, globals to cells) and compiled to a tree of Go closures. Tail calls
// run in a trampoline, so loops written as tail calls (named let, do, mutual
// recursion through cond =>, apply, and, or, when, case, ...) take constant Go
// stack. Procedures that create no closures take their frames from a pool, so
// calling them allocates nothing; + - < > <= >= = car cdr cons null? pair?
// not eq? zero? have inline fixnum/pair fast paths (used only while the global
// still holds the standard procedure).
//
// # Embedding
//
//	in := scheme.New()                     // standard library installed
//	in.Register(scheme.NewPrimitive("greet", 1, 1, "(greet name)",
//		func(in *scheme.Interp, args []scheme.Value) (scheme.Value, error) {
//			var name string
//			if err := scheme.UnpackArgs("greet", args, &name); err != nil {
//				return nil, err
//			}
//			return scheme.NewString("hello " + name), nil
//		}))
//	err := in.Load(ctx, embeddedFS, "init.scm")  // or LoadFile(ctx, path)
//	v, err := in.Eval(ctx, `(greet "you")`, "inline")
//	v, err = in.CallByName(ctx, "run-session", scheme.NewString("task"))
//
// Values are Go values (see Value): int, *big.Int, float64, bool, Char,
// *String, Symbol, *Pair, Nil, *Vector, ... ToGo and FromGo convert to and
// from plain Go data. Errors are *Error: Pos, Msg (e.g. "car: not a pair: 5"),
// the raised Value, and the Scheme Stack (innermost first, with file:line:col
// per frame); Error() gives "init.scm:12:3: car: not a pair: 5" and Trace()
// adds the stack. Nothing a script does panics the host: a Go panic inside a
// primitive becomes a Scheme error raised at the call, naming the procedure
// ("boom: internal error: assignment to entry in nil map"), which guard can
// catch; any other Go panic becomes an error at the Eval boundary.
//
// Interp.Apply calls a Scheme procedure from inside a Primitive (re-entrant);
// return the error it gives unchanged so raises, escapes through call/cc and
// cancellation keep their meaning. Interp.CurrentPos tells a primitive where
// it was called from.
//
// One goroutine at a time may use an Interp; any number of interpreters can
// run in parallel (there is no global mutable state). New takes about 25 µs
// and 28 KB (BenchmarkNewInterp).
//
// # Limits
//
// Eval, Load and Call take a context.Context: cancelling it aborts evaluation
// within about a thousand procedure calls (tens of microseconds), with an
// error for which errors.Is(err, context.Canceled) (or DeadlineExceeded)
// holds; the message includes context.Cause. The abort cannot be caught by
// guard or with-exception-handler, dynamic-wind "after" thunks do not run on
// it, and parameterize bindings are restored. SetStepLimit sets a budget of
// procedure calls per evaluation (ErrStepLimit); raising an error is charged
// in proportion to the stack depth. SetMemoryLimit bounds how much the Go
// heap may grow during each evaluation (ErrMemoryLimit): the heap is read
// about every thousand calls, in long primitive loops and before large
// objects are made, and a reading above the bound is confirmed after a
// garbage collection, so only what the evaluation keeps counts. Both
// aborts name the position of the innermost call. CallBounded gives one
// call (a host's, from inside a primitive) step and memory budgets of its
// own besides the evaluation's: running out ends that call only, with an
// error the caller can catch, and what it used counts against the
// evaluation's budgets too. SetMaxDepth caps nested non-tail calls
// (DefaultMaxDepth = 10000; unwinding a Go panic costs time in proportion
// to the stack depth, so deeper caps make errors in deep recursions slow)
// with a catchable error "call depth exceeded";
// the reader and the compiler refuse nesting deeper than 10000 and 20000, and
// a macro that keeps expanding stops after a million expansions. One
// primitive call creates at most 1<<24 elements (make-list, make-vector,
// make-string, iota, ...; "make-list: too large: ..."), string-append at
// most 64 MB, and * and expt exact integers of at most 1<<23 bits ("expt:
// result too large: ..."); primitives that walk lists check for
// cancellation, so a circular list cannot hang them past the context's
// deadline. Values shown in error messages are cut to about 300 bytes. (exit code)
// ends evaluation with an error wrapping *ExitError.
//
// # REPL
//
// Interp.REPL reads from an io.Reader and writes to an io.Writer; an
// expression may span lines (the prompt becomes "... "), and errors are
// printed with their stack without ending the loop.
//
// # Differences from R7RS-small
//
//   - Continuations are escape-only: call/cc (= call-with-escape-continuation)
//     can jump out of the call that made the continuation, any number of
//     frames up, but calling it after that call returned is an error
//     ("continuation called after its extent ended"). Generators and
//     re-entry are not supported. Because the continuation's extent must be
//     kept, the procedure call/cc calls is not in tail position (nor is the
//     body of parameterize): a loop that recurs through call/cc grows the
//     stack and meets the depth cap.
//   - guard re-raises an unmatched condition (with raise-continuable) from
//     the guard's own dynamic environment; dynamic-wind thunks between the
//     raise and the guard have already run their after thunks and are not
//     re-entered.
//   - No exact rationals: 1/3 reads as the real 0.333...; (/ 1 3) is inexact.
//     Integers are exact and overflow into big integers.
//   - syntax-rules literals are matched by name (a literal else matches any
//     else, even one bound locally). Definitions a macro expands to at top
//     level define the name as written (not renamed).
//   - define-record-type: a record type is created once per definition site
//     (also when the definition is inside a procedure called many times).
//   - Environments are not first-class: eval takes an optional environment
//     argument and ignores it, evaluating in the interpreter's global
//     environment. No libraries (define-library, import) or include.
//   - Calling a parameter object with one argument sets its value.
//
// # Testing
//
// testdata/*.scm are run by TestScripts (see harness_test.go for the
// format: chunks separated by ---, `; ### "regexp"` marks an expected error,
// assert-equal and friends report without stopping).
package scheme
