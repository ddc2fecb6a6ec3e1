package guard

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateVerdicts = flag.Bool("update-verdicts", false, "rewrite testdata/verdicts.txt with the verdicts given now")

// TestVerdictsAreAsRecorded judges the lines of testdata/verdicts.txt,
// which exercise each program's options in their separate, attached and
// "=" forms, in both modes and compares the verdicts with those recorded
// there. go test ./internal/guard/ -run TestVerdictsAreAsRecorded
// -update-verdicts rewrites them; read the diff before committing it.
func TestVerdictsAreAsRecorded(t *testing.T) {
	e := newTestEnv(t)
	path := filepath.Join("testdata", "verdicts.txt")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	guards := map[string]*Guard{"default": e.guard(false), "sandbox": e.guard(true)}
	var out strings.Builder
	for n, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
			continue
		}
		f := strings.SplitN(l, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("verdicts.txt:%d: want default<TAB>sandbox<TAB>line", n+1)
		}
		got := map[string]Verdict{}
		for mode, g := range guards {
			got[mode] = g.Check(bg, shell(e.expand(f[2]))).Verdict
		}
		fmt.Fprintf(&out, "%v\t%v\t%s\n", got["default"], got["sandbox"], f[2])
		if !*updateVerdicts && (got["default"].String() != f[0] || got["sandbox"].String() != f[1]) {
			t.Errorf("verdicts.txt:%d %q: %v, %v; recorded %s, %s", n+1, f[2], got["default"], got["sandbox"], f[0], f[1])
		}
	}
	if *updateVerdicts {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
