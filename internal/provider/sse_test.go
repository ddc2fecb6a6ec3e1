package provider

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// chunked yields its pieces one Read at a time, as a network does.
type chunked struct{ pieces []string }

func (c *chunked) Read(p []byte) (int, error) {
	for len(c.pieces) > 0 && c.pieces[0] == "" {
		c.pieces = c.pieces[1:]
	}
	if len(c.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.pieces[0])
	c.pieces[0] = c.pieces[0][n:]
	return n, nil
}

// readAll parses a whole stream; the error is the one that ended it (nil
// for io.EOF).
func readAll(r io.Reader, max int) ([]sseEvent, error) {
	s := newSSEReader(r)
	if max > 0 {
		s.max = max
	}
	var out []sseEvent
	for {
		ev, err := s.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEParse(t *testing.T) {
	cases := []struct {
		name, in string
		want     []sseEvent
	}{
		{"data lines", "data: a\n\ndata:b\n\n", []sseEvent{{Data: "a"}, {Data: "b"}}},
		{"event and id", "event: message_start\nid: 7\ndata: {}\n\n", []sseEvent{{Event: "message_start", Data: "{}", ID: "7"}}},
		{"multi-line data joined with LF", "data: one\ndata:  two\ndata\ndata:\n\n", []sseEvent{{Data: "one\n two\n\n"}}},
		{"CRLF", "event: x\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []sseEvent{{Event: "x", Data: "1"}, {Data: "2"}}},
		{"CR alone", "data: 1\r\rdata: 2\r\r", []sseEvent{{Data: "1"}, {Data: "2"}}},
		{"mixed line ends", "data: 1\r\ndata: 2\ndata: 3\r\n\r\rdata: 4\n\n", []sseEvent{{Data: "1\n2\n3"}, {Data: "4"}}},
		{"comments are no events", ": ping\n\n:\n\ndata: x\n: inside\n\n: keep-alive\n\n", []sseEvent{{Data: "x"}}},
		{"event without data is dropped", "event: ping\n\ndata: y\n\n", []sseEvent{{Data: "y"}}},
		{"event name does not leak", "event: a\ndata: 1\n\ndata: 2\n\n", []sseEvent{{Event: "a", Data: "1"}, {Data: "2"}}},
		{"id persists, NUL ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\nid\ndata: c\n\n", []sseEvent{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}, {Data: "c"}}},
		{"empty data dispatches", "data:\n\n", []sseEvent{{Data: ""}}},
		{"unknown fields and retry ignored", "retry: 10\nfoo: bar\ndata: z\n\n", []sseEvent{{Data: "z"}}},
		{"only one space dropped", "data:   x  \n\n", []sseEvent{{Data: "  x  "}}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []sseEvent{{Data: `{"a":"b:c"}`}}},
		{"BOM skipped", "\xef\xbb\xbfdata: b\n\n", []sseEvent{{Data: "b"}}},
		{"final event without blank line", "data: 1\n\ndata: [DONE]\n", []sseEvent{{Data: "1"}, {Data: "[DONE]", atEOF: true}}},
		{"final line without line end", "data: 1\n\ndata: [DONE]", []sseEvent{{Data: "1"}, {Data: "[DONE]", atEOF: true}}},
		{"trailing comment only", "data: 1\n\n: bye", []sseEvent{{Data: "1"}}},
		{"nothing", "", nil},
		{"not a stream", `{"object":"chat.completion"}`, nil},
	}
	for _, c := range cases {
		got, err := readAll(strings.NewReader(c.in), 0)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// A CR at the end of one read and the LF that starts the next are one line
// end, not a line end and a blank line.
func TestSSECRLFSplitAcrossReads(t *testing.T) {
	r := &chunked{pieces: []string{"data: a\r", "\ndata: b\r", "\n\r", "\n"}}
	got, err := readAll(r, 0)
	if err != nil || !reflect.DeepEqual(got, []sseEvent{{Data: "a\nb"}}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestSSELineTooLong(t *testing.T) {
	in := "data: " + strings.Repeat("x", 100) + "\n\n"
	_, err := readAll(strings.NewReader(in), 64)
	if !errors.Is(err, errSSETooLong) || !strings.Contains(err.Error(), "no line end in 64 bytes") {
		t.Fatalf("err = %v", err)
	}
	// Many short data lines add up, bounded too.
	in = strings.Repeat("data: 0123456789\n", 10) + "\n"
	_, err = readAll(strings.NewReader(in), 64)
	if !errors.Is(err, errSSETooLong) || !strings.Contains(err.Error(), "data is over 64 bytes") {
		t.Fatalf("err = %v", err)
	}
	// Under the bound, fine.
	if evs, err := readAll(strings.NewReader("data: "+strings.Repeat("y", 50)+"\n\n"), 64); err != nil || len(evs) != 1 {
		t.Fatalf("%v %v", evs, err)
	}
}

func TestSSEReadErrorReturned(t *testing.T) {
	boom := errors.New("connection reset")
	s := newSSEReader(io.MultiReader(strings.NewReader("data: 1\n\ndata: par"), &failing{boom}))
	if ev, err := s.next(); err != nil || ev.Data != "1" {
		t.Fatalf("%+v %v", ev, err)
	}
	if _, err := s.next(); err != boom {
		t.Fatalf("err = %v, want the reader's", err)
	}
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

// splitAt cuts s at the given offsets (any order, clamped).
func splitAt(s string, cuts []int) []string {
	var pieces []string
	last := 0
	for _, c := range cuts {
		c = min(max(c, last), len(s))
		pieces = append(pieces, s[last:c])
		last = c
	}
	return append(pieces, s[last:])
}

// Every split of every golden stream gives the same events as the whole.
func TestSSESplitAnywhereGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.sse")
	if len(files) == 0 {
		t.Fatal("no golden streams")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		whole, err := readAll(strings.NewReader(s), 0)
		if err != nil || len(whole) == 0 {
			t.Fatalf("%s: %d events, %v", f, len(whole), err)
		}
		for i := 0; i <= len(s); i++ {
			got, err := readAll(&chunked{pieces: splitAt(s, []int{i, i + 1})}, 0)
			if err != nil || !reflect.DeepEqual(got, whole) {
				t.Fatalf("%s split at %d: %v\n got %+v\nwant %+v", f, i, err, got, whole)
			}
		}
	}
}

func FuzzSSESplit(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, name := range files {
		b, _ := os.ReadFile(name)
		f.Add(string(b), 3, 17)
	}
	f.Add("data: a\r\n\r\ndata: b\r\rid: 1\n: c\n\ndata", 8, 9)
	f.Add("event: x\ndata: 1\ndata: 2\n\n\xef\xbb\xbfdata: 3", 1, 2)
	f.Fuzz(func(t *testing.T, s string, a, b int) {
		whole, werr := readAll(strings.NewReader(s), 256)
		for _, cuts := range [][]int{{a}, {b}, {a, b}, {b, a}, {a % 7, a % 7 * 2, b % 13}} {
			for i := range cuts {
				if cuts[i] < 0 {
					cuts[i] = -cuts[i]
				}
				if len(s) > 0 {
					cuts[i] %= len(s) + 1
				}
			}
			got, err := readAll(&chunked{pieces: splitAt(s, cuts)}, 256)
			if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(got, whole) {
				t.Fatalf("split %v of %q: %v\n got %+v\nwant %+v (%v)", cuts, s, err, got, whole, werr)
			}
		}
		// Every event's data holds no CR (line ends never reach it).
		for _, ev := range whole {
			if strings.ContainsRune(ev.Data, '\r') {
				t.Fatalf("CR in data %q", ev.Data)
			}
		}
	})
}
