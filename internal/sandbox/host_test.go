package sandbox

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// eventually waits (up to 10 s) for cond; a bound against hanging, not a
// measurement.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHeadTailKeepsEverythingUnderItsMax(t *testing.T) {
	for _, chunk := range []int{1, 7, 100, 5000} {
		h := HeadTail{Max: 100}
		var all []byte
		for i := 0; i < 90; i++ {
			all = append(all, byte('a'+i%26))
		}
		for i := 0; i < len(all); i += chunk {
			h.Write(all[i:min(i+chunk, len(all))])
		}
		if h.String() != string(all) {
			t.Errorf("chunk %d: %q", chunk, h.String())
		}
		h.Write(make([]byte, 1000))
		if s := h.String(); !strings.HasPrefix(s, string(all[:50])) || !strings.Contains(s, "left out") {
			t.Errorf("chunk %d, over max: %q", chunk, s)
		}
	}
}

func TestHasEntryMatchesWholeEntries(t *testing.T) {
	if !hasEntry([]byte("A=1\x00"+MarkEnv+"=x\x00B=2"), []byte(MarkEnv+"=x")) || hasEntry([]byte(MarkEnv+"=xy\x00"), []byte(MarkEnv+"=x")) {
		t.Errorf("hasEntry does not match whole entries")
	}
}

// TestDeps keeps sandbox a leaf: the standard library and golang.org/x/sys.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if first, _, _ := strings.Cut(dep, "/"); strings.Contains(first, ".") && !strings.HasPrefix(dep, "golang.org/x/sys") && dep != "github.com/nodwyn/nodwyn/internal/sandbox" {
			t.Errorf("sandbox imports %s; it may import only the standard library and golang.org/x/sys", dep)
		}
	}
}
