package guard

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// TestSecretWindowsFindWhatTheWholeTextDoes checks the prefilter: running a
// pattern on the stretches around its hints finds exactly the matches the
// pattern finds in the whole text.
func TestSecretWindowsFindWhatTheWholeTextDoes(t *testing.T) {
	frags := []string{
		"api_key", "apikey", "api-key", "private_key", "access-key", "auth_key", "secret", "token", "password",
		"passwd", "credential", "credentials", "aws_secret_access_key", "awssecretkey", "AWS_SECRET_KEY", "key",
		"AKIA", "ASIA", "ghp_", "gho_", "github_pat_", "glpat-", "xoxb-", "sk-", "sk-ant-", "sk-proj-", "AIza",
		"hf_", "npm_", "task-", "=", ":", " = ", ": ", "\"", "'", " ", "\n", "\t", "_", "-", ".", "/", "+", "~",
		"x", "Q7fK2pLm9ZxR4tWv", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "IOSFODNN7EXAMPLE", "0123456789abcdefABCDEF",
		"aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
	}
	found := 0
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rng.Intn(24); k >= 0; k-- {
			b.WriteString(frags[rng.Intn(len(frags))])
		}
		s := b.String()
		lowered := asciiLower(s)
		for i := range secretPatterns {
			p := &secretPatterns[i]
			got := p.matches(s, lowered)
			whole := *p
			whole.window = nil
			want := whole.matches(s, lowered)
			if len(want) > 0 {
				found++
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pattern %s on %q: windows found %v, the whole text %v", p.kind, s, got, want)
			}
		}
	}
	if found < 1000 {
		t.Fatalf("only %d texts had a match; the test proves little", found)
	}
}
