package prim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nodwyn/nodwyn/internal/roles"
)

// fs-edit {path, old, new}: replaces the exact text old with new, where old
// matches exactly once. No match: an error showing where the file comes
// nearest (the lines old matches if whitespace is ignored, else the lines
// most like old's first line). Several matches: an error giving the count
// and their line numbers, asking for more context. A file with CRLF line
// ends is matched with old's and new's "\n" read as "\r\n". The previous
// content goes to Options.Backup first.

const maxEditMatchesListed = 20

func init() {
	Register(Tool{Name: "fs-edit", Order: 32, Run: (*Tools).fsEdit, Params: []Param{
		{Name: "path", Type: String, Role: roles.PathWrite, Required: true},
		{Name: "old", Type: String, Required: true},
		{Name: "new", Type: String, Role: roles.Content, Required: true},
	}})
}

func (t *Tools) fsEdit(_ context.Context, a Args) (Result, error) {
	p := a.Str("path")
	old := a.Str("old")
	repl := a.Str("new")
	if p == "" {
		return failf("fs-edit: the path is empty"), nil
	}
	if old == "" {
		return failf("fs-edit: old is empty; give the exact text to replace (to write a whole file, use fs-write)"), nil
	}
	if old == repl {
		return failf("fs-edit: old and new are the same; nothing to change"), nil
	}
	abs := Resolve(t.opts.Folder, p)
	rel := t.rel(abs)
	data, mode, existed, res := t.readForChange("fs-edit", abs)
	if res != nil {
		return *res, nil
	}
	if !existed {
		return failf("fs-edit: no such file: %s; to make a new file, use fs-write", rel), nil
	}
	if isBinary(data) {
		return failf("fs-edit: %s is a binary file; fs-edit changes text only", rel), nil
	}
	content := string(data)
	at := matches(content, old, maxEditMatchesListed+1)
	count := len(at)
	if count == 0 && strings.Contains(content, "\r\n") && !strings.Contains(old, "\r") {
		crOld := strings.ReplaceAll(old, "\n", "\r\n")
		if m := matches(content, crOld, maxEditMatchesListed+1); len(m) > 0 {
			old, at, count = crOld, m, len(m)
		}
	}
	// In a file whose every line ends in CRLF, new's lines do too.
	if n := strings.Count(content, "\r\n"); n > 0 && n == strings.Count(content, "\n") && !strings.Contains(repl, "\r") {
		repl = strings.ReplaceAll(repl, "\n", "\r\n")
	}
	switch {
	case count == 0:
		return Result{Output: noMatch(rel, content, old), IsError: true}, nil
	case count > 1:
		var lines []string
		for _, j := range at[:min(count, maxEditMatchesListed)] {
			lines = append(lines, fmt.Sprint(lineOf(content, j)))
		}
		total := fmt.Sprint(count)
		more := ""
		if count > maxEditMatchesListed {
			total, more = fmt.Sprintf("more than %d", maxEditMatchesListed), ", …"
		}
		return failf("fs-edit: old matches %s times in %s (at lines %s%s); it must match exactly once: include more of the surrounding lines in old", total, rel, strings.Join(lines, ", "), more), nil
	}
	i := at[0]
	updated := content[:i] + repl + content[i+len(old):]
	if r := t.commit("fs-edit", abs, data, true, mode, []byte(updated)); r != nil {
		return *r, nil
	}
	start := lineOf(content, i)
	oldN := strings.Count(old, "\n") + 1
	newN := strings.Count(repl, "\n") + 1
	if repl == "" {
		newN = 0
	}
	return Result{
		Output:  fmt.Sprintf("edited %s at line %d: %d %s replaced by %d", rel, start, oldN, plural(oldN, "line", "lines"), newN),
		Changed: []string{abs},
	}, nil
}

// matches returns the byte offsets where old occurs in s, overlapping
// occurrences included ("aa" is twice in "aaa"), at most most of them.
func matches(s, old string, most int) []int {
	var at []int
	for from := 0; len(at) < most; {
		j := strings.Index(s[from:], old)
		if j < 0 {
			break
		}
		at = append(at, from+j)
		_, size := utf8.DecodeRuneInString(s[from+j:])
		from += j + size
	}
	return at
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// lineOf is the 1-based line number of byte offset i.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// noMatch words the error for an old that is not in the file.
func noMatch(rel, content, old string) string {
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	oldLines := strings.Split(strings.Trim(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "fs-edit: old does not match the text of %s exactly (old must be copied exactly, whitespace and all).\n", rel)

	// Whitespace ignored.
	norm := make([]string, len(lines))
	for i, l := range lines {
		norm[i] = squash(l)
	}
	want := make([]string, len(oldLines))
	for i, l := range oldLines {
		want[i] = squash(l)
	}
	for i := 0; i+len(want) <= len(norm); i++ {
		match := true
		for j, w := range want {
			if norm[i+j] != w {
				match = false
				break
			}
		}
		if match {
			fmt.Fprintf(&b, "It matches lines %d-%d if whitespace is ignored; their exact text is:\n", i+1, i+len(want))
			writeNumbered(&b, lines, i, i+len(want), 30)
			return strings.TrimSuffix(b.String(), "\n")
		}
	}

	// The lines most like old's first non-blank line.
	first := ""
	for _, l := range oldLines {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	type cand struct {
		line  int
		score float64
	}
	var cands []cand
	fb := bigrams(first)
	for i, l := range lines {
		if s := dice(fb, bigrams(strings.TrimSpace(l))); s >= 0.5 {
			cands = append(cands, cand{i, s})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	if len(cands) == 0 {
		fmt.Fprintf(&b, "No line of the file is like old's first line %q. Read the file (fs-read) and copy the text to replace from it.", clip(first, 120))
		return b.String()
	}
	if len(cands) > 3 {
		cands = cands[:3]
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].line < cands[j].line })
	b.WriteString("The nearest lines:\n")
	span := min(len(oldLines), 6)
	for k, c := range cands {
		if k > 0 {
			b.WriteString("---\n")
		}
		writeNumbered(&b, lines, c.line, min(c.line+span, len(lines)), span)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func writeNumbered(b *strings.Builder, lines []string, from, to, most int) {
	for i := from; i < to && i < from+most; i++ {
		fmt.Fprintf(b, "%6d\t%s\n", i+1, clip(lines[i], 300))
	}
	if to-from > most {
		fmt.Fprintf(b, "[… %d more lines]\n", to-from-most)
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return toValid(s[:n]) + "…"
}

// squash drops a line's leading and trailing whitespace and turns each run
// of inner whitespace into one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func bigrams(s string) map[string]int {
	m := map[string]int{}
	r := []rune(s)
	for i := 0; i+1 < len(r); i++ {
		m[string(r[i:i+2])]++
	}
	return m
}

// dice is the Sørensen–Dice coefficient of two bigram multisets.
func dice(a, b map[string]int) float64 {
	na, nb := 0, 0
	for _, n := range a {
		na += n
	}
	for _, n := range b {
		nb += n
	}
	if na+nb == 0 {
		return 0
	}
	common := 0
	for k, n := range a {
		common += min(n, b[k])
	}
	return 2 * float64(common) / float64(na+nb)
}
