package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/scheme"
)

// The built-in text of a message the session says (say's fallback, said
// when the message fails or is no string) is what prompts/messages.scm
// says: the same runs, once with messages.scm's definitions and once with
// each of them bound to a number (so the built-in text is said, and a
// note says so), give the model the same words. The messages of
// interruptions are TestTheBuiltInInterruptionMessagesAreMessagesScms's.
func TestTheBuiltInMessagesAreMessagesScms(t *testing.T) {
	const builtin = `
(define refusal-message 0)
(define not-approved-message 0)
(define no-such-tool-message 0)
(define bad-arguments-message 0)
(define continue-message 0)
(define interrupted-call-not-run 0)
`
	// Calls that do not run: refused, no such tool, not approved, bad JSON.
	calls := func(init string) ([]string, int) {
		opts := baseOpts(t)
		key := plantCanary(t)
		if init != "" {
			writeInit(t, &opts, init)
		}
		r := runSession(t, opts, `
> reply
call fs-read {"path": "`+key+`"}
> reply
call fs-delete {"path": "a"}
> reply
call shell-exec {"command": "curl https://example.com"}
> reply
rawcall fs-write {"path": "a.txt", "content": "unterminated
> reply
done
`)
		reqs := r.model.Requests()
		if len(reqs) != 5 {
			t.Fatalf("%d requests: %s", len(reqs), r.out.Text)
		}
		home := filepath.Dir(filepath.Dir(key)) // each run's own
		var read []string
		for _, req := range reqs[1:] {
			read = append(read, strings.ReplaceAll(lastMessage(req).Content, home, "HOME"))
		}
		return read, len(r.notes("prompts: "))
	}
	// A resumed run: its task, and the answer to a call left unanswered.
	resumed := func(init string) ([]string, int) {
		opts := baseOpts(t)
		if init != "" {
			writeInit(t, &opts, init)
		}
		msgs, _ := json.Marshal([]provider.Message{
			{Role: provider.RoleUser, Content: "the task"},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "shell-exec", Arguments: `{"command": "true"}`}}},
		})
		id := store.NewSessionID()
		if err := opts.Store.SaveState(&store.SessionState{ID: id, Folder: opts.Folder, Instruction: "the task", Status: "interrupted", Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		opts.ResumeID, opts.Instruction = id, ""
		r := runSession(t, opts, "> reply\ndone\n")
		return contents(r.model.Requests()[0].Messages), len(r.notes("prompts: "))
	}
	for name, run := range map[string]func(string) ([]string, int){"calls that do not run": calls, "a resumed run": resumed} {
		scm, scmNotes := run("")
		goText, goNotes := run(builtin)
		if !slices.Equal(scm, goText) {
			t.Errorf("%s: prompts/messages.scm says\n%q\nthe built-in texts say\n%q", name, scm, goText)
		}
		if scmNotes != 0 || goNotes == 0 {
			t.Errorf("%s: %d notes of built-in text with messages.scm, %d without: the built-in text was not what was said", name, scmNotes, goNotes)
		}
	}
}

// The same for the messages of interruptions: a command stopped by Ctrl-C
// in the console (stopped-call-result), the
// message after it (person-interrupted-message), and a resumed session's
// answers to a call that ran (interrupted-call-result) and one that was
// running when its process ended (interrupted-call-stopped).
func TestTheBuiltInInterruptionMessagesAreMessagesScms(t *testing.T) {
	const builtin = `
(define stopped-call-result 0)
(define person-interrupted-message 0)
(define interrupted-call-result 0)
(define interrupted-call-stopped 0)
`
	secs := regexp.MustCompile(`[0-9]+\.[0-9] s`) // how long a call ran
	interrupted := func(init, command string) ([]string, int) {
		opts := baseOpts(t)
		if init != "" {
			writeInit(t, &opts, init)
		}
		c := newConsole(t, opts, `
> reply
call shell-exec {"command": "`+command+`; touch started; sleep 30"}
> reply
Going on.
`)
		if out := continueInterrupted(c, opts.Folder, "wait"); out.Status != "interrupted" {
			t.Fatalf("status %q, want interrupted", out.Status)
		}
		c.s.Continue(context.Background(), "go on")
		var read []string
		for _, m := range c.model.Requests()[1].Messages[2:] {
			read = append(read, secs.ReplaceAllString(m.Content, "N s"))
		}
		return read, promptNotes(c)
	}
	resumed := func(init string) ([]string, int) {
		opts := baseOpts(t)
		if init != "" {
			writeInit(t, &opts, init)
		}
		c := newConsole(t, opts, "> reply\nDone.\n")
		s := c.s
		killedMidReply(s, []string{"echo ran", "sleep 60"}, 2, map[string]string{"c1": "ran\n"})
		s.closeInterrupted(context.Background())
		var read []string
		for _, m := range s.messages[2:] {
			read = append(read, secs.ReplaceAllString(m.Content, "N s"))
		}
		return read, promptNotes(c)
	}
	runs := map[string]func(string) ([]string, int){
		"a command stopped with output": func(init string) ([]string, int) { return interrupted(init, "echo partial-output") },
		"a resumed session":             resumed,
	}
	for name, run := range runs {
		scm, scmNotes := run("")
		goText, goNotes := run(builtin)
		if len(scm) < 2 || !slices.Equal(scm, goText) {
			t.Errorf("%s: prompts/messages.scm says\n%q\nthe built-in texts say\n%q", name, scm, goText)
		}
		if scmNotes != 0 || goNotes == 0 {
			t.Errorf("%s: %d notes of built-in text with messages.scm, %d without: the built-in text was not what was said", name, scmNotes, goNotes)
		}
	}
}

// promptNotes counts the notes that say a built-in text was said.
func promptNotes(c *consoleRun) int {
	n := 0
	for _, ev := range c.of("note") {
		if text, _ := ev.Data["text"].(string); strings.HasPrefix(text, "prompts: ") {
			n++
		}
	}
	return n
}

// stopped-call-result's two forms (a call that printed nothing, one that
// printed) and interrupted-call-stopped, said by messages.scm, are the
// built-in texts.
func TestTheStoppedMessagesAreTheBuiltInTexts(t *testing.T) {
	c := newConsole(t, baseOpts(t), "> reply\nDone.\n")
	str := scheme.NewString
	for _, out := range []string{"", " \n", "partial\n"} {
		want := stoppedText("shell-exec", "1.5 s", "the deadline passed", out)
		if got := c.s.say(context.Background(), "stopped-call-result", "", str("shell-exec"), str("1.5 s"), str("the deadline passed"), str(out)); got != want {
			t.Errorf("output %q: messages.scm says\n%q\nthe built-in text is\n%q", out, got, want)
		}
	}
	want := unfinishedText("shell-exec", "2.0 s")
	if got := c.s.say(context.Background(), "interrupted-call-stopped", "", str("shell-exec"), str("2.0 s")); got != want {
		t.Errorf("messages.scm says\n%q\nthe built-in text is\n%q", got, want)
	}
}
