package provider

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// An event stream (text/event-stream) as the WHATWG HTML standard's
// "server-sent events" section parses it, the way all three APIs send
// their replies:
//
//   - lines end with CRLF, LF or CR (a CR at the end of one read and the LF
//     at the start of the next are one line end);
//   - a line "field: value" sets a field (one space after the colon is
//     dropped), a line with no colon is a field with an empty value;
//   - "data" lines append to the event's data, joined with "\n"; "event"
//     names it; "id" sets the last event id (kept across events, ignored
//     when it holds a NUL); "retry" and unknown fields are ignored;
//   - a line starting with ":" is a comment, never an event (servers send
//     ": ping" to keep a connection open; its bytes keep the idle clock of
//     the wire running, not that of the reply: idle.go);
//   - a blank line dispatches the event, if it has data (an event with
//     only an "event:" line and no "data:" is dropped, as the standard
//     says);
//   - a UTF-8 byte order mark at the very start is skipped.
//
// Unlike the standard, which drops an event the stream ends in, an event
// without its closing blank line at the end of the stream is dispatched,
// marked atEOF: some servers close right after "data: [DONE]". A consumer
// that cannot decode such an event takes the stream as cut.
//
// A line (and an event's data) is bounded by maxSSELine: a body with no
// line end for that long is no event stream, or an event too large to
// hold.

// sseEvent is one dispatched event.
type sseEvent struct {
	Event string // the "event" field; "" when the event had none (the standard's "message")
	Data  string
	ID    string // the last event id at dispatch
	atEOF bool   // the stream ended before the event's blank line
}

// maxSSELine bounds a line and an event's data. A Responses stream's
// response.completed event carries the whole reply on one line.
const maxSSELine = 16 << 20

// errSSETooLong is wrapped by the error of a line or event over the bound.
var errSSETooLong = errors.New("event stream: a line or event is too long")

type sseReader struct {
	br      *bufio.Reader
	max     int
	line    []byte
	skipLF  bool // the last line ended with CR: a LF right after it is part of that line end
	started bool // the byte order mark was looked for
	eof     bool

	event  string
	data   []byte
	hasDat bool // a data line was seen (data may still be empty)
	lastID string

	// partial, when set, is marked when a line that is no comment begins
	// (an event is under way, for the idle watch), and cleared when an
	// event without data is dropped; its reader clears it once it has
	// handled the event next returned.
	partial *atomic.Bool
}

// sseBuffers keeps the readers' 32 KiB buffers between requests: a new one
// for each was a third of what a turn allocated.
var sseBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

func newSSEReader(r io.Reader) *sseReader {
	br := sseBuffers.Get().(*bufio.Reader)
	br.Reset(r)
	return &sseReader{br: br, max: maxSSELine}
}

// release gives the reader's buffer back; s is not used after.
func (s *sseReader) release() {
	if s.br != nil {
		s.br.Reset(nil)
		sseBuffers.Put(s.br)
		s.br = nil
	}
}

// readLine returns the next line without its line end. terminated is false
// for a last line the stream ended in. At the end of the stream it returns
// io.EOF; other errors are the reader's.
func (s *sseReader) readLine() (line []byte, terminated bool, err error) {
	s.line = s.line[:0]
	for {
		if s.br.Buffered() == 0 {
			if _, err := s.br.Peek(1); err != nil {
				if err == io.EOF && len(s.line) > 0 {
					return s.line, false, nil
				}
				return nil, false, err
			}
		}
		buf, _ := s.br.Peek(s.br.Buffered())
		if !s.started {
			s.started = true
			if bytes.HasPrefix(buf, []byte("\xef\xbb\xbf")) {
				_, _ = s.br.Discard(3)
				continue
			}
			if len(buf) < 3 && bytes.HasPrefix([]byte("\xef\xbb\xbf"), buf) {
				// Too few bytes to tell: read on until there are three, or the end.
				if more, err := s.br.Peek(3); err == nil && bytes.Equal(more, []byte("\xef\xbb\xbf")) {
					_, _ = s.br.Discard(3)
				}
				continue
			}
		}
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				_, _ = s.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(s.line) == 0 && n > 0 && buf[0] != ':' && s.partial != nil {
			s.partial.Store(true)
		}
		if len(s.line)+n > s.max {
			return nil, false, fmt.Errorf("%w: no line end in %d bytes; the body is no event stream, or an event too large to hold", errSSETooLong, s.max)
		}
		s.line = append(s.line, buf[:n]...)
		if i < 0 {
			_, _ = s.br.Discard(n)
			continue
		}
		s.skipLF = buf[i] == '\r'
		_, _ = s.br.Discard(i + 1)
		return s.line, true, nil
	}
}

// next returns the next event. At the end of the stream it returns io.EOF
// (after a last event without its blank line, if there was one); a read
// error is returned as it came.
func (s *sseReader) next() (sseEvent, error) {
	for !s.eof {
		line, terminated, err := s.readLine()
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			return sseEvent{}, err
		}
		if !terminated {
			s.eof = true
		}
		if len(line) == 0 {
			if ev, ok := s.dispatch(); ok {
				return ev, nil
			}
			if s.partial != nil {
				s.partial.Store(false)
			}
			continue
		}
		if err := s.field(line); err != nil {
			return sseEvent{}, err
		}
	}
	if ev, ok := s.dispatch(); ok {
		ev.atEOF = true
		return ev, nil
	}
	return sseEvent{}, io.EOF
}

func (s *sseReader) field(line []byte) error {
	if line[0] == ':' {
		return nil // a comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		s.event = string(value)
	case "data":
		if len(s.data)+len(value)+1 > s.max {
			return fmt.Errorf("%w: an event's data is over %d bytes", errSSETooLong, s.max)
		}
		if s.hasDat {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasDat = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.lastID = string(value)
		}
	}
	return nil
}

// dispatch ends the event being read: it returns it when it had data, and
// resets the event's fields either way.
func (s *sseReader) dispatch() (sseEvent, bool) {
	ev := sseEvent{Event: s.event, Data: string(s.data), ID: s.lastID}
	ok := s.hasDat
	s.event, s.data, s.hasDat = "", s.data[:0], false
	return ev, ok
}
