package mcp

import (
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen is the longest tool name the providers accept: the names the
// model sees match ^[a-zA-Z0-9_-]{1,64}$.
const MaxNameLen = 64

// SummaryLen caps a tool's one-line description, in bytes (the ellipsis
// included).
const SummaryLen = 120

// ToolName is the name the model sees for tool on server: server__tool,
// with every byte outside [a-zA-Z0-9_-] replaced by '_' and, when longer
// than MaxNameLen, cut and ended with '_' and 8 hex digits of a hash of
// the unsanitized pair, so that two long names stay apart. note says what
// was changed ("" when nothing was), for doctor and the trajectory.
func ToolName(server, tool string) (name, note string) {
	raw := server + "__" + tool
	var b strings.Builder
	var replaced []string
	seen := map[string]bool{}
	for _, r := range raw {
		if r < utf8.RuneSelf && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
			continue
		}
		b.WriteByte('_')
		q := fmt.Sprintf("%q", r)
		if !unicode.IsPrint(r) || r == ' ' {
			q = fmt.Sprintf("%U", r)
		}
		if !seen[q] {
			seen[q] = true
			replaced = append(replaced, q)
		}
	}
	name = b.String()
	var notes []string
	if len(replaced) > 0 {
		notes = append(notes, strings.Join(replaced, " ")+" replaced by '_'")
	}
	if len(name) > MaxNameLen {
		name = name[:MaxNameLen-9] + "_" + hash8(raw)
		notes = append(notes, fmt.Sprintf("cut to %d characters with a hash", MaxNameLen))
	}
	if len(notes) > 0 {
		note = fmt.Sprintf("%q named %s: %s", raw, name, strings.Join(notes, "; "))
	}
	return name, note
}

// uniqueName is name, or, when taken, name changed to end with a hash of
// raw (and then a counter) so that it is not.
func uniqueName(name, raw string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	h := hash8(raw)
	base := name
	if len(base) > MaxNameLen-9 {
		base = base[:MaxNameLen-9]
	}
	cand := base + "_" + h
	for i := 2; taken[cand]; i++ {
		suffix := fmt.Sprintf("_%s%d", h[:6], i)
		cand = base[:min(len(base), MaxNameLen-len(suffix))] + suffix
	}
	return cand
}

func hash8(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

// Summary is description's first sentence on one line: white space
// collapsed, cut at the first sentence end (". ", "! ", "? " or a blank
// line) and at SummaryLen bytes, where it ends with "…".
func Summary(description string) string {
	// The first paragraph only: a blank line ends it.
	if i := strings.Index(strings.ReplaceAll(description, "\r\n", "\n"), "\n\n"); i >= 0 {
		description = strings.ReplaceAll(description, "\r\n", "\n")[:i]
	}
	s := strings.Join(strings.Fields(description), " ")
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' && !abbreviation(s[:i]) {
			s = s[:i+1]
			break
		}
	}
	if len(s) <= SummaryLen {
		return s
	}
	cut := SummaryLen - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	// Prefer to cut between words.
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > cut*2/3 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}

// abbreviation reports whether the text before a '.' ends with a short
// abbreviation ("e.g", "i.e", "etc", "vs"), which does not end a sentence.
func abbreviation(before string) bool {
	w := before[strings.LastIndexByte(before, ' ')+1:]
	switch strings.ToLower(w) {
	case "e.g", "i.e", "etc", "vs", "cf", "approx", "incl":
		return true
	}
	return false
}
