package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/scheme"
)

func (s *Session) addUser(text string) {
	s.messages = append(s.messages, provider.Message{Role: provider.RoleUser, Content: text})
	s.emit(event.Message{Role: "user", Text: s.redact(text)})
}

func (s *Session) addToolResult(id, name, text string, isErr bool) {
	if id != "" && s.answered(id) {
		return // a call stopped while it ran is answered already (stopped)
	}
	s.messages = append(s.messages, provider.Message{Role: provider.RoleTool, ToolCallID: id, Name: name, Content: text, IsError: isErr})
}

// answered reports whether the call id of the last reply has its result in
// the conversation.
func (s *Session) answered(id string) bool {
	for i := len(s.messages) - 1; i >= 0; i-- {
		m := s.messages[i]
		if m.Role == provider.RoleAssistant {
			return false
		}
		if m.Role == provider.RoleTool && m.ToolCallID == id {
			return true
		}
	}
	return false
}

// guardTools are the roles of prim's table's parameters, for the guard
// (guard.Options.Tools): the guard judges each tool by them.
func guardTools() []guard.ToolParam {
	var out []guard.ToolParam
	for _, tool := range prim.Table() {
		for _, p := range tool.Params {
			if p.Role != roles.None {
				out = append(out, guard.ToolParam{Tool: tool.Name, Param: p.Name, Role: p.Role, Required: p.Required})
			}
		}
	}
	return out
}

// modelTurn sends one request and returns the reply to Scheme.
func (s *Session) modelTurn(system, toolList scheme.Value, options scheme.Value) (scheme.Value, error) {
	ctx := s.ctx()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.opts.Model == nil {
		return nil, scheme.Errorf("model-turn: no model in this session (nodwyn scheme runs without one)")
	}
	s.steer() // what the person typed while the model worked (console.go)
	pairs, ok := scheme.ListToSlice(toolList)
	if !ok {
		return nil, scheme.WrongType("model-turn", "a list of (name . description) pairs", toolList)
	}
	req := provider.Request{Model: s.opts.ModelName, System: scheme.DisplayString(system), MaxTokens: s.opts.MaxTokens}
	if err := requestOptions("model-turn", options, &req); err != nil {
		return nil, err
	}
	for _, p := range pairs {
		pr, ok := p.(*scheme.Pair)
		if !ok {
			return nil, scheme.WrongType("model-turn", "a (name . description) pair", p)
		}
		name := scheme.DisplayString(pr.Car)
		desc, schema, full := toolEntry(pr)
		params := s.toolSchema(name)
		if t := s.schemeTool(name); t != nil {
			params = t.schema() // define-tool's (schemetool.go)
		} else if t, ok := s.mcpTool(name); ok {
			params = mcpLeanSchema // until the model asks (runtime/mcp.scm)
			if full {
				params = s.mcpSchema(t)
			}
		}
		if schema != nil {
			params = schema
		}
		req.Tools = append(req.Tools, provider.Tool{Name: name, Description: desc, Parameters: params})
	}
	// A week untouched is what the sweep takes: a touch a minute is plenty
	// (each was a path walk and an inode write, every turn).
	if now := time.Now(); now.Sub(s.scratchTouched) > time.Minute {
		store.TouchScratch(s.scratch)
		s.scratchTouched = now
	}
	req.Messages = append([]provider.Message(nil), s.messages...)

	sent := event.ModelRequest{Messages: len(req.Messages), Tools: len(req.Tools)}
	if req.System != s.lastSystem { // the log keeps what was sent, once
		sent.System = req.System
		sent.ToolNames = make([]string, len(req.Tools))
		for i, t := range req.Tools {
			sent.ToolNames[i] = t.Name
		}
		s.lastSystem = req.System
	}
	// What is sent is on disk first: a run killed during this request
	// resumes with the task and every result it has had.
	if s.savedMessages != len(s.messages) {
		s.saveState("running", s.profileName())
	}
	s.emit(sent)
	guard.Warm() // while the model thinks, not while the session starts
	start := time.Now()
	s.msgsAtRequest = len(s.messages)
	reply, err := s.opts.Model.Stream(ctx, req, func(d provider.Delta) {
		if d.ToolName != "" {
			s.emit(event.ModelDelta{Tool: d.ToolName})
		}
	})
	if err != nil && ctx.Err() == nil && contextOverflow(err) && s.compactOnOverflow(ctx, err) {
		// The provider said the conversation is over its window and the
		// profile's policy compacted it: the same request once more.
		req.Messages = append([]provider.Message(nil), s.messages...)
		s.emit(event.ModelRequest{Messages: len(req.Messages), Tools: len(req.Tools), Retry: "context overflow"})
		s.msgsAtRequest = len(s.messages)
		reply, err = s.opts.Model.Stream(ctx, req, func(d provider.Delta) {
			if d.ToolName != "" {
				s.emit(event.ModelDelta{Tool: d.ToolName})
			}
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, provider.ErrDeadlineBeforeRetry) && s.cancel != nil {
			// The deadline stops the run: say so, as when it passes.
			s.Note(err.Error())
			s.cancel(ErrDeadline)
			return nil, context.Cause(ctx)
		}
		return nil, scheme.Errorf("model-turn: %w", err)
	}
	s.usage = s.usage.Add(reply.Usage)
	s.requests++
	s.lastPrompt, s.lastOutput = reply.Usage.TotalInput(), reply.Usage.OutputTokens

	s.messages = append(s.messages, reply.Message()) // with its reasoning items, which the provider must see again

	calls := make([]scheme.Value, 0, len(reply.ToolCalls))
	logged := make([]event.ReplyCall, 0, len(reply.ToolCalls))
	for _, tc := range reply.ToolCalls {
		calls = append(calls, scheme.List(
			scheme.Cons(scheme.Symbol("id"), scheme.NewString(tc.ID)),
			scheme.Cons(scheme.Symbol("name"), scheme.NewString(tc.Name)),
			scheme.Cons(scheme.Symbol("arguments"), scheme.NewString(tc.Arguments)),
		))
		logged = append(logged, s.loggedCall(tc))
	}
	s.pendingCalls = slices.Clone(reply.ToolCalls)
	s.emit(event.ModelReply{Text: s.redact(reply.Text), ToolCalls: logged, StopReason: reply.StopReason,
		Usage: s.usageOf(reply.Usage), MS: time.Since(start).Milliseconds()})
	s.saveState("running", s.profileName())
	return scheme.List(
		scheme.Cons(scheme.Symbol("text"), scheme.NewString(reply.Text)),
		scheme.Cons(scheme.Symbol("tool-calls"), scheme.List(calls...)),
	), nil
}

func (s *Session) redact(text string) string {
	if s.guard == nil {
		return text
	}
	return s.guard.Redact(text)
}

// request turns Scheme's tool arguments (a JSON string or an alist) into a
// guard request.
func (s *Session) request(name string, args scheme.Value) (guard.Request, error) {
	req := guard.Request{Tool: name}
	switch a := args.(type) {
	case *scheme.String:
		raw := strings.TrimSpace(a.S)
		if raw == "" {
			raw = "{}"
		}
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return req, &jsonArgsError{tool: name, err: err}
		}
		req.Args = normalizeNumbers(m)
	default:
		g, ok := scheme.ToGo(args).(map[string]any)
		if !ok && args != scheme.Nil {
			return req, fmt.Errorf("arguments for %s must be a JSON object string or an alist, not %s", name, scheme.WriteString(args))
		}
		req.Args = g
	}
	if req.Args == nil {
		req.Args = map[string]any{}
	}
	return req, nil
}

// jsonArgsError is a call whose arguments are not one JSON object; the model
// reads bad-arguments-message (prompts/messages.scm).
type jsonArgsError struct {
	tool string
	err  error
}

func (e *jsonArgsError) Error() string {
	return fmt.Sprintf("arguments for %s are not valid JSON (%v); send one JSON object", e.tool, e.err)
}

// normalizeNumbers turns json.Number into int when whole, else float64.
func normalizeNumbers(m map[string]any) map[string]any {
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				m[k] = int(i)
			} else if f, err := n.Float64(); err == nil {
				m[k] = f
			}
		}
	}
	return m
}

func resultAlist(output string, isErr bool, verdict, checker string, exit int) scheme.Value {
	return scheme.List(
		scheme.Cons(scheme.Symbol("output"), scheme.NewString(output)),
		scheme.Cons(scheme.Symbol("error"), isErr),
		scheme.Cons(scheme.Symbol("decision"), scheme.NewString(verdict)),
		scheme.Cons(scheme.Symbol("checker"), scheme.NewString(checker)),
		scheme.Cons(scheme.Symbol("exit"), exit),
	)
}

// callTool is the one seam every tool call goes through: budget, guard,
// confirm policy, primitive, redaction, events.
func (s *Session) callTool(name string, args scheme.Value) (scheme.Value, error) {
	ctx := s.ctx()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.tools == nil || s.guard == nil {
		return nil, scheme.Errorf("call-tool: tools are not available while init.scm loads")
	}
	if s.opts.MaxToolCalls > 0 && s.toolCalls >= s.opts.MaxToolCalls {
		if s.cancel != nil {
			s.cancel(ErrToolBudget)
		}
		return nil, fmt.Errorf("call-tool: %w", ErrToolBudget)
	}
	s.toolCalls++
	start := time.Now()
	req, err := s.request(name, args)
	id := ""
	if !s.inSchemeTool() { // a Scheme tool's own calls are not the model's
		id = s.takeCall(name, args)
	}
	called := event.ToolCall{ID: id, Name: name, N: s.toolCalls, Within: s.withinTool()}
	if err != nil {
		called.Arguments = map[string]any{}
		called.RawArguments = s.redact(scheme.DisplayString(args))
		s.emit(called)
		msg := err.Error()
		if je := (*jsonArgsError)(nil); errors.As(err, &je) {
			msg = s.say(ctx, "bad-arguments-message", msg, scheme.NewString(name), scheme.NewString(je.err.Error()))
		}
		s.emitResult(id, name, true, -1, msg, nil, start)
		return resultAlist(msg, true, "refuse", "arguments", -1), nil
	}
	if name == "self-check" {
		// The guard judges, and the log shows, the line that runs: the
		// contract's, never one the model put in the arguments.
		delete(req.Args, "command")
		if _, c, ok := s.tools.CheckCommand(); ok {
			req.Args["command"] = c
		}
	}
	called.Arguments = redactArgs(s, req.Args)
	s.emit(called)

	mcpTool, isMCP := s.mcpTool(name)
	if names := s.toolNames(); !slices.Contains(names, name) && !isMCP {
		msg := s.say(ctx, "no-such-tool-message", fmt.Sprintf("there is no tool %q here; the tools are: %s", name, strings.Join(names, ", ")),
			scheme.NewString(name), strs(names))
		s.emitResult(id, name, true, -1, msg, nil, start)
		return resultAlist(msg, true, "refuse", "tools", -1), nil
	}

	d := s.guard.Check(ctx, req)
	asked := d // what the person was asked (nodwyn scheme asks about allowed calls too)
	if s.opts.Dry && !s.opts.RunTools && d.Verdict == guard.Allow {
		asked = guard.Decision{Verdict: guard.Confirm, Checker: "nodwyn scheme",
			Reason: "the guard allows this call; in nodwyn scheme a tool runs only when you confirm it (or with --run-tools)"}
	}
	allowed, why := s.decide(ctx, id, req, asked)
	s.emit(event.ToolDecision{ID: id, Name: name, Decision: d.Verdict.String(), Checker: d.Checker, Reason: d.Reason, Allowed: allowed, Answer: why,
		Within: s.withinTool()})
	if !allowed {
		msg := s.refusalText(ctx, asked, why)
		s.emitResult(id, name, true, -1, msg, nil, start)
		return resultAlist(msg, true, d.Verdict.String(), d.Checker, -1), nil
	}

	if t := s.schemeTool(name); t != nil {
		return s.runSchemeTool(ctx, t, id, req, d, start) // schemetool.go
	}
	if isMCP {
		return s.runMCPTool(ctx, mcpTool, id, req, d, start) // mcp.go
	}
	created := s.newFiles(name, req.Args)
	toolStart := time.Now()
	res, err := s.tools.Run(ctx, name, req.Args)
	s.toolTime += time.Since(toolStart)
	if err != nil {
		if ctx.Err() != nil {
			s.stopped(ctx, id, name, res, time.Since(toolStart), start)
			return nil, ctx.Err()
		}
		res.Output, res.IsError = fmt.Sprintf("%s failed: %v", name, err), true
	}
	s.nestedChanged(res.Changed) // a Scheme tool's call changed them too
	for _, p := range res.Changed {
		s.turnChanged[p] = true
		if created[p] {
			s.keepAbsent(p)
		}
	}
	out := s.redact(res.Output)
	s.emitResult(id, name, res.IsError, res.ExitCode, out, res.Changed, start)
	return resultAlist(out, res.IsError, d.Verdict.String(), d.Checker, res.ExitCode), nil
}

// decide applies the confirm policy to a decision.
func (s *Session) decide(ctx context.Context, id string, req guard.Request, d guard.Decision) (bool, string) {
	switch d.Verdict {
	case guard.Allow:
		return true, "allowed"
	case guard.Refuse:
		return false, "refused"
	}
	if s.appr.CoversDecision(req, d) {
		return true, "standing approval"
	}
	if s.judging(d) {
		yes, reason := s.judge(ctx, id, req, d)
		if yes {
			return true, fmt.Sprintf("approved by the judge, who said: %q", reason)
		}
		return false, fmt.Sprintf("declined by the judge, who said: %q", reason)
	}
	yes, decided := guard.AutoAllow(d, guard.Mode{Unattended: s.opts.Unattended, Yolo: s.opts.Yolo, NoConfirm: s.opts.NoConfirm})
	if decided {
		if yes {
			return true, "answered yes (--yolo)"
		}
		return false, "declined (nobody can approve it)"
	}
	a, ok := s.ask(ctx, req, d) // one question at a time (asking.go)
	if !ok {
		return false, "declined (no one to ask)"
	}
	yes, always, note, unanswered := a.yes, a.always, a.note, a.unanswered
	if yes && always && d.Verdict == guard.Confirm {
		s.appr.AddFor(req)         // the line as given, or the path
		s.mcpApproveAlways(req, d) // an MCP tool's (mcp.go)
	}
	if yes {
		return true, "approved by a person"
	}
	switch {
	case unanswered != "":
		return false, "declined: " + unanswered
	case ctx.Err() != nil:
		return false, "declined: no answer (" + stopCause(ctx).why + " while the question waited)"
	}
	if note = strings.TrimSpace(note); note != "" {
		return false, fmt.Sprintf("declined by a person, who said: %q", note)
	}
	return false, "declined by a person"
}

// refusalText is what the model reads of a call that did not run:
// refusal-message or not-approved-message (prompts/messages.scm).
func (s *Session) refusalText(ctx context.Context, d guard.Decision, why string) string {
	checker, reason := scheme.NewString(d.Checker), scheme.NewString(d.Reason)
	switch d.Verdict {
	case guard.Refuse:
		return s.say(ctx, "refusal-message", fmt.Sprintf("refused (%s): %s", d.Checker, d.Reason), checker, reason)
	default:
		return s.say(ctx, "not-approved-message", fmt.Sprintf("not run: %s needed approval and was %s: %s", d.Checker, why, d.Reason),
			checker, scheme.NewString(why), reason)
	}
}

// redactArgs renders arguments for the log with secrets replaced and long
// contents shortened.
func redactArgs(s *Session, args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = s.redactValue(v)
	}
	return out
}

// redactValue redacts every string in a decoded JSON value.
func (s *Session) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.redact(x)
	case map[string]any:
		return redactArgs(s, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.redactValue(e)
		}
		return out
	}
	return v
}

// loggedCall is a tool call of model.reply: id, name and the arguments as
// an object; arguments that are not one JSON object are {} there, and
// raw_arguments has them as the model sent them (docs/events.md).
func (s *Session) loggedCall(tc provider.ToolCall) event.ReplyCall {
	c := event.ReplyCall{ID: tc.ID, Name: tc.Name, Arguments: map[string]any{}}
	var args map[string]any
	raw := strings.TrimSpace(tc.Arguments)
	if raw == "" {
		return c
	}
	if json.Unmarshal([]byte(raw), &args) == nil && args != nil {
		c.Arguments = redactArgs(s, args)
	} else {
		c.RawArguments = s.redact(tc.Arguments)
	}
	return c
}

// takeCall is the id of the model's call that (call-tool name args) runs:
// of the last reply's calls not yet run, the first with this name and these
// arguments, else the first with this name. A call no reply asked for (made
// by Scheme code, as in nodwyn scheme) has the id "".
func (s *Session) takeCall(name string, args scheme.Value) string {
	raw, _ := args.(*scheme.String)
	pick := -1
	for i, tc := range s.pendingCalls {
		if tc.Name != name {
			continue
		}
		if raw != nil && tc.Arguments == raw.S {
			pick = i
			break
		}
		if pick < 0 {
			pick = i
		}
	}
	if pick < 0 {
		return ""
	}
	id := s.pendingCalls[pick].ID
	s.pendingCalls = slices.Delete(s.pendingCalls, pick, pick+1)
	return id
}

// emitResult emits a call's tool.result; every one has the same fields:
// exit is -1 for a call that did not run, changed is a list.
func (s *Session) emitResult(id, name string, isErr bool, exit int, output string, changed []string, start time.Time) {
	s.emit(s.toolResult(id, name, isErr, exit, output, changed, time.Since(start).Milliseconds(), ""))
}

// schemeChecker is a project checker written in Scheme.
type schemeChecker struct {
	s    *Session
	name string
	proc scheme.Value
}

func (c *schemeChecker) Name() string { return "project:" + c.name }

// Check calls the Scheme procedure. An error in it refuses the call (a checker
// that fails must not let calls through).
//
// It runs under ctx (the run's, with its deadline) and only judges: while
// it runs, the procedures that act (call-tool, model-turn, add-message!,
// finish!) raise an error, so a checker cannot make calls of its own.
func (c *schemeChecker) Check(ctx context.Context, req guard.Request) guard.Decision {
	c.s.checking++
	v, err := c.s.interp.Call(ctx, c.proc, scheme.NewString(req.Tool), scheme.FromGo(req.Args))
	c.s.checking--
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return guard.Decision{Verdict: guard.Refuse, Checker: c.Name(), Reason: "the run is stopping"}
		}
		return guard.Decision{Verdict: guard.Refuse, Checker: c.Name(), Reason: "the project's checker failed: " + err.Error()}
	}
	if v == false || v == scheme.Nil || v == scheme.Void {
		return guard.Decision{Verdict: guard.Allow, Checker: c.Name()}
	}
	kind, reason := "", ""
	switch x := v.(type) {
	case scheme.Symbol:
		kind = string(x)
	case *scheme.Pair:
		kind = scheme.DisplayString(x.Car)
		if rest, ok := x.Cdr.(*scheme.Pair); ok {
			reason = scheme.DisplayString(rest.Car)
		}
	default:
		kind = scheme.DisplayString(v)
	}
	if reason == "" {
		reason = "the project's checker " + c.name + " objected"
	}
	switch kind {
	case "allow":
		return guard.Decision{Verdict: guard.Allow, Checker: c.Name()}
	case "confirm":
		return guard.Decision{Verdict: guard.Confirm, Checker: c.Name(), Reason: reason}
	case "security-confirm":
		return guard.Decision{Verdict: guard.SecurityConfirm, Checker: c.Name(), Reason: reason}
	default:
		return guard.Decision{Verdict: guard.Refuse, Checker: c.Name(), Reason: reason}
	}
}

// unansweredKey holds, in the context a confirm callback is given, where
// ConfirmUnanswered puts its reason.
type unansweredKey struct{}

// ConfirmUnanswered is called by a Confirm or ConfirmNote callback, with
// the context it was given and before it returns no, when no one answered
// the question: why says so ("no answer (end of input)"). The decline is
// then logged and told to the model as that, not as a person's no.
func ConfirmUnanswered(ctx context.Context, why string) {
	if p, ok := ctx.Value(unansweredKey{}).(*string); ok && p != nil {
		*p = why
	}
}

// stopReason is why a cancelled run's context ended: a word for the log
// (tool.result's stopped) and the words the model reads.
type stopReason struct{ code, why string }

func stopCause(ctx context.Context) stopReason {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrInterrupted):
		return stopReason{"person", "the person interrupted the session"}
	case errors.Is(cause, ErrDeadline):
		return stopReason{"deadline", "the run's time limit was reached"}
	case errors.Is(cause, ErrToolBudget):
		return stopReason{"budget", "the tool-call budget was used up"}
	case errors.Is(cause, ErrStorage):
		return stopReason{"storage", "the session's log or state could not be written"}
	}
	return stopReason{"ended", "the run was stopped (Ctrl-C or another signal)"}
}

// seconds is d as the model reads it: "3.2 s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// stoppedText is what the model reads of a call stopped while it ran
// (stopped-call-result in prompts/messages.scm may say it otherwise).
func stoppedText(name, ran, why, output string) string {
	t := fmt.Sprintf("stopped: this %s call ran for %s and was stopped because %s", name, ran, why)
	if strings.TrimSpace(output) == "" {
		return t + "; it had printed nothing"
	}
	return t + "; what it printed until then:\n" + output
}

// stopped answers a call the run's end stopped while it ran (Ctrl-C, the
// deadline, a signal): its tool.result, with the output it had printed,
// and its result in the conversation, saying how long it ran and why it
// stopped, so that neither the log nor the model is left thinking it never
// ran.
func (s *Session) stopped(ctx context.Context, id, name string, res prim.Result, ran time.Duration, start time.Time) {
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second) // ctx is cancelled: Scheme gets a few seconds
	defer stop()
	why := stopCause(ctx)
	out := s.redact(res.Output)
	text := s.say(sctx, "stopped-call-result", stoppedText(name, seconds(ran), why.why, out),
		scheme.NewString(name), scheme.NewString(seconds(ran)), scheme.NewString(why.why), scheme.NewString(out))
	exit := res.ExitCode
	if exit == 0 {
		exit = -1 // it did not end by itself
	}
	s.emit(s.toolResult(id, name, true, exit, text, res.Changed, time.Since(start).Milliseconds(), why.code))
	if id != "" && !s.answered(id) {
		s.addToolResult(id, name, text, true)
	}
}

// newFiles are the files a file tool's call names to write that do not
// exist yet (absolute, as the tool's Changed gives them): once it has made
// one, the version store records that it did not exist, so /undo and
// 'nodwyn undo' can remove it.
func (s *Session) newFiles(name string, args map[string]any) map[string]bool {
	if s.opts.Store == nil || s.opts.Dry {
		return nil
	}
	var out map[string]bool
	for _, tool := range prim.Table() {
		if tool.Name != name {
			continue
		}
		for _, p := range tool.Params {
			v, _ := args[p.Name].(string)
			if p.Role != roles.PathWrite || v == "" {
				continue
			}
			abs := prim.Resolve(s.opts.Folder, v)
			if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
				if out == nil {
					out = map[string]bool{}
				}
				out[abs] = true
			}
		}
	}
	return out
}

// keepAbsent records that abs did not exist before this session's tool
// made it (store.BackupAbsent); a failure is a note: the file is written.
func (s *Session) keepAbsent(abs string) {
	if err := s.opts.Store.BackupAbsent(s.ID, abs); err != nil {
		s.Note(fmt.Sprintf("%s was created, but the version store could not record that it did not exist before (%v): undo cannot remove it", abs, err))
	}
}

// toolEntry reads one entry of model-turn's tool list: (name .
// description), or (name description schema) with schema the parameters'
// JSON schema as text, or (name description full) for an MCP tool offered
// with its whole schema (runtime/mcp.scm).
func toolEntry(pr *scheme.Pair) (desc string, schema map[string]any, full bool) {
	rest, ok := pr.Cdr.(*scheme.Pair)
	if !ok {
		return scheme.DisplayString(pr.Cdr), nil, false
	}
	items, ok := scheme.ListToSlice(rest)
	if !ok || len(items) != 2 {
		return scheme.DisplayString(pr.Cdr), nil, false
	}
	desc = scheme.DisplayString(items[0])
	switch x := items[1].(type) {
	case scheme.Symbol:
		return desc, nil, x == "full"
	case *scheme.String:
		var m map[string]any
		if json.Unmarshal([]byte(x.S), &m) == nil && m != nil {
			return desc, m, false
		}
	}
	return desc, nil, false
}
