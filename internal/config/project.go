package config

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FindProject finds the project whose .nodwyn/ holds the files of a run in
// folder (an absolute path): folder itself when it has a .nodwyn, else its
// nearest ancestor that has one, up to the root of the git work tree (the
// nearest ancestor holding .git), as the project's instructions (AGENTS.md)
// are found. With no work tree above folder, only folder is looked in: a
// .nodwyn in the home directory or above a loose folder is nobody's
// project. dir is folder when none is found; looked lists the directories
// looked in, nearest first, for a message that says where.
func FindProject(folder string) (dir string, looked []string) {
	folder = filepath.Clean(folder)
	for d := folder; ; {
		looked = append(looked, d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			break // the work tree's root: no further
		}
		up := filepath.Dir(d)
		if up == d {
			looked = looked[:1] // no work tree: the folder alone
			break
		}
		d = up
	}
	for i, d := range looked {
		// A link is taken too, for trust to refuse it with its reason.
		if fi, err := os.Lstat(filepath.Join(d, ".nodwyn")); err == nil && (fi.IsDir() || fi.Mode()&os.ModeSymlink != 0) {
			return d, looked[:i+1]
		}
	}
	return folder, looked
}

// ProjectDir is [FindProject]'s dir: the folder whose .nodwyn/ is the
// project's for a run in folder.
func ProjectDir(folder string) string {
	if !filepath.IsAbs(folder) {
		if abs, err := filepath.Abs(folder); err == nil {
			folder = abs
		}
	}
	dir, _ := FindProject(folder)
	return dir
}

// Suggest is the candidate nearest to word when it is near enough to be a
// typo of it (a few letters added, dropped, changed or swapped, or the
// same words in another order: env_key for key_env), else "".
func Suggest(word string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == word {
			continue
		}
		d := distance(strings.ToLower(word), strings.ToLower(c))
		if sameWords(word, c) {
			d = 1
		}
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	// One edit in a short word, up to a third of the letters in a longer one.
	limit := max(1, len(word)/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// sameWords reports whether a and b are the same words joined by _, - or
// . in another order.
func sameWords(a, b string) bool {
	split := func(s string) []string {
		w := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
		sort.Strings(w)
		return w
	}
	wa, wb := split(a), split(b)
	if len(wa) < 2 || len(wa) != len(wb) {
		return false
	}
	for i := range wa {
		if wa[i] != wb[i] {
			return false
		}
	}
	return true
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Providers are the model providers, the values of [provider] name and
// --provider, each with what it is: the one list that help and messages
// read.
var Providers = []struct{ Name, About string }{
	{"openai", "Chat Completions and the servers compatible with it"},
	{"openai-responses", "OpenAI's Responses API"},
	{"anthropic", "the Messages API"},
	{"script", "scripted replies, no key"},
}

// ProviderList is [Providers] as a sentence: "openai (…), …, or script (…)".
func ProviderList() string {
	var b strings.Builder
	for i, p := range Providers {
		switch {
		case i == len(Providers)-1:
			b.WriteString(", or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(p.Name + " (" + p.About + ")")
	}
	return b.String()
}

// ProviderNames are the names of [Providers].
func ProviderNames() []string {
	var out []string
	for _, p := range Providers {
		out = append(out, p.Name)
	}
	return out
}
