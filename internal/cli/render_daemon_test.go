package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/store"
)

// A command that exits 3 is shown as "exit 3" through the daemon and in
// attach, as in process: the events come through JSON, where the exit
// status is a float64 (issue 29 item 1).
func TestAFailingCommandShowsItsExitThroughTheDaemon(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"echo failing; exit 3\"}\n> reply\nAll done.\n")
	d := startDaemon(t, home)
	getenv := homeEnv(home)
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(args, strings.NewReader(""), &stdout, &stderr, getenv)
		return code, stdout.String(), stderr.String()
	}
	shown := "shell-exec: echo failing; exit 3 → exit 3 failing"
	for _, how := range [][]string{
		{"run", "--unattended", "--script", script, "-C", proj, "fail"},
		{"run", "--daemon", d.sock, "--unattended", "--script", script, "-C", proj, "fail"},
	} {
		code, out, errs := run(how...)
		if code != 0 || out != "All done.\n" {
			t.Fatalf("%v: exit %d, stdout %q\n%s", how, code, out, errs)
		}
		if !strings.Contains(errs, shown) || strings.Contains(errs, "→ ok") {
			t.Errorf("%v does not show the command's exit status:\n%s", how, errs)
		}
	}
	code, out, errs := run("run", "--daemon", d.sock, "--detach", "--unattended", "--script", script, "-C", proj, "fail")
	id := strings.TrimSpace(out)
	if code != 0 || !store.ValidID(id) {
		t.Fatalf("--detach: %d %q %s", code, out, errs)
	}
	code, out, errs = run("attach", "--daemon", d.sock, id)
	if code != 0 || !strings.Contains(errs, shown) || strings.Contains(errs, "→ ok") {
		t.Errorf("attach: exit %d\n%s", code, errs)
	}
	if out != "All done.\n" { // the final answer, as nodwyn run prints it (item 2)
		t.Errorf("attach prints %q on stdout, not the final answer", out)
	}
}

// attach shows a run by its events' own times, ends with the run's own
// length, and prints the final answer: here a session whose log (written
// with times this test chose) says it took 6 s (issue 29 item 2).
func TestAttachShowsTheRunsOwnTimesAndAnswer(t *testing.T) {
	home, proj, _ := daemonProject(t, "")
	d := startDaemon(t, home)
	st, err := store.Open(d.data)
	if err != nil {
		t.Fatal(err)
	}
	id := store.NewSessionID()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if err := st.SaveState(&store.SessionState{ID: id, Folder: proj, Instruction: "count", Profile: "lean", Status: "finished", Created: t0, Updated: t0.Add(6 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(st.SessionDir(id), 0o700); err != nil {
		t.Fatal(err)
	}
	log, err := store.OpenLog(st.LogPath(id))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, ev := range []store.Event{
		{Time: at(0), Type: "run.start", Data: map[string]any{"session": id, "folder": proj, "profile": "lean", "unattended": true}},
		{Time: at(0.1), Type: "model.request", Data: map[string]any{"messages": 1, "tools": 5}},
		{Time: at(1.2), Type: "model.reply", Data: map[string]any{"text": "Counting.", "tool_calls": []any{}}},
		{Time: at(1.3), Type: "tool.call", Data: map[string]any{"id": "c1", "name": "shell-exec", "n": 1, "arguments": map[string]any{"command": "wc -l a.txt"}}},
		{Time: at(3.5), Type: "tool.result", Data: map[string]any{"id": "c1", "name": "shell-exec", "error": false, "exit": 0, "output": "1 a.txt"}},
		{Time: at(6), Type: "run.end", Data: map[string]any{"status": "finished", "text": "a.txt has 1 line.", "tool_call_count": 1, "input_tokens": 1200, "output_tokens": 30}},
	} {
		if err := log.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()

	var stdout, stderr bytes.Buffer
	code := Main([]string{"attach", "--daemon", d.sock, id}, strings.NewReader(""), &stdout, &stderr, homeEnv(home))
	if code != 0 {
		t.Fatalf("attach: exit %d\n%s", code, stderr.String())
	}
	for _, want := range []string{
		"[1.2s] model: Counting.",
		"[3.5s] shell-exec: wc -l a.txt → ok 1 a.txt",
		"nodwyn: finished after 6.0s · 1k tokens in · 30 out",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("attach does not show %q:\n%s", want, stderr.String())
		}
	}
	if stdout.String() != "a.txt has 1 line.\n" {
		t.Errorf("attach prints %q on stdout, not the final answer", stdout.String())
	}
	// --json writes the events and leaves stdout to them.
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"attach", "--json", "--daemon", d.sock, id}, strings.NewReader(""), &stdout, &stderr, homeEnv(home)); code != 0 {
		t.Fatalf("attach --json: exit %d\n%s", code, stderr.String())
	}
	for i, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if json.Unmarshal([]byte(l), &map[string]any{}) != nil {
			t.Errorf("attach --json: line %d is not an event: %q", i+1, l)
		}
	}
}

// A refused call is one line, the decision's: its tool.result says the
// refusal again and is not shown (issue 29 item 11); the call after it,
// which ran, is shown as ever.
func TestARefusedCallIsShownOnce(t *testing.T) {
	home, proj, script := daemonProject(t, "> reply\ncall shell-exec {\"command\": \"cat ~/.ssh/id_rsa\"}\n> reply\ncall shell-exec {\"command\": \"echo after\"}\n> reply\nAll done.\n")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "--unattended", "--script", script, "-C", proj, "x"}, strings.NewReader(""), &stdout, &stderr, homeEnv(home)); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "cat ~/.ssh/id_rsa"); n != 1 {
		t.Errorf("the refused call is shown %d times, want once:\n%s", n, stderr.String())
	}
	if !strings.Contains(stderr.String(), "shell-exec: cat ~/.ssh/id_rsa not run: refuse") {
		t.Errorf("the refusal is not shown:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "shell-exec: echo after → ok after") {
		t.Errorf("the call after the refusal is not shown:\n%s", stderr.String())
	}
}
