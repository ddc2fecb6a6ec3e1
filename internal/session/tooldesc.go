package session

import (
	"sync"

	"github.com/nodwyn/nodwyn/scheme"
)

// toolSchema is the schema of prim's tool name as the model reads it: its
// parameters' names and types from prim's table, their descriptions from
// tool-parameter-descriptions (prompts/tools.scm, next to the tool's own
// description; a project's init.scm may redefine it). nil for a name that
// is no tool of prim's. A request lists the tools every turn, so the
// schemas are kept until that name is bound to another list (a list
// changed in place keeps its schemas).
func (s *Session) toolSchema(name string) map[string]any {
	var descs *scheme.Pair // a list of (tool (param . "…") …), or nil
	if s.interp != nil {
		if v, ok := s.interp.Lookup("tool-parameter-descriptions"); ok {
			descs, _ = v.(*scheme.Pair)
		}
	}
	toolSchemas.Lock()
	defer toolSchemas.Unlock()
	if toolSchemas.descs != descs || toolSchemas.m == nil {
		toolSchemas.descs, toolSchemas.m = descs, map[string]map[string]any{}
	}
	if m, ok := toolSchemas.m[name]; ok {
		return m
	}
	m := s.tools.Schema(name, paramDescriptions(descs, name))
	toolSchemas.m[name] = m
	return m
}

// toolSchemas are the schemas made from the last definition of
// tool-parameter-descriptions seen (one at a time: sessions that run at
// once in a daemon share it while theirs are the same).
var toolSchemas struct {
	sync.Mutex
	descs *scheme.Pair
	m     map[string]map[string]any
}

// paramDescriptions reads tool's entry of tool-parameter-descriptions: a
// parameter's one-line description, or "" for one it does not name (or
// names with no string).
func paramDescriptions(descs *scheme.Pair, tool string) func(param string) string {
	if descs == nil {
		return nil
	}
	entries, _ := scheme.ListToSlice(descs)
	for _, e := range entries {
		p, ok := e.(*scheme.Pair)
		if n, isStr := pairCar(p, ok); !isStr || n != tool {
			continue
		}
		params, _ := scheme.ListToSlice(p.Cdr)
		return func(param string) string {
			for _, x := range params {
				q, ok := x.(*scheme.Pair)
				if n, isStr := pairCar(q, ok); isStr && n == param {
					if d, ok := q.Cdr.(*scheme.String); ok {
						return d.S
					}
				}
			}
			return ""
		}
	}
	return nil
}

// pairCar is p's car when p is a pair whose car is a string.
func pairCar(p *scheme.Pair, ok bool) (string, bool) {
	if !ok || p == nil {
		return "", false
	}
	s, isStr := p.Car.(*scheme.String)
	if !isStr {
		return "", false
	}
	return s.S, true
}
