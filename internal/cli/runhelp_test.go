package cli

import (
	"strings"
	"testing"
)

// run --help reads in one screenful or two: the exit codes, the flags
// under headings, and examples; the essays are in README.md and docs/.
func TestRunHelpIsShortAndGrouped(t *testing.T) {
	_, out, _ := nodwyn(homeEnv(t.TempDir()), "", "run", "--help")
	if n := strings.Count(out, "\n"); n > 95 {
		t.Errorf("run --help is %d lines, want at most 95:\n%s", n, out)
	}
	for _, want := range []string{"Exit codes:", "\nThe model:\n", "\nConfirms, trust and sandbox:\n", "\nLimits:\n", "\nExamples:\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("run --help lacks %q:\n%s", want, out)
		}
	}
}
