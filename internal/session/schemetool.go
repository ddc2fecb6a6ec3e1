package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/scheme"
)

// A Scheme tool is one an init.scm defines (issue 31 item 1):
//
//	(define-tool "count-lines"
//	  "Count the lines of a file."
//	  '((path string "the file to count" path-read required))
//	  (lambda (args)
//	    (let ((r (call-tool "fs-read" (list (cons 'path (alist-ref args 'path))))))
//	      …)))
//
// It is offered like a primitive ((tools), the profile's tools setting),
// described by its own description (lean and full), judged by the session's
// guard by its parameters' roles before its procedure runs (they join
// prim's in guard.Options.Tools when the guard is assembled, after the
// init chain), and its procedure reaches nothing but through call-tool,
// where each primitive it uses is judged again. It runs inside the run's
// evaluation: the run's context, deadline and tool-call budget, and bounds
// of its own per call (schemeToolBounds); a Scheme tool calls Scheme tools
// at most maxSchemeToolDepth deep.

// maxSchemeToolDepth is how deep Scheme tools may call Scheme tools (a
// tool calling itself included): the fourth nested one is an error result.
const maxSchemeToolDepth = 4

// schemeTool is a tool define-tool defined.
type schemeTool struct {
	name       string
	lean, full string // the descriptions the model reads, in the two styles
	params     []schemeParam
	proc       scheme.Value
	at         scheme.Pos // where define-tool was called
}

// schemeParam is one of its parameters.
type schemeParam struct {
	name     string
	typ      string // a JSON type: string, integer, number, boolean, array, object
	desc     string
	role     roles.Role // "" for none
	required bool
}

// schemeToolbox holds a session's Scheme tools and the calls of theirs
// that are running (Session.schemeTools, made by the first define-tool).
type schemeToolbox struct {
	tools []*schemeTool
	calls []*schemeCall
}

// toolbox is the session's Scheme tools, nil when no init.scm defined one.
func (s *Session) toolbox() *schemeToolbox { return s.schemeTools }

func (b *schemeToolbox) tool(name string) *schemeTool {
	if b == nil {
		return nil
	}
	for _, t := range b.tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

// roles are the roles of the Scheme tools' parameters, as the guard takes
// them (guard.Options.Tools).
func (b *schemeToolbox) roles() []guard.ToolParam {
	var out []guard.ToolParam
	if b == nil {
		return nil
	}
	for _, t := range b.tools {
		for _, p := range t.params {
			if p.role != "" {
				out = append(out, guard.ToolParam{Tool: t.name, Param: p.name, Role: p.role, Required: p.required})
			}
		}
	}
	return out
}

// schemeCall is a Scheme tool's call that is running: the calls its
// procedure makes are marked with its name (within) and the files they
// change are its.
type schemeCall struct {
	name    string
	changed []string
}

var (
	schemeToolTypes = []string{"string", "integer", "number", "boolean", "array", "object"}
	schemeToolRoles = map[string]roles.Role{
		"none": "", "path-read": roles.PathRead, "path-write": roles.PathWrite, "path-search": roles.PathSearch,
		"command": roles.Command, "content": roles.Content, "pattern": roles.Pattern,
	}
	schemeToolRoleNames = "path-read, path-write, path-search, command, content, pattern, none"
	// The names both providers take for a tool (OpenAI's and Anthropic's
	// rule).
	toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// defineTool is (define-tool name description params proc): each problem
// is an error naming the tool and the parameter, raised at the call (the
// init.scm's file and line).
func (s *Session) defineTool(args []scheme.Value) (scheme.Value, error) {
	name, ok := nameOf(args[0])
	if !ok || !toolNameRE.MatchString(name) {
		return nil, scheme.Errorf("define-tool: the name must be a string or symbol of letters, digits, - and _ (at most 64), as in (define-tool \"count-lines\" …), not %s", scheme.WriteString(args[0]))
	}
	fail := func(format string, a ...any) error {
		return scheme.Errorf("define-tool %s: %s", name, fmt.Sprintf(format, a...))
	}
	if s.guard != nil {
		return nil, fail("tools are defined while the init chain loads (an init.scm), before the guard is assembled with their parameters' roles; this session's guard is assembled already")
	}
	if _, isPrim := primTool(name); isPrim {
		return nil, fail("%s is one of nodwyn's own tools; choose another name", name)
	}
	t := &schemeTool{name: name, proc: args[3], at: s.interp.CurrentPos()}
	if err := t.describe(args[1]); err != "" {
		return nil, fail("%s", err)
	}
	if !scheme.IsProcedure(args[3]) {
		return nil, fail("the fourth argument must be a procedure of one argument (the arguments, an alist), not %s", scheme.WriteString(args[3]))
	}
	entries, ok := scheme.ListToSlice(args[2])
	if !ok {
		return nil, fail("the parameters must be a list, as in '((path string \"the file\" path-read required)), not %s", scheme.WriteString(args[2]))
	}
	for i, e := range entries {
		p, err := parseParam(e)
		if err != "" {
			return nil, fail("parameter %d%s: %s", i+1, paramWhere(e, p.name), err)
		}
		if slices.ContainsFunc(t.params, func(q schemeParam) bool { return q.name == p.name }) {
			return nil, fail("parameter %s is given twice", p.name)
		}
		t.params = append(t.params, p)
	}
	if err := t.checkRoles(); err != "" {
		return nil, fail("%s", err)
	}
	b := s.toolbox()
	if b == nil {
		b = &schemeToolbox{}
		s.schemeTools = b
	}
	if i := slices.IndexFunc(b.tools, func(o *schemeTool) bool { return o.name == name }); i >= 0 {
		b.tools[i] = t // a later init.scm redefines it, as it redefines a procedure
	} else {
		b.tools = append(b.tools, t)
	}
	return scheme.NewString(name), nil
}

// describe reads the description: a string for both styles, or an alist
// ((lean . "…") (full . "…")) with one or both.
func (t *schemeTool) describe(v scheme.Value) string {
	if str, ok := v.(*scheme.String); ok {
		t.lean, t.full = strings.TrimSpace(str.S), strings.TrimSpace(str.S)
	} else if items, ok := scheme.ListToSlice(v); ok {
		for _, it := range items {
			p, ok := it.(*scheme.Pair)
			var d *scheme.String
			if ok {
				d, ok = p.Cdr.(*scheme.String)
			}
			if !ok {
				return "a description alist has (lean . \"…\") and (full . \"…\") entries, not " + scheme.WriteString(it)
			}
			switch scheme.DisplayString(p.Car) {
			case "lean":
				t.lean = strings.TrimSpace(d.S)
			case "full":
				t.full = strings.TrimSpace(d.S)
			default:
				return "a description alist has (lean . \"…\") and (full . \"…\") entries, not " + scheme.WriteString(it)
			}
		}
		if t.lean == "" {
			t.lean = t.full
		}
		if t.full == "" {
			t.full = t.lean
		}
	}
	if t.lean == "" {
		return "the description must be a string the model reads (or ((lean . \"…\") (full . \"…\"))), not " + scheme.WriteString(v)
	}
	return ""
}

// parseParam reads (name type "description" [role] [required|optional]).
func parseParam(e scheme.Value) (schemeParam, string) {
	var p schemeParam
	parts, ok := scheme.ListToSlice(e)
	if !ok || len(parts) < 3 {
		return p, "a parameter is (name type \"description\" [role] [required]), as in (path string \"the file\" path-read required), not " + scheme.WriteString(e)
	}
	name, ok := nameOf(parts[0])
	if !ok || !toolNameRE.MatchString(name) {
		return p, "the name must be a symbol or string of letters, digits, - and _, not " + scheme.WriteString(parts[0])
	}
	p.name = name
	typ, _ := nameOf(parts[1])
	if !slices.Contains(schemeToolTypes, typ) {
		return p, fmt.Sprintf("unknown type %s; the types are %s", scheme.WriteString(parts[1]), strings.Join(schemeToolTypes, ", "))
	}
	p.typ = typ
	d, ok := parts[2].(*scheme.String)
	if !ok || strings.TrimSpace(d.S) == "" {
		return p, "the third element must be the parameter's description, a string the model reads, not " + scheme.WriteString(parts[2])
	}
	p.desc = strings.TrimSpace(d.S)
	var roleSet, reqSet bool
	for _, f := range parts[3:] {
		word, _ := nameOf(f)
		role, isRole := schemeToolRoles[word]
		switch {
		case word == "required" || word == "optional":
			if reqSet {
				return p, "required or optional is given twice"
			}
			p.required, reqSet = word == "required", true
		case isRole:
			if roleSet {
				return p, "it has two roles; a parameter has one (" + schemeToolRoleNames + ")"
			}
			p.role, roleSet = role, true
		default:
			return p, fmt.Sprintf("unknown word %s after the description; a parameter may say its role (%s) and required or optional", scheme.WriteString(f), schemeToolRoleNames)
		}
	}
	if p.role != "" && p.typ != "string" {
		return p, fmt.Sprintf("it has the role %s, so its type must be string (the guard judges text), not %s", p.role, p.typ)
	}
	return p, ""
}

// checkRoles holds a tool to what the guard judges of one tool: one path
// (read, written or searched), one command, one content, one pattern.
func (t *schemeTool) checkRoles() string {
	groups := []struct {
		what  string
		roles []roles.Role
	}{
		{"a path role (path-read, path-write, path-search)", []roles.Role{roles.PathRead, roles.PathWrite, roles.PathSearch}},
		{"the role command", []roles.Role{roles.Command}},
		{"the role content", []roles.Role{roles.Content}},
		{"the role pattern", []roles.Role{roles.Pattern}},
	}
	for _, g := range groups {
		var names []string
		for _, p := range t.params {
			if slices.Contains(g.roles, p.role) {
				names = append(names, p.name)
			}
		}
		if len(names) > 1 {
			return fmt.Sprintf("parameters %s all have %s; the guard judges one of each per tool: keep one, and let the procedure reach the others through call-tool (fs-read, fs-write …), where each is judged", strings.Join(names, " and "), g.what)
		}
	}
	return ""
}

func paramWhere(e scheme.Value, name string) string {
	var bits []string
	if name != "" {
		bits = append(bits, name)
	}
	if p, ok := e.(*scheme.Pair); ok && p.Pos != nil && p.Pos.Line > 0 {
		bits = append(bits, fmt.Sprintf("line %d", p.Pos.Line))
	}
	if len(bits) == 0 {
		return ""
	}
	return " (" + strings.Join(bits, ", ") + ")"
}

func nameOf(v scheme.Value) (string, bool) {
	switch x := v.(type) {
	case scheme.Symbol:
		return string(x), true
	case *scheme.String:
		return x.S, true
	}
	return "", false
}

func primTool(name string) (prim.Tool, bool) {
	for _, t := range prim.Table() {
		if t.Name == name {
			return t, true
		}
	}
	return prim.Tool{}, false
}

// schemeTool is the Scheme tool named name, or nil.
func (s *Session) schemeTool(name string) *schemeTool { return s.toolbox().tool(name) }

// toolNames are the tools offered here: prim's, then the Scheme tools in
// the order they were defined.
func (s *Session) toolNames() []string {
	var names []string
	if s.tools != nil {
		names = s.tools.Names()
	}
	if b := s.toolbox(); b != nil {
		for _, t := range b.tools {
			names = append(names, t.name)
		}
	}
	return names
}

// knownTools are every tool the session knows, offered here or not.
func (s *Session) knownTools() []string {
	var names []string
	for _, t := range prim.Table() {
		names = append(names, t.Name)
	}
	if b := s.toolbox(); b != nil {
		for _, t := range b.tools {
			names = append(names, t.name)
		}
	}
	return names
}

// schema is the JSON schema of the tool's parameters, as prim's Schema.
func (t *schemeTool) schema() map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range t.params {
		prop := map[string]any{"type": p.typ, "description": p.desc}
		if p.typ == "array" {
			prop["items"] = map[string]any{}
		}
		props[p.name] = prop
		if p.required {
			required = append(required, p.name)
		}
	}
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

// value is the tool as (defined-tool name) gives it to Scheme.
func (t *schemeTool) value() scheme.Value {
	ps := make([]scheme.Value, len(t.params))
	for i, p := range t.params {
		role := string(p.role)
		if role == "" {
			role = "none"
		}
		ps[i] = scheme.List(
			scheme.Cons(scheme.Symbol("name"), scheme.NewString(p.name)),
			scheme.Cons(scheme.Symbol("type"), scheme.NewString(p.typ)),
			scheme.Cons(scheme.Symbol("description"), scheme.NewString(p.desc)),
			scheme.Cons(scheme.Symbol("role"), scheme.NewString(role)),
			scheme.Cons(scheme.Symbol("required"), p.required),
		)
	}
	return scheme.List(
		scheme.Cons(scheme.Symbol("name"), scheme.NewString(t.name)),
		scheme.Cons(scheme.Symbol("lean"), scheme.NewString(t.lean)),
		scheme.Cons(scheme.Symbol("full"), scheme.NewString(t.full)),
		scheme.Cons(scheme.Symbol("params"), scheme.List(ps...)),
		scheme.Cons(scheme.Symbol("defined-at"), scheme.NewString(t.at.String())),
	)
}

// decode checks a call's arguments against the parameters, in their
// order, and gives them as the procedure's alist; msg, when not "", is
// the first problem, naming the tool and the parameter (as prim's).
func (t *schemeTool) decode(raw map[string]any) (scheme.Value, string) {
	var out []scheme.Value
	for _, p := range t.params {
		v, present := raw[p.name]
		if !present || v == nil {
			if p.required {
				return nil, fmt.Sprintf("%s: missing argument %q (%s)", t.name, p.name, typeNoun(p.typ))
			}
			continue
		}
		x, problem := convertArg(p.typ, v)
		if problem != "" {
			return nil, fmt.Sprintf("%s: argument %q %s", t.name, p.name, problem)
		}
		out = append(out, scheme.Cons(scheme.Symbol(p.name), scheme.FromGo(x)))
	}
	return scheme.List(out...), ""
}

func typeNoun(typ string) string {
	switch typ {
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "array":
		return "a JSON array"
	case "object":
		return "a JSON object"
	}
	return "a string"
}

// convertArg turns a decoded JSON value into the type's Go value, or says
// what is wrong with it. Numbers and booleans in strings ("5", "true")
// pass, as prim's do.
func convertArg(typ string, v any) (any, string) {
	switch typ {
	case "string":
		if s, ok := v.(string); ok {
			return s, ""
		}
	case "integer":
		switch x := v.(type) {
		case int:
			return x, ""
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int(x), ""
			}
			return nil, fmt.Sprintf("must be a whole number, not %v", x)
		case string:
			if i, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
				return i, ""
			}
			return nil, fmt.Sprintf("must be a whole number, not %q", x)
		}
	case "number":
		switch x := v.(type) {
		case int, float64:
			return x, ""
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
				return f, ""
			}
			return nil, fmt.Sprintf("must be a number, not %q", x)
		}
	case "boolean":
		switch x := v.(type) {
		case bool:
			return x, ""
		case string:
			if b, err := strconv.ParseBool(x); err == nil {
				return b, ""
			}
			return nil, fmt.Sprintf("must be true or false, not %q", x)
		}
	case "array":
		if a, ok := v.([]any); ok {
			return a, ""
		}
	case "object":
		if m, ok := v.(map[string]any); ok {
			return m, ""
		}
	}
	return nil, fmt.Sprintf("must be %s, not %s", typeNoun(typ), jsonKind(v))
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "true or false"
	case int, float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// schemeToolBounds are the bounds of each call of a Scheme tool's
// procedure, counted from the call's start: the init chain's own ([limits]
// init_steps and init_memory_mb; by default DefaultInitSteps procedure
// calls and DefaultInitMemory bytes), the bounds of one file of it. A
// procedure that loops or keeps building data ends there with an error
// result, not at the run's deadline or out of memory. A Scheme tool that
// another calls counts against the caller's bounds too.
func (s *Session) schemeToolBounds() scheme.Bounds {
	steps, mem := s.opts.initBounds()
	return scheme.Bounds{Steps: steps, Memory: mem}
}

// runSchemeTool runs an allowed call of a Scheme tool: its arguments
// decoded, then its procedure, inside the run's evaluation (the run's
// context: its deadline, Ctrl-C, the tool-call budget) and under
// schemeToolBounds. An error the procedure raises, or a bound it runs out
// of, is the call's error result; the run goes on.
func (s *Session) runSchemeTool(ctx context.Context, t *schemeTool, id string, req guard.Request, d guard.Decision, start time.Time) (scheme.Value, error) {
	verdict, checker := d.Verdict.String(), d.Checker
	b := s.toolbox()
	args, msg := t.decode(req.Args)
	if msg == "" && len(b.calls) >= maxSchemeToolDepth {
		var chain []string
		for _, c := range b.calls {
			chain = append(chain, c.name)
		}
		msg = fmt.Sprintf("%s: not run: Scheme tools may call Scheme tools only %d deep (%s → %s)", t.name, maxSchemeToolDepth, strings.Join(chain, " → "), t.name)
	}
	if msg != "" {
		s.emitResult(id, t.name, true, -1, msg, nil, start)
		return resultAlist(msg, true, verdict, checker, -1), nil
	}
	call := &schemeCall{name: t.name}
	b.calls = append(b.calls, call)
	toolStart := time.Now()
	v, err := s.interp.CallBounded(ctx, s.schemeToolBounds(), t.proc, args)
	b.calls = b.calls[:len(b.calls)-1]
	if err != nil && ctx.Err() != nil {
		s.stopped(ctx, id, t.name, prim.Result{Changed: call.changed}, time.Since(toolStart), start)
		return nil, ctx.Err()
	}
	if outerBound(err) {
		// The Scheme tool that called this one ran out of its bound in
		// it: that call ends (its result says why), and this one with it.
		caller := "the evaluation that called it"
		if n := len(b.calls); n > 0 {
			caller = b.calls[n-1].name
		}
		s.emitResult(id, t.name, true, -1, fmt.Sprintf("%s: stopped: %s ran out of its bound", t.name, caller), call.changed, start)
		return nil, err
	}
	out, isErr, exit := "", false, 0
	switch {
	case err != nil:
		out, isErr = s.schemeToolFailed(t, err), true
	default:
		out, isErr, exit = toolValue(v)
	}
	out = s.redact(out)
	s.emitResult(id, t.name, isErr, exit, out, call.changed, start)
	return resultAlist(out, isErr, verdict, checker, exit), nil
}

// outerBound reports whether err is the end of an evaluation around a
// Scheme tool's call by a bound of its own (an abort: no Value), rather
// than the call's error: a primitive hands it on unchanged.
func outerBound(err error) bool {
	var e *scheme.Error
	return errors.As(err, &e) && e.Value == nil &&
		(errors.Is(err, scheme.ErrStepLimit) || errors.Is(err, scheme.ErrMemoryLimit))
}

// schemeToolFailed is the result text of a Scheme tool's call that ended
// with err: the error, or the bound it ran out of, where, and how to
// raise it.
func (s *Session) schemeToolFailed(t *schemeTool, err error) string {
	step, mem := errors.Is(err, scheme.ErrStepLimit), errors.Is(err, scheme.ErrMemoryLimit)
	if !step && !mem {
		return fmt.Sprintf("%s failed: %s", t.name, userText(err))
	}
	cfg := "config.toml"
	if s.opts.Dirs.Config != "" {
		cfg = filepath.Join(s.opts.Dirs.Config, "config.toml")
	}
	where := ""
	var e *scheme.Error
	if errors.As(err, &e) && !e.Pos.IsZero() {
		where = " (it was at " + e.Pos.String() + ")"
	}
	bounds := s.schemeToolBounds()
	if step {
		return fmt.Sprintf("%s stopped: it made more than %d procedure calls, a Scheme tool's step bound per call%s; the run goes on\n(look for a loop that never ends in its procedure, defined at %s, or raise the bound with [limits] init_steps in %s)",
			t.name, bounds.Steps, where, t.at, cfg)
	}
	return fmt.Sprintf("%s stopped: it kept more than %d MB of data, a Scheme tool's memory bound per call%s; the run goes on\n(look for a loop that keeps building data in its procedure, defined at %s, or raise the bound with [limits] init_memory_mb in %s)",
		t.name, bounds.Memory>>20, where, t.at, cfg)
}

// toolValue is what a Scheme tool's procedure returned, as a result: a
// string is the text; a call-tool result alist gives its output, error
// and exit (a tool that hands on a primitive's result hands on its error);
// anything else is displayed.
func toolValue(v scheme.Value) (out string, isErr bool, exit int) {
	if s, ok := v.(*scheme.String); ok {
		return s.S, false, 0
	}
	if items, ok := scheme.ListToSlice(v); ok && len(items) > 0 {
		fields := map[string]scheme.Value{}
		for _, it := range items {
			p, ok := it.(*scheme.Pair)
			if !ok {
				fields = nil
				break
			}
			if k, ok := p.Car.(scheme.Symbol); ok {
				fields[string(k)] = p.Cdr
			}
		}
		if o, ok := fields["output"].(*scheme.String); ok {
			if e, ok := fields["error"]; ok {
				isErr = scheme.IsTrue(e)
			}
			if n, ok := fields["exit"].(int); ok {
				exit = n
			}
			return o.S, isErr, exit
		}
	}
	if v == scheme.Void {
		return "", false, 0
	}
	return scheme.DisplayString(v), false, 0
}

// inSchemeTool reports whether a Scheme tool's procedure is running: the
// calls it makes are its own, not the model's (they take no model call's
// id).
func (s *Session) inSchemeTool() bool {
	b := s.toolbox()
	return b != nil && len(b.calls) > 0
}

// nestedChanged adds the files a call inside a Scheme tool changed to
// that tool's call.
func (s *Session) nestedChanged(paths []string) {
	if b := s.toolbox(); b != nil {
		for _, c := range b.calls {
			c.changed = append(c.changed, paths...)
		}
	}
}

// notInSchemeTool is the error of a procedure that changes the
// conversation or ends the run, called by a Scheme tool's procedure: a
// tool computes its result and reaches the world through call-tool.
func (s *Session) notInSchemeTool(name string) error {
	if b := s.toolbox(); b != nil && len(b.calls) > 0 {
		return scheme.Errorf("%s: not allowed inside a Scheme tool (%s, define-tool): a tool's procedure returns its result and reaches files and commands through call-tool", name, b.calls[len(b.calls)-1].name)
	}
	return nil
}
