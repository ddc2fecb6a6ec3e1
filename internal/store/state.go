package store

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// SessionState is what a session saves to be listed and resumed.
type SessionState struct {
	ID          string `json:"id"`
	Folder      string `json:"folder"`
	Instruction string `json:"instruction"`
	Profile     string `json:"profile,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Model       string `json:"model,omitempty"`
	BaseURL     string `json:"base_url,omitempty"` // the provider's endpoint as the run chose it ("" = the provider's own), without a user:password (EndpointWithoutSecret)
	API         string `json:"api,omitempty"`      // the openai provider's API: "responses", or "" for Chat Completions

	Sandbox    bool `json:"sandbox,omitempty"`
	Unattended bool `json:"unattended,omitempty"`
	Yolo       bool `json:"yolo,omitempty"`

	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Status  string    `json:"status"` // "running", "finished", "failed", "budget", "interrupted"; "unreadable" in ListSessions for a state file that does not parse

	ToolCalls int            `json:"tool_calls"`
	Usage     map[string]int `json:"usage,omitempty"`

	// Generation names this state.json for the lines of the state journal
	// that extend it (statejournal.go); the store sets it.
	Generation string `json:"generation,omitempty"`

	// Rebuilt, when not "", says that state.json was missing or could not
	// be read and the state was rebuilt from the event log, and what of it
	// could not be (rebuild.go): a resumed session notes it. Never saved.
	Rebuilt string `json:"-"`

	// Messages come last in the file, so ListSessions stops reading there.
	Messages json.RawMessage `json:"messages,omitempty"` // the conversation, opaque to the store
}

// Store is nodwyn's data directory.
type Store struct {
	Root string // the data directory
}

// Open returns the store in dataDir, making it and its subdirectories (mode
// 0700) when they do not exist.
func Open(dataDir string) (*Store, error) {
	if dataDir == "" {
		return nil, errors.New("open store: no data directory given")
	}
	s := &Store{Root: dataDir}
	for _, d := range []string{s.Root, s.sessionsDir(), s.blobsDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	return s, nil
}

func (s *Store) sessionsDir() string { return filepath.Join(s.Root, "sessions") }

// NewSessionID returns a new session id: the UTC time to the second and six
// random hex digits, "20261202-135501-ab12cd", so ids sort by creation.
func NewSessionID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidID reports whether id can name a session: letters, digits, '.', '_'
// and '-', not starting with a dot or dash (so never a path).
func ValidID(id string) bool { return len(id) <= 128 && idPattern.MatchString(id) }

// SessionDir is the session's directory, <data>/sessions/<id>.
func (s *Store) SessionDir(id string) string { return filepath.Join(s.sessionsDir(), id) }

// LogPath is the session's event log, <data>/sessions/<id>/events.jsonl.
func (s *Store) LogPath(id string) string { return filepath.Join(s.SessionDir(id), "events.jsonl") }

// JournalPath is the session's signed journal, <data>/sessions/<id>/journal.jsonl (package journal writes it).
func (s *Store) JournalPath(id string) string {
	return filepath.Join(s.SessionDir(id), "journal.jsonl")
}

// StatePath is the session's state file, <data>/sessions/<id>/state.json.
func (s *Store) StatePath(id string) string { return filepath.Join(s.SessionDir(id), "state.json") }

func badID(id string) error {
	return fmt.Errorf("%q is not a session id: `nodwyn sessions` lists the ids", id)
}

// SaveState writes st to its state.json atomically: a reader, or a process
// resuming after this one was killed, sees the old state or the new one, never
// a part (a new file each time, renamed over it: a file a reader has open is
// never written again). It does not fsync (BenchmarkSaveState), so a machine
// that loses power may lose the latest save. A zero Created is set to now.
// A session saving itself turn after turn uses a StateWriter.
func (s *Store) SaveState(st *SessionState) error {
	if err := readyToSave(st); err != nil {
		return err
	}
	_, err := s.writeSnapshot(st, "") // a state.json no line of the state journal extends
	return err
}

// readyToSave checks st's id and sets a zero Created to now.
func readyToSave(st *SessionState) error {
	if !ValidID(st.ID) {
		return fmt.Errorf("save session: %w", badID(st.ID))
	}
	if st.Created.IsZero() {
		st.Created = time.Now()
	}
	return nil
}

// writeSnapshot writes st, of generation gen, as its state.json (SaveState's
// way), and says how many bytes.
func (s *Store) writeSnapshot(st *SessionState, gen string) (int, error) {
	head := *st
	head.Generation = gen
	b, err := encodeState(&head)
	if err == nil {
		path := s.StatePath(st.ID)
		err = writeAtomic(path, b, 0o600)
		if errors.Is(err, os.ErrNotExist) { // the session's directory is not there yet
			if err = os.MkdirAll(s.SessionDir(st.ID), 0o700); err == nil {
				err = writeAtomic(path, b, 0o600)
			}
		}
	}
	if err != nil {
		return 0, fmt.Errorf("save session %s: %w", st.ID, err)
	}
	return len(b), nil
}

// encodeState is json.Marshal(st) and a newline, with the messages, which
// are JSON already, appended as they are rather than checked and copied
// again (a long conversation is most of the file).
func encodeState(st *SessionState) ([]byte, error) {
	msgs := st.Messages
	head := *st
	head.Messages = nil
	b, err := json.Marshal(&head)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return append(b, '\n'), nil
	}
	if !json.Valid(msgs) {
		return nil, errors.New("the messages are not JSON")
	}
	out := make([]byte, 0, len(b)+len(msgs)+16)
	out = append(out, b[:len(b)-1]...) // without its "}"
	out = append(out, `,"messages":`...)
	out = append(out, msgs...)
	return append(out, "}\n"...), nil
}

// LoadState reads a session's saved state. When its state.json is missing
// or cannot be read but its event log is there, the state is rebuilt from
// the log (rebuild.go), and its Rebuilt says so.
func (s *Store) LoadState(id string) (*SessionState, error) {
	if !ValidID(id) {
		return nil, badID(id)
	}
	path := s.StatePath(id)
	b, err := os.ReadFile(path)
	var st SessionState
	if err == nil {
		jerr := json.Unmarshal(b, &st)
		if jerr == nil {
			s.readMore(id, &st, false)
			return &st, nil
		}
		err = fmt.Errorf("%s does not parse: %v", path, jerr)
	}
	if s.hasLog(id) {
		why := stateProblem(path, err)
		rb, rerr := s.rebuildState(id, why)
		if rerr != nil {
			return nil, fmt.Errorf("load session %s: %s, and the state cannot be rebuilt from its log: %v", id, why, rerr)
		}
		return rb, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no session %s in %s: `nodwyn sessions` lists the ids", id, s.sessionsDir())
	}
	return nil, fmt.Errorf("load session %s: %w", id, err)
}

// readSummary reads a state file without its messages. SaveState writes
// them last, so the reading stops where they begin and a long conversation
// is never read; a file that has fields after them (an older layout) has
// its messages read and dropped.
func readSummary(path string) (SessionState, error) {
	var st SessionState
	f, err := os.Open(path)
	if err != nil {
		return st, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return st, fmt.Errorf("%s: not a JSON object", path)
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return st, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if key == "messages" {
			if _, ok := fields["tool_calls"]; ok {
				break // the current layout: nothing after them
			}
			if err := dec.Decode(&raw); err != nil {
				return st, err
			}
			continue
		}
		if err := dec.Decode(&raw); err != nil {
			return st, err
		}
		fields[key] = raw
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return st, err
	}
	err = json.Unmarshal(b, &st)
	return st, err
}

// ListSessions returns the saved sessions, newest first, without their
// Messages. One whose state file is missing or does not parse is listed
// as its event log rebuilds it (Rebuilt says so), or, with no log to
// rebuild it from, is left out (missing) or listed with Status
// "unreadable"; a "running" one whose lock no live process holds
// (SessionHeld) is listed "interrupted".
func (s *Store) ListSessions() ([]SessionState, error) {
	ents, err := os.ReadDir(s.sessionsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []SessionState
	for _, e := range ents {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		v, err := readSummary(s.StatePath(e.Name()))
		if err != nil && s.hasLog(e.Name()) {
			if rb, rerr := s.rebuildState(e.Name(), stateProblem(s.StatePath(e.Name()), err)); rerr == nil {
				v, err = *rb, nil
				v.Messages = nil
			}
		}
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			st := SessionState{ID: e.Name(), Status: "unreadable"}
			if fi, err := e.Info(); err == nil {
				st.Updated = fi.ModTime()
			}
			out = append(out, st)
			continue
		}
		if v.ID == "" {
			v.ID = e.Name()
		}
		s.readMore(e.Name(), &v, true)
		if v.Status == "running" && !s.SessionHeld(v.ID) {
			v.Status = "interrupted" // its process died without saving an end
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory, renamed over it.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// ResolveID turns what a person typed for a session into its id: "last"
// (the newest), a whole id, or the start of exactly one id ("20261203-10",
// or the random tail's first digits after the time). The error says what
// to type instead.
func (s *Store) ResolveID(ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", fmt.Errorf("no session named: give an id from 'nodwyn sessions', or 'last'")
	}
	ents, err := os.ReadDir(s.sessionsDir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("list sessions: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() && ValidID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	if ref == "last" {
		list, err := s.ListSessions()
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "", fmt.Errorf("there is no saved session yet")
		}
		return list[0].ID, nil
	}
	var match []string
	for _, id := range ids {
		if id == ref {
			return id, nil
		}
		tail := id[strings.LastIndex(id, "-")+1:] // the random digits after the time
		if strings.HasPrefix(id, ref) || (len(ref) >= 3 && strings.HasPrefix(tail, ref)) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", fmt.Errorf("no session %q; 'nodwyn sessions' lists them (an id, its start, or 'last')", ref)
	}
	sort.Strings(match)
	if len(match) > 5 {
		match = append(match[:5], "…")
	}
	return "", fmt.Errorf("%q is the start of more than one session (%s): give more of the id", ref, strings.Join(match, ", "))
}

// EndpointWithoutSecret is a provider's base URL as a session's state and
// its run.start keep it: without the user and password an endpoint may
// carry (https://user:pw@gw/v1 is kept as https://gw/v1), nor a query
// parameter whose name says it holds a key, a token, a secret, a password
// or a signature (?api-key=…, ?token=…; ?api-version= stays), which are
// secrets. What is not a URL is kept as it is.
func EndpointWithoutSecret(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	changed := p.User != nil
	p.User = nil
	if q := p.Query(); len(q) > 0 {
		for name := range q {
			low := strings.ToLower(name)
			for _, w := range []string{"key", "token", "secret", "pass", "pwd", "sig", "auth", "credential"} {
				if strings.Contains(low, w) {
					q.Del(name)
					changed = true
					break
				}
			}
		}
		if changed {
			p.RawQuery = q.Encode()
		}
	}
	if !changed {
		return u
	}
	return p.String()
}
