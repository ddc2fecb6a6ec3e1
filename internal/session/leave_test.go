package session

import (
	"strings"
	"testing"
)

// Leaving a command running at its time limit is the profile's setting
// (leave-running), not the guard's lean rule (issue 8 item 2): the lean
// profile leaves it, full stops it, and a project's own profile chooses.
func TestLeavingACommandRunningIsTheProfilesSetting(t *testing.T) {
	for _, tc := range []struct {
		profile string
		leave   bool
	}{{"lean", true}, {"full", false}, {"patient", true}} {
		t.Run(tc.profile, func(t *testing.T) {
			opts := baseOpts(t)
			opts.Profile = tc.profile
			writeInit(t, &opts, `
(define-profile 'patient
  (cons (cons 'leave-running #t) (profile-named 'full)))
`)
			r := runSession(t, opts, `
> reply
call shell-exec {"command": "sleep 30", "timeout": 1}
> reply
done
`)
			res := lastMessage(r.model.Requests()[1]).Content
			if got := strings.Contains(res, "still running in the background"); got != tc.leave {
				t.Errorf("profile %s: left running = %v, want %v: %q", tc.profile, got, tc.leave, res)
			}
		})
	}
}
