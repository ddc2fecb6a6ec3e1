package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/store"
)

// What another party chose, as a hostile one would write it: a CSI that
// moves the cursor up and erases below, an OSC that sets the title, the
// 8-bit CSI, a bidi override and a newline (all valid UTF-8: the stores
// are JSON). evilShown is how a one-line field shows it.
const (
	evil      = "\x1b[3A\x1b[J\x1b]0;title\x07\u009b2J\u202e\nforged"
	evilShown = `\x1b[3A\x1b[J\x1b]0;title\a\u009b2J\u202e\nforged`
)

// rawControls fails when out holds a character a terminal acts on, other
// than the newlines that end its lines.
func rawControls(t *testing.T, what, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\r\u009b\u202e") {
		t.Errorf("%s: a raw control character reaches the terminal:\n%q", what, out)
	}
}

// onOneLine fails unless some line of out holds all of parts.
func onOneLine(t *testing.T, what, out string, parts ...string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return
		}
	}
	t.Errorf("%s does not show %q on one line:\n%s", what, parts, out)
}

func listingStore(t *testing.T) (home string, st *store.Store) {
	t.Helper()
	home = t.TempDir()
	st, err := store.Open(config.ResolveDirs(homeEnv(home), home).Data)
	if err != nil {
		t.Fatal(err)
	}
	return home, st
}

// nodwyn sessions shows a session's task and folder escaped, in its row;
// --json is the state as it was saved, JSON's own escapes and no others.
func TestSessionsEscapesTheTask(t *testing.T) {
	home, st := listingStore(t)
	now := time.Now()
	saved := &store.SessionState{ID: store.NewSessionID(), Folder: "/src/proj" + evil, Instruction: "fix the parser" + evil,
		Status: "finished", Created: now, Updated: now}
	if err := st.SaveState(saved); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := nodwyn(homeEnv(home), "", "sessions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rawControls(t, "nodwyn sessions", out)
	onOneLine(t, "nodwyn sessions", out, saved.ID, "finished", "/src/proj"+evilShown, `fix the parser\x1b[3A\x1b[J`)
	if n := strings.Count(out, "\n"); n != 2 {
		t.Errorf("one session on %d lines:\n%s", n, out)
	}

	code, out, _ = nodwyn(homeEnv(home), "", "sessions", "--json")
	var list []store.SessionState
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
		t.Fatalf("nodwyn sessions --json: exit %d, %q", code, out)
	}
	if list[0].Instruction != saved.Instruction || list[0].Folder != saved.Folder || strings.Contains(out, `\x1b`) {
		t.Errorf("--json changed the task or folder: %q", out)
	}
}

// nodwyn undo lists and restores the paths the model's file tools wrote,
// escaped, each in its row.
func TestUndoEscapesThePaths(t *testing.T) {
	home, st := listingStore(t)
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(proj, "evil"+evil+".go")
	if err := st.Backup("s1", path, []byte("package old\n")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := nodwyn(homeEnv(home), "", "undo", "-C", proj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rawControls(t, "nodwyn undo", out)
	onOneLine(t, "nodwyn undo", out, "1  ", "s1", "12", filepath.Join(proj, "evil"+evilShown+".go"))
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("one version on %d lines:\n%s", n, out)
	}

	code, out, errOut = nodwyn(homeEnv(home), "", "undo", "-C", proj, "--restore", "1")
	if code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	rawControls(t, "nodwyn undo --restore", out)
	onOneLine(t, "nodwyn undo --restore", out, "restored "+filepath.Join(proj, "evil"+evilShown+".go")+" to version 1")
	if b, err := os.ReadFile(path); err != nil || string(b) != "package old\n" {
		t.Errorf("the file the listing named was not restored: %q, %v", b, err)
	}
}

// nodwyn log renders what the model and the tools chose escaped, one line
// an event; --json is the log's bytes as they are.
func TestLogEscapesWhatTheModelChose(t *testing.T) {
	home, st := listingStore(t)
	id := store.NewSessionID()
	if err := os.MkdirAll(st.SessionDir(id), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := store.OpenLog(st.LogPath(id))
	if err != nil {
		t.Fatal(err)
	}
	evs := []store.Event{
		{Type: "run.start", Data: map[string]any{"instruction": "fix" + evil}},
		{Type: "tool.call", Data: map[string]any{"name": "fs-write", "arguments": map[string]any{"path": "evil" + evil + ".go"}}},
		{Type: "tool.result", Data: map[string]any{"name": "fs-write" + evil, "output": "wrote" + evil}},
		{Type: "model.reply", Data: map[string]any{"text": "done" + evil}},
	}
	for i := range evs {
		evs[i].Time = time.Now()
		if err := l.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	code, out, errOut := nodwyn(homeEnv(home), "", "log", id)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rawControls(t, "nodwyn log", out)
	onOneLine(t, "nodwyn log", out, "tool.result", "fs-write"+evilShown)
	onOneLine(t, "nodwyn log", out, "tool.call", "fs-write", "evil")
	if n := strings.Count(out, "\n"); n != len(evs) {
		t.Errorf("%d events on %d lines:\n%s", len(evs), n, out)
	}

	code, out, _ = nodwyn(homeEnv(home), "", "log", "--json", id)
	raw, err := os.ReadFile(st.LogPath(id))
	if code != 0 || err != nil || out != string(raw) {
		t.Errorf("nodwyn log --json is not the log as it is: exit %d, %v\n%q\n%q", code, err, out, raw)
	}
}

// nodwyn guard says its verdict on one line, escaped, whatever the path
// judged (or a project's checker) put in the reason; --json is JSON.
func TestGuardVerdictIsOneEscapedLine(t *testing.T) {
	home := t.TempDir()
	path := "/home/x/.ssh/id_rsa" + evil
	code, out, errOut := nodwyn(homeEnv(home), "", "guard", "--tool", "fs-read", "--", path)
	if code != ExitFailed {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	rawControls(t, "nodwyn guard", out)
	if !strings.HasPrefix(out, "refuse (PathDenylist): /home/x/.ssh/id_rsa"+evilShown) || strings.Count(out, "\n") != 1 {
		t.Errorf("nodwyn guard: %q", out)
	}
	code, out, _ = nodwyn(homeEnv(home), "", "guard", "--json", "--tool", "fs-read", "--", path)
	var d map[string]string
	if code != ExitFailed || json.Unmarshal([]byte(out), &d) != nil || !strings.Contains(d["reason"], path) {
		t.Errorf("nodwyn guard --json: exit %d, %q", code, out)
	}
}

// What the console prints — the model's answer, /undo's listing, a
// compaction's summary — is escaped; its lines stay lines.
func TestTheConsolePrintsEscaped(t *testing.T) {
	var out, display bytes.Buffer
	k := &console{out: &out, rend: &renderer{w: &display}}
	k.print("The answer:\n" + evil + "\n\tindented\n")
	rawControls(t, "the console", out.String())
	if want := "The answer:\n" + `\x1b[3A\x1b[J\x1b]0;title\a\u009b2J\u202e` + "\nforged\n\tindented\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// hostileDisplay is Scheme that displays ESC[2J (erase the screen), an
// OSC that sets the title, the 8-bit CSI and a bidi override between
// ordinary words.
const hostileDisplay = `(display (string-append "before" (string (integer->char 27)) "[2J"
  (string (integer->char 27)) "]0;title" (string (integer->char 7))
  (string (integer->char 155)) "2J" (string (integer->char #x202e)) "after\n"))
`

const hostileDisplayShown = `before\x1b[2J\x1b]0;title\a\u009b2J\u202eafter`

// What a project's Scheme displays during a run or nodwyn guard goes to
// the display (stderr) escaped, as the renderer's own lines are.
func TestSchemeDisplayOnTheDisplayIsEscaped(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, ".nodwyn", "init.scm"), hostileDisplay)
	script := filepath.Join(home, "m.script")
	writeFile(t, script, "> reply\nDone.\n> reply\nChecked: done.\n")
	getenv := homeEnv(home)
	code, out, errOut := nodwyn(getenv, "", "run", "--unattended", "--trust-project", "--script", script, "-C", proj, "look")
	if code != 0 {
		t.Fatalf("nodwyn run: exit %d\n%s%s", code, out, errOut)
	}
	rawControls(t, "nodwyn run's display", errOut)
	if !strings.Contains(errOut, hostileDisplayShown) {
		t.Errorf("nodwyn run does not show what Scheme displayed: %q", errOut)
	}

	if code, out, errOut = nodwyn(getenv, "", "trust", "-C", proj); code != 0 {
		t.Fatalf("nodwyn trust: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = nodwyn(getenv, "", "guard", "-C", proj, "--", "ls")
	if code != 0 {
		t.Fatalf("nodwyn guard: exit %d\n%s%s", code, out, errOut)
	}
	rawControls(t, "nodwyn guard's stderr", errOut)
	if !strings.Contains(errOut, hostileDisplayShown) {
		t.Errorf("nodwyn guard does not show what Scheme displayed: %q", errOut)
	}
}

// An error nodwyn ends with may quote a project's Scheme: it is said
// escaped.
func TestAnErrorIsSaidEscaped(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".nodwyn"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, ".nodwyn", "init.scm"),
		`(error (string-append "broken" (string (integer->char 27)) "[2J" (string (integer->char 155)) "here"))`)
	script := filepath.Join(home, "m.script")
	writeFile(t, script, "> reply\nDone.\n")
	code, _, errOut := nodwyn(homeEnv(home), "", "run", "--unattended", "--trust-project", "--script", script, "-C", proj, "look")
	if code == 0 {
		t.Fatal("a run whose init.scm raises an error went on")
	}
	rawControls(t, "the error", errOut)
	if !strings.Contains(errOut, `broken\x1b[2J\u009bhere`) {
		t.Errorf("the error does not say what the project's Scheme said: %q", errOut)
	}
}

// A confirm question shows the command, the checker (a project's may name
// it) and the reason escaped: nothing in them can erase the question or
// rewrite what the person is asked to allow.
func TestConfirmQuestionsAreEscaped(t *testing.T) {
	req := guard.Request{Tool: "shell-exec", Args: map[string]any{"command": "rm -rf build" + evil}}
	d := guard.Decision{Verdict: guard.SecurityConfirm, Checker: "project" + evil, Reason: "it deletes" + evil}
	check := func(what, out string) {
		t.Helper()
		rawControls(t, what, out)
		onOneLine(t, what, out, "SECURITY confirm (project"+evilShown+"): it deletes")
		onOneLine(t, what, out, "shell-exec: rm -rf build")
	}

	// nodwyn scheme's question, answered on its terminal.
	in, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	w.WriteString("n\n")
	w.Close()
	var out bytes.Buffer
	if yes, _ := lineConfirm(in, &out)(context.Background(), req, d); yes {
		t.Error("n was taken as yes")
	}
	check("nodwyn scheme's question", out.String())

	// The console's.
	var display bytes.Buffer
	k := &console{rend: &renderer{w: &display}}
	k.ask(&question{req: req, d: d})
	check("the console's question", display.String())
}
