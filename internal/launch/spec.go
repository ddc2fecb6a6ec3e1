// Package launch is a run, whoever asked for it: nodwyn run and nodwyn chat
// in their own process, or the daemon's run.start and run.resume. Spec holds
// every parameter of a run; Run is the one path from a Spec to a session's
// outcome (trust, configuration, the rules between the mode flags, the
// folder's checks, the provider, the contract, the session). It knows
// nothing of the command line (kong) or of the daemon's wire (rpc): the CLI
// turns its flags into a Spec, the daemon decodes run.start's parameters
// into one, and each maps Run's *Error to its own codes.
package launch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Spec is every parameter of a run that changes it. It is also the wire
// type of the daemon's run.start and run.resume (docs/rpc.md): its json
// names are their parameters, so a new run flag is one field here, one
// kong field and one line of the CLI's conversion (cli.RunCmd.spec).
//
// Resume comes first and Folder next: the daemon lists run.start's
// parameters (all but id) and run.resume's (all but folder and contract)
// in this order.
type Spec struct {
	Resume         string   `json:"id,omitempty"` // --resume: the session to continue (an id, its start, or "last")
	Folder         string   `json:"folder,omitempty"`
	Instruction    string   `json:"instruction,omitempty"`
	Profile        string   `json:"profile,omitempty"`
	Sandbox        string   `json:"sandbox,omitempty"` // "" or "container"
	Yolo           bool     `json:"yolo,omitempty"`
	Unattended     bool     `json:"unattended,omitempty"`
	NoConfirm      bool     `json:"no_confirm,omitempty"`
	Timeout        Duration `json:"timeout,omitempty"` // 0: [limits] timeout; negative: none
	RequestTimeout Duration `json:"request_timeout,omitempty"`
	IdleTimeout    Duration `json:"idle_timeout,omitempty"`
	MaxToolCalls   int      `json:"max_tool_calls,omitempty"`
	Provider       string   `json:"provider,omitempty"`
	Model          string   `json:"model,omitempty"`
	BaseURL        string   `json:"base_url,omitempty"`
	Script         string   `json:"script,omitempty"`
	Trajectory     string   `json:"trajectory,omitempty"`
	Contract       string   `json:"contract,omitempty"`
	TrustProject   bool     `json:"trust_project,omitempty"`
	NoKernelFloor  bool     `json:"no_kernel_floor,omitempty"`
	Writable       []string `json:"writable,omitempty"`
	Judge          bool     `json:"judge,omitempty"`       // --judge: the run's model judges
	JudgeModel     string   `json:"judge_model,omitempty"` // --judge=MODEL (implies Judge)
	NoKeychain     bool     `json:"no_keychain,omitempty"`
	Reasoning      string   `json:"reasoning,omitempty"`
}

// Duration is a time.Duration that is a Go duration string on the wire
// ("30m0s", "90s"); a value that is not one, or not positive, is refused
// with a *DurationError.
type Duration time.Duration

// Std is d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// MarshalJSON writes d as time.Duration's String.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a positive Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err // a *json.UnmarshalTypeError: not a string
	}
	t, err := time.ParseDuration(s)
	if err != nil || t <= 0 {
		return &DurationError{Value: s}
	}
	*d = Duration(t)
	return nil
}

// DurationError is a duration parameter that is not a positive Go
// duration.
type DurationError struct{ Value string }

func (e *DurationError) Error() string { return strconv.Quote(e.Value) + " is not a duration" }

// FixFor says how to give the parameter named param (rpc.DecodeParams
// puts it in the error's data).
func (e *DurationError) FixFor(param string) string {
	return fmt.Sprintf("give %s as a Go duration such as \"30m\" or \"90s\"", param)
}
