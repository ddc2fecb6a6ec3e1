package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Script is a scripted model: each request consumes the next reply of a
// list, chosen among alternatives by the request's last tool result. It is
// for tests and the demo; see the package doc and docs/script-provider.md
// for the file format.
type Script struct {
	mu        sync.Mutex
	name      string
	replies   []ScriptReply
	next      int
	turn      int
	exhausted ScriptReply
	requests  []Request

	toolsKey   *Tool // memo of the tools' size, by identity
	toolsLen   int
	toolsChars int
}

// ScriptReply is one scripted reply, or one alternative of it.
type ScriptReply struct {
	Text      string
	ToolCalls []ToolCall // an empty ID is filled in as call_TURN_N
	// Err, when set, makes Stream fail with this text, as a provider
	// error would.
	Err string
	// If, when set, must hold for this alternative to be chosen; else
	// Else is tried. When no alternative holds, the reply is skipped and
	// the next one tried for the same request.
	If   *Cond
	Else *ScriptReply
	Line int // where it was written, for messages (0 in Go-built scripts)
}

// Cond is a condition on the request a scripted reply answers.
type Cond struct {
	Not bool
	// Subject is what is looked at: "result" (the last tool message),
	// "results" (every tool message after the last assistant message,
	// joined by newlines) or "message" (the last message of any role).
	Subject  string
	Contains string         // holds when the subject contains this text
	Matches  *regexp.Regexp // holds when the subject matches
	IsError  bool           // holds when the last tool result is an error
}

// ExhaustedText is what a script replies once it has run out, unless it
// says otherwise.
const ExhaustedText = "script exhausted"

// ScriptCall is a tool call for a Go-built script.
func ScriptCall(name, args string) ToolCall { return ToolCall{Name: name, Arguments: args} }

// NewScript returns a script of the given replies.
func NewScript(replies []ScriptReply) *Script {
	return &Script{name: "script", replies: replies, exhausted: ScriptReply{Text: ExhaustedText}}
}

// SetExhausted sets the reply given to every request after the script has
// run out (by default the text "script exhausted" and no tool call, so a
// run ends cleanly). A reply with Err makes running out an error.
func (s *Script) SetExhausted(r ScriptReply) {
	s.mu.Lock()
	s.exhausted = r
	s.mu.Unlock()
}

// Name returns "script:FILE" or "script".
func (s *Script) Name() string { return s.name }

// Requests returns the requests received so far, in order.
func (s *Script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining returns how many replies have not been consumed yet.
func (s *Script) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies) - s.next
}

// Stream answers req with the next scripted reply.
func (s *Script) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	if err := ctx.Err(); err != nil {
		return Reply{}, fmt.Errorf("provider script: %w", err)
	}
	s.mu.Lock()
	saved := req
	saved.Messages = append([]Message(nil), req.Messages...)
	s.requests = append(s.requests, saved)
	var chosen *ScriptReply
	for chosen == nil && s.next < len(s.replies) {
		chosen = s.replies[s.next].choose(&req)
		s.next++
	}
	if chosen == nil {
		chosen = &s.exhausted
	}
	s.turn++
	turn := s.turn
	inChars := s.requestChars(&req)
	s.mu.Unlock()

	if chosen.Err != "" {
		if chosen.Line > 0 {
			return Reply{}, fmt.Errorf("provider script: %s (%s:%d)", chosen.Err, strings.TrimPrefix(s.name, "script:"), chosen.Line)
		}
		return Reply{}, fmt.Errorf("provider script: %s", chosen.Err)
	}
	reply := Reply{Text: chosen.Text, StopReason: "stop", Attempts: 1}
	if chosen.Text != "" && onDelta != nil {
		onDelta(Delta{Text: chosen.Text})
	}
	outChars := len(chosen.Text)
	if len(chosen.ToolCalls) > 0 {
		reply.StopReason = "tool_calls"
		reply.ToolCalls = make([]ToolCall, len(chosen.ToolCalls))
		for i, tc := range chosen.ToolCalls {
			if tc.ID == "" {
				tc.ID = "call_" + strconv.Itoa(turn) + "_" + strconv.Itoa(i)
			}
			reply.ToolCalls[i] = tc
			outChars += len(tc.Name) + len(tc.Arguments)
			if onDelta != nil {
				onDelta(Delta{ToolName: tc.Name})
			}
		}
	}
	reply.Usage = Usage{InputTokens: (inChars + 3) / 4, OutputTokens: max(1, (outChars+3)/4)}
	return reply, nil
}

// choose returns the alternative of r that holds for req, or nil.
func (r *ScriptReply) choose(req *Request) *ScriptReply {
	for alt := r; alt != nil; alt = alt.Else {
		if alt.If == nil || alt.If.holds(req) {
			return alt
		}
	}
	return nil
}

func (c *Cond) holds(req *Request) bool {
	var subject string
	var isErr bool
	msgs := req.Messages
	switch c.Subject {
	case "message":
		if n := len(msgs); n > 0 {
			subject = msgs[n-1].Content
		}
	case "results":
		var parts []string
		for i := len(msgs) - 1; i >= 0 && msgs[i].Role != RoleAssistant; i-- {
			if msgs[i].Role == RoleTool {
				parts = append(parts, msgs[i].Content)
				isErr = isErr || msgs[i].IsError
			}
		}
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
		subject = strings.Join(parts, "\n")
	default: // "result"
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == RoleTool {
				subject, isErr = msgs[i].Content, msgs[i].IsError
				break
			}
		}
	}
	ok := true
	if c.Contains != "" {
		ok = ok && strings.Contains(subject, c.Contains)
	}
	if c.Matches != nil {
		ok = ok && c.Matches.MatchString(subject)
	}
	if c.IsError {
		ok = ok && isErr
	}
	return ok != c.Not
}

// requestChars estimates the size of a request in characters; called with
// s.mu held.
func (s *Script) requestChars(req *Request) int {
	n := len(req.System)
	for i := range req.Messages {
		m := &req.Messages[i]
		n += len(m.Content) + len(m.Role) + 4
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments) + len(tc.ID)
		}
	}
	if len(req.Tools) > 0 {
		if &req.Tools[0] != s.toolsKey || len(req.Tools) != s.toolsLen {
			s.toolsKey, s.toolsLen, s.toolsChars = &req.Tools[0], len(req.Tools), 0
			for _, t := range req.Tools {
				s.toolsChars += len(t.Name) + len(t.Description) + schemaChars(t.Parameters)
			}
		}
		n += s.toolsChars
	}
	return n
}

// schemaChars approximates the length of v as JSON without encoding it.
func schemaChars(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 2
		for k, x := range v {
			n += len(k) + 4 + schemaChars(x)
		}
		return n
	case []any:
		n := 2
		for _, x := range v {
			n += 1 + schemaChars(x)
		}
		return n
	case []string:
		n := 2
		for _, x := range v {
			n += 3 + len(x)
		}
		return n
	case string:
		return len(v) + 2
	default:
		return 5
	}
}

// LoadScript reads a script file. Parse errors name file:line.
func LoadScript(path string) (*Script, error) {
	src, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("provider script: %w", err)
	}
	return ParseScript(path, src)
}
