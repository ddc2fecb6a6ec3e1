package session

import (
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

// The events that more than one place emits are built here, once each
// (docs/events.md; the types are internal/event's).

// runStart is the run.start of a run (Run) or of a console's first message
// (Continue), whose instruction is that message.
func (s *Session) runStart(profile, instruction string) event.RunStart {
	return event.RunStart{
		Session: s.ID, Folder: s.opts.Folder, Profile: profile, Model: s.opts.ModelName,
		Provider: s.opts.Provider, BaseURL: store.EndpointWithoutSecret(s.opts.BaseURL), API: s.opts.API,
		Instruction: s.redact(instruction), Scratch: s.scratch,
		Sandbox: s.opts.Sandbox, Unattended: s.opts.Unattended, Yolo: s.opts.Yolo, Resumed: s.opts.ResumeID != "",
		Exec:        s.tools.Sandbox().Capabilities().String(),
		Confinement: s.confinement(),
		KernelFloor: s.floorLine,
	}
}

// runEnd is the run.end of a run (Run) or of a console session (End): its
// outcome, and the totals of every request since began.
func (s *Session) runEnd(out Outcome, began time.Time) event.RunEnd {
	return event.RunEnd{
		Status: out.Status, Text: s.redact(out.Text), ToolCallCount: s.toolCalls, Usage: s.usageOf(s.usage),
		Requests: s.requests, ElapsedMS: time.Since(began).Milliseconds(),
	}
}

// usageOf is a usage as events carry it: input_tokens is the whole input
// (cache reads and writes included), cached_tokens the part read from the
// cache; cost_usd only when prices are known.
func (s *Session) usageOf(u provider.Usage) event.Usage {
	e := event.Usage{InputTokens: u.TotalInput(), CachedTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens}
	if c, ok := s.cost(u); ok {
		e.CostUSD = &c
	}
	return e
}

// toolResult is a call's tool.result, whichever way it ended: exit is -1
// for a call that did not run, stopped why a call was stopped while it ran
// ("" when it was not); within is set here (withinTool).
func (s *Session) toolResult(id, name string, isErr bool, exit int, output string, changed []string, ms int64, stopped string) event.ToolResult {
	return event.ToolResult{ID: id, Name: name, Error: isErr, Exit: exit, Output: output, Changed: changed, MS: ms,
		Stopped: stopped, Within: s.withinTool()}
}

// withinTool is the Scheme tool whose procedure is making the call (a
// tool.call, tool.decision or tool.result's within), "" for a call the
// model or the loop made.
func (s *Session) withinTool() string {
	if b := s.toolbox(); b != nil && len(b.calls) > 0 {
		return b.calls[len(b.calls)-1].name
	}
	return ""
}
