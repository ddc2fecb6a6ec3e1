package bashread

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// SimpleWords returns the literal words of a line that is one simple
// command without assignments, substitutions, expansions or redirections.
func SimpleWords(line string) ([]string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 || st.Background || st.Negated || len(call.Assigns) > 0 {
		return nil, false
	}
	var words []string
	for _, w := range call.Args {
		lit := w.Lit()
		if lit == "" || strings.ContainsAny(lit, "*?[{~") {
			return nil, false
		}
		words = append(words, lit)
	}
	return words, len(words) > 0
}
