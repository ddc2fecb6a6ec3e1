package bashread

// The decoders whose output the reading follows: base64 -d, xxd -r, rev.

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// base64 decodes its standard input with -d.
func (an *Reading) base64(base string, args []string, stdin string) string {
	if !hasAny(args, "-d", "--decode", "-D") {
		return an.generic(base, args, stdin)
	}
	an.operands(args, UseOperand)
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(stdin), ""))
	if err != nil || strings.Contains(stdin, markUnknown) {
		return markBuilt
	}
	s := string(b)
	an.scanText(s, false)
	return s
}

// unhex reverses xxd -r's hex dump and rev's lines.
func (an *Reading) unhex(base string, args []string, stdin string) string {
	if base == "xxd" && !hasAny(args, "-r") {
		return an.generic(base, args, stdin)
	}
	an.operands(args, UseOperand)
	if base == "rev" && !strings.Contains(stdin, markUnknown) {
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(stdin, "\n"), "\n") {
			r := []rune(l)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			lines = append(lines, string(r))
		}
		s := strings.Join(lines, "\n") + "\n"
		an.scanText(s, false)
		return s
	}
	if hasAny(args, "-p", "-ps", "-plain") && !strings.Contains(stdin, markUnknown) {
		if b, err := hex.DecodeString(strings.Join(strings.Fields(stdin), "")); err == nil {
			an.scanText(string(b), false)
			return string(b)
		}
	}
	return markBuilt
}
