package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Event is one entry of a session's event stream; docs/events.md lists
// every type and the fields of its data.
type Event struct {
	Seq    int            `json:"seq"`
	Time   time.Time      `json:"time"`
	Type   string         `json:"type"`             // "run.start", "message", "model.request", "model.delta", "model.reply", "tool.call", "tool.decision", "tool.result", "note", "run.end", "error"
	Schema int            `json:"schema,omitempty"` // EventSchema on the first event a session emits in a process, else absent
	Data   map[string]any `json:"data,omitempty"`
}

// EventSchema is the version of the events' fields (docs/events.md). It
// changes when a field is removed or changes its meaning or type.
const EventSchema = 1

// Log is a session's JSONL event log. Each event is one line, written with
// one write(2) and no buffering in between, so a process killed at any moment
// leaves a log that reads up to its last event. It is safe for concurrent use.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	path string
	seq  int
}

// OpenLog opens the log at path for appending, making its directory (0700)
// and the file (0600) when they do not exist. On an existing log, Seq
// continues after its last event, and a partial last line (a write cut short
// by a crash) is cut off so the next event starts on a line of its own.
func OpenLog(path string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	l := &Log{f: f, path: path}
	if err := l.recover(); err != nil {
		f.Close()
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	return l, nil
}

// recover cuts a partial last line and finds the last Seq.
func (l *Log) recover() error {
	fi, err := l.f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	end, err := completeEnd(l.f, size)
	if err != nil {
		return err
	}
	if end < size {
		if err := l.f.Truncate(end); err != nil {
			return err
		}
	}
	if end == 0 {
		return nil
	}
	last, err := lastLine(l.f, end)
	if err != nil {
		return err
	}
	var ev struct{ Seq int }
	if json.Unmarshal(last, &ev) == nil && ev.Seq > 0 {
		l.seq = ev.Seq
		return nil
	}
	// The last line does not say; take the largest Seq of those that do.
	evs, err := readEvents(io.NewSectionReader(l.f, 0, end), true)
	if err != nil {
		return err
	}
	for _, e := range evs {
		l.seq = max(l.seq, e.Seq)
	}
	return nil
}

// Path is the log's file.
func (l *Log) Path() string { return l.path }

// Write appends ev as one line. A zero Seq is given the next number and a
// zero Time the current time; both are set in *ev, so a caller passing the
// event on to others passes the numbered one.
func (l *Log) Write(ev *Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := *ev
	if e.Seq == 0 {
		e.Seq = l.seq + 1
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b, err := json.Marshal(&e)
	if err != nil {
		return fmt.Errorf("log event %s: %w", e.Type, err)
	}
	b = append(b, '\n')
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("log event %s to %s: %w", e.Type, l.path, err)
	}
	l.seq = max(l.seq, e.Seq)
	*ev = e
	return nil
}

// Sync commits the log to stable storage (fsync). Events are already in the
// file when Write returns; Sync only matters for a machine that loses power.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Sync()
}

// Close syncs and closes the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	serr := l.f.Sync()
	if err := l.f.Close(); err != nil {
		return err
	}
	if serr != nil && !errors.Is(serr, os.ErrClosed) {
		return serr
	}
	return nil
}

// ReadLog reads the events of the log at path. A last line cut short (no
// newline and not valid JSON, as a crash mid-write would leave it) is left
// out; any other malformed line is an error naming the file and line.
func ReadLog(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	evs, err := readEvents(f, false)
	if err != nil {
		return nil, fmt.Errorf("read log %s: %w", path, err)
	}
	return evs, nil
}

// readEvents reads JSONL events. With lenient, malformed lines are skipped.
func readEvents(r io.Reader, lenient bool) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var evs []Event
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return evs, err
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var ev Event
			if jerr := json.Unmarshal(t, &ev); jerr != nil {
				if !lenient && complete {
					return evs, fmt.Errorf("line %d: malformed event: %v", n, jerr)
				}
				// A cut-short last line, or lenient: left out.
			} else {
				evs = append(evs, ev)
			}
		}
		if err == io.EOF {
			return evs, nil
		}
	}
}

// completeEnd returns the offset just past the file's last newline (0 when
// there is none), reading backwards from size.
func completeEnd(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// lastLine returns the last line of f[:end], which ends in a newline.
func lastLine(f *os.File, end int64) ([]byte, error) {
	start, err := completeEnd(f, end-1)
	if err != nil {
		return nil, err
	}
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
		return nil, err
	}
	return bytes.TrimSpace(b), nil
}

// ReadLogSkipping reads the events of the log at path as ReadLog does, but
// a malformed line is skipped rather than ending the reading: bad lists the
// numbers of the lines skipped (a cut-short last line is left out silently).
func ReadLogSkipping(path string) (evs []Event, bad []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return evs, bad, fmt.Errorf("read log %s: %w", path, rerr)
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var ev Event
			if json.Unmarshal(t, &ev) == nil {
				evs = append(evs, ev)
			} else if complete {
				bad = append(bad, n)
			}
		}
		if rerr == io.EOF {
			return evs, bad, nil
		}
	}
}
