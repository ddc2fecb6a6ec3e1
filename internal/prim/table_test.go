package prim

import (
	"context"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/roles"
)

// Every tool in the table has a descriptor that works: a Run, parameters
// with a type, a one-line description for each the model sees, and a
// schema that lists them.
func TestEveryToolHasAWorkingDescriptor(t *testing.T) {
	want := []string{"shell-exec", "shell-start", "shell-read", "shell-stop", "fs-read", "fs-write", "fs-edit", "fs-find", "index-grep", "self-check", "run-tests", "git-status", "git-diff"}
	var names []string
	for _, tool := range Table() {
		names = append(names, tool.Name)
		props := tool.Schema(func(p string) string { return "about " + p })["properties"].(map[string]any)
		for _, p := range tool.Params {
			prop, shown := props[p.Name].(map[string]any)
			switch {
			case p.Internal && shown:
				t.Errorf("%s: the internal parameter %s is in the schema", tool.Name, p.Name)
			case p.Internal:
			case !shown || prop["type"] != string(p.Type):
				t.Errorf("%s: %s is not in the schema with its type: %v", tool.Name, p.Name, prop)
			case prop["description"] != "about "+p.Name:
				t.Errorf("%s: %s: the schema's description is %v, not describe's", tool.Name, p.Name, prop["description"])
			}
		}
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("the table's order is %v, want %v", names, want)
	}
}

// Arguments are decoded by the descriptor, typed, with errors that name
// the tool and the parameter; the first problem, in the parameters' order,
// is the one told.
func TestArgumentsAreDecodedByTheDescriptor(t *testing.T) {
	var got Args
	tool := Tool{Name: "probe", Run: func(_ *Tools, _ context.Context, a Args) (Result, error) { got = a; return Result{}, nil }, Params: []Param{
		{Name: "s", Type: String, Required: true},
		{Name: "n", Type: Integer},
		{Name: "b", Type: Boolean},
	}}
	for _, c := range []struct {
		args map[string]any
		msg  string
	}{
		{map[string]any{}, `probe: missing argument "s" (a string)`},
		{map[string]any{"s": nil}, `probe: missing argument "s" (a string)`},
		{map[string]any{"s": 3.0}, `probe: argument "s" must be a string, not float64`},
		{map[string]any{"s": "x", "n": 1.5}, `probe: argument "n" must be a whole number, not 1.5`},
		{map[string]any{"s": "x", "n": "soon", "b": 1}, `probe: argument "n" must be a whole number, not "soon"`},
		{map[string]any{"s": "x", "b": "maybe"}, `probe: argument "b" must be true or false, not "maybe"`},
		{map[string]any{"s": "x", "n": "7", "b": "true", "other": 1}, ""},
	} {
		a, msg := tool.decode(c.args)
		if msg != c.msg {
			t.Errorf("%v: %q, want %q", c.args, msg, c.msg)
		}
		if msg == "" {
			got = a
		}
	}
	if n, ok := got.Int("n"); got.Str("s") != "x" || n != 7 || !ok || !got.Bool("b") || got.Has("other") {
		t.Errorf("decoded: %+v", got.v)
	}
	if _, ok := (Args{}).Int("n"); ok {
		t.Error("an absent integer reads as present")
	}
}

// A descriptor that cannot work is refused as it registers.
func TestRegisterRefusesBrokenDescriptors(t *testing.T) {
	run := func(*Tools, context.Context, Args) (Result, error) { return Result{}, nil }
	for name, tool := range map[string]Tool{
		"no run":       {Name: "x-probe"},
		"twice":        {Name: "fs-read", Run: run},
		"no type":      {Name: "x-probe", Run: run, Params: []Param{{Name: "p"}}},
		"dup param":    {Name: "x-probe", Run: run, Params: []Param{{Name: "p", Type: String}, {Name: "p", Type: String}}},
		"role not str": {Name: "x-probe", Run: run, Params: []Param{{Name: "p", Type: Integer, Role: roles.PathRead}}},
		"no role":      {Name: "x-probe", Run: run, Params: []Param{{Name: "p", Type: String, Role: roles.Role("path")}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			Register(tool)
		}()
	}
}
