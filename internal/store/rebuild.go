package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A session whose state.json is missing (deleted, or never written: a disk
// that filled at its first save) or does not parse (a disk error, a hand
// edit) still has its event log, which holds what the state is made of:
// run.start's settings, every message the conversation got, each reply with
// its calls, each call's result, the usage. rebuildState makes the state
// from it, so the session is listed and can be resumed; LoadState says so
// in SessionState.Rebuilt.
//
// What the log does not keep is not rebuilt: the providers' reasoning items
// (the next request goes without them), the folding of older tool results
// (results are whole again), and the text secrets had (the log has them
// redacted). A compaction's summary is the model.aside before it.

// logMessage is a message as the session's state keeps it (the JSON of
// provider.Message, which this package does not import).
type logMessage struct {
	Role       string
	Content    string
	ToolCalls  []logToolCall `json:",omitempty"`
	ToolCallID string        `json:",omitempty"`
	Name       string        `json:",omitempty"`
	IsError    bool          `json:",omitempty"`
}

type logToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// notLogged answers a call of a reply before the last that has no result in
// the log (the loop answered it itself: the run stopped first).
const notLogged = "not run: the run stopped before this call (no result was logged for it)"

// rebuildState makes session id's state from its event log; why is what
// was wrong with its state.json. An error when there is no log, or it
// holds no run.
func (s *Store) rebuildState(id, why string) (*SessionState, error) {
	evs, bad, err := ReadLogSkipping(s.LogPath(id))
	if err != nil {
		return nil, err
	}
	st := &SessionState{ID: id}
	var msgs []logMessage
	open := -1 // the index of the last reply whose calls are not all answered
	answered := map[string]bool{}
	closeOpen := func() { // a call of a reply before the last with no result
		if open < 0 {
			return
		}
		for _, tc := range msgs[open].ToolCalls {
			if !answered[tc.ID] {
				msgs = append(msgs, logMessage{Role: "tool", ToolCallID: tc.ID, Name: tc.Name, Content: notLogged, IsError: true})
			}
		}
		open, answered = -1, map[string]bool{}
	}
	var aside string // the last model.aside's text: a compaction's summary
	lost := 0        // compactions that could not be applied
	runs, ended := 0, false
	usage := map[string]int{}
	for _, ev := range evs {
		d := ev.Data
		str := func(k string) string { v, _ := d[k].(string); return v }
		flag := func(k string) bool { v, _ := d[k].(bool); return v }
		if st.Created.IsZero() {
			st.Created = ev.Time
		}
		st.Updated = ev.Time
		switch ev.Type {
		case "run.start":
			if runs == 0 {
				st.Folder, st.Instruction, st.Profile = str("folder"), str("instruction"), str("profile")
				st.Sandbox, st.Unattended, st.Yolo = flag("sandbox"), flag("unattended"), flag("yolo")
			}
			if m := str("model"); m != "" {
				st.Model = m
			}
			if p := str("provider"); p != "" {
				st.Provider = p
			}
			runs++
			ended = false
		case "run.end":
			st.Status, ended = str("status"), true
		case "message":
			if str("role") == "user" {
				closeOpen()
				msgs = append(msgs, logMessage{Role: "user", Content: str("text")})
			}
		case "model.reply":
			closeOpen()
			m := logMessage{Role: "assistant", Content: str("text")}
			calls, _ := d["tool_calls"].([]any)
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				tc := logToolCall{}
				tc.ID, _ = cm["id"].(string)
				tc.Name, _ = cm["name"].(string)
				if raw, ok := cm["raw_arguments"].(string); ok {
					tc.Arguments = raw
				} else if args, ok := cm["arguments"].(map[string]any); ok && len(args) > 0 {
					b, _ := json.Marshal(args)
					tc.Arguments = string(b)
				}
				m.ToolCalls = append(m.ToolCalls, tc)
			}
			msgs = append(msgs, m)
			if len(m.ToolCalls) > 0 {
				open = len(msgs) - 1
			}
		case "tool.result":
			id := str("id")
			if open < 0 || id == "" || answered[id] {
				break // a call no reply made (Scheme's own), or one answered
			}
			for _, tc := range msgs[open].ToolCalls {
				if tc.ID == id {
					answered[id] = true
					msgs = append(msgs, logMessage{Role: "tool", ToolCallID: id, Name: str("name"), Content: str("output"), IsError: flag("error")})
					break
				}
			}
			if len(answered) == len(msgs[open].ToolCalls) {
				open, answered = -1, map[string]bool{}
			}
		case "tool.call":
			st.ToolCalls++
		case "model.aside":
			aside = str("text")
		case "compaction":
			from, okf := intField(d["from"])
			to, okt := intField(d["to"])
			if !okf || !okt || from < 0 || to > len(msgs) || from >= to || aside == "" {
				lost++
				break
			}
			rest := append([]logMessage{{Role: "user", Content: "[a summary of the earlier conversation]\n" + aside}}, msgs[to:]...)
			msgs = append(msgs[:from], rest...)
			if open >= to {
				open -= to - from - 1
			} else if open >= from {
				open = -1
			}
		}
		if ev.Type != "run.end" {
			for _, k := range []string{"input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"} {
				if n, ok := intField(d[k]); ok {
					usage[k] += n
				}
			}
		}
	}
	if runs == 0 {
		return nil, fmt.Errorf("%s has no run in it", s.LogPath(id))
	}
	if !ended {
		st.Status = "running" // ListSessions says "interrupted" when no process holds it
	}
	st.Usage = usage
	if msgs != nil {
		b, err := json.Marshal(msgs)
		if err != nil {
			return nil, err
		}
		st.Messages = b
	}
	note := fmt.Sprintf("%s; the state was rebuilt from %s (%d messages)", why, s.LogPath(id), len(msgs))
	note += ": reasoning items and the folding of older results are not in the log, and secrets are as it keeps them (redacted)"
	if lost > 0 {
		note += fmt.Sprintf("; %d compaction(s) could not be applied, so the conversation is longer than it was", lost)
	}
	if len(bad) > 0 {
		note += fmt.Sprintf("; %d line(s) of the log do not parse and were skipped", len(bad))
	}
	st.Rebuilt = note
	return st, nil
}

// intField reads a number an event decoded from JSON carries.
func intField(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), x == float64(int(x))
	case int:
		return x, true
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	}
	return 0, false
}

// stateProblem says what is wrong with a state file that could not be
// read: "" when it is there and parses.
func stateProblem(path string, err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return filepath.Base(path) + " is missing"
	}
	return fmt.Sprintf("%s cannot be read (%v)", path, err)
}

// hasLog reports whether session id has an event log with something in it.
func (s *Store) hasLog(id string) bool {
	fi, err := os.Stat(s.LogPath(id))
	return err == nil && fi.Size() > 0
}
