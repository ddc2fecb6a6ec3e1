package bashread

import (
	"slices"
	"testing"
)

// GIT_CONFIG_PARAMETERS as git writes it for its children (git's
// sq_quote_buf and its 'key'='value' form) splits into key=value items.
func TestGitConfigParameters(t *testing.T) {
	type kv = [2]string
	for in, want := range map[string][]kv{
		`'core.pager=cat x'`:                    {{"core.pager", "cat x"}},
		`'user.name'='A B' 'core.pager'='less'`: {{"user.name", "A B"}, {"core.pager", "less"}},
		`'alias.x=!echo '\''hi'\'''`:            {{"alias.x", "!echo 'hi'"}},
		`  'a.b=1'   'c.d=2' `:                  {{"a.b", "1"}, {"c.d", "2"}},
		`core.pager=cat`:                        {{"core.pager", "cat"}},
		``:                                      nil,
		// git keeps a new-style key whole, = and all
		`'diff.a=b.textconv'='sh x'`: {{"diff.a=b.textconv", "sh x"}},
		// \r separates items; an old-style key is trimmed
		"'user.name=x'\r'alias.z=!sh x'": {{"user.name", "x"}, {"alias.z", "!sh x"}},
		`' alias.z =!sh x'`:              {{"alias.z", "!sh x"}},
	} {
		got, ok := gitConfigParameters(in)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%q: %q (%v), want %q", in, got, ok, want)
		}
	}
	if got, ok := gitConfigParameters(`'core.pager=cat x`); ok || len(got) != 1 || got[0] != (kv{"core.pager", "cat x"}) {
		t.Errorf("an unterminated quote: %q, %v", got, ok)
	}
}
