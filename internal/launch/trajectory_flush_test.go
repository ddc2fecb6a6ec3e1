package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/store"
)

// A writer that gets no further events still writes its steps on a timer,
// the file carries the session id, notes are not system steps and the run's
// status sits under final_metrics.extra (Harbor forbids unknown fields).
func TestTrajectoryTimerFlushAndShape(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.json")
	tw, err := NewTrajectory(p, "m", "v")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tw.Event(store.Event{Type: "run.start", Time: now, Data: map[string]any{"session": "s1"}})
	tw.Event(store.Event{Type: "message", Time: now, Data: map[string]any{"text": "hi"}})
	tw.Event(store.Event{Type: "note", Time: now, Data: map[string]any{"text": "a note"}})
	tw.Event(store.Event{Type: "model.reply", Time: now, Data: map[string]any{"text": "ok"}})
	// No event follows: the timer writes the reply. Wait for the file to
	// have it (a generous deadline; the timer fires after half a second).
	var got map[string]any
	var b []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		b, _ = os.ReadFile(p)
		got = nil
		json.Unmarshal(b, &got)
		if steps, _ := got["steps"].([]any); len(steps) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the timer never wrote the second step:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got["session_id"] != "s1" {
		t.Fatalf("session_id = %v", got["session_id"])
	}
	steps, _ := got["steps"].([]any)
	if len(steps) != 2 {
		t.Fatalf("want 2 steps flushed by the timer, got %d: %s", len(steps), b)
	}
	for _, s := range steps {
		if s.(map[string]any)["source"] == "system" {
			t.Fatalf("note became a system step: %s", b)
		}
	}
	tw.Event(store.Event{Type: "run.end", Time: now, Data: map[string]any{"status": "done"}})
	b, _ = os.ReadFile(p)
	json.Unmarshal(b, &got)
	fm := got["final_metrics"].(map[string]any)
	if _, bad := fm["status"]; bad {
		t.Fatalf("final_metrics.status is not a Harbor field: %s", b)
	}
	if fm["extra"].(map[string]any)["status"] != "done" {
		t.Fatalf("status not in extra: %s", b)
	}
}

// A trajectory that takes long to write is written less often: at most a
// twentieth of the run goes to rewriting it (hours of steps are megabytes).
func TestTrajectoryWritesSpaceOutWithTheirCost(t *testing.T) {
	tw := &Trajectory{}
	if got := tw.every(); got != flushEvery {
		t.Errorf("a quick write: every %s, want %s", got, flushEvery)
	}
	tw.cost = 100 * time.Millisecond
	if got := tw.every(); got != 2*time.Second {
		t.Errorf("a write of 100 ms: every %s, want 2s", got)
	}
	p := filepath.Join(t.TempDir(), "t.json")
	tw, err := NewTrajectory(p, "m", "v")
	if err != nil {
		t.Fatal(err)
	}
	tw.Event(store.Event{Type: "message", Time: time.Now(), Data: map[string]any{"text": "hi"}})
	if tw.cost <= 0 {
		t.Error("the write's cost was not taken")
	}
}
