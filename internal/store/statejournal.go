package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A session's state is saved twice a turn (after the model's reply, and
// before the next request with the tools' results), and a new state.json
// each time costs the file system a new file, a rename over the old one and
// the old one's blocks freed: 0.4–0.6 ms a save on ext4, and the whole
// conversation encoded and written again, so a long run's saves grow with
// it. A StateWriter saves most of them as one appended line instead.
//
// The files: state.json is a whole state (a snapshot) with a generation, a
// random name of that snapshot; state-more.jsonl holds lines that each
// extend it: the generation they extend, how many bytes of the messages
// they follow, the state's other fields anew and the messages after those
// bytes. A reader (LoadState, ListSessions) takes state.json and then, in
// order, the lines of its generation that follow one another; it stops at
// the first that does not (one cut short by a crash, or one a new snapshot
// has made stale). A line is written with one write(2) to a file already
// open, never changed after; a snapshot is written as SaveState writes one
// (a new file renamed over state.json), then the journal is removed (the
// next line starts another).

// MorePath is the session's state journal, <data>/sessions/<id>/state-more.jsonl.
func (s *Store) MorePath(id string) string {
	return filepath.Join(s.SessionDir(id), "state-more.jsonl")
}

// stateLine is one line of the state journal.
type stateLine struct {
	Generation string          `json:"generation"`
	After      int             `json:"after"` // the bytes of the messages this line follows
	State      *SessionState   `json:"state"` // without its messages
	More       json.RawMessage `json:"more,omitempty"`
}

// StateWriter saves one session's state again and again (see above). One
// writer per session, which its lock makes sure of; not for concurrent use.
type StateWriter struct {
	s  *Store
	id string

	gen  string        // the snapshot's generation ("": none written yet)
	msgs []byte        // the messages as the files now give them
	snap int           // the snapshot's size
	f    *os.File      // the journal, open for appending (nil: not yet)
	fi   os.FileInfo   // f's, to tell it from another at its path
	more int64         // bytes in the journal since the snapshot
	last *SessionState // the last line's state (nil: no line since the snapshot)
}

// StateWriter returns the writer of session id's state.
func (s *Store) StateWriter(id string) *StateWriter { return &StateWriter{s: s, id: id} }

// Save saves st: a line appended to the journal when st's messages are
// those of the last save with more after them (or the same), and the
// journal is not already bigger than the snapshot (past 256 KiB); a
// snapshot otherwise. A zero Created is set to now. It keeps st.Messages
// (the next save is compared with them): the caller does not change them.
func (w *StateWriter) Save(st *SessionState) error {
	if err := readyToSave(st); err != nil {
		return err
	}
	if tail, ok := w.extends(st.Messages); ok && w.more < max(int64(w.snap), 256<<10) {
		if err := w.appendLine(st, tail); err == nil {
			return nil
		}
		// A line that could not be written: a snapshot says it all.
	}
	return w.snapshot(st)
}

// extends reports whether msgs are w.msgs with more messages after them (or
// the same), and the JSON array of those more (nil: none).
func (w *StateWriter) extends(msgs []byte) ([]byte, bool) {
	old := w.msgs
	if w.gen == "" || len(old) < 3 || old[0] != '[' || old[len(old)-1] != ']' {
		return nil, false // no snapshot yet, or messages of no element to follow
	}
	if bytes.Equal(msgs, old) {
		return nil, true
	}
	n := len(old) - 1 // old without its "]"
	if len(msgs) <= n+1 || !bytes.Equal(msgs[:n], old[:n]) || msgs[n] != ',' || msgs[len(msgs)-1] != ']' {
		return nil, false
	}
	tail := make([]byte, 0, len(msgs)-n)
	tail = append(tail, '[')
	return append(tail, msgs[n+1:]...), true
}

func (w *StateWriter) appendLine(st *SessionState, tail []byte) error {
	if w.f == nil {
		// A new file (the snapshot removed the last): lines of another
		// generation before these would stop a reader short of them.
		f, err := os.OpenFile(w.s.MorePath(w.id), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		w.f, w.fi = f, fi
	} else if !w.stillThere() {
		// The session's directory was moved or removed under it: a line
		// written now would not be where a reader looks.
		return errors.New("the state journal is no longer at " + w.s.MorePath(w.id))
	}
	head := *st
	head.Messages, head.Generation = nil, ""
	b, err := json.Marshal(&stateLine{Generation: w.gen, After: len(w.msgs), State: &head})
	if err != nil {
		return err
	}
	if len(tail) > 0 {
		if !json.Valid(tail) {
			return errors.New("the messages are not JSON")
		}
		b = append(b[:len(b)-1], `,"more":`...) // without its "}"
		b = append(b, tail...)
		b = append(b, '}')
	}
	b = append(b, '\n')
	if _, err := w.f.Write(b); err != nil {
		return err
	}
	w.more += int64(len(b))
	w.msgs = st.Messages
	w.last = &head
	return nil
}

// snapshot writes st as a new state.json of a new generation, then removes
// the journal (a line left in it, by a crash between the two, is of the
// old generation: not read).
func (w *StateWriter) snapshot(st *SessionState) error {
	var g [6]byte
	_, _ = rand.Read(g[:])
	gen := hex.EncodeToString(g[:])
	n, err := w.s.writeSnapshot(st, gen)
	if err != nil {
		return err
	}
	w.gen, w.snap, w.msgs, w.last = gen, n, st.Messages, nil
	// The journal goes (an earlier process's too), never emptied in
	// place: a reader that has it open reads its lines and no others (one
	// emptied and written again under a reader could give it the start of
	// an old line and the end of a new one). The next line starts a new
	// file.
	w.closeJournal()
	if err := os.Remove(w.s.MorePath(w.id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("save session %s: %w", w.id, err)
	}
	w.more = 0
	return nil
}

// stillThere reports whether the journal w has open is the one at its path.
func (w *StateWriter) stillThere() bool {
	at, err := os.Stat(w.s.MorePath(w.id))
	return err == nil && os.SameFile(at, w.fi)
}

func (w *StateWriter) closeJournal() {
	if w.f != nil {
		w.f.Close()
		w.f, w.fi = nil, nil
	}
}

// Close writes the last state saved as a snapshot, when the journal holds
// lines (so a finished session's state.json is whole), and lets go of the
// journal.
func (w *StateWriter) Close() error {
	if w == nil {
		return nil
	}
	var err error
	if w.last != nil {
		st := *w.last
		st.Messages = w.msgs
		err = w.snapshot(&st)
	}
	w.closeJournal()
	return err
}

// readMore applies to st (read from state.json) the journal's lines that
// extend it; summary: st has no messages, and the lines' order is taken
// on trust (ListSessions wants the newest of the other fields).
func (s *Store) readMore(id string, st *SessionState, summary bool) {
	if st.Generation == "" {
		return
	}
	f, err := os.Open(s.MorePath(id))
	if err != nil {
		return
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	msgs := []byte(st.Messages)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if !errors.Is(err, io.EOF) || len(line) > 0 {
				return // a line cut short is not there
			}
			break
		}
		var l stateLine
		if json.Unmarshal(line, &l) != nil || l.Generation != st.Generation || l.State == nil {
			return
		}
		if !summary {
			if l.After != len(msgs) {
				return
			}
			if len(l.More) > 2 {
				msgs = append(append(msgs[:len(msgs)-1:len(msgs)-1], ','), l.More[1:]...)
			}
		}
		gen := st.Generation
		*st = *l.State
		st.Generation = gen
		if !summary {
			st.Messages = msgs
		}
	}
}
