package scheme

import (
	"context"
	"testing"
	"time"
)

// Benchmark programs. The same programs, written in Lua and Starlark, run in
// the bench/ module side by side with these (see docs/scheme-bench.md).

const BenchFib = `(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))`

const BenchTak = `(define (tak x y z) (if (not (< y x)) z (tak (tak (- x 1) y z) (tak (- y 1) z x) (tak (- z 1) x y))))`

// BenchStrings builds a 200k-piece string: "0,1,2,...".
const BenchStrings = `
(define (build n)
  (let ((out (open-output-string)))
    (let loop ((i 0))
      (when (< i n)
        (write-string (number->string i) out)
        (write-string "," out)
        (loop (+ i 1))))
    (string-length (get-output-string out))))`

// BenchTurn is shaped like one agent-loop turn: build a message list as
// alists, look fields up, count tool calls in a hash table, render a prompt.
const BenchTurn = `
(define (make-msg role text tool) (list (cons 'role role) (cons 'content text) (cons 'tool tool)))
(define (turn n)
  (let ((msgs '()) (counts (make-hash-table)))
    (do ((i 0 (+ i 1))) ((= i n))
      (set! msgs (cons (make-msg (if (even? i) "user" "assistant") (string-append "message " (number->string i)) (if (= 0 (modulo i 3)) "shell" "edit")) msgs)))
    (for-each (lambda (m)
                (let ((tool (cdr (assq 'tool m))))
                  (hash-table-update!/default counts tool (lambda (c) (+ c 1)) 0)))
              msgs)
    (let ((out (open-output-string)))
      (for-each (lambda (m)
                  (write-string (cdr (assq 'role m)) out)
                  (write-string ": " out)
                  (write-string (cdr (assq 'content m)) out)
                  (newline out))
                (reverse msgs))
      (list (hash-table-ref/default counts "shell" 0) (string-length (get-output-string out))))))`

func benchSetup(b *testing.B, src string) *Interp {
	b.Helper()
	in := New()
	if _, err := in.Eval(context.Background(), src, "bench.scm"); err != nil {
		b.Fatal(err)
	}
	return in
}

func benchRun(b *testing.B, in *Interp, call string, want Value) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		v, err := in.Eval(context.Background(), call, "bench.scm")
		if err != nil {
			b.Fatal(err)
		}
		if want != nil && !Equal(v, want) {
			b.Fatalf("got %s, want %s", WriteString(v), WriteString(want))
		}
	}
}

func BenchmarkFib30(b *testing.B) { benchRun(b, benchSetup(b, BenchFib), "(fib 30)", 832040) }

// BenchmarkFib30Bounded is BenchmarkFib30 under a step and a memory bound
// (as nodwyn loads init.scm): the heap is read at every poll.
func BenchmarkFib30Bounded(b *testing.B) {
	in := benchSetup(b, BenchFib)
	in.SetStepLimit(1 << 40)
	in.SetMemoryLimit(1 << 30)
	benchRun(b, in, "(fib 30)", 832040)
}

func BenchmarkTak(b *testing.B) { benchRun(b, benchSetup(b, BenchTak), "(tak 18 12 6)", 7) }

func BenchmarkStringLoop200k(b *testing.B) {
	benchRun(b, benchSetup(b, BenchStrings), "(build 200000)", 1288890)
}

func BenchmarkAgentTurn(b *testing.B) {
	benchRun(b, benchSetup(b, BenchTurn), "(turn 200)", List(67, 3990))
}

func BenchmarkNewInterp(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = New()
	}
}

// BenchmarkCancelLatency measures the time from cancelling the context to
// Eval returning, while Scheme runs a tight loop; reported as ns/cancel.
func BenchmarkCancelLatency(b *testing.B) {
	in := benchSetup(b, "(define (spin i) (spin (+ i 1)))")
	var total time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan time.Time, 1)
		go func() {
			_, _ = in.Eval(ctx, "(spin 0)", "bench.scm")
			done <- time.Now()
		}()
		time.Sleep(time.Millisecond)
		start := time.Now()
		cancel()
		total += (<-done).Sub(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/cancel")
}
