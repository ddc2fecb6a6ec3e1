package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/daemon"
	"github.com/nodwyn/nodwyn/internal/daemon/wire"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/rpc"
	"github.com/nodwyn/nodwyn/internal/store"
)

// testDaemon is a nodwyn daemon on a socket of its own, in this process,
// with a home of its own.
type testDaemon struct {
	t      *testing.T
	home   string
	data   string
	sock   string
	stderr *syncBuffer
	done   chan int
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startDaemon(t *testing.T, home string) *testDaemon {
	t.Helper()
	d := &testDaemon{t: t, home: home, data: filepath.Join(home, ".local", "share", "nodwyn"),
		sock: filepath.Join(home, "run", "daemon.sock"), stderr: &syncBuffer{}, done: make(chan int, 1)}
	go func() {
		d.done <- Main([]string{"daemon", "--no-keychain", "--socket", d.sock}, strings.NewReader(""), &bytes.Buffer{}, d.stderr, homeEnv(home))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(daemon.TokenPath(d.data, d.sock)); err == nil {
			if _, err := os.Stat(d.sock); err == nil {
				t.Cleanup(d.stop)
				return d
			}
		}
		select {
		case code := <-d.done:
			t.Fatalf("the daemon exited %d: %s", code, d.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the daemon did not start: %s", d.stderr)
	return nil
}

func (d *testDaemon) stop() {
	select {
	case code := <-d.done: // stopped already
		if code != 0 {
			d.t.Errorf("the daemon exited %d: %s", code, d.stderr)
		}
		return
	default:
	}
	c, err := daemon.Dial(context.Background(), d.data, d.sock, nil)
	if err == nil {
		c.Call(context.Background(), "daemon.stop", nil, nil)
		c.Close()
	}
	select {
	case code := <-d.done:
		if code != 0 {
			d.t.Errorf("the daemon exited %d: %s", code, d.stderr)
		}
	case <-time.After(30 * time.Second):
		d.t.Errorf("the daemon did not stop: %s", d.stderr)
	}
}

// follower is a client following one run's events.
type follower struct {
	mu       sync.Mutex
	events   []store.Event
	confirms []map[string]any
	c        *rpc.Client
}

func (d *testDaemon) client(f *follower) *rpc.Client {
	d.t.Helper()
	var on func(string, json.RawMessage)
	if f != nil {
		on = func(method string, params json.RawMessage) {
			f.mu.Lock()
			defer f.mu.Unlock()
			switch method {
			case "run.event":
				var p struct {
					Event store.Event `json:"event"`
				}
				json.Unmarshal(params, &p)
				f.events = append(f.events, p.Event)
			case "confirm.ask":
				var m map[string]any
				json.Unmarshal(params, &m)
				f.confirms = append(f.confirms, m)
			}
		}
	}
	c, err := daemon.Dial(context.Background(), d.data, d.sock, on)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { c.Close() })
	if f != nil {
		f.c = c
	}
	return c
}

func (d *testDaemon) call(c *rpc.Client, method string, params any) map[string]any {
	d.t.Helper()
	var res map[string]any
	if err := c.Call(context.Background(), method, params, &res); err != nil {
		d.t.Fatalf("%s: %v\n%s", method, err, d.stderr)
	}
	return res
}

func daemonProject(t *testing.T, script string) (home, proj, scriptPath string) {
	t.Helper()
	home = t.TempDir()
	proj = filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644)
	scriptPath = filepath.Join(home, "m.script")
	os.WriteFile(scriptPath, []byte(script), 0o644)
	return home, proj, scriptPath
}

func (d *testDaemon) waitEnd(c *rpc.Client, id string) map[string]any {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		st := d.call(c, "run.state", map[string]any{"id": id})
		if st["status"] != "running" {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.t.Fatalf("run %s did not end", id)
	return nil
}

// Two runs at once, each its own session; run.state and run.list say what
// they are; sandbox mode is recorded as the run asked for it.
func TestDaemonRunsTwoAtOnce(t *testing.T) {
	scratchInTest(t) // a sandbox-mode run keeps its scratch directory
	// Each run's command says it has started and then waits for the test
	// to let it go: both are seen running together however slow the
	// machine, and neither can end before the other has begun.
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"touch started; until [ -e release ]; do sleep 0.02; done; echo released\"}\n> reply\nDone.\n> reply\nChecked: done.\n")
	proj2 := filepath.Join(home, "proj2")
	os.MkdirAll(proj2, 0o755)
	d := startDaemon(t, home)
	c := d.client(nil)
	a := d.call(c, "run.start", map[string]any{"folder": proj, "instruction": "one", "script": script, "sandbox": "container"})
	b := d.call(c, "run.start", map[string]any{"folder": proj2, "instruction": "two", "script": script, "unattended": true})
	if a["id"] == b["id"] || a["id"] == "" {
		t.Fatalf("ids %v %v", a, b)
	}
	both := false
	for deadline := time.Now().Add(60 * time.Second); !both && time.Now().Before(deadline); {
		sa := d.call(c, "run.state", map[string]any{"id": a["id"]})
		sb := d.call(c, "run.state", map[string]any{"id": b["id"]})
		_, ea := os.Stat(filepath.Join(proj, "started"))
		_, eb := os.Stat(filepath.Join(proj2, "started"))
		both = sa["status"] == "running" && sb["status"] == "running" && ea == nil && eb == nil
		if !both {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !both {
		t.Error("the two runs' commands were never running at the same time")
	}
	for _, p := range []string{proj, proj2} {
		if err := os.WriteFile(filepath.Join(p, "release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sa, sb := d.waitEnd(c, a["id"].(string)), d.waitEnd(c, b["id"].(string))
	if sa["status"] != "finished" || sb["status"] != "finished" {
		t.Fatalf("outcomes: %v / %v\n%s", sa, sb, d.stderr)
	}
	if sa["sandbox"] != "container" || sa["yolo"] != true || sb["sandbox"] != nil || sb["folder"] != proj2 || sa["tool_calls"] != 1.0 {
		t.Errorf("states: %v / %v", sa, sb)
	}
	list := d.call(c, "run.list", nil)
	if runs, _ := list["runs"].([]any); len(runs) != 2 {
		t.Errorf("run.list: %v", list)
	}
	// A resume that does not say sandbox again is not in sandbox mode.
	r := d.call(c, "run.resume", map[string]any{"id": a["id"], "instruction": "and more", "script": script, "unattended": true})
	if r["id"] != a["id"] {
		t.Fatalf("resume: %v", r)
	}
	if st := d.waitEnd(c, a["id"].(string)); st["sandbox"] != nil || st["status"] != "finished" {
		t.Errorf("after a resume without sandbox: %v", st)
	}
}

// run.events replays from a sequence number and then goes live: a client
// that disconnects and asks again from where it stopped misses nothing
// and sees nothing twice.
func TestDaemonEventsResumeAfterADisconnect(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"echo one\"}\n> reply\ncall shell-exec {\"command\": \"sleep 0.6; echo two\"}\n> reply\ncall shell-exec {\"command\": \"echo three\"}\n> reply\nDone.\n")
	d := startDaemon(t, home)
	c := d.client(nil)
	id := d.call(c, "run.start", map[string]any{"folder": proj, "instruction": "go", "script": script, "unattended": true})["id"].(string)
	// The first client follows until it has seen "one", then goes away.
	f1 := &follower{}
	c1 := d.client(f1)
	ctx, cancel := context.WithCancel(context.Background())
	go c1.Call(ctx, "run.events", map[string]any{"id": id}, nil)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		f1.mu.Lock()
		seen := len(f1.events) > 0 && strings.Contains(f1.events[len(f1.events)-1].Type+jsonOf(f1.events), "one")
		f1.mu.Unlock()
		if seen {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	c1.Close()
	f1.mu.Lock()
	got := append([]store.Event(nil), f1.events...)
	f1.mu.Unlock()
	if len(got) == 0 {
		t.Fatal("the first client saw nothing")
	}
	next := got[len(got)-1].Seq + 1
	f2 := &follower{}
	c2 := d.client(f2)
	var res map[string]any
	if err := c2.Call(context.Background(), "run.events", map[string]any{"id": id, "since": next}, &res); err != nil {
		t.Fatal(err)
	}
	if res["ended"] != true || res["status"] != "finished" {
		t.Errorf("run.events ended with %v", res)
	}
	f2.mu.Lock()
	got = append(got, f2.events...)
	f2.mu.Unlock()
	logged, err := store.ReadLog(filepath.Join(d.data, "sessions", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(logged) {
		t.Fatalf("the two clients saw %d events, the log has %d", len(got), len(logged))
	}
	for i := range got {
		if got[i].Seq != logged[i].Seq || got[i].Type != logged[i].Type {
			t.Errorf("event %d: %d %s, the log's %d %s", i, got[i].Seq, got[i].Type, logged[i].Seq, logged[i].Type)
		}
	}
	if res["next"] != float64(logged[len(logged)-1].Seq+1) {
		t.Errorf("next %v, the log ends at %d", res["next"], logged[len(logged)-1].Seq)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A confirm is asked of the run's clients and answered over RPC: yes, no
// with a note the model reads, always (the same line again runs unasked).
func TestDaemonConfirmsAnsweredOverRPC(t *testing.T) {
	home, proj, script := daemonProject(t, `> reply
call shell-exec {"command": "rm -rf build"}
> reply
call shell-exec {"command": "rm -rf dist"}
> reply
call shell-exec {"command": "rm -rf cache"}
> reply
call shell-exec {"command": "rm -rf cache"}
> reply
Done.
`)
	d := startDaemon(t, home)
	c := d.client(nil)
	id := d.call(c, "run.start", map[string]any{"folder": proj, "instruction": "clean", "script": script})["id"].(string)
	f := &follower{}
	fc := d.client(f)
	evDone := make(chan error, 1)
	go func() { evDone <- fc.Call(context.Background(), "run.events", map[string]any{"id": id}, nil) }()
	answers := []map[string]any{{"answer": "yes"}, {"answer": "no", "note": "keep dist, the release needs it"}, {"answer": "always"}}
	for i, a := range answers {
		var ask map[string]any
		deadline := time.Now().Add(20 * time.Second)
		for ask == nil && time.Now().Before(deadline) {
			f.mu.Lock()
			if len(f.confirms) > i {
				ask = f.confirms[i]
			}
			f.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
		if ask == nil {
			t.Fatalf("confirm %d was never asked: %s", i, d.stderr)
		}
		st := d.call(c, "run.state", map[string]any{"id": id})
		if open, _ := st["confirms"].([]any); len(open) != 1 {
			t.Errorf("run.state's open confirms: %v", st["confirms"])
		}
		a["run"], a["confirm"] = id, ask["confirm"]
		d.call(c, "confirm.answer", a)
		// The same confirm cannot be answered twice.
		var e *rpc.Error
		if err := c.Call(context.Background(), "confirm.answer", a, nil); !errors.As(err, &e) || e.Code != rpc.CodeNotFound {
			t.Errorf("a second answer: %v", err)
		}
	}
	st := d.waitEnd(c, id)
	if err := <-evDone; err != nil {
		t.Fatal(err)
	}
	if st["status"] != "finished" {
		t.Fatalf("status %v", st)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.confirms) != 3 {
		t.Errorf("%d confirms asked; the fourth call (rm -rf cache again) should have run on the standing approval", len(f.confirms))
	}
	var results []string
	for _, ev := range f.events {
		if ev.Type == "tool.result" {
			results = append(results, jsonOf(ev.Data["output"]))
		}
	}
	if len(results) != 4 || !strings.Contains(results[1], "keep dist, the release needs it") || strings.Contains(results[0], "not run") {
		t.Errorf("results: %q", results)
	}
}

// run.cancel stops a running run: it is interrupted, and resumable.
func TestDaemonCancel(t *testing.T) {
	// The command would outlast the test: run.cancel answers only if it
	// stops the command rather than waiting for it.
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"sleep 600\"}\n> reply\nDone.\n")
	d := startDaemon(t, home)
	c := d.client(nil)
	id := d.call(c, "run.start", map[string]any{"folder": proj, "instruction": "wait", "script": script, "unattended": true})["id"].(string)
	inCommand := false
	for deadline := time.Now().Add(60 * time.Second); !inCommand && time.Now().Before(deadline); {
		if inCommand = d.call(c, "run.state", map[string]any{"id": id})["tool_calls"] == 1.0; !inCommand {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !inCommand {
		t.Fatalf("the run never reached its command: %s", d.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var st map[string]any
	if err := c.Call(ctx, "run.cancel", map[string]any{"id": id}, &st); err != nil {
		t.Fatalf("run.cancel of a run in a command that does not end: %v\n%s", err, d.stderr)
	}
	if st["status"] != "interrupted" || st["resumable"] != true {
		t.Errorf("after run.cancel: %v", st)
	}
	var e *rpc.Error
	if err := c.Call(context.Background(), "run.cancel", map[string]any{"id": id}, nil); !errors.As(err, &e) || e.Code != rpc.CodeConflict {
		t.Errorf("cancelling an ended run: %v", err)
	}
}

// What run.start refuses, it refuses with the words nodwyn run would use,
// naming the parameter; a parameter it does not have is an error.
func TestDaemonStartRefusals(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\nDone.\n")
	d := startDaemon(t, home)
	c := d.client(nil)
	for _, k := range []struct {
		params map[string]any
		code   int
		says   string
	}{
		{map[string]any{"instruction": "x"}, rpc.CodeInvalidParams, "missing parameter folder"},
		{map[string]any{"folder": "proj", "instruction": "x"}, rpc.CodeInvalidParams, "folder must be an absolute path"},
		{map[string]any{"folder": proj, "instruction": "x", "colour": "red"}, rpc.CodeInvalidParams, "unknown parameter colour"},
		{map[string]any{"folder": proj, "instruction": "x", "sandbox": "vm", "script": script}, rpc.CodeInvalidParams, "the only value is 'container'"},
		{map[string]any{"folder": proj, "instruction": "x", "timeout": "soon"}, rpc.CodeInvalidParams, "is not a duration"},
		{map[string]any{"folder": home, "instruction": "x", "script": script}, rpc.CodeInvalidParams, ""},
		{map[string]any{"id": "nope"}, rpc.CodeInvalidParams, "unknown parameter id"},
	} {
		var e *rpc.Error
		err := c.Call(context.Background(), "run.start", k.params, nil)
		if !errors.As(err, &e) || e.Code != k.code || !strings.Contains(e.Message, k.says) {
			t.Errorf("run.start %v: %v, want code %d saying %q", k.params, err, k.code, k.says)
		}
	}
	var e *rpc.Error
	if err := c.Call(context.Background(), "run.state", map[string]any{"id": "no-such-run"}, nil); !errors.As(err, &e) || e.Code != rpc.CodeNotFound {
		t.Errorf("run.state of nothing: %v", err)
	}
	if err := c.Call(context.Background(), "run.frobnicate", nil, nil); !errors.As(err, &e) || e.Code != rpc.CodeMethodNotFound {
		t.Errorf("an unknown method: %v", err)
	}
}

// A session a daemon held when it died (saved as running, held by no one)
// is listed as interrupted and resumable.
func TestDaemonListsWhatADeadDaemonLeft(t *testing.T) {
	home, proj, _ := daemonProject(t, "")
	st, err := store.Open(filepath.Join(home, ".local", "share", "nodwyn"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveState(&store.SessionState{ID: "20261203-000000-dead", Folder: proj, Instruction: "x", Status: "running", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, home)
	c := d.client(nil)
	s := d.call(c, "run.state", map[string]any{"id": "20261203-000000-dead"})
	if s["status"] != "interrupted" || s["resumable"] != true {
		t.Errorf("run.state: %v", s)
	}
	if !strings.Contains(jsonOf(d.call(c, "run.list", nil)), "20261203-000000-dead") {
		t.Error("run.list does not show it")
	}
}

// nodwyn run --daemon: the same flags, output and exit code as in this
// process; --detach prints the id, attach follows the run to its end.
func TestRunThroughTheDaemonIsTheSameRun(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\nLooking.\ncall shell-exec {\"command\": \"echo hi\"}\n> reply\nAll done.\n")
	d := startDaemon(t, home)
	getenv := homeEnv(home)
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"run"}, args...), strings.NewReader(""), &stdout, &stderr, getenv)
		return code, stdout.String(), stderr.String()
	}
	inCode, inOut, inErr := run("--unattended", "--script", script, "-C", proj, "say hi")
	viaCode, viaOut, viaErr := run("--daemon", d.sock, "--unattended", "--script", script, "-C", proj, "say hi")
	if inCode != 0 || viaCode != inCode || viaOut != inOut || viaOut != "All done.\n" {
		t.Errorf("in process: %d %q; through the daemon: %d %q\n%s", inCode, inOut, viaCode, viaOut, viaErr)
	}
	norm := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			// what differs between two runs: the session id, the clock
			if i := strings.Index(l, "] "); strings.HasPrefix(l, "[") && i > 0 {
				l = l[i+2:]
			}
			if strings.HasPrefix(l, "nodwyn: session ") || strings.HasPrefix(l, "nodwyn: finished after") {
				l = l[:strings.Index(l, " ")+9]
			}
			out = append(out, l)
		}
		return out
	}
	if a, b := norm(inErr), norm(viaErr); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("what stderr shows differs:\nin process:\n%s\nthrough the daemon:\n%s", inErr, viaErr)
	}
	// The exit code of a budget stop, as in process.
	budget, _ := os.ReadFile(script)
	os.WriteFile(script, []byte(strings.Replace(string(budget), "> reply\nAll done.", "> reply\ncall shell-exec {\"command\": \"echo again\"}\n> reply\nAll done.", 1)), 0o644)
	inCode, _, _ = run("--unattended", "--max-tool-calls", "1", "--script", script, "-C", proj, "say hi")
	viaCode, _, viaErr = run("--daemon", d.sock, "--unattended", "--max-tool-calls", "1", "--script", script, "-C", proj, "say hi")
	if inCode != ExitBudget || viaCode != inCode {
		t.Errorf("a budget stop: in process %d, through the daemon %d\n%s", inCode, viaCode, viaErr)
	}
	// A run refused before it starts: nodwyn run's words and exit code.
	inCode, _, inErr = run("--sandbox", "vm", "--script", script, "-C", proj, "x")
	viaCode, _, viaErr = run("--daemon", d.sock, "--sandbox", "vm", "--script", script, "-C", proj, "x")
	if inCode != ExitUsage || viaCode != inCode || !strings.Contains(viaErr, "the only value is 'container'") {
		t.Errorf("a refused run: in process %d %q, through the daemon %d %q", inCode, inErr, viaCode, viaErr)
	}
	// --detach, then attach.
	code, out, errs := run("--daemon", d.sock, "--detach", "--unattended", "--script", script, "-C", proj, "say hi")
	id := strings.TrimSpace(out)
	if code != 0 || !store.ValidID(id) {
		t.Fatalf("--detach: %d %q %s", code, out, errs)
	}
	var stdout, stderr bytes.Buffer
	code = Main([]string{"attach", "--daemon", d.sock, id}, strings.NewReader(""), &stdout, &stderr, getenv)
	if code != 0 || !strings.Contains(stderr.String(), "nodwyn: finished after") || !strings.Contains(stderr.String(), "echo again") {
		t.Errorf("attach: %d\n%s", code, stderr.String())
	}
	if code := Main([]string{"run", "--detach", "-C", proj, "x"}, strings.NewReader(""), &stdout, &stderr, getenv); code != ExitUsage {
		t.Errorf("--detach without a daemon: exit %d", code)
	}
}

// daemon.stop while a client follows a run: the client gets the run's end
// (interrupted, exit 130 as in process), not a broken connection.
func TestDaemonStopEndsItsRunsClientsCleanly(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"sleep 30\"}\n> reply\nDone.\n")
	d := startDaemon(t, home)
	getenv := homeEnv(home)
	for range 3 {
		var stdout, stderr bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- Main([]string{"run", "--daemon", d.sock, "--unattended", "--script", script, "-C", proj, "wait"}, strings.NewReader(""), &stdout, &stderr, getenv)
		}()
		c := d.client(nil)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			var l struct{ Runs []map[string]any }
			c.Call(context.Background(), "run.list", nil, &l)
			if len(l.Runs) > 0 && l.Runs[0]["tool_calls"] == 1.0 && l.Runs[0]["status"] == "running" {
				break // the daemon's own run comes first, then what earlier daemons left
			}
			time.Sleep(10 * time.Millisecond)
		}
		t0 := time.Now()
		d.call(c, "daemon.stop", nil)
		code := <-done
		t.Logf("client ended %v after daemon.stop", time.Since(t0))
		if code != ExitInterrupted || !strings.Contains(stderr.String(), "nodwyn: interrupted after") {
			t.Fatalf("the client of a run the daemon stopped: exit %d\n%s", code, stderr.String())
		}
		dcode := <-d.done // stopped: its cleanup finds it so
		t.Logf("daemon ended %v after daemon.stop", time.Since(t0))
		d.done <- dcode
		d = startDaemon(t, home)
	}
}

// A run through the daemon without the kernel floor is refused (its
// commands could read the token); from no terminal it is unattended and
// its confirms are declined as in process instead of waiting; a resumed
// run is listed once.
func TestDaemonRefusalsThatKeepItsToken(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"rm -rf build\"}\n> reply\nDone.\n")
	d := startDaemon(t, home)
	c := d.client(nil)
	var e *rpc.Error
	err := c.Call(context.Background(), "run.start", map[string]any{"folder": proj, "instruction": "x", "script": script, "unattended": true, "no_kernel_floor": true}, nil)
	if !errors.As(err, &e) || e.Code != rpc.CodeRefused || !strings.Contains(e.Message, "daemon's token") {
		t.Errorf("no_kernel_floor: %v", err)
	}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"run", "--daemon", d.sock, "--script", script, "-C", proj, "clean"}, strings.NewReader(""), &stdout, &stderr, homeEnv(home))
	}()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stderr.String(), "rm -rf build not run: confirm") || !strings.Contains(stderr.String(), "declined (nobody can approve it)") {
			t.Errorf("from no terminal: exit %d\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("from no terminal, the run waits on a confirm nobody answers")
	}
	id := d.call(c, "run.start", map[string]any{"folder": proj, "instruction": "x", "script": script, "unattended": true})["id"]
	d.waitEnd(c, id.(string))
	d.call(c, "run.resume", map[string]any{"id": id, "script": script, "unattended": true})
	d.waitEnd(c, id.(string))
	n := 0
	for _, r := range d.call(c, "run.list", nil)["runs"].([]any) {
		if r.(map[string]any)["id"] == id {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a resumed run is listed %d times", n)
	}
}

// [daemon] socket in the person's config.toml sends nodwyn run to the
// daemon; a relative one is a usage error naming the file and line.
func TestTheConfigNamesTheDaemon(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\nAll done.\n")
	d := startDaemon(t, home)
	cfg := filepath.Join(home, ".config", "nodwyn", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("[daemon]\nsocket = \""+d.sock+"\"\n"), 0o600)
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "--unattended", "--script", script, "-C", proj, "hi"}, strings.NewReader(""), &stdout, &stderr, homeEnv(home)); code != 0 || stdout.String() != "All done.\n" {
		t.Fatalf("exit %d %q\n%s", code, stdout.String(), stderr.String())
	}
	c := d.client(nil)
	if runs := d.call(c, "run.list", nil)["runs"].([]any); len(runs) != 1 {
		t.Errorf("the run did not go to the daemon: %v", runs)
	}
	os.WriteFile(cfg, []byte("[daemon]\nsocket = \"rel.sock\"\n"), 0o600)
	stderr.Reset()
	if code := Main([]string{"run", "--unattended", "--script", script, "-C", proj, "hi"}, strings.NewReader(""), &stdout, &stderr, homeEnv(home)); code != ExitUsage || !strings.Contains(stderr.String(), "config.toml:2: [daemon] socket \"rel.sock\" must be an absolute path") {
		t.Errorf("a relative socket: exit %d\n%s", code, stderr.String())
	}
}

// run.start's judge and judge_model: the run's ordinary confirms go to the
// judge (the scripted model answers yes, then no), as in process.
func TestDaemonRunWithAJudge(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"rm -rf build\"}\n> reply\nyes, build is generated\n"+
		"> reply\ncall shell-exec {\"command\": \"rm -rf src\"}\n> reply\nno: src is the code\n> reply\nDone.\n")
	for _, dir := range []string{"build", "src"} {
		os.MkdirAll(filepath.Join(proj, dir), 0o755)
		os.WriteFile(filepath.Join(proj, dir, "f"), []byte("x"), 0o644)
	}
	d := startDaemon(t, home)
	c := d.client(nil)
	id := d.call(c, "run.start", map[string]any{"folder": proj, "instruction": "clean", "script": script, "judge_model": "small"})["id"].(string)
	if st := d.waitEnd(c, id); st["status"] != "finished" || st["unattended"] != true {
		t.Fatalf("the judged run: %v", st)
	}
	logged, err := store.ReadLog(filepath.Join(d.data, "sessions", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	for _, ev := range logged {
		if ev.Type == "judge" {
			answers = append(answers, fmt.Sprint(ev.Data["model"], " ", ev.Data["answer"], " ", ev.Data["reason"]))
		}
	}
	if want := []string{"small yes build is generated", "small no src is the code"}; !slices.Equal(answers, want) {
		t.Errorf("judge events %q, want %q", answers, want)
	}
	if _, err := os.Stat(filepath.Join(proj, "build")); !os.IsNotExist(err) {
		t.Errorf("build is still there after the judge said yes: %v", err)
	}
	if _, err := os.Stat(filepath.Join(proj, "src", "f")); err != nil {
		t.Errorf("src went after the judge said no: %v", err)
	}
}

// Every flag of nodwyn run that changes the run reaches launch.Spec, so
// both a run here and one the daemon holds (run.start's parameters are the
// Spec's json names) take it: set each RunCmd field alone and spec()
// changes, or the field is in cliOnly with the reason (a flag the client
// dropped was silently ignored: --no-keychain). And what the client sends
// is only names run.start knows.
func TestEveryRunFlagReachesTheSpec(t *testing.T) {
	e := &env{stdin: strings.NewReader("the task from stdin"), getenv: func(string) string { return "" }}
	task := filepath.Join(t.TempDir(), "task.md")
	os.WriteFile(task, []byte("the task from a file\n"), 0o644)
	typ := reflect.TypeOf(RunCmd{})
	zero, err := (&RunCmd{}).spec(e)
	if err != nil {
		t.Fatal(err)
	}
	startKnown := map[string]bool{}
	for _, k := range rpc.Params(&launch.Spec{}, wire.StartUnlisted...) {
		startKnown[k] = true
	}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		if why, ok := cliOnly[f.Name]; ok {
			if why == "" {
				t.Errorf("cliOnly[%s] gives no reason", f.Name)
			}
			continue
		}
		var r RunCmd
		v := reflect.ValueOf(&r).Elem().Field(i)
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.String:
			v.SetString("/x")
			if f.Name == "InstructionFile" {
				v.SetString(task)
			}
		case reflect.Int:
			v.SetInt(7)
		case reflect.Int64: // a time.Duration
			v.SetInt(int64(time.Minute))
		case reflect.Struct: // JudgeFlag
			v.Field(0).SetBool(true)
		case reflect.Slice: // the task's words, --writable
			v.Set(reflect.ValueOf([]string{"/x"}))
		default:
			t.Fatalf("RunCmd.%s: a %s flag this test does not set", f.Name, v.Kind())
		}
		spec, err := r.spec(e)
		if err != nil {
			t.Fatalf("RunCmd.%s: %v", f.Name, err)
		}
		if reflect.DeepEqual(spec, zero) {
			t.Errorf("--%s does not reach the run: spec() takes nothing of RunCmd.%s (or list it in cliOnly, with why)", strings.ToLower(f.Name), f.Name)
			continue
		}
		if f.Name == "Resume" || f.Name == "Folder" || f.Name == "Contract" {
			continue // run.resume's id; sent by viaDaemon's own rules
		}
		b, _ := json.Marshal(spec)
		var sent map[string]any
		json.Unmarshal(b, &sent)
		for k := range sent {
			if !startKnown[k] {
				t.Errorf("RunCmd.%s is sent as %q, which run.start does not know", f.Name, k)
			}
		}
	}
	// A flag listed as the CLI's own is one RunCmd has.
	for name := range cliOnly {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("cliOnly lists %s, which RunCmd does not have", name)
		}
	}
	var p launch.Spec
	if err := rpc.DecodeParams(json.RawMessage(`{"folder":"/f","instruction":"x","no_keychain":true,"timeout":"30m"}`), &p, wire.StartUnlisted...); err != nil || !p.NoKeychain || p.Timeout.Std() != 30*time.Minute {
		t.Errorf("run.start's no_keychain and timeout: %+v %v", p, err)
	}
}
