package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/scheme"
)

// judgeMaxTokens bounds the judge's reply: a word and a reason.
const judgeMaxTokens = 512

// judgeReasonMax caps the reason the log and the model keep.
const judgeReasonMax = 600

// judging reports whether an ordinary confirm goes to the judge: --judge on
// an unattended run that neither answers confirms itself (--yolo, sandbox
// mode) nor declines them all (--no-confirm). Security confirms never do.
func (s *Session) judging(d guard.Decision) bool {
	return s.opts.Judge && d.Verdict == guard.Confirm && s.opts.Unattended &&
		!s.opts.Yolo && !s.opts.Sandbox && !s.opts.NoConfirm
}

// judge asks the judge model about an ordinary confirm. What it is told is
// Scheme's (judge-request in runtime/judge.scm, its words in
// prompts/judge.scm); the request, the reading of its answer and the
// decision are Go's, so a profile can change what the judge sees but not
// what its answer means. Anything but a clear yes declines: a judge that
// fails, times out or answers something else does not approve.
func (s *Session) judge(ctx context.Context, id string, req guard.Request, d guard.Decision) (yes bool, reason string) {
	model := s.opts.JudgeModel
	if model == "" {
		model = s.opts.ModelName
	}
	shown := model
	if shown == "" {
		shown = s.opts.Provider // the scripted model has no name
	}
	start := time.Now()
	done := func(answer bool, why string, u provider.Usage) (bool, string) {
		why = s.redact(capText(strings.TrimSpace(why), judgeReasonMax))
		s.emit(event.Judge{ID: id, Name: req.Tool, Model: shown, Answer: map[bool]string{true: "yes", false: "no"}[answer], Reason: why,
			InputTokens: u.TotalInput(), OutputTokens: u.OutputTokens, MS: time.Since(start).Milliseconds()})
		return answer, why
	}
	if s.opts.Model == nil {
		return done(false, "no judge model in this session", provider.Usage{})
	}
	system, prompt, err := s.judgeRequest(ctx, req, d)
	if err != nil {
		if ctx.Err() != nil {
			return done(false, "the run stopped while the judge was asked", provider.Usage{})
		}
		return done(false, fmt.Sprintf("judge-request failed, so the judge was not asked: %v", err), provider.Usage{})
	}
	reply, err := s.opts.Model.Stream(ctx, provider.Request{
		Model: model, System: system, MaxTokens: judgeMaxTokens,
		Messages: []provider.Message{{Role: provider.RoleUser, Content: prompt}},
	}, func(provider.Delta) {})
	if err != nil {
		return done(false, fmt.Sprintf("the judge could not be asked: %v", err), provider.Usage{})
	}
	s.usage = s.usage.Add(reply.Usage)
	s.requests++
	answer, why, ok := readVerdict(reply.Text)
	if !ok {
		return done(false, fmt.Sprintf("the judge answered neither yes nor no: %q", capText(reply.Text, 200)), reply.Usage)
	}
	if why == "" {
		why = "(no reason given)"
	}
	return done(answer, why, reply.Usage)
}

// judgeRequest calls Scheme's (judge-request call) for the judge's system
// prompt and message. It runs as a checker does: it may read the
// conversation but not call a tool or the model.
func (s *Session) judgeRequest(ctx context.Context, req guard.Request, d guard.Decision) (system, prompt string, err error) {
	if s.interp == nil {
		return "", "", fmt.Errorf("no Scheme environment")
	}
	proc, ok := s.interp.Lookup("judge-request")
	if !ok || !scheme.IsProcedure(proc) {
		return "", "", fmt.Errorf("judge-request is not a procedure (runtime/judge.scm defines it)")
	}
	args, _ := json.Marshal(redactArgs(s, req.Args))
	call := scheme.List(
		scheme.Cons(scheme.Symbol("tool"), scheme.NewString(req.Tool)),
		scheme.Cons(scheme.Symbol("arguments"), scheme.NewString(string(args))),
		scheme.Cons(scheme.Symbol("checker"), scheme.NewString(d.Checker)),
		scheme.Cons(scheme.Symbol("reason"), scheme.NewString(d.Reason)),
	)
	s.checking++
	v, err := s.interp.Call(ctx, proc, call)
	s.checking--
	if err != nil {
		return "", "", err
	}
	sys, okS := alistString(v, "system")
	p, okP := alistString(v, "prompt")
	if !okS || !okP || strings.TrimSpace(p) == "" {
		return "", "", fmt.Errorf("judge-request returned %s; want an alist ((system . text) (prompt . text))", capText(scheme.WriteString(v), 120))
	}
	return sys, p, nil
}

// alistString is the string under key in an alist of (symbol . string).
func alistString(v scheme.Value, key string) (string, bool) {
	items, ok := scheme.ListToSlice(v)
	if !ok {
		return "", false
	}
	for _, it := range items {
		p, ok := it.(*scheme.Pair)
		if !ok {
			continue
		}
		if k, ok := p.Car.(scheme.Symbol); ok && string(k) == key {
			str, ok := p.Cdr.(*scheme.String)
			if !ok {
				return "", false
			}
			return str.S, true
		}
	}
	return "", false
}

// readVerdict reads a judge's answer: its first word, yes or no (any case,
// with punctuation around it, "**Yes**," too), then the reason.
func readVerdict(text string) (yes bool, reason string, ok bool) {
	t := strings.TrimSpace(text)
	i := strings.IndexFunc(t, func(r rune) bool { return unicode.IsSpace(r) })
	word, rest := t, ""
	if i >= 0 {
		word, rest = t[:i], t[i:]
	}
	word = strings.ToLower(strings.TrimFunc(word, func(r rune) bool { return !unicode.IsLetter(r) }))
	// "Yes." / "No:" / "no," — the punctuation after the word may stand
	// before the reason too.
	rest = strings.TrimLeftFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(":-—–,.*", r) })
	switch word {
	case "yes":
		return true, rest, true
	case "no":
		return false, rest, true
	}
	return false, "", false
}

// capText cuts s to n bytes at a rune boundary, with an ellipsis.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// messagesValue is (messages): the conversation as Scheme alists.
func (s *Session) messagesValue() scheme.Value {
	out := make([]scheme.Value, 0, len(s.messages))
	sym := func(name string) scheme.Value { return scheme.Symbol(name) }
	for _, m := range s.messages {
		fields := []scheme.Value{
			scheme.Cons(sym("role"), sym(string(m.Role))),
			scheme.Cons(sym("text"), scheme.NewString(m.Content)),
		}
		size := len(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := make([]scheme.Value, len(m.ToolCalls))
			for i, tc := range m.ToolCalls {
				calls[i] = scheme.List(
					scheme.Cons(sym("id"), scheme.NewString(tc.ID)),
					scheme.Cons(sym("name"), scheme.NewString(tc.Name)),
					scheme.Cons(sym("arguments"), scheme.NewString(tc.Arguments)),
				)
				size += len(tc.Name) + len(tc.Arguments)
			}
			fields = append(fields, scheme.Cons(sym("tool-calls"), scheme.List(calls...)))
		}
		if m.Role == provider.RoleTool {
			fields = append(fields,
				scheme.Cons(sym("tool-call-id"), scheme.NewString(m.ToolCallID)),
				scheme.Cons(sym("name"), scheme.NewString(m.Name)),
				scheme.Cons(sym("error"), m.IsError))
		}
		fields = append(fields, scheme.Cons(sym("tokens"), estimateTokens(size)))
		out = append(out, scheme.List(fields...))
	}
	return scheme.List(out...)
}

// estimateTokens is a rough count for n bytes of text: four bytes a token,
// as providers' own rules of thumb say, and at least one for a message.
func estimateTokens(n int) int { return n/4 + 1 }
