package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

// testEnv gives a test its own HOME, XDG directories and TMPDIR.
func testEnv(t *testing.T) (folder string, dirs config.Dirs, st *store.Store) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	tmp := filepath.Join(root, "tmp")
	folder = filepath.Join(root, "proj")
	for _, d := range []string{home, tmp, folder} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	dirs = config.ResolveDirs(os.Getenv, home)
	st, err := store.Open(dirs.Data)
	if err != nil {
		t.Fatal(err)
	}
	return folder, dirs, st
}

func script(t *testing.T, text string) *provider.Script {
	t.Helper()
	s, err := provider.ParseScript("test.script", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type run struct {
	out    Outcome
	events []store.Event
	model  *provider.Script
	s      *Session
}

func (r *run) notes(prefix string) []string {
	var out []string
	for _, ev := range r.events {
		if ev.Type == "note" {
			if text, _ := ev.Data["text"].(string); strings.HasPrefix(text, prefix) {
				out = append(out, text)
			}
		}
	}
	return out
}

// runSession runs one whole session with a scripted model.
func runSession(t *testing.T, opts Options, model string) *run {
	t.Helper()
	r := &run{model: script(t, model)}
	opts.Model = r.model
	opts.Sinks = append(opts.Sinks, func(ev store.Event) { r.events = append(r.events, ev) })
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("session.New: %v", err)
	}
	r.s = s
	r.out = s.Run(context.Background())
	s.Close()
	return r
}

func baseOpts(t *testing.T) Options {
	folder, dirs, st := testEnv(t)
	return Options{Folder: folder, Instruction: "do the task", Dirs: dirs, Store: st, Unattended: true}
}

// The loop's finish check: in sandbox mode the first time a turn ends on the
// model's word the loop asks once for a check; without sandbox mode it never
// does.
func TestASandboxRunIsAskedOnceToCheckItsResult(t *testing.T) {
	const model = `
> reply
I am done.
> reply
Checked: still done.
> reply
Really done.
`
	for _, sandbox := range []bool{true, false} {
		t.Run(map[bool]string{true: "sandbox", false: "default"}[sandbox], func(t *testing.T) {
			opts := baseOpts(t)
			opts.Sandbox = sandbox
			r := runSession(t, opts, model)
			if r.out.Status != "finished" {
				t.Fatalf("status %q (%s), want finished", r.out.Status, r.out.Text)
			}
			reqs := r.model.Requests()
			notes := r.notes("sandbox finish check:")
			if sandbox {
				if len(reqs) != 2 || len(notes) != 1 {
					t.Fatalf("sandbox: %d requests and %d finish-check notes, want 2 and 1", len(reqs), len(notes))
				}
				last := lastMessage(reqs[1])
				if last.Role != provider.RoleUser || !strings.Contains(last.Content, "someone who did not watch you work") ||
					!strings.Contains(last.Content, "answer key") {
					t.Fatalf("the finish check said %q", last.Content)
				}
				if r.out.Text != "Checked: still done." {
					t.Fatalf("the run ended on %q, want the reply after the check", r.out.Text)
				}
			} else if len(reqs) != 1 || len(notes) != 0 {
				t.Fatalf("default: %d requests and %d finish-check notes, want 1 and 0", len(reqs), len(notes))
			}
		})
	}
}

// The same call four times in a row: in sandbox mode a warning after the
// 4th and 8th result, saying how many times it has run (4, then 8; issue 8
// item 20), and the run goes on; outside it the run stops.
func TestASandboxRunIsWarnedOfARepeatedCallAndGoesOn(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 9; i++ {
		b.WriteString("> reply\ncall shell-exec {\"command\": \"echo polling\"}\n")
	}
	b.WriteString("> reply\nThe job finished.\n")
	model := b.String()
	const warning = "[this exact call has now run "

	t.Run("sandbox", func(t *testing.T) {
		opts := baseOpts(t)
		opts.Sandbox = true
		r := runSession(t, opts, model)
		if r.out.Status != "finished" {
			t.Fatalf("status %q (%s), want finished", r.out.Status, r.out.Text)
		}
		var warned []int
		for i, req := range r.model.Requests() {
			last := lastMessage(req)
			if last.Role == provider.RoleTool && strings.Contains(last.Content, warning) {
				warned = append(warned, i) // request i carries the result of call i
			}
		}
		if len(warned) != 2 || warned[0] != 4 || warned[1] != 8 {
			t.Fatalf("warnings after calls %v, want after the 4th and 8th", warned)
		}
		for _, i := range warned {
			got := lastMessage(r.model.Requests()[i]).Content
			if want := fmt.Sprintf("%s%d times in a row;", warning, i); !strings.Contains(got, want) {
				t.Errorf("the warning after call %d: %q, want it to say %q", i, got[strings.Index(got, warning):], want)
			}
		}
		if n := len(r.notes("progress warning:")); n != 2 {
			t.Fatalf("%d progress-warning notes, want 2", n)
		}
	})
	t.Run("default", func(t *testing.T) {
		opts := baseOpts(t)
		r := runSession(t, opts, model)
		if r.out.Status != "no-progress" {
			t.Fatalf("status %q, want no-progress", r.out.Status)
		}
		if n := len(r.model.Requests()); n != 4 {
			t.Fatalf("%d requests, want the run stopped after the 4th identical call", n)
		}
		if _, saw := modelSaw(r.model.Requests(), warning); saw {
			t.Fatal("a warning outside sandbox mode")
		}
	})
}

// The warning is appended after fold-result, so a folded result keeps it.
func TestProgressRepeatsWarnInSandboxMode(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 4; i++ {
		b.WriteString("> reply\ncall shell-exec {\"command\": \"seq 1 20000\"}\n")
	}
	b.WriteString("> reply\ndone\n")
	opts := baseOpts(t)
	opts.Sandbox = true
	r := runSession(t, opts, b.String())
	reqs := r.model.Requests()
	if len(reqs) < 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := lastMessage(reqs[4]).Content
	if !strings.Contains(last, "characters folded") {
		t.Fatalf("the long result was not folded: %.200q", last)
	}
	if !strings.HasSuffix(strings.TrimSpace(last), "before running it again]") {
		t.Fatalf("the warning is not at the end of the folded result: …%q", last[len(last)-200:])
	}
}

// No turn is told "No file has changed" in sandbox mode; the full profile in
// a git work tree says it otherwise.
func TestNoFileHasChangedReminder(t *testing.T) {
	const model = `
> reply
Nothing to do.
> reply
Really nothing.
> reply
Still nothing.
`
	for _, sandbox := range []bool{false, true} {
		opts := baseOpts(t)
		gitInit(t, opts.Folder)
		opts.Sandbox = sandbox
		opts.Profile = "full"
		r := runSession(t, opts, model)
		_, told := modelSaw(r.model.Requests(), "No file has changed")
		if told == sandbox {
			t.Errorf("sandbox=%v: told %v", sandbox, told)
		}
	}
}

// The scratch directory is removed when a session closes, kept in sandbox
// mode.
func TestScratchKeptOnlyInSandboxMode(t *testing.T) {
	for _, sandbox := range []bool{false, true} {
		opts := baseOpts(t)
		opts.Sandbox = sandbox
		r := runSession(t, opts, "> reply\ndone\n")
		_, err := os.Stat(r.s.Scratch())
		if kept := err == nil; kept != sandbox {
			t.Errorf("sandbox=%v: scratch kept=%v", sandbox, kept)
		}
		if !strings.HasPrefix(filepath.Base(r.s.Scratch()), "nodwyn-scratch-"+r.s.ID+"-") {
			t.Errorf("scratch %s is not named for the session", r.s.Scratch())
		}
		if sandbox {
			os.RemoveAll(r.s.Scratch())
		}
	}
}

// The lean profile's first request — system prompt plus tool schemas — stays
// under 1,000 tokens (chars/4), with and without sandbox mode, and in a
// working copy (two more tools and the working-copy sentence).
func TestLeanFirstRequestIsSmall(t *testing.T) {
	for _, tc := range []struct{ sandbox, copy bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		sandbox := tc.sandbox
		opts := baseOpts(t)
		opts.Sandbox = sandbox
		opts.Profile = "lean"
		if tc.copy {
			opts.ConfigSeam = config.Seam{Mode: "working_copy"}
		}
		r := runSession(t, opts, "> reply\ndone\n")
		req := r.model.Requests()[0]
		chars := len(req.System)
		for _, tool := range req.Tools {
			chars += len(tool.Name) + len(tool.Description) + len(mustJSON(t, tool.Parameters))
		}
		t.Logf("%+v: %d chars, ~%d tokens, %d tools", tc, chars, chars/4, len(req.Tools))
		if chars/4 > 1000 {
			t.Errorf("%+v: the lean first request is %d tokens, over 1,000", tc, chars/4)
		}
		if tc.copy && (!strings.Contains(req.System, "fresh copy of the folder") || len(req.Tools) != 11) {
			t.Errorf("working copy: %d tools, prompt %q", len(req.Tools), req.System)
		}
		if sandbox && !strings.HasPrefix(req.System, "You are a coding agent working in "+opts.Folder+", unattended: nobody approves or answers your calls. This machine is a disposable sandbox") {
			t.Errorf("the sandbox prompt does not open with the seed's sentences: %q", req.System[:200])
		}
	}
}

// A reply with malformed tool-call JSON goes back to the model as an error
// result; the run goes on.
func TestMalformedToolArgumentsGoBackAsAnError(t *testing.T) {
	opts := baseOpts(t)
	r := runSession(t, opts, `
> reply
rawcall fs-write {"path": "a.txt", "content": "unterminated
> reply if result contains not valid JSON
call fs-write {"path": "a.txt", "content": "fixed\n"}
> reply
done
`)
	if r.out.Status != "finished" {
		t.Fatalf("status %q: %s", r.out.Status, r.out.Text)
	}
	reqs := r.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	bad := lastMessage(reqs[1])
	if !bad.IsError || !strings.Contains(bad.Content, "send one JSON object") {
		t.Fatalf("the malformed call's result: %+v", bad)
	}
	if b, err := os.ReadFile(filepath.Join(opts.Folder, "a.txt")); err != nil || string(b) != "fixed\n" {
		t.Fatalf("a.txt: %q, %v", b, err)
	}
}

// What a tool returns is redacted before the model reads it, and nothing of
// a credential reaches the log in clear.
func TestCredentialsAreRedactedForTheModelAndTheLog(t *testing.T) {
	const secret = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
	opts := baseOpts(t)
	if err := os.WriteFile(filepath.Join(opts.Folder, "notes.txt"), []byte("token: "+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runSession(t, opts, `
> reply
call fs-read {"path": "notes.txt"}
> reply
call shell-exec {"command": "cat notes.txt"}
> reply
done
`)
	if part, saw := modelSaw(r.model.Requests(), secret); saw {
		t.Fatalf("the model was shown the token: %q", part)
	}
	log, err := os.ReadFile(opts.Store.LogPath(r.s.ID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), secret) || strings.Contains(string(log), secret[4:]) {
		t.Fatal("the log holds the token in clear")
	}
	if !strings.Contains(string(log), "REDACTED") {
		t.Fatal("the log shows no redaction at all")
	}
}

// The finish check waits for the profile's reminders: it is said when a turn
// ends on the model's word with no reminder due, once.
func TestTheFinishCheckComesAfterTheProfilesReminders(t *testing.T) {
	opts := baseOpts(t)
	opts.Sandbox = true
	writeInit(t, &opts, `
(define reminded #f)
(define-profile 'reminding
  (list (cons 'turn-end (lambda (reply)
                          (if reminded #f (begin (set! reminded #t) "REMINDER: run the tests."))))))
`)
	opts.Profile = "reminding"
	r := runSession(t, opts, "> reply\nfirst end\n> reply\nsecond end\n> reply\nthird end\n> reply\nfourth end\n")
	reqs := r.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (reminder, then the finish check, then the end)", len(reqs))
	}
	if last := lastMessage(reqs[1]).Content; !strings.HasPrefix(last, "REMINDER") {
		t.Errorf("the second request carries %q, want the profile's reminder", last)
	}
	if last := lastMessage(reqs[2]).Content; !strings.Contains(last, "someone who did not watch you work") {
		t.Errorf("the third request carries %q, want the finish check", last)
	}
}

// The full profile's shell-exec description says what happens to what a
// command starts in the background: it keeps running in sandbox mode, it is
// stopped otherwise. The saved state records sandbox mode.
func TestShellExecDescriptionAndStateFollowSandboxMode(t *testing.T) {
	for _, sandbox := range []bool{false, true} {
		opts := baseOpts(t)
		opts.Sandbox, opts.Profile = sandbox, "full"
		r := runSession(t, opts, "> reply\ndone\n")
		var desc string
		for _, tool := range r.model.Requests()[0].Tools {
			if tool.Name == "shell-exec" {
				desc = tool.Description
			}
		}
		keeps := strings.Contains(desc, "keeps running after it ends")
		stops := strings.Contains(desc, "is stopped when it ends")
		if keeps != sandbox || stops == sandbox {
			t.Errorf("sandbox=%v: shell-exec's description: %q", sandbox, desc)
		}
		st, err := opts.Store.LoadState(r.s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Sandbox != sandbox || st.Unattended != true {
			t.Errorf("sandbox=%v: saved state says sandbox=%v unattended=%v", sandbox, st.Sandbox, st.Unattended)
		}
		if sandbox {
			os.RemoveAll(r.s.Scratch())
		}
	}
}

// (budget-left) reports what is left of the run's budgets to Scheme.
func TestBudgetLeftIsWhatTheRunHasLeft(t *testing.T) {
	opts := baseOpts(t)
	opts.MaxToolCalls = 5
	opts.Timeout = time.Hour
	writeInit(t, &opts, `
(define-profile 'probe
  (list (cons 'turn-end (lambda (reply)
                          (log-note (format #f "budget: ~s" (budget-left)))
                          #f))))
`)
	opts.Profile = "probe"
	r := runSession(t, opts, "> reply\ncall fs-find {\"pattern\": \"*\"}\n> reply\ndone\n")
	notes := r.notes("budget: ")
	if len(notes) != 1 || !strings.Contains(notes[0], "(tool-calls . 4)") || !regexp.MustCompile(`\(seconds \. 3[56]\d\d\)`).MatchString(notes[0]) {
		t.Fatalf("notes %q", notes)
	}
}
