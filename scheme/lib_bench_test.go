package scheme

import (
	"context"
	"strconv"
	"testing"
)

// Go-level costs of the library's data structures.

func BenchmarkHashTableSetGetStrings(b *testing.B) {
	keys := make([]*String, 1000)
	for i := range keys {
		keys[i] = NewString("key-" + strconv.Itoa(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		h := NewHashTable()
		for i, k := range keys {
			h.Set(k, i)
		}
		for _, k := range keys {
			if _, ok := h.Get(k); !ok {
				b.Fatal("missing key")
			}
		}
	}
}

func BenchmarkHashTableSymbols(b *testing.B) {
	keys := make([]Symbol, 64)
	for i := range keys {
		keys[i] = Symbol("field-" + strconv.Itoa(i))
	}
	h := NewHashTable()
	b.ReportAllocs()
	for b.Loop() {
		for i, k := range keys {
			h.Set(k, i)
		}
		for _, k := range keys {
			h.Get(k)
		}
	}
}

func BenchmarkWriteStringList(b *testing.B) {
	var items []Value
	for i := range 200 {
		items = append(items, List(Symbol("role"), NewString("message number "+strconv.Itoa(i)), i, 1.5))
	}
	l := List(items...)
	b.ReportAllocs()
	for b.Loop() {
		_ = WriteString(l)
	}
}

func BenchmarkJSONRoundTrip(b *testing.B) {
	src := `{"role":"assistant","content":[{"type":"text","text":"Hello, world \u00e9"},{"type":"tool_use","id":"t1","name":"shell","input":{"cmd":"ls -la","timeout":30}}],"usage":{"input":1234,"output":56}}`
	b.ReportAllocs()
	for b.Loop() {
		v, err := StringToJSON(src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := JSONString(v); err != nil {
			b.Fatal(err)
		}
	}
}

// Scheme-level workloads through the evaluator.

func benchEval(b *testing.B, setup, call string) {
	in := New()
	ctx := context.Background()
	if _, err := in.Eval(ctx, setup, "bench"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.Eval(ctx, call, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// A loop turn's bookkeeping: a table of messages keyed by strings and
// symbols, updated, walked and rendered.
func BenchmarkSchemeHashTableTurn(b *testing.B) {
	benchEval(b, `
(define (turn n)
  (let ((h (make-hash-table)))
    (do ((i 0 (+ i 1))) ((= i n))
      (hash-table-set! h (string-append "msg-" (number->string i)) (list 'role 'user i))
      (hash-table-update!/default h 'count (lambda (c) (+ c 1)) 0))
    (let ((total 0))
      (hash-table-walk h (lambda (k v) (if (pair? v) (set! total (+ total (caddr v))))))
      (list total (hash-table-ref/default h 'count 0) (length (hash-table-keys h))))))`,
		`(turn 500)`)
}

// String building: format, string ports and joins.
func BenchmarkSchemeStringBuilding(b *testing.B) {
	benchEval(b, `
(define (render n)
  (let ((out (open-output-string)))
    (do ((i 0 (+ i 1))) ((= i n))
      (write-string (format #f "~a: ~s~%" i (string-upcase "line")) out))
    (let ((s (get-output-string out)))
      (string-join (string-split s #\newline) " | "))))`,
		`(render 500)`)
}

// The library's share of a fresh interpreter: installing the shared table
// and the per-interpreter port procedures.
func BenchmarkNewInterpWithLibrary(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = New()
	}
}
