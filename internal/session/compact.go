package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/scheme"
)

// requestOptions applies model-turn's and model-ask's options alist to req:
// (max-tokens . n) (model . name). An unknown option is an error naming the
// known ones.
func requestOptions(who string, options scheme.Value, req *provider.Request) error {
	if options == nil || options == scheme.Nil {
		return nil
	}
	items, ok := scheme.ListToSlice(options)
	if !ok {
		return scheme.WrongType(who, "an alist of options ((max-tokens . n) (model . name))", options)
	}
	for _, it := range items {
		p, ok := it.(*scheme.Pair)
		if !ok {
			return scheme.WrongType(who, "an option (key . value)", it)
		}
		switch key := scheme.DisplayString(p.Car); key {
		case "max-tokens":
			n, ok := p.Cdr.(int)
			if !ok || n <= 0 {
				return scheme.Errorf("%s: max-tokens must be a positive whole number, not %s", who, scheme.WriteString(p.Cdr))
			}
			req.MaxTokens = n
		case "temperature":
			var t float64
			switch x := p.Cdr.(type) {
			case int:
				t = float64(x)
			case float64:
				t = x
			default:
				return scheme.Errorf("%s: temperature must be a number, not %s", who, scheme.WriteString(p.Cdr))
			}
			if t < 0 || t > 2 {
				return scheme.Errorf("%s: temperature must be between 0 and 2, not %v", who, t)
			}
			req.Temperature = &t
		case "model":
			m, ok := p.Cdr.(*scheme.String)
			if !ok || m.S == "" {
				return scheme.Errorf("%s: model must be a model's name, not %s", who, scheme.WriteString(p.Cdr))
			}
			req.Model = m.S
		default:
			return scheme.Errorf("%s: unknown option %s; the options are max-tokens, temperature and model", who, key)
		}
	}
	return nil
}

// modelAsk is (model-ask system text [options]): one request of its own,
// no tools, the conversation untouched. Its usage counts in the run's.
func (s *Session) modelAsk(system, text string, options scheme.Value) (scheme.Value, error) {
	ctx := s.ctx()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.opts.Model == nil {
		return nil, scheme.Errorf("model-ask: no model in this session (nodwyn scheme runs without one)")
	}
	req := provider.Request{Model: s.opts.ModelName, System: system, MaxTokens: s.opts.MaxTokens,
		Messages: []provider.Message{{Role: provider.RoleUser, Content: text}}}
	if err := requestOptions("model-ask", options, &req); err != nil {
		return nil, err
	}
	start := time.Now()
	reply, err := s.opts.Model.Stream(ctx, req, func(provider.Delta) {})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, scheme.Errorf("model-ask: %w", err)
	}
	s.usage = s.usage.Add(reply.Usage)
	s.requests++
	s.emit(event.ModelAside{Chars: len(text), Text: s.redact(reply.Text), Usage: s.usageOf(reply.Usage), MS: time.Since(start).Milliseconds()})
	return scheme.NewString(reply.Text), nil
}

// contextTokens estimates the next request's prompt: the last reported
// prompt and reply, plus what was added after them; with no report (or
// after a compaction), the whole conversation and the last system prompt.
func (s *Session) contextTokens() int {
	if s.lastPrompt > 0 && s.msgsAtRequest <= len(s.messages) {
		n := s.lastPrompt + s.lastOutput
		for i := s.msgsAtRequest + 1; i < len(s.messages); i++ { // the reply itself is lastOutput
			n += messageTokens(s.messages[i])
		}
		return n
	}
	n := estimateTokens(len(s.lastSystem)) + 1000 // the tools' schemas, roughly
	for _, m := range s.messages {
		n += messageTokens(m)
	}
	return n
}

func messageTokens(m provider.Message) int {
	size := len(m.Content)
	for _, tc := range m.ToolCalls {
		size += len(tc.Name) + len(tc.Arguments)
	}
	return estimateTokens(size) + 4 // the message's framing
}

// replaceMessages is (replace-messages! from to summary): messages
// [from, to) become one user message, unless the summary is not smaller
// than they are (#f, and a note says so). A tool call and its result are never
// separated: the range may not start on a tool result (its call would stay
// without it) nor end before one (its call would go).
func (s *Session) replaceMessages(from, to int, summary string) (scheme.Value, error) {
	n := len(s.messages)
	if from < 0 || to > n || from >= to {
		return nil, scheme.Errorf("replace-messages!: the range [%d, %d) is not within the %d messages (0-based, end excluded)", from, to, n)
	}
	if s.messages[from].Role == provider.RoleTool {
		return nil, scheme.Errorf("replace-messages!: message %d is a tool result; the range must start at a user or assistant message, so a call keeps its result", from)
	}
	if to < n && s.messages[to].Role == provider.RoleTool {
		return nil, scheme.Errorf("replace-messages!: message %d, after the range, is a tool result whose call is in the range; end the range after the results", to)
	}
	if last := s.messages[to-1]; to == n && last.Role == provider.RoleAssistant && len(last.ToolCalls) > 0 {
		return nil, scheme.Errorf("replace-messages!: the last reply's tool calls have not been answered yet; compact before the next request, not in the middle of a turn")
	}
	if strings.TrimSpace(summary) == "" {
		return nil, scheme.Errorf("replace-messages!: the summary is empty")
	}
	// A summary no smaller than what it replaces (a short conversation)
	// would make the next request larger: it is refused, and said.
	replaced := 0
	for _, m := range s.messages[from:to] {
		replaced += messageTokens(m)
	}
	if sum := messageTokens(provider.Message{Role: provider.RoleUser, Content: summary}); sum >= replaced {
		why := fmt.Sprintf("the summary (about %d tokens) is not smaller than the %d messages it would replace (about %d tokens); the conversation is kept as it was",
			sum, to-from, replaced)
		s.console.refused = why
		s.Note("compaction refused: " + why)
		return false, nil
	}
	before := s.contextTokens()
	removed := to - from
	msgs := make([]provider.Message, 0, n-removed+1)
	msgs = append(msgs, s.messages[:from]...)
	msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: summary})
	msgs = append(msgs, s.messages[to:]...)
	s.messages = msgs
	s.lastPrompt = 0 // the report no longer describes what will be sent
	after := s.contextTokens()
	s.emit(event.Compaction{From: from, To: to, Messages: removed, TokensBefore: before, TokensAfter: after})
	s.Note(fmt.Sprintf("compaction: messages %d–%d (%d) replaced by a summary; about %d tokens before, %d after", from, to-1, removed, before, after))
	s.saveState("running", s.profileName())
	return scheme.List(scheme.Cons(scheme.Symbol("before"), before), scheme.Cons(scheme.Symbol("after"), after)), nil
}

// contextOverflow reports whether err is a provider's "the request is over
// the context window" (OpenAI's context_length_exceeded, Anthropic's
// "prompt is too long", and the words OpenAI-compatible servers use).
func contextOverflow(err error) bool {
	var pe *provider.Error
	if !errors.As(err, &pe) || (pe.Status != 400 && pe.Status != 413 && pe.Status != 422) {
		return false
	}
	b := strings.ToLower(pe.Body)
	for _, w := range []string{"context_length_exceeded", "maximum context length", "prompt is too long",
		"context window", "context length", "too many tokens", "request_too_large", "exceeds the context"} {
		if strings.Contains(b, w) {
			return true
		}
	}
	return false
}

// compactOnOverflow calls (compact-on-overflow! error-text), the profile's
// policy, when a request was over the window; true when it compacted (the
// request is then sent once more).
func (s *Session) compactOnOverflow(ctx context.Context, err error) bool {
	proc, ok := s.interp.Lookup("compact-on-overflow!")
	if !ok || !scheme.IsProcedure(proc) {
		return false
	}
	s.Note(fmt.Sprintf("context overflow: %v", err))
	v, cerr := s.interp.Call(ctx, proc, scheme.NewString(err.Error()))
	if cerr != nil {
		if ctx.Err() == nil {
			s.Note(fmt.Sprintf("compact-on-overflow! failed: %v", cerr))
		}
		return false
	}
	return scheme.IsTrue(v)
}
