package journal

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"time"
)

// Report is what Verify found.
type Report struct {
	Path    string
	Entries int               // the entries that verified, from the first
	Session string            // the session on every line
	Key     ed25519.PublicKey // the key that signed them
}

// VerifyError names the first entry of a journal that fails, and why.
type VerifyError struct {
	Path string
	Line int   // the line in the file, from 1
	Seq  int64 // the entry's seq as it says, or the one expected when the line does not say
	Why  string
}

func (e *VerifyError) Error() string {
	if e.Seq > 0 {
		return fmt.Sprintf("journal %s: entry %d (line %d): %s", e.Path, e.Seq, e.Line, e.Why)
	}
	return fmt.Sprintf("journal %s: line %d: %s", e.Path, e.Line, e.Why)
}

// tail is the end of every line: the key and the signature, whose alphabets
// (hex, base64) hold no quote or backslash, so the signed bytes are the line
// up to it, and "}".
var tail = regexp.MustCompile(`,"key":"([0-9a-f]*)","sig":"([A-Za-z0-9+/=]*)"\}$`)

// Verify checks every line of the journal at path, in order, and stops at the
// first that fails, with a *VerifyError naming it: each line must be a JSON
// object ending in the "key" and "sig" fields; its key must be pub (when pub
// is nil, the key of the first line; it is then a check of the file on its
// own, not of who signed it); its signature must verify over the line without
// them; every line must name the same session; seq must run 1, 2, 3 …; and
// prev must be the sha256 of the line before. A last line with no newline is
// reported as cut short (a crash while it was written). The Report counts the
// entries that verified before the failure.
//
// What it cannot see: entries removed from the end leave a shorter journal
// that verifies (compare Report.Entries with a count kept elsewhere, such as
// the session's self_validation events), and whoever holds the key file can
// write a whole new journal that verifies.
func Verify(path string, pub ed25519.PublicKey) (Report, error) {
	r := Report{Path: path, Key: pub}
	data, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("journal: %w", err)
	}
	cut := len(data) > 0 && data[len(data)-1] != '\n'
	data = bytes.TrimSuffix(data, []byte("\n"))
	if len(data) == 0 {
		return r, nil
	}
	lines := bytes.Split(data, []byte("\n"))
	prevHash := ""
	for i, ln := range lines {
		n := i + 1
		fail := func(seq int64, format string, a ...any) (Report, error) {
			return r, &VerifyError{Path: path, Line: n, Seq: seq, Why: fmt.Sprintf(format, a...)}
		}
		want := int64(r.Entries + 1)
		if cut && n == len(lines) {
			return fail(want, "the last line is cut short (it has no newline at its end): nodwyn was stopped while it wrote this entry, or the file was cut")
		}
		var l line
		if err := json.Unmarshal(ln, &l); err != nil {
			return fail(want, "not a JSON object: %v", err)
		}
		m := tail.FindSubmatch(ln)
		if m == nil || string(m[1]) != l.Key || string(m[2]) != l.Sig {
			return fail(l.Seq, `not in the journal's form: a line ends with ,"key":"<hex>","sig":"<base64>"}`)
		}
		key, err := hex.DecodeString(l.Key)
		if err != nil || len(key) != ed25519.PublicKeySize {
			return fail(l.Seq, "its key %q is not an ed25519 public key (64 hex digits)", l.Key)
		}
		if r.Key == nil {
			r.Key = key
		}
		if !bytes.Equal(key, r.Key) {
			what := "than the first entry's"
			if pub != nil {
				what = "than this machine's journal key"
			}
			return fail(l.Seq, "signed by a different key (%s) %s (%s)", Fingerprint(key), what, Fingerprint(r.Key))
		}
		sig, err := base64.StdEncoding.DecodeString(l.Sig)
		if err != nil || len(sig) != ed25519.SignatureSize {
			return fail(l.Seq, "its sig is not an ed25519 signature (base64 of 64 bytes)")
		}
		msg := append(bytes.Clone(ln[:len(ln)-len(m[0])]), '}')
		if !ed25519.Verify(key, msg, sig) {
			return fail(l.Seq, "the signature does not match: the entry was changed after it was signed")
		}
		if n == 1 {
			r.Session = l.Session
		} else if l.Session != r.Session {
			return fail(l.Seq, "session %q, but the journal is session %q's: an entry of another session's journal was put in", l.Session, r.Session)
		}
		if l.Seq != want {
			if n == 1 {
				return fail(l.Seq, "the journal starts at seq %d, not 1: the first entries were removed", l.Seq)
			}
			return fail(l.Seq, "seq %d follows entry %d: an entry was removed or the entries were reordered", l.Seq, want-1)
		}
		if l.Prev != prevHash {
			if n == 1 {
				return fail(l.Seq, "prev is %q, but the first entry's is \"\"", l.Prev)
			}
			return fail(l.Seq, "prev does not match entry %d: an entry was removed or the entries were reordered", want-1)
		}
		if _, err := time.Parse(time.RFC3339Nano, l.Time); err != nil {
			return fail(l.Seq, "its time %q is not RFC 3339", l.Time)
		}
		prevHash = hashLine(ln)
		r.Entries++
	}
	return r, nil
}

// ReadEntries returns the journal's entries as they are written, checking
// nothing but that each line is an entry; Verify checks them. A last line
// with no newline (cut short by a crash) is left out.
func ReadEntries(path string) ([]Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		data = data[:i+1]
	}
	var out []Entry
	for i, ln := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(ln) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(ln, &l); err != nil {
			return out, fmt.Errorf("journal %s: line %d is not an entry: %v", path, i+1, err)
		}
		t, _ := time.Parse(time.RFC3339Nano, l.Time)
		out = append(out, Entry{Seq: l.Seq, Time: t, Session: l.Session, Kind: l.Kind, Payload: l.Payload, Prev: l.Prev, Key: l.Key, Sig: l.Sig})
	}
	return out, nil
}
