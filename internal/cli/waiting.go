package cli

import (
	"fmt"
	"strings"
	"time"
)

// silentShown is how long the model must have sent no data before the
// status line says so.
const silentShown = 5 * time.Second

// modelDataNow records that the model sent data (provider.Config.OnEvent:
// the response headers or an event of the reply, not SSE comments or
// pings).
func (r *renderer) modelDataNow() { r.modelData.Store(time.Now().UnixNano()) }

// activityText is the status line's text after the elapsed time. While the
// model is waited for it says for how long, and, once the model has been
// silent for silentShown, for how long no data came:
//
//	step 2: waiting for the model: 45 s, no data for 30 s
//
// (so a stall is seen before --idle-timeout cuts the request). Anything
// else is "ACTIVITY (12s)".
func (r *renderer) activityText(now time.Time) string {
	since := now.Sub(r.activityStart)
	if !strings.HasSuffix(r.activity, "waiting for the model") {
		return fmt.Sprintf("%s (%s)", r.activity, since.Round(time.Second))
	}
	s := fmt.Sprintf("%s: %d s", r.activity, int(since.Seconds()))
	last := r.activityStart
	if ns := r.modelData.Load(); ns != 0 && time.Unix(0, ns).After(last) {
		last = time.Unix(0, ns)
	}
	if silent := now.Sub(last); silent >= silentShown {
		s += fmt.Sprintf(", no data for %d s", int(silent.Seconds()))
	}
	return s
}
