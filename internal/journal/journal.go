// Package journal keeps a session's signed journal: an append-only JSON-lines
// file (<data>/sessions/<id>/journal.jsonl) in which every entry is signed
// with the machine's ed25519 journal key (<data>/journal/key) and carries the
// sha256 of the line before it, so an entry changed, removed or moved after it
// was written fails Verify. nodwyn writes one entry of kind "self_validation"
// for every self-check or run-tests call; docs/journal.md describes the format
// exactly, with a way to check a journal without nodwyn.
//
// A line is, with its fields in this order:
//
//	{"seq":1,"time":"2026-12-03T12:00:00.123456789Z","session":"<id>","kind":"self_validation","payload":{…},"prev":"","key":"<hex public key>","sig":"<base64 signature>"}
//
// The signature is over the line's bytes up to the end of "prev" followed by
// "}" — the same line with ,"key":…,"sig":… left out. prev is the hex sha256
// of the previous line (its bytes without the newline), "" for seq 1.
package journal

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Entry is one line of a journal.
type Entry struct {
	Seq     int64           // 1, 2, 3 … within the file
	Time    time.Time       // when it was appended, UTC
	Session string          // the session's id
	Kind    string          // what it records: "self_validation"
	Payload json.RawMessage // the record, a JSON object for nodwyn's kinds
	Prev    string          // hex sha256 of the previous line, "" for seq 1
	Key     string          // hex ed25519 public key that signed it
	Sig     string          // base64 (standard, padded) ed25519 signature
}

// signed is the part of a line the signature covers, in the line's order.
type signed struct {
	Seq     int64           `json:"seq"`
	Time    string          `json:"time"`
	Session string          `json:"session"`
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
	Prev    string          `json:"prev"`
}

// line is a whole line as it is read back.
type line struct {
	signed
	Key string `json:"key"`
	Sig string `json:"sig"`
}

// Journal appends signed entries to one session's journal file. It is safe
// for concurrent use by the goroutines of one process; two processes must not
// append to the same journal (a session's lock keeps a second run out).
type Journal struct {
	path    string
	session string
	key     *Key
	pub     string

	mu   sync.Mutex
	f    *os.File
	seq  int64  // the last entry's seq, 0 before the first
	prev string // the hex sha256 of the last line
}

// Open opens the journal at path for appending entries of session sessionID
// signed with key, making the file (0600) and its directory (0700) when they
// do not exist. A journal that has entries is continued: Open reads its last
// line's seq and hash, so a resumed session extends the same chain. A last
// line without its newline is what a crash while it was written leaves; Open
// cuts it off, so the next entry starts on a line of its own (the entry being
// written at a crash is the one a crash loses). A last line that does not
// parse, or that belongs to another session, is an error naming the file.
func Open(path, sessionID string, key *Key) (*Journal, error) {
	if key == nil {
		return nil, fmt.Errorf("journal %s: no key", path)
	}
	if sessionID == "" {
		return nil, fmt.Errorf("journal %s: no session id", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		syncDir(filepath.Dir(path))
	}
	j := &Journal{path: path, session: sessionID, key: key, pub: hex.EncodeToString(key.Public()), f: f}
	if err := j.readTail(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// readTail sets seq and prev from the file's last complete line, cutting off
// a partial one.
func (j *Journal) readTail() error {
	data, err := os.ReadFile(j.path)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if n := len(data); n > 0 && data[n-1] != '\n' {
		keep := bytes.LastIndexByte(data, '\n') + 1
		if err := j.f.Truncate(int64(keep)); err != nil {
			return fmt.Errorf("journal %s: cut off the partial last line: %w", j.path, err)
		}
		data = data[:keep]
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	if len(data) == 0 {
		return nil
	}
	last := data[bytes.LastIndexByte(data, '\n')+1:]
	lineNo := bytes.Count(data, []byte("\n")) + 1
	var l line
	if err := json.Unmarshal(last, &l); err != nil {
		return fmt.Errorf("journal %s: line %d, the last, is not an entry (%v); 'nodwyn journal verify' checks the whole file", j.path, lineNo, err)
	}
	if l.Session != j.session {
		return fmt.Errorf("journal %s: its entries are session %q's, not %q's", j.path, l.Session, j.session)
	}
	j.seq = l.Seq
	j.prev = hashLine(last)
	return nil
}

// Path is the journal file.
func (j *Journal) Path() string { return j.path }

// Append writes one entry of kind with payload (encoded with encoding/json)
// as one line, signed, and syncs the file before it returns, so an entry
// Append returned survives a crash.
func (j *Journal) Append(kind string, payload any) (Entry, error) {
	p, err := json.Marshal(payload)
	if err != nil {
		return Entry{}, fmt.Errorf("journal %s: payload: %w", j.path, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return Entry{}, fmt.Errorf("journal %s: closed", j.path)
	}
	now := time.Now().UTC()
	s := signed{Seq: j.seq + 1, Time: now.Format(time.RFC3339Nano), Session: j.session, Kind: kind, Payload: p, Prev: j.prev}
	b, err := json.Marshal(s)
	if err != nil {
		return Entry{}, fmt.Errorf("journal %s: %w", j.path, err)
	}
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(j.key.priv, b))
	ln := make([]byte, 0, len(b)+200)
	ln = append(ln, b[:len(b)-1]...)
	ln = append(ln, `,"key":"`+j.pub+`","sig":"`+sig+`"}`...)
	if _, err := j.f.Write(append(ln, '\n')); err != nil {
		return Entry{}, fmt.Errorf("journal %s: write: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return Entry{}, fmt.Errorf("journal %s: sync: %w", j.path, err)
	}
	j.seq = s.Seq
	j.prev = hashLine(ln)
	// The time as written, so the Entry says exactly what the line says.
	t, _ := time.Parse(time.RFC3339Nano, s.Time)
	return Entry{Seq: s.Seq, Time: t, Session: s.Session, Kind: kind, Payload: p, Prev: s.Prev, Key: j.pub, Sig: sig}, nil
}

// Close closes the file; Append after Close is an error.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

func hashLine(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
