package store

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// msgs is a JSON array of n messages, the i-th saying what it says.
func msgs(says ...string) json.RawMessage {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range says {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":%q}`, s)
	}
	b.WriteByte(']')
	return json.RawMessage(b.String())
}

func journalLines(t *testing.T, s *Store, id string) int {
	t.Helper()
	b, err := os.ReadFile(s.MorePath(id))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// A session's saves that only add messages are lines appended to the state
// journal; each reader sees the state last saved, whole: LoadState with
// every message, ListSessions with the newest status. Close leaves one
// whole state.json and no journal.
func TestStateWriterAppendsWhatASaveAdds(t *testing.T) {
	s := openStore(t)
	id := "20261204-100000-aaaaaa"
	w := s.StateWriter(id)
	st := sampleState(id)
	st.Status = "running"
	var says []string
	for i := range 6 {
		says = append(says, fmt.Sprintf("message %d with \"quotes\" and a , comma]", i))
		if i != 3 { // one save of the same messages: only the other fields change
			st.Messages = msgs(says...)
		}
		st.ToolCalls = i
		if err := w.Save(st); err != nil {
			t.Fatal(err)
		}
		got, err := s.LoadState(id)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Messages) != string(st.Messages) || got.ToolCalls != i || got.Status != "running" {
			t.Fatalf("save %d: loaded %d tool calls, messages %s; want %d, %s", i, got.ToolCalls, got.Messages, i, st.Messages)
		}
		list, err := s.ListSessions()
		if err != nil || len(list) != 1 || list[0].ToolCalls != i {
			t.Fatalf("save %d: listed %+v, %v", i, list, err)
		}
	}
	if n := journalLines(t, s, id); n != 5 {
		t.Errorf("the journal holds %d lines; want 5 (every save after the first)", n)
	}
	st.Status = "finished"
	if err := w.Save(st); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.MorePath(id)); !os.IsNotExist(err) {
		t.Errorf("the journal is left after Close: %v", err)
	}
	b, _ := os.ReadFile(s.StatePath(id))
	var whole SessionState
	if err := json.Unmarshal(b, &whole); err != nil || whole.Status != "finished" || string(whole.Messages) != string(st.Messages) {
		t.Errorf("state.json after Close is not the last state whole: %v\n%s", err, b)
	}
}

// saveABC saves session id three times, its messages a, then a and b,
// then a, b and c: a snapshot and two lines.
func saveABC(t *testing.T, s *Store, id string) (*StateWriter, *SessionState) {
	t.Helper()
	w := s.StateWriter(id)
	st := sampleState(id)
	for _, m := range []json.RawMessage{msgs("a"), msgs("a", "b"), msgs("a", "b", "c")} {
		st.Messages = m
		if err := w.Save(st); err != nil {
			t.Fatal(err)
		}
	}
	return w, st
}

// A save that changes what was saved before (a compacted conversation) is
// a new snapshot; the journal's lines of the one before are not read, even
// when a crash left them there (between the rename and the emptying).
func TestStateWriterSnapshotMakesOldLinesStale(t *testing.T) {
	s := openStore(t)
	id := "stale1"
	w, st := saveABC(t, s, id)
	old, _ := os.ReadFile(s.MorePath(id))
	if strings.Count(string(old), "\n") != 2 {
		t.Fatalf("journal before the compaction:\n%s", old)
	}
	st.Messages = msgs("summary")
	if err := w.Save(st); err != nil {
		t.Fatal(err)
	}
	if n := journalLines(t, s, id); n != 0 {
		t.Errorf("the journal holds %d lines after a snapshot", n)
	}
	os.WriteFile(s.MorePath(id), old, 0o600) // as a crash before the emptying leaves it
	got, err := s.LoadState(id)
	if err != nil || string(got.Messages) != string(msgs("summary")) {
		t.Errorf("loaded %s, %v; want the compacted conversation alone", got.Messages, err)
	}
	// A state saved with SaveState (a resumed session's state, loaded
	// and saved again) is not extended by the journal either.
	st.Messages = msgs("other")
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.MorePath(id), old, 0o600)
	if got, _ := s.LoadState(id); string(got.Messages) != string(msgs("other")) {
		t.Errorf("SaveState's state was extended by the journal: %s", got.Messages)
	}
}

// A line cut short (the process killed during its write) is not there: the
// state is the one before it, and nothing after it is read.
func TestStateWriterLineCutShort(t *testing.T) {
	s := openStore(t)
	id := "cut1"
	saveABC(t, s, id)
	b, _ := os.ReadFile(s.MorePath(id))
	lines := strings.SplitAfter(string(b), "\n")
	for _, cut := range []string{lines[0] + lines[1][:len(lines[1])/2], lines[0] + strings.TrimSuffix(lines[1], "\n")} {
		os.WriteFile(s.MorePath(id), []byte(cut), 0o600)
		got, err := s.LoadState(id)
		if err != nil || string(got.Messages) != string(msgs("a", "b")) {
			t.Errorf("with the last line cut short: loaded %s, %v; want the state before it", got.Messages, err)
		}
	}
	// A line out of order (its offset is not where the messages end) stops
	// the reading too.
	os.WriteFile(s.MorePath(id), []byte(lines[1]+lines[0]), 0o600)
	if got, _ := s.LoadState(id); string(got.Messages) != string(msgs("a")) {
		t.Errorf("lines out of order: loaded %s; want the snapshot's", got.Messages)
	}
}

// A reader that loads while the writer saves over and over sees, every
// time, a state that was saved: snapshots and lines, the journal emptied
// under it included.
func TestStateWriterReadersSeeWholeStates(t *testing.T) {
	s := openStore(t)
	id := "race1"
	w := s.StateWriter(id)
	st := sampleState(id)
	saved := map[string]bool{}
	var mu sync.Mutex
	var says []string
	next := func(i int) {
		says = append(says, strings.Repeat("m", i%7*1000))
		if i%25 == 24 {
			says = says[:1] // a compaction: a new snapshot
		}
		st.Messages = msgs(says...)
		mu.Lock()
		saved[string(st.Messages)] = true
		mu.Unlock()
	}
	next(0)
	if err := w.Save(st); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := s.LoadState(id)
			if err != nil {
				t.Errorf("a reader saw a partial state: %v", err)
				return
			}
			mu.Lock()
			ok := saved[string(got.Messages)]
			mu.Unlock()
			if !ok {
				var arr []map[string]string
				jerr := json.Unmarshal(got.Messages, &arr)
				var lens []int
				for _, m := range arr {
					lens = append(lens, len(m["content"]))
				}
				t.Errorf("a reader saw messages never saved (%d bytes) %v %v", len(got.Messages), jerr, lens)
				return
			}
		}
	})
	for i := 1; i < 300; i++ {
		next(i)
		if err := w.Save(st); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
}

// BenchmarkStateWriter is BenchmarkSaveState's 50 KB conversation saved as
// a session saves it: a message of 1 KB more each time (and back to the 50
// KB every hundred saves, as a compaction would: a snapshot).
func BenchmarkStateWriter(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	w := s.StateWriter("bench1")
	st := sampleState("bench1")
	says := []string{strings.Repeat("m", 50<<10)}
	st.Messages = msgs(says...)
	if err := w.Save(st); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer() // the encoding is the session's, not the save's
		if says = append(says, strings.Repeat("r", 1<<10)); len(says) > 100 {
			says = says[:1]
		}
		st.Messages = msgs(says...)
		b.StartTimer()
		if err := w.Save(st); err != nil {
			b.Fatal(err)
		}
	}
}
