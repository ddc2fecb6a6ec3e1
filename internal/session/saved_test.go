package session

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/provider"
)

// peekModel calls look with each request before it answers.
type peekModel struct {
	look  func(n int, req provider.Request)
	n     int
	reply []provider.Reply
}

func (m *peekModel) Name() string { return "peek" }
func (m *peekModel) Stream(ctx context.Context, req provider.Request, _ func(provider.Delta)) (provider.Reply, error) {
	m.look(m.n, req)
	r := m.reply[min(m.n, len(m.reply)-1)]
	m.n++
	return r, nil
}

// What a request carries is on disk before it is sent (issue 8 item 8):
// killed during its first model request, the session still holds the task,
// and during a later one, the results of the calls before it.
func TestWhatARequestSendsIsSavedBeforeItIsSent(t *testing.T) {
	opts := baseOpts(t)
	opts.Instruction = "write the note"
	opts.Timeout = time.Minute
	var s *Session
	saved := func(t *testing.T) []provider.Message {
		t.Helper()
		st, err := opts.Store.LoadState(s.ID)
		if err != nil {
			t.Fatalf("no state on disk while the request is in flight: %v", err)
		}
		var msgs []provider.Message
		if err := json.Unmarshal(st.Messages, &msgs); err != nil {
			t.Fatalf("state messages %s: %v", st.Messages, err)
		}
		return msgs
	}
	m := &peekModel{reply: []provider.Reply{
		{ToolCalls: []provider.ToolCall{{ID: "c1", Name: "shell-exec", Arguments: `{"command": "echo ran-before"}`}}},
		{Text: "done"},
	}}
	m.look = func(n int, req provider.Request) {
		msgs := saved(t)
		if len(msgs) != len(req.Messages) {
			t.Errorf("request %d sends %d messages; the state on disk holds %d", n, len(req.Messages), len(msgs))
			return
		}
		switch n {
		case 0:
			if msgs[0].Role != provider.RoleUser || msgs[0].Content != "write the note" {
				t.Errorf("the task is not saved before the first request: %+v", msgs)
			}
		case 1:
			last := msgs[len(msgs)-1]
			if last.Role != provider.RoleTool || last.ToolCallID != "c1" {
				t.Errorf("the tool result is not saved before the next request: %+v", last)
			}
		}
	}
	opts.Model = m
	var err error
	s, err = New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out := s.Run(context.Background()); out.Status != "finished" {
		t.Fatalf("outcome %+v", out)
	}
	if m.n != 2 {
		t.Fatalf("%d requests", m.n)
	}
}

// errModel fails every request with err.
type errModel struct{ err error }

func (m errModel) Name() string { return "err" }
func (m errModel) Stream(context.Context, provider.Request, func(provider.Delta)) (provider.Reply, error) {
	return provider.Reply{}, m.err
}

// When the provider stops retrying because the run's deadline comes before
// the next attempt, the run ends for its deadline (exit 3), not as failed.
func TestRetriesCutByTheDeadlineEndTheRunForItsDeadline(t *testing.T) {
	opts := baseOpts(t)
	opts.Timeout = time.Minute
	opts.Model = errModel{fmt.Errorf("provider x: 503 after 2 attempts: %w", provider.ErrDeadlineBeforeRetry)}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out := s.Run(context.Background()); out.Status != "deadline" {
		t.Fatalf("outcome %+v; want deadline", out)
	}
}
