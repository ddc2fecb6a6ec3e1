package guard

import "github.com/nodwyn/nodwyn/internal/guard/bashread"

// The paths' helpers are the reading's (bashread/paths.go): the guard
// resolves and compares a path as the reading of a line does.

func joinRaw(dir, p string) string  { return bashread.JoinRaw(dir, p) }
func within(p, dir string) bool     { return bashread.Within(p, dir) }
func withinFold(p, dir string) bool { return bashread.WithinFold(p, dir) }
func physical(p string) string      { return bashread.Physical(p) }
func lazyRE(src string) *bashread.LazyRegexp {
	return bashread.Lazy(src)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdent(c byte) bool { return isAlnum(c) || c == '_' }

// Warm makes the reading's program table and compiles the guard's and the
// reading's expressions on a goroutine of its own, once per process (a
// session calls it as its first request goes out); what a judgement needs
// before they are done it makes itself.
func Warm() { bashread.Warm() }
