package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/store"
)

// While the model is waited for, the status line says for how long and,
// once the model has been silent a while, for how long no data came.
func TestStatusLineSaysHowLongTheModelHasBeenSilent(t *testing.T) {
	var b strings.Builder
	r := &renderer{w: &b, tty: true, start0: time.Now()}
	r.event(store.Event{Type: "model.request"})
	now := time.Now()
	r.activityStart = now.Add(-45 * time.Second)
	r.modelData.Store(now.Add(-30 * time.Second).UnixNano())
	if got, want := r.activityText(now), "step 1: waiting for the model: 45 s, no data for 30 s"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	r.modelData.Store(now.Add(-time.Second).UnixNano()) // data is coming
	if got, want := r.activityText(now), "step 1: waiting for the model: 45 s"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	r.modelData.Store(0) // nothing at all since the request
	if got, want := r.activityText(now), "step 1: waiting for the model: 45 s, no data for 45 s"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	r.draw()
	if !strings.Contains(b.String(), "waiting for the model: ") {
		t.Errorf("drawn %q", b.String())
	}
	r.activity = "step 1: running shell-exec" // anything else keeps its plain form
	if got := r.activityText(r.activityStart.Add(12 * time.Second)); got != "step 1: running shell-exec (12s)" {
		t.Errorf("tool status %q", got)
	}
}
