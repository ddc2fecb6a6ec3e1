package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/store"
)

// In sandbox mode the loop asks the model once to check its result before
// it finishes (runtime/finish.scm). Nobody typed that message: in the
// trajectory it is a "system" step (ATIF: what the agent system itself puts
// in the context), not a "user" one. The task stays the user's.
func TestTrajectorySandboxFinishCheckIsASystemStep(t *testing.T) {
	scratchInTest(t) // a sandbox-mode run keeps its scratch directory
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	script := filepath.Join(dir, "m.script")
	os.WriteFile(script, []byte("> reply\nDone.\n> reply\nChecked: done.\n"), 0o644)
	traj := filepath.Join(dir, "traj.json")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "--sandbox", "container", "--trajectory", traj, "--script", script, "-C", proj, "say done"},
		strings.NewReader(""), &stdout, &stderr, homeEnv(filepath.Join(dir, "home")))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(traj)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range atifProblems(b) {
		t.Error(p)
	}
	var doc struct {
		Steps []struct {
			Source  string         `json:"source"`
			Message string         `json:"message"`
			Extra   map[string]any `json:"extra"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, st := range doc.Steps {
		sources = append(sources, st.Source)
	}
	if got := strings.Join(sources, " "); got != "user agent system agent" {
		t.Fatalf("steps' sources: %s, want user agent system agent\n%s", got, b)
	}
	if doc.Steps[0].Message != "say done" {
		t.Errorf("the task's step: %q", doc.Steps[0].Message)
	}
	if fc := doc.Steps[2]; fc.Message == "" || fc.Extra["kind"] != "sandbox-finish-check" {
		t.Errorf("the finish check's step: %+v", fc)
	}
	harborValidate(t, traj)
}

// Only the message right after the finish check's note is the system's: a
// later message (a person's, in a console) is a user step again, and a
// note with other words marks nothing.
func TestTrajectoryOnlyTheFinishCheckMessageIsSystem(t *testing.T) {
	scratchInTest(t) // a sandbox-mode run keeps its scratch directory

	const finishCheckNote = "sandbox finish check:" // how runtime/finish.scm's note begins
	p := filepath.Join(t.TempDir(), "t.json")
	tw, err := launch.NewTrajectory(p, "m", "v")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ev := func(typ string, data map[string]any) { tw.Event(store.Event{Type: typ, Time: now, Data: data}) }
	ev("run.start", map[string]any{"session": "s1"})
	ev("message", map[string]any{"text": "the task"})
	ev("model.reply", map[string]any{"text": "done"})
	ev("note", map[string]any{"text": "self-check: the contract's check passed before finishing"})
	ev("message", map[string]any{"text": "a person's next message"})
	ev("model.reply", map[string]any{"text": "ok"})
	ev("note", map[string]any{"text": finishCheckNote + " asked the model to check its result once before finishing"})
	ev("message", map[string]any{"text": "check it"})
	ev("model.reply", map[string]any{"text": "checked"})
	ev("message", map[string]any{"text": "another of the person's"})
	// A finish-check note whose message never came (the run stopped) marks
	// no later message after a reply.
	ev("note", map[string]any{"text": finishCheckNote + " asked"})
	ev("model.reply", map[string]any{"text": "more"})
	ev("message", map[string]any{"text": "the person again"})
	ev("run.end", map[string]any{"status": "finished"})
	tw.Close()
	b, _ := os.ReadFile(p)
	for _, pr := range atifProblems(b) {
		t.Error(pr)
	}
	var doc struct {
		Steps []struct {
			Source string `json:"source"`
		} `json:"steps"`
	}
	json.Unmarshal(b, &doc)
	var sources []string
	for _, st := range doc.Steps {
		sources = append(sources, st.Source)
	}
	want := "user agent user agent system agent user agent user"
	if got := strings.Join(sources, " "); got != want {
		t.Fatalf("sources %s, want %s\n%s", got, want, b)
	}
}
