package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/journal"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// JournalCmd is `nodwyn journal`.
type JournalCmd struct {
	Verify JournalVerifyCmd `cmd:"" help:"Check a session's signed journal: every signature, the chain, the key."`
	Show   JournalShowCmd   `cmd:"" help:"Print a session's journal entries, one a line."`
}

// Help says what the journal is.
func (JournalCmd) Help() string {
	return journalHelp
}

const journalHelp = `A session's journal (<data>/sessions/<id>/journal.jsonl) records every
self-check and run-tests call of the session: the command, its exit status, a
summary and the hash of the working copy it left. Each entry is signed with this
machine's journal key (<data>/journal/key, made on first use, mode 0600) and
carries the sha256 of the entry before it. The journal is evidence only:
nothing nodwyn decides changes with it. docs/journal.md has the format and a
way to check it without nodwyn.`

// JournalVerifyCmd is `nodwyn journal verify`.
type JournalVerifyCmd struct {
	Session string `arg:"" optional:"" default:"last" help:"The session: an id from 'nodwyn sessions', its start, or 'last' (the default)."`
}

// Help says what verify checks and what it cannot.
func (JournalVerifyCmd) Help() string {
	return journalHelp + `

verify checks every line, in order, and stops at the first that fails, naming
it and why: that it is a journal entry; that this machine's journal key signed
it and the signature matches the line (an entry changed after it was signed
fails); that every entry is the same session's; that the entries are numbered
1, 2, 3 … and each carries the hash of the one before (an entry removed, or
two swapped, fails); that the last line is whole (a crash while it was
written leaves it cut). It also compares the journal with the session's event
log: an event naming a journal entry the journal does not have means entries
were removed from its end, which the journal alone cannot show.

What it cannot prove: whoever can read the key file can write a whole new
journal that verifies, and the event log is not signed.

Exit codes: 0 the journal verifies, or the session has none (and its event
log names no journal entry); 1 it does not;
2 usage (no such session).`
}

// Run verifies the session's journal.
func (c *JournalVerifyCmd) Run(e *env) error {
	st, id, path, err := openJournal(e, "verify", c.Session)
	if err != nil {
		return err
	}
	if path == "" {
		if logged := loggedJournalSeq(st.LogPath(id)); logged > 0 {
			return &exitError{code: ExitFailed, err: fmt.Errorf("session %s has no journal (%s), but its event log (%s) records journal entry %d: the journal was removed", id, st.JournalPath(id), st.LogPath(id), logged)}
		}
		fmt.Fprintf(e.stdout, "session %s: no journal entries (it ran no self-check or run-tests)\n", id)
		return nil
	}
	key, err := journal.LoadKey(st.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return &exitError{code: ExitFailed, err: fmt.Errorf("journal %s: this machine has no journal key (%s), so nothing here signed it: it was copied from another machine, or the key was removed", path, journal.KeyPath(st.Root))}
	}
	if err != nil {
		return &exitError{code: ExitFailed, err: err}
	}
	r, err := journal.Verify(path, key.Public())
	if err != nil {
		return &exitError{code: ExitFailed, err: err}
	}
	if logged := loggedJournalSeq(st.LogPath(id)); logged > int64(r.Entries) {
		return &exitError{code: ExitFailed, err: fmt.Errorf("journal %s: %d entries verify, but the session's event log (%s) records journal entry %d: entries were removed from the journal's end", path, r.Entries, st.LogPath(id), logged)}
	}
	fmt.Fprintf(e.stdout, "journal %s: %d entries verified (key %s)\n", path, r.Entries, journal.Fingerprint(key.Public()))
	return nil
}

// loggedJournalSeq is the highest journal_seq of the self_validation events
// in the session's event log, 0 when it has none or cannot be read.
func loggedJournalSeq(logPath string) int64 {
	evs, _, err := store.ReadLogSkipping(logPath)
	if err != nil {
		return 0
	}
	var max int64
	for _, ev := range evs {
		if ev.Type != "self_validation" {
			continue
		}
		d, _ := event.Decode(ev.Type, ev.Data) // a journal_seq of another type is 0
		if v, _ := d.(event.SelfValidation); v.JournalSeq > max {
			max = v.JournalSeq
		}
	}
	return max
}

// openJournal resolves the session as `nodwyn log` does and returns the
// store, its id and the journal's path ("" when the session has none).
func openJournal(e *env, cmd, ref string) (*store.Store, string, string, error) {
	st, err := openStore(e)
	if err != nil {
		return nil, "", "", err
	}
	id, err := st.ResolveID(ref)
	if err != nil {
		return nil, "", "", usageErr("journal %s: %v", cmd, err) // err names the session it was given
	}
	path := st.JournalPath(id)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return st, id, "", nil
	} else if err != nil {
		return nil, "", "", err
	}
	return st, id, path, nil
}

// JournalShowCmd is `nodwyn journal show`.
type JournalShowCmd struct {
	Session string `arg:"" optional:"" default:"last" help:"The session: an id from 'nodwyn sessions', its start, or 'last' (the default)."`
	JSON    bool   `name:"json" help:"Print the journal's lines as they are."`
}

// Help says what show prints.
func (JournalShowCmd) Help() string {
	return journalHelp + `

show prints one line an entry: its number, time, kind, and for a
self_validation the exit status, the command and the summary. It checks
nothing; 'nodwyn journal verify' does.`
}

// Run prints the entries.
func (c *JournalShowCmd) Run(e *env) error {
	_, id, path, err := openJournal(e, "show", c.Session)
	if err != nil {
		return err
	}
	if path == "" {
		fmt.Fprintf(e.stdout, "session %s: no journal entries (it ran no self-check or run-tests)\n", id)
		return nil
	}
	if c.JSON {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(b)
		return err
	}
	es, err := journal.ReadEntries(path)
	for _, en := range es {
		var p struct {
			Cmd     string `json:"cmd"`
			Exit    *int   `json:"exit"`
			Summary string `json:"summary"`
		}
		_ = json.Unmarshal(en.Payload, &p)
		line := fmt.Sprintf("%d  %s  %s", en.Seq, en.Time.Local().Format("2006-01-02 15:04:05"), en.Kind)
		if p.Exit != nil {
			line += fmt.Sprintf("  exit %d", *p.Exit)
		}
		if p.Cmd != "" {
			line += "  " + oneLine(p.Cmd, 60)
		}
		if p.Summary != "" {
			line += "  — " + oneLine(p.Summary, 80)
		}
		fmt.Fprintln(e.stdout, termtext.Line(line))
	}
	return err
}
