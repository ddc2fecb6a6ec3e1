package scheme

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps enforces that the scheme package imports only the standard
// library, so other programs can adopt it on its own.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/nodwyn/nodwyn/scheme" {
			t.Errorf("scheme imports %s, which is not in the standard library; keep scheme standalone", p)
		}
	}
}
