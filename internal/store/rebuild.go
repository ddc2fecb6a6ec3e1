package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nodwyn/nodwyn/internal/event"
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
	addUsage := func(u event.Usage) {
		usage["input_tokens"] += u.InputTokens
		usage["cached_tokens"] += u.CachedTokens
		usage["cache_write_tokens"] += u.CacheWriteTokens
		usage["output_tokens"] += u.OutputTokens
	}
	for _, ev := range evs {
		if st.Created.IsZero() {
			st.Created = ev.Time
		}
		st.Updated = ev.Time
		// A field of another JSON type than its own (a log older than the
		// schema: docs/events.md, Changes) is left zero, and err says so.
		d, err := event.Decode(ev.Type, ev.Data)
		switch e := d.(type) {
		case event.RunStart:
			if runs == 0 {
				st.Folder, st.Instruction, st.Profile = e.Folder, e.Instruction, e.Profile
				st.Sandbox, st.Unattended, st.Yolo = e.Sandbox, e.Unattended, e.Yolo
			}
			if e.Model != "" {
				st.Model = e.Model
			}
			if e.Provider != "" { // a log from before run.start carried it has none
				st.Provider, st.BaseURL, st.API = e.Provider, e.BaseURL, e.API
			}
			runs++
			ended = false
		case event.RunEnd: // its usage is the run's total: the requests' are counted
			st.Status, ended = e.Status, true
		case event.Message:
			if e.Role == "user" {
				closeOpen()
				msgs = append(msgs, logMessage{Role: "user", Content: e.Text})
			}
		case event.ModelReply:
			closeOpen()
			m := logMessage{Role: "assistant", Content: e.Text}
			for _, c := range e.ToolCalls {
				tc := logToolCall{ID: c.ID, Name: c.Name}
				if c.RawArguments != "" {
					tc.Arguments = c.RawArguments
				} else if len(c.Arguments) > 0 {
					b, _ := json.Marshal(c.Arguments)
					tc.Arguments = string(b)
				}
				m.ToolCalls = append(m.ToolCalls, tc)
			}
			msgs = append(msgs, m)
			if len(m.ToolCalls) > 0 {
				open = len(msgs) - 1
			}
			addUsage(e.Usage)
		case event.ToolResult:
			if open < 0 || e.ID == "" || answered[e.ID] {
				break // a call no reply made (Scheme's own), or one answered
			}
			for _, tc := range msgs[open].ToolCalls {
				if tc.ID == e.ID {
					answered[e.ID] = true
					msgs = append(msgs, logMessage{Role: "tool", ToolCallID: e.ID, Name: e.Name, Content: e.Output, IsError: e.Error})
					break
				}
			}
			if len(answered) == len(msgs[open].ToolCalls) {
				open, answered = -1, map[string]bool{}
			}
		case event.ToolCall:
			st.ToolCalls++
		case event.ModelAside:
			aside = e.Text
			addUsage(e.Usage)
		case event.Judge: // the session counts the judge's requests in its usage too
			usage["input_tokens"] += e.InputTokens
			usage["output_tokens"] += e.OutputTokens
		case event.Compaction:
			from, to := e.From, e.To
			if err != nil || from < 0 || to > len(msgs) || from >= to || aside == "" {
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
