package session

import (
	"context"
	"fmt"

	"github.com/nodwyn/nodwyn/scheme"
)

// say is the message name of prompts/messages.scm (a project's init.scm
// may redefine it): a string bound to name is the message, a procedure is
// called with args and returns it. The fallback, the built-in text, is
// said when the interpreter is not there yet, when nothing is bound to
// name, or when the message fails or is not a string (then a note says
// so). A message only says: the procedures that act (call-tool,
// model-turn, add-message!, finish!) raise an error inside it, as inside a
// guard checker.
func (s *Session) say(ctx context.Context, name, fallback string, args ...scheme.Value) string {
	if s.interp == nil {
		return fallback
	}
	v, ok := s.interp.Lookup(name)
	if !ok {
		return fallback
	}
	if scheme.IsProcedure(v) {
		s.checking++
		var err error
		v, err = s.interp.Call(ctx, v, args...)
		s.checking--
		if err != nil {
			if ctx.Err() == nil {
				s.Note(fmt.Sprintf("prompts: %s failed (%v); the built-in text was said instead", name, err))
			}
			return fallback
		}
	}
	str, ok := v.(*scheme.String)
	if !ok {
		s.Note(fmt.Sprintf("prompts: %s is %s, not a string; the built-in text was said instead", name, scheme.WriteString(v)))
		return fallback
	}
	return str.S
}

func strs(ss []string) scheme.Value {
	vs := make([]scheme.Value, len(ss))
	for i, x := range ss {
		vs[i] = scheme.NewString(x)
	}
	return scheme.List(vs...)
}
