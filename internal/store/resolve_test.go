package store

import (
	"strings"
	"testing"
	"time"
)

// Sessions are named as a person types them: "last", a whole id, the start
// of one, or the start of its random tail; an ambiguous or unknown name is
// an error that says what to type.
func TestResolveID(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"20261201-090000-aaa111", "20261203-100000-bbb222", "20261203-110000-ccc333"} {
		if err := s.SaveState(&SessionState{ID: id, Status: "finished", Updated: time.Date(2026, 12, 1+i, 0, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
	}
	for ref, want := range map[string]string{
		"last":                   "20261203-110000-ccc333",
		"20261201-090000-aaa111": "20261201-090000-aaa111",
		"20261201":               "20261201-090000-aaa111",
		"20261203-10":            "20261203-100000-bbb222",
		"bbb":                    "20261203-100000-bbb222",
		"ccc333":                 "20261203-110000-ccc333",
	} {
		got, err := s.ResolveID(ref)
		if err != nil || got != want {
			t.Errorf("ResolveID(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	for ref, says := range map[string]string{
		"20261203": "more than one session",
		"nosuch":   "no session",
		"":         "no session named",
		"bb":       "no session", // too short to be a tail
	} {
		if _, err := s.ResolveID(ref); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ResolveID(%q): %v; want it to say %q", ref, err, says)
		}
	}
}
