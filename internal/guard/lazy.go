package guard

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled the first time it is used
// rather than when the package is initialised: the guard has dozens, and
// compiling them all at initialisation cost every nodwyn process, even
// `nodwyn version`, 3 ms before main. Warm compiles them on a goroutine
// of its own (a session calls it as its first request goes out), so the
// first command judged does not pay either.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func lazyRE(src string) *lazyRegexp {
	l := &lazyRegexp{src: src}
	lazyREs = append(lazyREs, l)
	return l
}

// lazyREs are all the package's lazy expressions, for warm.
var lazyREs []*lazyRegexp

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lazyRegexp) String() string                         { return l.src }
func (l *lazyRegexp) MatchString(s string) bool              { return l.get().MatchString(s) }
func (l *lazyRegexp) FindString(s string) string             { return l.get().FindString(s) }
func (l *lazyRegexp) FindStringIndex(s string) []int         { return l.get().FindStringIndex(s) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string   { return l.get().FindStringSubmatch(s) }
func (l *lazyRegexp) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }
func (l *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.get().FindAllStringIndex(s, n)
}
func (l *lazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}
func (l *lazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
func (l *lazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}
func (l *lazyRegexp) ReplaceAllString(s, repl string) string {
	return l.get().ReplaceAllString(s, repl)
}
func (l *lazyRegexp) Split(s string, n int) []string { return l.get().Split(s, n) }

var (
	warmOnce sync.Once
	warmed   = make(chan struct{}) // closed when Warm's goroutine is done
)

// Warm makes the guard's tables (progTable) and compiles its expressions on
// a goroutine of its own, once per process; what a judgement needs before
// they are done it makes itself.
func Warm() {
	warmOnce.Do(func() {
		go func() {
			progTable()
			for _, l := range lazyREs {
				l.get()
			}
			close(warmed)
		}()
	})
}
