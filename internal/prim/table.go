package prim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nodwyn/nodwyn/internal/roles"
)

// Tool is one tool's descriptor: everything nodwyn knows of a tool but what
// the model reads of it and its parameters, which prompts/tools.scm says
// (lean-tool-descriptions, full-tool-descriptions,
// tool-parameter-descriptions). Each tool's
// file registers its descriptor from init (Register); the table drives the
// schema the model sees (Schema), the decoding of a call's arguments (Run
// gets them typed), the guard's roles (the session hands them to the guard
// as data) and nodwyn guard --tool.
type Tool struct {
	Name   string
	Params []Param
	// Run runs a call whose arguments decoded: every required parameter
	// is there, every value has its parameter's type. A method expression
	// such as (*Tools).fsRead fits.
	Run func(t *Tools, ctx context.Context, a Args) (Result, error)
	// Offered reports whether the tool is offered by these tools, and when
	// not, why, in words the model reads ("git-status: not offered here:
	// …"). nil: always. It is asked once, by New.
	Offered func(t *Tools) (ok bool, why string)
	// Order is where the tool comes in the list the model reads (Names):
	// lower first, ties by name.
	Order int
}

// Param is one parameter of a tool.
type Param struct {
	Name     string
	Type     Type
	Role     roles.Role // what the guard judges it as (a path not Required defaults to the folder)
	Required bool
	// Internal parameters are not in the schema: the session fills them
	// before the guard judges the call (self-check's command is the
	// contract's check, never the model's).
	Internal bool
}

// Type is a parameter's JSON-schema type.
type Type string

// The types a parameter can have; Run reads them with Args.Str, Args.Int
// and Args.Bool.
const (
	String  Type = "string"
	Integer Type = "integer"
	Boolean Type = "boolean"
)

var (
	tableMu sync.RWMutex
	table   []Tool
)

// Register adds a tool to the table. Each tool's file calls it from init;
// it panics on a descriptor that cannot work (no name or Run, a name
// registered twice, a parameter without a known type).
func Register(tool Tool) {
	if tool.Name == "" || tool.Run == nil {
		panic("prim: Register: a tool needs a name and a Run")
	}
	seen := map[string]bool{}
	for _, p := range tool.Params {
		switch {
		case p.Name == "" || seen[p.Name]:
			panic(fmt.Sprintf("prim: Register %s: parameter %q is empty or given twice", tool.Name, p.Name))
		case p.Type != String && p.Type != Integer && p.Type != Boolean:
			panic(fmt.Sprintf("prim: Register %s: parameter %s has no known type (%q)", tool.Name, p.Name, p.Type))
		case !p.Role.Known():
			panic(fmt.Sprintf("prim: Register %s: parameter %s has no known role (%q)", tool.Name, p.Name, p.Role))
		case p.Role != roles.None && p.Type != String:
			panic(fmt.Sprintf("prim: Register %s: parameter %s has a role, so it must be a string", tool.Name, p.Name))
		}
		seen[p.Name] = true
	}
	tableMu.Lock()
	defer tableMu.Unlock()
	if slices.ContainsFunc(table, func(t Tool) bool { return t.Name == tool.Name }) {
		panic("prim: Register: " + tool.Name + " is registered twice")
	}
	table = append(table, tool)
	slices.SortStableFunc(table, func(a, b Tool) int {
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Table returns every registered tool, offered here or not, in order.
func Table() []Tool {
	tableMu.RLock()
	defer tableMu.RUnlock()
	return slices.Clone(table)
}

func lookup(name string) (Tool, bool) {
	tableMu.RLock()
	defer tableMu.RUnlock()
	for _, t := range table {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

func (tool Tool) offer(t *Tools) (bool, string) {
	if tool.Offered == nil {
		return true, ""
	}
	return tool.Offered(t)
}

// Schema is the JSON schema of the tool's parameters as the model sees it:
// each parameter with its type and the description describe gives it
// (prompts/tools.scm's, through the session; "" or a nil describe: none),
// Internal ones left out.
func (tool Tool) Schema(describe func(param string) string) map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range tool.Params {
		if p.Internal {
			continue
		}
		prop := map[string]any{"type": string(p.Type)}
		if describe != nil {
			if d := describe(p.Name); d != "" {
				prop["description"] = d
			}
		}
		props[p.Name] = prop
		if p.Required {
			required = append(required, p.Name)
		}
	}
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

// Args are a call's decoded arguments: only the tool's parameters, each of
// its type (string, int or bool). An absent optional parameter reads as
// the zero value.
type Args struct{ v map[string]any }

// Str returns a string parameter ("" when absent).
func (a Args) Str(name string) string { s, _ := a.v[name].(string); return s }

// Int returns an integer parameter; ok is false when it is absent.
func (a Args) Int(name string) (n int, ok bool) { n, ok = a.v[name].(int); return n, ok }

// Bool returns a boolean parameter (false when absent).
func (a Args) Bool(name string) bool { b, _ := a.v[name].(bool); return b }

// Has reports whether the call gave the parameter.
func (a Args) Has(name string) bool { _, ok := a.v[name]; return ok }

// decode checks raw against the tool's parameters, in their order, and
// returns them typed; msg, when not "", is the first problem, naming the
// tool and the parameter (`fs-read: missing argument "path" (a string)`).
// Arguments that are no parameter are ignored; null is absent.
func (tool Tool) decode(raw map[string]any) (a Args, msg string) {
	a.v = make(map[string]any, len(tool.Params))
	for _, p := range tool.Params {
		v, present := raw[p.Name]
		if !present || v == nil {
			if p.Required {
				return a, fmt.Sprintf("%s: missing argument %q (%s)", tool.Name, p.Name, p.Type.noun())
			}
			continue
		}
		x, problem := p.Type.convert(v)
		if problem != "" {
			return a, fmt.Sprintf("%s: argument %q %s", tool.Name, p.Name, problem)
		}
		a.v[p.Name] = x
	}
	return a, ""
}

func (ty Type) noun() string {
	switch ty {
	case Integer:
		return "a whole number"
	case Boolean:
		return "true or false"
	}
	return "a string"
}

// convert turns a decoded JSON value into the type's Go value (string, int
// or bool), or says what is wrong with it. Numbers and booleans in strings
// ("5", "true") pass, as models send them.
func (ty Type) convert(v any) (any, string) {
	switch ty {
	case String:
		if s, ok := v.(string); ok {
			return s, ""
		}
		return nil, fmt.Sprintf("must be a string, not %T", v)
	case Integer:
		switch x := v.(type) {
		case float64:
			if x != float64(int(x)) {
				return nil, fmt.Sprintf("must be a whole number, not %v", x)
			}
			return int(x), ""
		case int:
			return x, ""
		case int64:
			return int(x), ""
		case interface{ Int64() (int64, error) }: // json.Number
			i, err := x.Int64()
			if err != nil {
				return nil, fmt.Sprintf("must be a whole number: %v", err)
			}
			return int(i), ""
		case string:
			i, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil {
				return nil, fmt.Sprintf("must be a whole number, not %q", x)
			}
			return i, ""
		}
		return nil, fmt.Sprintf("must be a whole number, not %T", v)
	case Boolean:
		switch x := v.(type) {
		case bool:
			return x, ""
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil, fmt.Sprintf("must be true or false, not %q", x)
			}
			return b, ""
		}
		return nil, fmt.Sprintf("must be true or false, not %T", v)
	}
	return nil, "has an unknown type"
}
