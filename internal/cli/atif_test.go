package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/store"
)

// The rules of Harbor's ATIF models (harbor.models.trajectories, in
// Harbor's public source), written down here so the test needs no Python:
// every object forbids fields it does not declare ("extra": "forbid"),
// some fields are required, there is at least one step, step ids run 1, 2, …, an observation's
// source_call_id names a tool call of its own step, tool_calls and metrics
// belong to agent steps only, and timestamps are ISO 8601.
type atifObject struct {
	fields   map[string]string // name -> kind: str int num bool obj list, or another object's name
	required []string
}

var atifSchema = map[string]atifObject{
	"Trajectory": {fields: map[string]string{
		"schema_version": "str", "session_id": "str", "agent": "Agent", "steps": "[]Step",
		"notes": "str", "final_metrics": "FinalMetrics", "continued_trajectory_ref": "str", "extra": "obj",
	}, required: []string{"session_id", "agent", "steps"}},
	"Agent": {fields: map[string]string{
		"name": "str", "version": "str", "model_name": "str", "tool_definitions": "list", "extra": "obj",
	}, required: []string{"name", "version"}},
	"Step": {fields: map[string]string{
		"step_id": "int", "timestamp": "str", "source": "str", "model_name": "str", "reasoning_effort": "any",
		"message": "any", "reasoning_content": "str", "tool_calls": "[]ToolCall", "observation": "Observation",
		"metrics": "Metrics", "is_copied_context": "bool", "extra": "obj",
	}, required: []string{"step_id", "source", "message"}},
	"ToolCall": {fields: map[string]string{
		"tool_call_id": "str", "function_name": "str", "arguments": "obj",
	}, required: []string{"tool_call_id", "function_name", "arguments"}},
	"Observation":       {fields: map[string]string{"results": "[]ObservationResult"}, required: []string{"results"}},
	"ObservationResult": {fields: map[string]string{"source_call_id": "str", "content": "any", "subagent_trajectory_ref": "list"}},
	"Metrics": {fields: map[string]string{
		"prompt_tokens": "int", "completion_tokens": "int", "cached_tokens": "int", "cost_usd": "num",
		"prompt_token_ids": "list", "completion_token_ids": "list", "logprobs": "list", "extra": "obj",
	}},
	"FinalMetrics": {fields: map[string]string{
		"total_prompt_tokens": "int", "total_completion_tokens": "int", "total_cached_tokens": "int",
		"total_cost_usd": "num", "total_steps": "int", "extra": "obj",
	}},
}

var atifVersions = []string{"ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4", "ATIF-v1.5", "ATIF-v1.6"}

// atifProblems lists every way b breaks those rules.
func atifProblems(b []byte) []string {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var out []string
	var check func(path, kind string, v any)
	check = func(path, kind string, v any) {
		if v == nil { // every optional field may be null
			return
		}
		if strings.HasPrefix(kind, "[]") {
			l, ok := v.([]any)
			if !ok {
				out = append(out, path+": not a list")
				return
			}
			for i, x := range l {
				check(fmt.Sprintf("%s[%d]", path, i), kind[2:], x)
			}
			return
		}
		switch kind {
		case "any":
		case "str":
			if _, ok := v.(string); !ok {
				out = append(out, path+": not a string")
			}
		case "int":
			if f, ok := v.(float64); !ok || f != float64(int64(f)) {
				out = append(out, path+": not an integer")
			}
		case "num":
			if _, ok := v.(float64); !ok {
				out = append(out, path+": not a number")
			}
		case "bool":
			if _, ok := v.(bool); !ok {
				out = append(out, path+": not a boolean")
			}
		case "list":
			if _, ok := v.([]any); !ok {
				out = append(out, path+": not a list")
			}
		case "obj":
			if _, ok := v.(map[string]any); !ok {
				out = append(out, path+": not an object")
			}
		default:
			o, ok := v.(map[string]any)
			if !ok {
				out = append(out, path+": not an object ("+kind+")")
				return
			}
			sch := atifSchema[kind]
			keys := make([]string, 0, len(o))
			for k := range o {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fk, ok := sch.fields[k]
				if !ok {
					out = append(out, fmt.Sprintf("%s.%s: extra field not permitted in %s", path, k, kind))
					continue
				}
				check(path+"."+k, fk, o[k])
			}
			for _, k := range sch.required {
				if _, ok := o[k]; !ok {
					out = append(out, fmt.Sprintf("%s.%s: required in %s", path, k, kind))
				}
			}
		}
	}
	check("trajectory", "Trajectory", doc)
	if v, ok := doc["schema_version"].(string); ok && !contains(atifVersions, v) {
		out = append(out, "schema_version "+v+" is not one Harbor knows")
	}
	if s, _ := doc["session_id"].(string); s == "" {
		out = append(out, "session_id is empty")
	}
	steps, _ := doc["steps"].([]any)
	if len(steps) == 0 {
		out = append(out, "steps: at least one is required")
	}
	if fm, ok := doc["final_metrics"].(map[string]any); ok {
		if n, ok := fm["total_steps"].(float64); ok && n < 0 {
			out = append(out, "final_metrics.total_steps < 0")
		}
	}
	for i, x := range steps {
		st, _ := x.(map[string]any)
		if id, _ := st["step_id"].(float64); int(id) != i+1 {
			out = append(out, fmt.Sprintf("steps[%d].step_id = %v, want %d", i, st["step_id"], i+1))
		}
		switch st["source"] {
		case "system", "user", "agent":
		default:
			out = append(out, fmt.Sprintf("steps[%d].source %v", i, st["source"]))
		}
		if st["source"] != "agent" {
			for _, f := range []string{"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"} {
				if st[f] != nil {
					out = append(out, fmt.Sprintf("steps[%d].%s on a %v step", i, f, st["source"]))
				}
			}
		}
		if ts, ok := st["timestamp"].(string); ok {
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				out = append(out, fmt.Sprintf("steps[%d].timestamp %q", i, ts))
			}
		}
		ids := map[string]bool{}
		calls, _ := st["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			id, _ := cm["tool_call_id"].(string)
			ids[id] = true
		}
		obs, _ := st["observation"].(map[string]any)
		res, _ := obs["results"].([]any)
		for j, r := range res {
			rm, _ := r.(map[string]any)
			if id, ok := rm["source_call_id"].(string); ok && !ids[id] {
				out = append(out, fmt.Sprintf("steps[%d].observation.results[%d].source_call_id %q is no tool call of its step", i, j, id))
			}
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// The checker catches what Harbor rejects (so the test below can fail).
func TestTheATIFCheckerRejectsWhatHarborRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"status beside the totals": `{"schema_version":"ATIF-v1.4","session_id":"s","agent":{"name":"n","version":"v"},"steps":[],"final_metrics":{"status":"finished"}}`,
		"empty session id":         `{"schema_version":"ATIF-v1.4","session_id":"","agent":{"name":"n","version":"v"},"steps":[]}`,
		"a step id out of order":   `{"session_id":"s","agent":{"name":"n","version":"v"},"steps":[{"step_id":2,"source":"user","message":"m"}]}`,
		"a dangling call id":       `{"session_id":"s","agent":{"name":"n","version":"v"},"steps":[{"step_id":1,"source":"agent","message":"m","observation":{"results":[{"source_call_id":"x","content":"c"}]}}]}`,
		"metrics on a user step":   `{"session_id":"s","agent":{"name":"n","version":"v"},"steps":[{"step_id":1,"source":"user","message":"m","metrics":{}}]}`,
		"a note as a system step":  `{"session_id":"s","agent":{"name":"n","version":"v"},"steps":[{"step_id":1,"source":"note","message":"m"}]}`,
		"no steps":                 `{"session_id":"s","agent":{"name":"n","version":"v"},"steps":[]}`,
	} {
		if len(atifProblems([]byte(doc))) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A run's trajectory keeps to Harbor's models, while the run goes (what a
// run killed during a long tool call leaves) and at its end: several calls
// in one reply, a refused call, a failing one, log notes, the sandbox
// finish check.
func TestATrajectoryKeepsToHarborsModels(t *testing.T) {
	scratchInTest(t) // a sandbox-mode run keeps its scratch directory
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644)
	script := filepath.Join(dir, "m.script")
	os.WriteFile(script, []byte(`> reply
Looking first.
call shell-exec {"command": "ls"}
call fs-read {"path": "a.txt"}
> reply
call shell-exec {"command": "cat ~/.ssh/id_rsa"}
> reply
call shell-exec {"command": "exit 3"}
> reply
call shell-exec {"command": "sleep 2; echo slept"}
> reply
Done.
> reply
Checked: done.
`), 0o644)
	traj := filepath.Join(dir, "traj.json")
	getenv := homeEnv(home)
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- Main([]string{"run", "--sandbox", "container", "--trajectory", traj, "--script", script, "-C", proj, "look around"},
			strings.NewReader(""), &stdout, &stderr, getenv)
	}()
	// During the sleep: the file on disk has the call that is running.
	var mid []byte
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !bytes.Contains(mid, []byte("sleep 2")) {
		time.Sleep(50 * time.Millisecond)
		mid, _ = os.ReadFile(traj)
	}
	if !bytes.Contains(mid, []byte("sleep 2")) {
		t.Fatalf("the running call never reached the file:\n%s", mid)
	}
	for _, p := range atifProblems(mid) {
		t.Errorf("while the run goes: %s", p)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	end, _ := os.ReadFile(traj)
	for _, p := range atifProblems(end) {
		t.Errorf("at the end: %s", p)
	}
	for _, want := range []string{`"status": "finished"`, "slept", "exit status 3"} {
		if !bytes.Contains(end, []byte(want)) {
			t.Errorf("the trajectory lacks %s", want)
		}
	}
	harborValidate(t, traj)
}

// harborValidate runs Harbor's own models on the file when they are at
// hand: NODWYN_HARBOR_MODELS names a directory holding the harbor package
// (harbor/models/trajectories) and python3 has pydantic. CI has neither;
// the rules above stand in for them there.
func harborValidate(t *testing.T, path string) {
	t.Helper()
	dir := os.Getenv("NODWYN_HARBOR_MODELS")
	if dir == "" {
		t.Log("NODWYN_HARBOR_MODELS is not set: Harbor's own models not run (the Go rules were)")
		return
	}
	code := `import json,sys; sys.path.insert(0, sys.argv[1]); from harbor.models.trajectories import Trajectory; Trajectory.model_validate(json.load(open(sys.argv[2])))`
	out, err := exec.Command("python3", "-c", code, dir, path).CombinedOutput()
	if err != nil {
		t.Errorf("Harbor's Trajectory model rejects %s: %v\n%s", path, err, out)
	}
}

// Before its first step a trajectory file does not exist (Harbor rejects
// one with no steps), but a path nodwyn cannot write is an error at once.
func TestATrajectoryFileAppearsWithItsFirstStep(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.json")
	tw, err := launch.NewTrajectory(p, "m", "v")
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	if _, err := os.Stat(p); err == nil {
		b, _ := os.ReadFile(p)
		t.Fatalf("a trajectory with no steps was written:\n%s", b)
	}
	tw.Event(store.Event{Type: "run.start", Time: time.Now(), Data: map[string]any{"session": "s1"}})
	tw.Event(store.Event{Type: "message", Time: time.Now(), Data: map[string]any{"text": "the task"}})
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("the first step was not written at once: %v", err)
	}
	for _, pr := range atifProblems(b) {
		t.Error(pr)
	}
	if _, err := launch.NewTrajectory(filepath.Join(t.TempDir(), "no", "such", "dir", "t.json"), "m", "v"); err == nil {
		t.Error("an unwritable path was accepted")
	}
}

// homeEnv is an environment with only HOME and the XDG directories under
// it, for a whole run of Main.
func homeEnv(home string) func(string) string {
	return func(k string) string {
		switch k {
		case "HOME":
			return home
		case "XDG_CONFIG_HOME":
			return filepath.Join(home, ".config")
		case "XDG_DATA_HOME":
			return filepath.Join(home, ".local", "share")
		}
		return ""
	}
}
