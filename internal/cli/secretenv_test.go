package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestWipeEntries(t *testing.T) {
	area := []byte("HOME=/h\x00OPENAI_API_KEY=sk-1\x00PATH=/bin\x00X_TOKEN=t\x00")
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=sk-1", "X_TOKEN=t"}); err != nil {
		t.Fatal(err)
	}
	want := "HOME=/h\x00" + strings.Repeat("\x00", len("OPENAI_API_KEY=sk-1")) + "\x00PATH=/bin\x00" + strings.Repeat("\x00", len("X_TOKEN=t")) + "\x00"
	if string(area) != want {
		t.Errorf("wiped: %q, want %q", area, want)
	}
	// Every entry of a hidden name goes, not only the one the runtime
	// kept: a second copy (a wrapper that appended to the environment) is
	// a live key too.
	area = []byte("OPENAI_API_KEY=first\x00PATH=/bin\x00OPENAI_API_KEY=second\x00OPENAI_API_KEY=\x00")
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=first"}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(area, []byte("second")) || bytes.Contains(area, []byte("OPENAI")) || !bytes.Contains(area, []byte("PATH=/bin")) {
		t.Errorf("wiped: %q", area)
	}
	// An area that is not the environment the process has (a value
	// changed, an entry missing) is refused, and the caller re-executes.
	area = []byte("HOME=/h\x00OPENAI_API_KEY=sk-2\x00")
	before := bytes.Clone(area)
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=sk-1"}); err == nil {
		t.Error("a key that is not in the area: no error")
	}
	// a prefix of an entry is not the entry
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=sk-"}); err == nil {
		t.Error("a prefix of an entry: no error")
	}
	if !bytes.Equal(area, before) {
		t.Errorf("an entry that is not one of hide was wiped: %q", area)
	}
}

// The wipe on this process itself: /proc/self/environ no longer holds the
// entry, and what the runtime copied at start is untouched.
func TestScrubEnvironOfThisProcess(t *testing.T) {
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Skipf("no /proc/self/environ: %v", err)
	}
	var victim string
	for _, kv := range strings.Split(string(env), "\x00") {
		if strings.HasPrefix(kv, "PATH=") {
			victim = kv
		}
	}
	if victim == "" {
		t.Skip("no PATH in this process's environment")
	}
	if err := scrubEnviron([]string{victim}); err != nil {
		t.Fatalf("scrubEnviron: %v", err)
	}
	after, _ := os.ReadFile("/proc/self/environ")
	if bytes.Contains(after, []byte(victim)) {
		t.Errorf("/proc/self/environ still holds %q", victim)
	}
	if len(after) != len(env) {
		t.Errorf("/proc/self/environ: %d bytes, was %d", len(after), len(env))
	}
	if os.Getenv("PATH") == "" {
		t.Error("the runtime's copy of PATH went with it")
	}
}
