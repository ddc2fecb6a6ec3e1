package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type payload struct {
	Cmd              string `json:"cmd"`
	Exit             int    `json:"exit"`
	Summary          string `json:"summary"`
	WorkdirHash      string `json:"workdir_hash"`
	EvidenceOnly     bool   `json:"evidence_only"`
	VerdictUnchanged bool   `json:"verdict_unchanged"`
}

func newKey(t *testing.T) (*Key, string) {
	t.Helper()
	data := t.TempDir()
	k, err := LoadOrCreateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return k, data
}

// writeJournal appends n entries to a new journal and returns its path.
func writeJournal(t *testing.T, k *Key, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions", "s1", "journal.jsonl")
	j, err := Open(path, "s1", k)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := 1; i <= n; i++ {
		e, err := j.Append("self_validation", payload{Cmd: "go test ./...", Exit: i % 2, Summary: fmt.Sprintf("run %d <ok> & \"quoted\"", i), WorkdirHash: "abc", EvidenceOnly: true, VerdictUnchanged: true})
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != int64(i) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
	return path
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
}

func writeLines(t *testing.T, path string, ls []string) {
	t.Helper()
	text := strings.Join(ls, "")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func verifyFails(t *testing.T, path string, k *Key, line int, why string) {
	t.Helper()
	_, err := Verify(path, k.Public())
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("Verify: %v, want a *VerifyError", err)
	}
	if ve.Line != line || !strings.Contains(ve.Why, why) {
		t.Fatalf("Verify: %v; want line %d and %q", err, line, why)
	}
}

func TestAppendVerify(t *testing.T) {
	k, _ := newKey(t)
	path := writeJournal(t, k, 3)
	r, err := Verify(path, k.Public())
	if err != nil {
		t.Fatal(err)
	}
	if r.Entries != 3 || r.Session != "s1" {
		t.Fatalf("report %+v", r)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal mode %04o, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(path))
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("journal directory mode %04o, want 0700", di.Mode().Perm())
	}
	// The fields in the documented order, the first prev "".
	first := lines(t, path)[0]
	for _, k := range []string{`{"seq":1,"time":"`, `","session":"s1","kind":"self_validation","payload":{"cmd":`, `},"prev":"","key":"`, `","sig":"`} {
		if !strings.Contains(first, k) {
			t.Fatalf("line 1 lacks %s: %s", k, first)
		}
	}
	es, err := ReadEntries(path)
	if err != nil || len(es) != 3 {
		t.Fatalf("ReadEntries: %d entries, %v", len(es), err)
	}
	var p payload
	if err := json.Unmarshal(es[1].Payload, &p); err != nil || p.Exit != 0 || !p.EvidenceOnly {
		t.Fatalf("payload %s: %v", es[1].Payload, err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	k, _ := newKey(t)
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := Open(path, "s1", k)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 5; n++ {
				if _, err := j.Append("self_validation", map[string]int{"g": i, "n": n}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	j.Close()
	r, err := Verify(path, k.Public())
	if err != nil || r.Entries != 40 {
		t.Fatalf("Verify: %d entries, %v", r.Entries, err)
	}
}

func TestResumedOpenContinuesTheChain(t *testing.T) {
	k, _ := newKey(t)
	path := writeJournal(t, k, 2)
	j, err := Open(path, "s1", k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := j.Append("self_validation", payload{Cmd: "make test"})
	j.Close()
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 3 {
		t.Fatalf("the resumed journal's entry has seq %d, want 3", e.Seq)
	}
	if r, err := Verify(path, k.Public()); err != nil || r.Entries != 3 {
		t.Fatalf("Verify: %d entries, %v", r.Entries, err)
	}
	// Another session's journal is not continued.
	if _, err := Open(path, "s2", k); err == nil || !strings.Contains(err.Error(), `session "s1"`) {
		t.Fatalf("Open for another session: %v", err)
	}
}

// A crash while a line was written leaves it without its newline: Verify
// says so; Open cuts it off, and the chain goes on from the entry before.
func TestCutLastLine(t *testing.T) {
	k, _ := newKey(t)
	path := writeJournal(t, k, 3)
	ls := lines(t, path)
	ls[2] = ls[2][:len(ls[2])/2]
	if err := os.WriteFile(path, []byte(strings.Join(ls, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	verifyFails(t, path, k, 3, "cut short")
	r, _ := Verify(path, k.Public())
	if r.Entries != 2 {
		t.Fatalf("%d entries verified before the cut line, want 2", r.Entries)
	}
	j, err := Open(path, "s1", k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := j.Append("self_validation", payload{Cmd: "again"})
	j.Close()
	if err != nil || e.Seq != 3 {
		t.Fatalf("Append after the cut line: seq %d, %v", e.Seq, err)
	}
	if r, err := Verify(path, k.Public()); err != nil || r.Entries != 3 {
		t.Fatalf("Verify: %d entries, %v", r.Entries, err)
	}
}

func TestVerifyFailsAfterTampering(t *testing.T) {
	k, _ := newKey(t)
	cases := []struct {
		name   string
		change func([]string) []string
		line   int
		why    string
	}{
		{"one byte of a payload", func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"exit":0`, `"exit":1`, 1)
			return ls
		}, 2, "the signature does not match: the entry was changed after it was signed"},
		{"one byte of the time", func(ls []string) []string {
			i := strings.Index(ls[2], `"time":"`) + len(`"time":"`) + 3
			b := []byte(ls[2])
			b[i]++
			ls[2] = string(b)
			return ls
		}, 3, "the signature does not match"},
		{"the first entry removed", func(ls []string) []string { return ls[1:] }, 1, "starts at seq 2, not 1: the first entries were removed"},
		{"a middle entry removed", func(ls []string) []string { return append(ls[:1:1], ls[2:]...) }, 2, "seq 3 follows entry 1: an entry was removed or the entries were reordered"},
		{"two entries swapped", func(ls []string) []string {
			ls[1], ls[2] = ls[2], ls[1]
			return ls
		}, 2, "seq 3 follows entry 1"},
		{"seq renumbered after a removal", func(ls []string) []string {
			// Renumbering breaks the signature, so a removal cannot be hidden that way.
			ls = append(ls[:1:1], ls[2:]...)
			ls[1] = strings.Replace(ls[1], `{"seq":3,`, `{"seq":2,`, 1)
			return ls
		}, 2, "the signature does not match"},
		{"key and sig cut off", func(ls []string) []string {
			i := strings.Index(ls[0], `,"key":`)
			ls[0] = ls[0][:i] + "}\n"
			return ls
		}, 1, "not in the journal's form"},
		{"not JSON", func(ls []string) []string {
			ls[1] = "garbage\n"
			return ls
		}, 2, "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeJournal(t, k, 4)
			if _, err := Verify(path, k.Public()); err != nil {
				t.Fatal(err)
			}
			writeLines(t, path, c.change(lines(t, path)))
			verifyFails(t, path, k, c.line, c.why)
		})
	}
}

// Removing the last entries leaves a shorter journal that verifies on its
// own: only a count kept elsewhere (a copy, the event log) shows it.
func TestLastEntryRemovedIsSeenOnlyByTheCount(t *testing.T) {
	k, _ := newKey(t)
	path := writeJournal(t, k, 3)
	ls := lines(t, path)
	writeLines(t, path, ls[:2])
	r, err := Verify(path, k.Public())
	if err != nil {
		t.Fatalf("Verify of a journal cut after a whole line: %v", err)
	}
	if r.Entries != 2 {
		t.Fatalf("%d entries, want 2 (one fewer than were written)", r.Entries)
	}
}

func TestVerifyFailsWithAnotherKey(t *testing.T) {
	k1, _ := newKey(t)
	k2, _ := newKey(t)
	path := writeJournal(t, k1, 2)
	verifyFails(t, path, k2, 1, "signed by a different key ("+Fingerprint(k1.Public())+") than this machine's journal key ("+Fingerprint(k2.Public())+")")

	// A line re-signed by another key inside a journal: fails on that line
	// even when the file is checked on its own (pub nil).
	other := writeJournal(t, k2, 2)
	ls := lines(t, path)
	ls[1] = lines(t, other)[1]
	writeLines(t, path, ls)
	_, err := Verify(path, nil)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Line != 2 || !strings.Contains(ve.Why, "signed by a different key") || !strings.Contains(ve.Why, "than the first entry's") {
		t.Fatalf("Verify(nil): %v", err)
	}
}

func TestVerifyFailsWithAnotherSession(t *testing.T) {
	k, _ := newKey(t)
	path := writeJournal(t, k, 2)
	otherPath := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Open(otherPath, "s2", k)
	if err != nil {
		t.Fatal(err)
	}
	j.Append("self_validation", payload{})
	j.Append("self_validation", payload{})
	j.Close()
	ls := lines(t, path)
	ls[1] = lines(t, otherPath)[1]
	writeLines(t, path, ls)
	verifyFails(t, path, k, 2, `session "s2", but the journal is session "s1"'s`)
}

func TestKeyMadeOnceAndKept(t *testing.T) {
	k, data := newKey(t)
	fi, err := os.Stat(KeyPath(data))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %04o, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(KeyPath(data)))
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("key directory mode %04o, want 0700", di.Mode().Perm())
	}
	k2, err := LoadOrCreateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.Public(), k2.Public()) {
		t.Fatal("a second LoadOrCreateKey made another key")
	}
	// Made at once by several: one key.
	data2 := t.TempDir()
	keys := make([]*Key, 6)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if keys[i], err = LoadOrCreateKey(data2); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, kk := range keys[1:] {
		if kk == nil || !bytes.Equal(kk.Public(), keys[0].Public()) {
			t.Fatal("concurrent first uses made different keys")
		}
	}
}

func TestKeyWithOpenModeRefused(t *testing.T) {
	_, data := newKey(t)
	path := KeyPath(data)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, load := range []func(string) (*Key, error){LoadOrCreateKey, LoadKey} {
		_, err := load(data)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "chmod 600") || !strings.Contains(err.Error(), "0644") {
			t.Fatalf("a key file of mode 0644: %v", err)
		}
	}
}

func TestCorruptKeyNotReplaced(t *testing.T) {
	_, data := newKey(t)
	path := KeyPath(data)
	if err := os.WriteFile(path, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOrCreateKey(data)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("a corrupt key file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "not a key\n" {
		t.Fatalf("the corrupt key file was replaced: %q", b)
	}
}

func TestNoKeyIsNotExist(t *testing.T) {
	_, err := LoadKey(t.TempDir())
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadKey with no key: %v", err)
	}
}

func BenchmarkAppend(b *testing.B) {
	k, err := LoadOrCreateKey(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	j, err := Open(filepath.Join(b.TempDir(), "journal.jsonl"), "s1", k)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	p := payload{Cmd: "go test ./...", Summary: "ok", WorkdirHash: strings.Repeat("a", 64), EvidenceOnly: true, VerdictUnchanged: true}
	for b.Loop() {
		if _, err := j.Append("self_validation", p); err != nil {
			b.Fatal(err)
		}
	}
}
