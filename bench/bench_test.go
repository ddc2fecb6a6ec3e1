// Package bench runs the same programs in nodwyn's Scheme, gopher-lua and
// starlark-go, side by side in one `go test -bench` run. It is a separate
// module so the main go.mod stays free of the other interpreters.
//
//	cd bench && go test -run '^$' -bench . -benchmem
package bench

import (
	"context"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"go.starlark.net/starlark"

	"github.com/nodwyn/nodwyn/scheme"
)

// Scheme

const schemeFib = `(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))`
const schemeTak = `(define (tak x y z) (if (not (< y x)) z (tak (tak (- x 1) y z) (tak (- y 1) z x) (tak (- z 1) x y))))`
const schemeStrings = `
(define (build n)
  (let ((out (open-output-string)))
    (let loop ((i 0))
      (when (< i n)
        (write-string (number->string i) out)
        (write-string "," out)
        (loop (+ i 1))))
    (string-length (get-output-string out))))`

func runScheme(b *testing.B, setup, call string, want int) {
	in := scheme.New()
	if _, err := in.Eval(context.Background(), setup, "bench.scm"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := in.Eval(context.Background(), call, "bench.scm")
		if err != nil {
			b.Fatal(err)
		}
		if v != want {
			b.Fatalf("got %v, want %d", v, want)
		}
	}
}

// Lua

const luaFib = `function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end`
const luaTak = `function tak(x, y, z) if not (y < x) then return z end return tak(tak(x-1, y, z), tak(y-1, z, x), tak(z-1, x, y)) end`
const luaStrings = `
function build(n)
  -- table.concat of all 400k pieces at once overflows gopher-lua's registry
  -- and is quadratic there, so concatenate in chunks of 1000 pieces.
  local chunks, t = {}, {}
  for i = 0, n-1 do
    t[#t+1] = tostring(i)
    t[#t+1] = ","
    if #t >= 1000 then
      chunks[#chunks+1] = table.concat(t)
      t = {}
    end
  end
  chunks[#chunks+1] = table.concat(t)
  return #table.concat(chunks)
end`

func runLua(b *testing.B, setup, call string, want int) {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString(setup); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := L.DoString("result = " + call); err != nil {
			b.Fatal(err)
		}
		if got := L.GetGlobal("result"); got != lua.LNumber(want) {
			b.Fatalf("got %v, want %d", got, want)
		}
	}
}

// Starlark

const starFib = `
def fib(n):
    if n < 2:
        return n
    return fib(n-1) + fib(n-2)
`
const starTak = `
def tak(x, y, z):
    if not (y < x):
        return z
    return tak(tak(x-1, y, z), tak(y-1, z, x), tak(z-1, x, y))
`
const starStrings = `
def build(n):
    parts = []
    for i in range(n):
        parts.append(str(i))
        parts.append(",")
    return len("".join(parts))
`

func runStarlark(b *testing.B, setup, call string, want int) {
	opts := starlarkOpts()
	thread := &starlark.Thread{Name: "bench"}
	globals, err := starlark.ExecFileOptions(opts, thread, "bench.star", setup, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := starlark.EvalOptions(opts, thread, "call.star", call, globals)
		if err != nil {
			b.Fatal(err)
		}
		if v.String() != starlark.MakeInt(want).String() {
			b.Fatalf("got %v, want %d", v, want)
		}
	}
}

func BenchmarkFib30(b *testing.B) {
	b.Run("scheme", func(b *testing.B) { runScheme(b, schemeFib, "(fib 30)", 832040) })
	b.Run("gopher-lua", func(b *testing.B) { runLua(b, luaFib, "fib(30)", 832040) })
	b.Run("starlark", func(b *testing.B) { runStarlark(b, starFib, "fib(30)", 832040) })
}

func BenchmarkTak(b *testing.B) {
	b.Run("scheme", func(b *testing.B) { runScheme(b, schemeTak, "(tak 18 12 6)", 7) })
	b.Run("gopher-lua", func(b *testing.B) { runLua(b, luaTak, "tak(18, 12, 6)", 7) })
	b.Run("starlark", func(b *testing.B) { runStarlark(b, starTak, "tak(18, 12, 6)", 7) })
}

func BenchmarkStringLoop200k(b *testing.B) {
	b.Run("scheme", func(b *testing.B) { runScheme(b, schemeStrings, "(build 200000)", 1288890) })
	b.Run("gopher-lua", func(b *testing.B) { runLua(b, luaStrings, "build(200000)", 1288890) })
	b.Run("starlark", func(b *testing.B) { runStarlark(b, starStrings, "build(200000)", 1288890) })
}
