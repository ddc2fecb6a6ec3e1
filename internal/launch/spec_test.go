package launch

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// A Spec is run.start's parameters: durations are Go duration strings,
// what was not given is left out, and a duration that is not a positive
// one is refused with the fix the daemon gives.
func TestSpecOnTheWire(t *testing.T) {
	s := Spec{Folder: "/p", Instruction: "x", Timeout: Duration(30 * time.Minute), Writable: []string{"/w"}, JudgeModel: "small"}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"folder":"/p","instruction":"x","timeout":"30m0s","writable":["/w"],"judge_model":"small"}`; string(b) != want {
		t.Errorf("marshalled %s, want %s", b, want)
	}
	var back Spec
	if err := json.Unmarshal([]byte(`{"timeout":"90s","idle_timeout":"2m"}`), &back); err != nil || back.Timeout.Std() != 90*time.Second || back.IdleTimeout.Std() != 2*time.Minute {
		t.Errorf("read %+v, %v", back, err)
	}
	for _, bad := range []string{`"soon"`, `"-5m"`, `"0s"`} {
		err := json.Unmarshal([]byte(`{"timeout":`+bad+`}`), &back)
		var de *DurationError
		if !errors.As(err, &de) || de.FixFor("timeout") != `give timeout as a Go duration such as "30m" or "90s"` {
			t.Errorf("timeout %s: %v", bad, err)
		}
	}
}
