package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/store"
)

// writeUserInit writes the person's own init.scm (always trusted) and
// points opts at it.
func writeUserInit(t *testing.T, opts *Options, text string) string {
	t.Helper()
	dir := opts.Dirs.Config
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "init.scm")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.UserInit = path
	return path
}

// newFails runs New and returns its error, failing the test if New worked.
func newFails(t *testing.T, ctx context.Context, opts Options) error {
	t.Helper()
	opts.Model = script(t, "> reply\nshould never be asked\n")
	s, err := New(ctx, opts)
	if err == nil {
		s.Close()
		t.Fatal("New worked; want it to stop loading the init chain")
	}
	return err
}

func wantAll(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("the error does not say %q:\n%v", p, err)
		}
	}
}

// An init.scm that loops forever stops at the init chain's step bound, with
// an error that names the file, the bound and how to raise it.
func TestAnInitThatLoopsForeverStopsAtTheStepBound(t *testing.T) {
	opts := baseOpts(t)
	path := writeUserInit(t, &opts, "(define x 1)\n(let loop () (loop))\n")
	opts.InitSteps = 200_000
	err := newFails(t, context.Background(), opts)
	wantAll(t, err, path, "200000 procedure calls", "step bound", "init.scm:2:", "init_steps", "before any model call")
}

// An init.scm that keeps building data stops at the memory bound.
func TestAnInitThatKeepsAllocatingStopsAtTheMemoryBound(t *testing.T) {
	opts := baseOpts(t)
	path := writeUserInit(t, &opts, "(define kept '())\n(let loop () (set! kept (cons (make-vector 1000 0) kept)) (loop))\n")
	opts.InitMemory = 32 << 20
	opts.InitSteps = 1 << 40
	err := newFails(t, context.Background(), opts)
	wantAll(t, err, path, "32 MB", "memory bound", "init_memory_mb")
}

// The bounds are lifted once the chain has loaded: the run's own Scheme
// work is not limited by them.
func TestTheInitBoundsAreLiftedForTheRun(t *testing.T) {
	opts := baseOpts(t)
	writeUserInit(t, &opts, `(define (busy) (let loop ((i 0)) (if (< i 300000) (loop (+ i 1)) i)))`)
	opts.InitSteps = 100_000
	opts.Model = script(t, "> reply\ndone\n")
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.interp.CallByName(context.Background(), "busy"); err != nil || v != 300000 {
		t.Fatalf("(busy) after New = %v, %v", v, err)
	}
}

// Loading the init chain counts against --timeout: a run whose time is up
// before the chain has loaded stops with the deadline error.
func TestLoadingTheInitChainCountsAgainstTheTimeout(t *testing.T) {
	opts := baseOpts(t)
	path := writeUserInit(t, &opts, "(let loop () (loop))\n")
	opts.InitSteps = 1 << 40
	opts.Timeout = 2 * time.Second // how long does not matter: the loop never ends (200 ms ran out in the embedded chain on a loaded machine)
	err := newFails(t, context.Background(), opts)
	if !errors.Is(err, ErrDeadline) {
		t.Fatalf("err = %v, want ErrDeadline", err)
	}
	wantAll(t, err, path, "--timeout 2s", "nothing was sent to the model")
}

// Run keeps the deadline New started: the time loading took is not given
// back.
func TestRunUsesTheDeadlineNewStarted(t *testing.T) {
	opts := baseOpts(t)
	opts.Timeout = time.Hour
	opts.Model = script(t, "> reply\nshould never be asked\n")
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if want := s.started.Add(time.Hour); !s.deadline.Equal(want) {
		t.Fatalf("deadline %v, want %v", s.deadline, want)
	}
	s.deadline = time.Now().Add(-time.Second) // as if loading had taken the whole hour
	out := s.Run(context.Background())
	if out.Status != "deadline" {
		t.Fatalf("status %q (%s), want deadline", out.Status, out.Text)
	}
}

// An interrupt (SIGINT cancels the CLI's context) during the load stops it
// with ErrInterrupted, which the CLI turns into exit 130.
func TestAnInterruptDuringTheLoadStopsIt(t *testing.T) {
	opts := baseOpts(t)
	path := writeUserInit(t, &opts, "(log-note \"looping now\")\n(let loop () (loop))\n")
	opts.InitSteps = 1 << 40
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.Sinks = []func(store.Event){func(ev store.Event) {
		if text, _ := ev.Data["text"].(string); ev.Type == "note" && text == "looping now" {
			cancel()
		}
	}}
	err := newFails(t, ctx, opts)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	wantAll(t, err, path)
}

// (current-profile-name), which Go asks for the run's events and state, runs
// under the same bounds: a redefinition that loops cannot hang the run.
func TestARedefinedProfileNameThatLoopsIsBounded(t *testing.T) {
	opts := baseOpts(t)
	writeUserInit(t, &opts, "(define (current-profile-name) (let loop () (loop)))\n")
	opts.InitSteps = 200_000
	err := newFails(t, context.Background(), opts)
	wantAll(t, err, "step bound", "init.scm:1:", "init_steps")
}

// The person's init.scm that does ordinary work loads as before.
func TestAnOrdinaryUserInitStillLoads(t *testing.T) {
	opts := baseOpts(t)
	writeUserInit(t, &opts, "(define table (make-vector 100000 0))\n(define (n) (vector-length table))\n")
	r := runSession(t, opts, "> reply\ndone\n")
	if r.out.Status != "finished" {
		t.Fatalf("%s: %s", r.out.Status, r.out.Text)
	}
}

// No bound given is the defaults (the end-to-end tests give lower ones:
// 50 million calls take a while under the race detector): 50 million
// calls, 256 MB.
func TestTheInitBoundsDefault(t *testing.T) {
	if DefaultInitSteps != 50_000_000 || DefaultInitMemory != 256<<20 {
		t.Errorf("the defaults are %d steps and %d bytes; the docs say 50 million and 256 MB", DefaultInitSteps, DefaultInitMemory)
	}
	if s, m := (Options{}).initBounds(); s != DefaultInitSteps || m != DefaultInitMemory {
		t.Errorf("defaults %d steps, %d bytes", s, m)
	}
	if s, m := (Options{InitSteps: 5, InitMemory: 7}).initBounds(); s != 5 || m != 7 {
		t.Errorf("given 5 and 7: %d, %d", s, m)
	}
}
