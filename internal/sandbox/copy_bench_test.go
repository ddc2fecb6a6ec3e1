package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// repoRoot is this repository's checkout, two directories up from the
// package's.
func repoRoot(b *testing.B) string {
	b.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		b.Skipf("no checkout at %s: %v", root, err)
	}
	return root
}

// BenchmarkCopyCheckoutRepo materializes this repository's own checkout
// (what git lists, as a working_copy run does) and removes it: one op is
// one copy made and removed. Target: ≤ 300 ms. files, bytes and reflinked
// are per copy.
func BenchmarkCopyCheckoutRepo(b *testing.B) {
	root := repoRoot(b)
	base := b.TempDir()
	env := os.Environ()
	var last *WorkDir
	for b.Loop() {
		w, err := CopyCheckout(context.Background(), root, base, env, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Remove(); err != nil {
			b.Fatal(err)
		}
		last = w
	}
	b.ReportMetric(float64(last.Files), "files")
	b.ReportMetric(float64(last.Bytes), "bytes")
	b.ReportMetric(float64(last.Reflinked), "reflinked")
}

// BenchmarkHashRepo hashes a working copy of this repository (what HashDir
// does after each command in a working_copy run).
func BenchmarkHashRepo(b *testing.B) {
	w, err := CopyCheckout(context.Background(), repoRoot(b), b.TempDir(), os.Environ(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Remove()
	b.SetBytes(w.Bytes)
	for b.Loop() {
		if _, err := HashDir(w.Path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w.Files), "files")
}
