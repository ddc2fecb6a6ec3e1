package scheme

import (
	"fmt"
	"sort"
	"strings"
)

// maxForward bounds how many globals unbound when code referring to them
// was compiled are remembered (a program that makes names without end
// must not grow the interpreter without end).
const maxForward = 4096

// noteRef remembers where code first refers to a global that is unbound
// as it is compiled: a procedure defined further on, or a name no file
// defines (Unresolved tells which).
func (in *Interp) noteRef(g *global, pos *Pos) {
	if g.value != nil {
		return
	}
	if in.forward == nil {
		in.forward = map[*global]Pos{}
	}
	if _, ok := in.forward[g]; ok || len(in.forward) >= maxForward {
		return
	}
	in.forward[g] = posOf(pos)
}

// UnboundRef is a global that compiled code refers to and nothing has
// defined: Pos is the first reference.
type UnboundRef struct {
	Name string
	Pos  Pos
}

// Unresolved returns the globals that code compiled so far refers to and
// that are still unbound, ordered by where they are first referred to. A
// host calls it after loading its files, so a misspelt name stops the
// program before it runs rather than when the branch that holds it does.
func (in *Interp) Unresolved() []UnboundRef {
	var out []UnboundRef
	for g, pos := range in.forward {
		if g.value != nil {
			delete(in.forward, g)
			continue
		}
		out = append(out, UnboundRef{Name: writeSym(g.name), Pos: pos})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// UnresolvedError is the error for Unresolved's list: each name with the
// place that refers to it; nil when the list is empty. Its message starts
// with the first reference's file:line:col.
func UnresolvedError(refs []UnboundRef) error {
	if len(refs) == 0 {
		return nil
	}
	return &Error{Pos: refs[0].Pos, Msg: unresolvedMsg(refs)}
}

func unresolvedMsg(refs []UnboundRef) string {
	var b strings.Builder
	if len(refs) == 1 {
		fmt.Fprintf(&b, "unbound variable: %s is referred to here and defined nowhere", refs[0].Name)
		return b.String()
	}
	fmt.Fprintf(&b, "unbound variables: %d names are referred to and defined nowhere:", len(refs))
	for i, r := range refs {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(refs)-10)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s", r.Pos, r.Name)
	}
	return b.String()
}
