package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/store"
)

// An ATIF trajectory (Harbor's Agent Trajectory Interchange Format, v1.4),
// rewritten whole (temporary file, then rename) as steps come, at most twice
// a second and at the end, so a run the harness cuts off still leaves a
// valid file.

type atifAgent struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	ModelName string `json:"model_name,omitempty"`
}

type atifToolCall struct {
	ToolCallID   string         `json:"tool_call_id"`
	FunctionName string         `json:"function_name"`
	Arguments    map[string]any `json:"arguments"`
}

type atifResult struct {
	SourceCallID string `json:"source_call_id,omitempty"`
	Content      string `json:"content"`
}

type atifObservation struct {
	Results []atifResult `json:"results"`
}

type atifMetrics struct {
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	CachedTokens     int      `json:"cached_tokens"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
}

type atifStep struct {
	StepID      int              `json:"step_id"`
	Timestamp   string           `json:"timestamp"`
	Source      string           `json:"source"`
	Message     string           `json:"message"`
	ToolCalls   []atifToolCall   `json:"tool_calls,omitempty"`
	Observation *atifObservation `json:"observation,omitempty"`
	Metrics     *atifMetrics     `json:"metrics,omitempty"`
	Extra       map[string]any   `json:"extra,omitempty"`
}

type atifFinal struct {
	TotalPromptTokens     int            `json:"total_prompt_tokens"`
	TotalCompletionTokens int            `json:"total_completion_tokens"`
	TotalCachedTokens     int            `json:"total_cached_tokens"`
	TotalCostUSD          *float64       `json:"total_cost_usd,omitempty"`
	TotalSteps            int            `json:"total_steps"`
	Extra                 map[string]any `json:"extra,omitempty"`
}

type atifTrajectory struct {
	SchemaVersion string         `json:"schema_version"`
	SessionID     string         `json:"session_id"`
	Agent         atifAgent      `json:"agent"`
	Steps         []atifStep     `json:"steps"`
	FinalMetrics  atifFinal      `json:"final_metrics"`
	Extra         map[string]any `json:"extra,omitempty"`
}

// Trajectory writes a run's events as an ATIF trajectory (Harbor's format)
// to a file, as the run goes: nodwyn run --trajectory, run.start's
// trajectory.
type Trajectory struct {
	mu      sync.Mutex
	path    string
	t       atifTrajectory
	pending []string      // call ids of the last agent step not yet answered
	system  string        // what the next message is when nodwyn, not a person, says it ("" for a person's)
	flushed time.Time     // when the file was last written
	cost    time.Duration // how long that write took
	dirty   bool
	timer   *time.Timer
}

// NewTrajectory is a trajectory for the file path, of the model's run by
// nodwyn version.
func NewTrajectory(path, model, version string) (*Trajectory, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	tw := &Trajectory{path: abs, t: atifTrajectory{
		SchemaVersion: "ATIF-v1.4",
		Agent:         atifAgent{Name: "nodwyn", Version: version, ModelName: model},
		Steps:         []atifStep{},
	}}
	// The file appears with the first step (Harbor rejects a trajectory
	// with none); whether it can be written is known now.
	tmp := abs + ".tmp"
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		return nil, err
	}
	os.Remove(tmp)
	return tw, nil
}

func (tw *Trajectory) add(st atifStep) *atifStep {
	st.StepID = len(tw.t.Steps) + 1
	tw.t.Steps = append(tw.t.Steps, st)
	tw.t.FinalMetrics.TotalSteps = len(tw.t.Steps)
	return &tw.t.Steps[len(tw.t.Steps)-1]
}

// Event adds what ev says to the trajectory: a run's sink.
func (tw *Trajectory) Event(ev store.Event) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	ts := ev.Time.UTC().Format(time.RFC3339Nano)
	d, _ := event.Decode(ev.Type, ev.Data)
	switch e := d.(type) {
	case event.RunStart:
		tw.t.SessionID = e.Session
		if e.KernelFloor != "" {
			tw.extra("kernel_floor", e.KernelFloor)
		}
		if e.Confinement != (event.Confinement{}) {
			tw.extra("confinement", e.Confinement)
		}
	case event.NetConn:
		// A connection through the session's egress proxy: in the extra
		// of the agent step whose command made it (the last one so far).
		for i := len(tw.t.Steps) - 1; i >= 0; i-- {
			if st := &tw.t.Steps[i]; st.Source == "agent" {
				if st.Extra == nil {
					st.Extra = map[string]any{}
				}
				conns, _ := st.Extra["net_conns"].([]any)
				st.Extra["net_conns"] = append(conns, event.Map(e)) // the event's data, as the log has it
				break
			}
		}
	case event.Message:
		st := atifStep{Timestamp: ts, Source: "user", Message: e.Text}
		if tw.system != "" {
			// ATIF's "system" steps are what the agent system itself puts
			// in the context (Harbor's rfcs/0001-trajectory-format.md); the
			// model receives it as a user message, but no user wrote it.
			st.Source, st.Extra = "system", map[string]any{"kind": tw.system}
			tw.system = ""
		}
		tw.add(st)
	case event.ModelReply:
		tw.system = ""
		m := &atifMetrics{PromptTokens: e.InputTokens, CompletionTokens: e.OutputTokens, CachedTokens: e.CachedTokens}
		if e.CostUSD != nil {
			c := *e.CostUSD
			m.CostUSD = &c
			total := c
			if tw.t.FinalMetrics.TotalCostUSD != nil {
				total += *tw.t.FinalMetrics.TotalCostUSD
			}
			tw.t.FinalMetrics.TotalCostUSD = &total
		}
		st := atifStep{Timestamp: ts, Source: "agent", Message: e.Text, Metrics: m}
		tw.pending = tw.pending[:0]
		for _, c := range e.ToolCalls {
			args := c.Arguments
			if c.RawArguments != "" { // not a JSON object
				args = map[string]any{"raw": c.RawArguments}
			}
			st.ToolCalls = append(st.ToolCalls, atifToolCall{ToolCallID: c.ID, FunctionName: c.Name, Arguments: args})
			tw.pending = append(tw.pending, c.ID)
		}
		tw.t.FinalMetrics.TotalPromptTokens += e.InputTokens
		tw.t.FinalMetrics.TotalCompletionTokens += e.OutputTokens
		tw.t.FinalMetrics.TotalCachedTokens += e.CachedTokens
		tw.add(st)
	case event.ToolResult:
		if e.Within != "" {
			return // a Scheme tool's own call: the model saw only the tool's result
		}
		id := e.ID
		if i := slices.Index(tw.pending, id); i >= 0 {
			tw.pending = slices.Delete(tw.pending, i, i+1)
		} else if id == "" && len(tw.pending) > 0 { // a log from before the id was on tool.result
			id, tw.pending = tw.pending[0], tw.pending[1:]
		}
		// The observation belongs to the agent step that made the call.
		for i := len(tw.t.Steps) - 1; i >= 0; i-- {
			if tw.t.Steps[i].Source == "agent" {
				st := &tw.t.Steps[i]
				if st.Observation == nil {
					st.Observation = &atifObservation{}
				}
				st.Observation.Results = append(st.Observation.Results, atifResult{SourceCallID: id, Content: e.Output})
				break
			}
		}
	case event.Note:
		// Log notes were never shown to the model: not a step, kept aside.
		if strings.HasPrefix(e.Text, finishCheckNote) {
			// runtime/finish.scm notes the check, then adds its message.
			tw.system = "sandbox-finish-check"
		}
		notes, _ := tw.t.Extra["notes"].([]string)
		tw.extra("notes", append(notes, e.Text))
	case event.RunEnd:
		tw.t.FinalMetrics.Extra = map[string]any{"status": e.Status}
		// The run's totals count every request, the judge's and the
		// summaries' too, which are no steps of their own.
		tw.t.FinalMetrics.TotalPromptTokens = e.InputTokens
		tw.t.FinalMetrics.TotalCompletionTokens, tw.t.FinalMetrics.TotalCachedTokens = e.OutputTokens, e.CachedTokens
		if e.CostUSD != nil {
			c := *e.CostUSD
			tw.t.FinalMetrics.TotalCostUSD = &c
		}
		tw.flush()
		return
	default:
		return
	}
	tw.dirty = true
	// The first step is written at once, so a run killed early leaves a
	// file with its session id and step.
	if len(tw.t.Steps) <= 1 {
		tw.flush()
		return
	}
	if tw.timer == nil {
		tw.timer = time.AfterFunc(tw.every(), func() {
			tw.mu.Lock()
			defer tw.mu.Unlock()
			tw.timer = nil
			if tw.dirty {
				tw.flush()
			}
		})
	}
	// The file is rewritten whole, so at most twice a second: a long run
	// does not write its trajectory hundreds of times over, and a run cut
	// off loses at most the last half second of steps.
	if time.Since(tw.flushed) >= tw.every() {
		tw.flush()
	}
}

// extra sets a key of the trajectory's extra.
func (tw *Trajectory) extra(k string, v any) {
	if tw.t.Extra == nil {
		tw.t.Extra = map[string]any{}
	}
	tw.t.Extra[k] = v
}

// finishCheckNote begins the note runtime/finish.scm logs just before it
// adds the sandbox finish check's message.
const finishCheckNote = "sandbox finish check:"

const flushEvery = 500 * time.Millisecond

// every is how long after a write the next may come: half a second, or
// twenty times what the last write took when that is longer, so that
// rewriting a trajectory of many megabytes (hours of steps) takes at most
// a twentieth of the run.
func (tw *Trajectory) every() time.Duration {
	return max(flushEvery, 20*tw.cost)
}

func (tw *Trajectory) flush() error {
	if len(tw.t.Steps) == 0 {
		return nil
	}
	tw.flushed = time.Now()
	tw.dirty = false
	defer func() { tw.cost = time.Since(tw.flushed) }()
	b, err := json.MarshalIndent(tw.t, "", "  ")
	if err != nil {
		return err
	}
	tmp := tw.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, tw.path)
}

// Close writes the trajectory a last time.
func (tw *Trajectory) Close() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timer != nil {
		tw.timer.Stop() // the final write below covers what it would have written
		tw.timer = nil
	}
	tw.flush()
}
