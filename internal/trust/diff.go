package trust

import "strings"

// Diff lists the lines removed ("- …") and added ("+ …") between old and
// new, in order, at most max of them (a last line says how many more). It
// is a plain longest-common-subsequence difference, meant for the short
// files a project's .nodwyn holds; past 2,000 lines a side it only counts.
func Diff(old, new []byte, max int) []string {
	a, b := lines(old), lines(new)
	if len(a) > 2000 || len(b) > 2000 {
		return []string{"(too long to show line by line: " + itoa(len(a)) + " lines before, " + itoa(len(b)) + " now)"}
	}
	// lcs[i][j] is the length of the common subsequence of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max32(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	more := 0
	add := func(s string) {
		if len(out) < max {
			out = append(out, s)
		} else {
			more++
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			add("- " + a[i])
			i++
		default:
			add("+ " + b[j])
			j++
		}
	}
	if more > 0 {
		out = append(out, "… and "+itoa(more)+" more changed lines")
	}
	return out
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func max32(x, y int32) int32 {
	if x > y {
		return x
	}
	return y
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}
