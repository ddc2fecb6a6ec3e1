package prim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: every test closes
// its Tools, and the sandbox tests end what they left running and wait for
// the pipes' drains to end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newTools makes Tools on a fresh folder and scratch directory; the test's
// cleanup closes them.
func newTools(t testing.TB, opts Options) *Tools {
	t.Helper()
	if opts.Folder == "" {
		opts.Folder = t.TempDir()
	}
	if opts.Scratch == "" {
		opts.Scratch = t.TempDir()
	}
	tools, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	return tools
}

func run(t testing.TB, tools *Tools, name string, args map[string]any) Result {
	t.Helper()
	res, err := tools.Run(context.Background(), name, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// mustOK runs a tool that must succeed.
func mustOK(t testing.TB, tools *Tools, name string, args map[string]any) Result {
	t.Helper()
	res := run(t, tools, name, args)
	if res.IsError {
		t.Fatalf("%s %v failed: %s", name, args, res.Output)
	}
	return res
}

// mustFail runs a tool that must fail with a message containing want.
func mustFail(t testing.TB, tools *Tools, name string, args map[string]any, want ...string) Result {
	t.Helper()
	res := run(t, tools, name, args)
	if !res.IsError {
		t.Fatalf("%s %v succeeded, want an error: %s", name, args, res.Output)
	}
	for _, w := range want {
		if !strings.Contains(res.Output, w) {
			t.Errorf("%s %v: error %q does not say %q", name, args, res.Output, w)
		}
	}
	return res
}

// eventually waits (up to 10 s) for cond; a bound against hanging, not a
// measurement.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitGone(t testing.TB, pid int) {
	t.Helper()
	eventually(t, "process to end", func() bool { return !pidAlive(pid) })
}

// killAfter kills pid when the test ends, should the test leave it running.
func killAfter(t testing.TB, pid int) {
	t.Cleanup(func() {
		if pidAlive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewChecksTheFolder(t *testing.T) {
	if _, err := New(Options{Folder: "relative"}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative folder: %v", err)
	}
	if _, err := New(Options{Folder: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("missing folder: no error")
	}
	tools := newTools(t, Options{})
	o := tools.Options()
	if o.Timeout != 2*time.Minute || o.MaxTimeout != 10*time.Minute || o.MaxOutput != 1<<20 || o.Shell == "" {
		t.Errorf("defaults not filled in: %+v", o)
	}
}

func TestUnknownToolAndBadArguments(t *testing.T) {
	tools := newTools(t, Options{})
	mustFail(t, tools, "fs-delete", nil, `unknown tool "fs-delete"`, "shell-exec")
	mustFail(t, tools, "fs-read", map[string]any{}, `missing argument "path"`)
	mustFail(t, tools, "fs-read", map[string]any{"path": 3.0}, `"path" must be a string`)
	mustFail(t, tools, "shell-exec", map[string]any{"command": "true", "timeout": "soon"}, `"timeout" must be a whole number`)
	mustFail(t, tools, "shell-exec", map[string]any{"command": "true", "timeout": 1.5}, "whole number")
	// The ordinary forms pass: a JSON number, and a number in a string.
	mustOK(t, tools, "shell-exec", map[string]any{"command": "true", "timeout": 5.0})
	mustOK(t, tools, "shell-exec", map[string]any{"command": "true", "timeout": "5"})
}

func TestRunAfterCloseIsAnError(t *testing.T) {
	tools := newTools(t, Options{})
	tools.Close()
	if _, err := tools.Run(context.Background(), "shell-exec", map[string]any{"command": "true"}); err == nil {
		t.Error("Run after Close: no error")
	}
}

func TestSchemas(t *testing.T) {
	tools := newTools(t, Options{})
	for _, name := range append(tools.Names(), "git-status", "git-diff") {
		s := tools.Schema(name, nil)
		if s == nil || s["type"] != "object" {
			t.Errorf("%s: schema %v", name, s)
		}
	}
	s := tools.Schema("fs-edit", nil)
	props := s["properties"].(map[string]any)
	for _, p := range []string{"path", "old", "new"} {
		if _, ok := props[p]; !ok {
			t.Errorf("fs-edit schema lacks %s", p)
		}
	}
	if !slices.Equal(s["required"].([]string), []string{"path", "old", "new"}) {
		t.Errorf("fs-edit required = %v", s["required"])
	}
	if tools.Schema("no-such-tool", nil) != nil {
		t.Error("schema for an unknown tool")
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct{ p, want string }{
		{"a/b.go", "/f/a/b.go"},
		{"./a/../b", "/f/b"},
		{"/etc/hosts", "/etc/hosts"},
		{"../x", "/x"},
		{"~/.bashrc", "/f/~/.bashrc"}, // not the home directory: see Resolve
		{"~", "/f/~"},
	} {
		if got := Resolve("/f", c.p); got != c.want {
			t.Errorf("Resolve(/f, %q) = %q, want %q", c.p, got, c.want)
		}
	}
}

// TestDeps keeps prim near the leaves: of nodwyn's own packages only
// internal/sandbox, the execution seam every program runs through,
// internal/fsview, the reading of a path it shares with the guard, and
// internal/roles, the parameters' roles it shares with the guard (all
// leaves; deps_test.go at the root holds every package's line).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/nodwyn/nodwyn") && dep != "github.com/nodwyn/nodwyn/internal/prim" &&
			dep != "github.com/nodwyn/nodwyn/internal/sandbox" && dep != "github.com/nodwyn/nodwyn/internal/fsview" &&
			dep != "github.com/nodwyn/nodwyn/internal/roles" {
			t.Errorf("prim imports %s; it may import only internal/sandbox, internal/fsview and internal/roles of nodwyn's packages", dep)
		}
	}
}

func TestRunWithACancelledContext(t *testing.T) {
	tools := newTools(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"shell-exec", "fs-find", "index-grep"} {
		if _, err := tools.Run(ctx, name, map[string]any{"command": "true", "pattern": "x"}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v", name, err)
		}
	}
}

// Calls may run at the same time (a reply with several tool calls).
func TestConcurrentCalls(t *testing.T) {
	tools := newTools(t, Options{})
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tools.Run(context.Background(), "shell-exec", map[string]any{"command": fmt.Sprintf("echo %d", i)})
			if err == nil {
				outs[i] = res.Output
			}
		}()
	}
	wg.Wait()
	for i, out := range outs {
		if want := fmt.Sprintf("%d\n[exit status 0]", i); out != want {
			t.Errorf("call %d: %q, want %q", i, out, want)
		}
	}
}
