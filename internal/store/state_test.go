package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "data", "nodwyn"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpenMakesPrivateDirs(t *testing.T) {
	s := openStore(t)
	for _, d := range []string{s.Root, filepath.Join(s.Root, "sessions"), filepath.Join(s.Root, "versions")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want a directory 0700", d, fi.Mode())
		}
	}
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

func TestNewSessionID(t *testing.T) {
	re := regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{6}$`)
	seen := map[string]bool{}
	for range 100 {
		id := NewSessionID()
		if !re.MatchString(id) || !ValidID(id) {
			t.Fatalf("NewSessionID() = %q, want like 20261202-135501-ab12cd", id)
		}
		if seen[id] {
			t.Fatalf("NewSessionID gave %q twice", id)
		}
		seen[id] = true
	}
}

func TestPaths(t *testing.T) {
	s := &Store{Root: "/d"}
	if got := s.SessionDir("x1"); got != "/d/sessions/x1" {
		t.Errorf("SessionDir = %q", got)
	}
	if got := s.LogPath("x1"); got != "/d/sessions/x1/events.jsonl" {
		t.Errorf("LogPath = %q", got)
	}
}

func sampleState(id string) *SessionState {
	return &SessionState{
		ID: id, Folder: "/work/p", Instruction: "fix the bug", Profile: "lean", Provider: "openai", Model: "gpt-x",
		Unattended: true,
		Created:    time.Date(2026, 12, 2, 13, 55, 1, 0, time.UTC),
		Updated:    time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC),
		Status:     "finished",
		Messages:   json.RawMessage(`[{"role":"user","content":"fix the bug"}]`),
		ToolCalls:  7,
		Usage:      map[string]int{"input_tokens": 1200, "output_tokens": 80},
	}
}

func TestStateRoundTrip(t *testing.T) {
	s := openStore(t)
	st := sampleState("20261202-135501-ab12cd")
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadState(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Messages come back as written; compare them compacted.
	if !reflect.DeepEqual(got, st) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, st)
	}
	fi, err := os.Stat(filepath.Join(s.SessionDir(st.ID), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state.json mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestSaveStateSetsCreated(t *testing.T) {
	s := openStore(t)
	st := &SessionState{ID: "a1", Status: "running"}
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	if st.Created.IsZero() {
		t.Error("Created not set")
	}
}

func TestLoadStateErrors(t *testing.T) {
	s := openStore(t)
	_, err := s.LoadState("20990101-000000-000000")
	if err == nil || !strings.Contains(err.Error(), "20990101-000000-000000") || !strings.Contains(err.Error(), "nodwyn sessions") {
		t.Errorf("LoadState of a missing id = %v, want the id and `nodwyn sessions`", err)
	}
	for _, id := range []string{"", "../../etc", "a/b", ".hidden", "-rf"} {
		if _, err := s.LoadState(id); err == nil || !strings.Contains(err.Error(), "nodwyn sessions") {
			t.Errorf("LoadState(%q) = %v, want a refusal", id, err)
		}
		if err := s.SaveState(&SessionState{ID: id}); err == nil {
			t.Errorf("SaveState with id %q succeeded", id)
		}
	}
	os.MkdirAll(s.SessionDir("bad"), 0o700)
	os.WriteFile(filepath.Join(s.SessionDir("bad"), "state.json"), []byte("{"), 0o600)
	if _, err := s.LoadState("bad"); err == nil || !strings.Contains(err.Error(), "state.json") {
		t.Errorf("LoadState of a corrupt file = %v", err)
	}
}

func TestSaveStateIsAtomic(t *testing.T) {
	s := openStore(t)
	id := "atomic1"
	small := sampleState(id)
	big := sampleState(id)
	big.Messages = json.RawMessage(`["` + strings.Repeat("m", 256<<10) + `"]`)
	if err := s.SaveState(small); err != nil {
		t.Fatal(err)
	}
	// A reader that loads while the state is rewritten over and over sees a
	// whole state every time, the small or the big one.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			st, err := s.LoadState(id)
			if err != nil {
				t.Errorf("a reader saw a partial state: %v", err)
				return
			}
			if n := len(st.Messages); n != len(small.Messages) && n != len(big.Messages) {
				t.Errorf("a reader saw messages of %d bytes", n)
				return
			}
		}
	}()
	for i := range 200 {
		st := small
		if i%2 == 0 {
			st = big
		}
		if err := s.SaveState(st); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	// No temporary files are left behind.
	ents, _ := os.ReadDir(s.SessionDir(id))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"state.json"}) {
		t.Errorf("session dir holds %v, want only state.json", names)
	}
}

// The file is what json.Marshal makes of the state: the messages are
// spliced in, not encoded again.
func TestEncodeStateIsJSONMarshal(t *testing.T) {
	st := sampleState("enc1")
	st.Messages = json.RawMessage(`[{"role":"user","content":"a \u003c b"}]`)
	got, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(st)
	if string(got) != string(want)+"\n" {
		t.Errorf("encodeState:\n%s\njson.Marshal:\n%s", got, want)
	}
	st.Messages = json.RawMessage(`[{"role":`)
	if _, err := encodeState(st); err == nil {
		t.Error("messages that are not JSON were written")
	}
}

func TestSaveStateFailureKeepsTheOldState(t *testing.T) {
	s := openStore(t)
	st := sampleState("keep1")
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	bad := sampleState("keep1")
	bad.Messages = json.RawMessage(`{not json`)
	if err := s.SaveState(bad); err == nil {
		t.Fatal("SaveState of invalid Messages succeeded")
	}
	got, err := s.LoadState("keep1")
	if err != nil || string(got.Messages) != string(st.Messages) {
		t.Errorf("after a failed save: %v %s", err, got.Messages)
	}
}

func TestListSessionsNewestFirst(t *testing.T) {
	s := openStore(t)
	base := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"20261202-100000-aaaaaa", "20261202-120000-cccccc", "20261202-110000-bbbbbb"} {
		st := sampleState(id)
		st.Created = base.Add(time.Duration([]int{0, 2, 1}[i]) * time.Hour)
		if err := s.SaveState(st); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(s.SessionDir("no-state-yet"), 0o700)
	os.MkdirAll(s.SessionDir("broken"), 0o700)
	os.WriteFile(filepath.Join(s.SessionDir("broken"), "state.json"), []byte("{\"id\":"), 0o600)

	list, err := s.ListSessions()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, st := range list {
		ids = append(ids, st.ID+":"+st.Status)
		if st.Messages != nil {
			t.Errorf("%s: ListSessions returned Messages", st.ID)
		}
	}
	want := "20261202-120000-cccccc:finished 20261202-110000-bbbbbb:finished 20261202-100000-aaaaaa:finished broken:unreadable"
	if strings.Join(ids, " ") != want {
		t.Errorf("ListSessions = %v\nwant %v", ids, want)
	}
	if list[0].ToolCalls != 7 || list[0].Instruction != "fix the bug" {
		t.Errorf("listed state lost fields: %+v", list[0])
	}
}

func TestListSessionsEmpty(t *testing.T) {
	s := &Store{Root: filepath.Join(t.TempDir(), "never-made")}
	list, err := s.ListSessions()
	if err != nil || len(list) != 0 {
		t.Errorf("ListSessions of a missing store = %v, %v", list, err)
	}
}

func BenchmarkSaveState(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "data"))
	if err != nil {
		b.Fatal(err)
	}
	st := sampleState("bench1")
	st.Messages = json.RawMessage(`["` + strings.Repeat("m", 50<<10) + `"]`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.SaveState(st); err != nil {
			b.Fatal(err)
		}
	}
}

// ListSessions stops reading a state file where its messages begin, so a
// thousand long sessions list in a moment. The file below has its messages
// cut short: a reader of the whole file could not list it. A file in the
// older layout (fields after the messages) is still listed whole.
func TestListSessionsDoesNotReadTheMessages(t *testing.T) {
	s := openStore(t)
	st := sampleState("20261202-100000-aaaaaa")
	st.Messages = json.RawMessage(`[{"role":"user","content":"` + strings.Repeat("x", 1<<20) + `"}]`)
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.StatePath(st.ID))
	os.WriteFile(s.StatePath(st.ID), b[:len(b)/2], 0o600)
	os.MkdirAll(s.SessionDir("older"), 0o700)
	os.WriteFile(s.StatePath("older"), []byte(`{"id":"older","status":"finished","messages":[{"role":"user","content":"hi"}],"tool_calls":4,"usage":{"input":9}}`), 0o600)
	list, err := s.ListSessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%+v", list)
	}
	for _, got := range list {
		switch got.ID {
		case st.ID:
			if got.Status != "finished" || got.ToolCalls != 7 || got.Instruction != "fix the bug" || got.Messages != nil {
				t.Errorf("listed %+v", got)
			}
		case "older":
			if got.Status != "finished" || got.ToolCalls != 4 || got.Usage["input"] != 9 || got.Messages != nil {
				t.Errorf("listed %+v", got)
			}
		}
	}
	if full, err := s.LoadState("older"); err != nil || string(full.Messages) != `[{"role":"user","content":"hi"}]` {
		t.Errorf("LoadState: %+v %v", full, err)
	}
}
