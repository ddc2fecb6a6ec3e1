package bashread

import (
	"regexp"
	"sync"
)

// LazyRegexp is a regular expression compiled the first time it is used
// rather than when the package is initialised: the reading and the guard
// (which makes its own with Lazy too) have dozens, and
// compiling them all at initialisation cost every nodwyn process, even
// `nodwyn version`, 3 ms before main. Warm compiles them on a goroutine
// of its own (a session calls it as its first request goes out), so the
// first command judged does not pay either.
type LazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// Lazy is src, compiled at its first use or by Warm.
func Lazy(src string) *LazyRegexp {
	l := &LazyRegexp{src: src}
	lazyREs = append(lazyREs, l)
	return l
}

// lazyREs are all the package's lazy expressions, for warm.
var lazyREs []*LazyRegexp

func (l *LazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *LazyRegexp) String() string                         { return l.src }
func (l *LazyRegexp) MatchString(s string) bool              { return l.get().MatchString(s) }
func (l *LazyRegexp) FindString(s string) string             { return l.get().FindString(s) }
func (l *LazyRegexp) FindStringIndex(s string) []int         { return l.get().FindStringIndex(s) }
func (l *LazyRegexp) FindStringSubmatch(s string) []string   { return l.get().FindStringSubmatch(s) }
func (l *LazyRegexp) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }
func (l *LazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.get().FindAllStringIndex(s, n)
}
func (l *LazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}
func (l *LazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
func (l *LazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}
func (l *LazyRegexp) ReplaceAllString(s, repl string) string {
	return l.get().ReplaceAllString(s, repl)
}
func (l *LazyRegexp) Split(s string, n int) []string { return l.get().Split(s, n) }

var (
	warmOnce sync.Once
	warmed   = make(chan struct{}) // closed when Warm's goroutine is done
)

// Warm makes the program table (progTable) and compiles every Lazy
// expression (the guard's too) on a goroutine of its own, once per
// process; what a reading needs before they are done it makes itself.
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
