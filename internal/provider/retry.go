package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Error is the error of a request that failed for good: a status that is
// not retried, or retries exhausted in count or time. Its text names the
// provider, the endpoint and the status, e.g.
//
//	provider openai: POST http://127.0.0.1:1234/v1/chat/completions: 429 Too Many Requests after 6 attempts: {"error":…}
type Error struct {
	Provider string
	Method   string
	URL      string // without its query
	Status   int    // 0 when no HTTP status was had (connection error, cut stream)
	Attempts int
	Body     string // an excerpt of the response body
	Note     string // why retries stopped early, if they did
	Err      error  // the underlying failure (connection error, stream cut, ctx error …)
	Hint     string // what to change, said last (a timeout names its setting)

	deadlineFirst bool // retries stopped because the run's deadline comes first
	brief         bool // a retry note's (asNote)
}

// ErrDeadlineBeforeRetry matches (errors.Is) the error of a request whose
// retries stopped because the run's deadline comes before the next attempt:
// the run ends for its deadline, not for the provider.
var ErrDeadlineBeforeRetry = errors.New("the run's deadline comes before the next attempt")

// Is makes errors.Is(err, ErrDeadlineBeforeRetry) true for such an error.
func (e *Error) Is(target error) bool { return target == ErrDeadlineBeforeRetry && e.deadlineFirst }

func (e *Error) Error() string {
	var b strings.Builder
	if !e.brief {
		fmt.Fprintf(&b, "provider %s: %s %s: ", e.Provider, e.Method, e.URL)
	}
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString("request failed")
	}
	if e.Attempts > 1 && !e.brief {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Note != "" {
		b.WriteString(" (" + e.Note + ")")
	}
	if e.Status != 0 && e.Body != "" {
		if e.brief {
			b.WriteString(": " + excerpt(e.Body, maxNoteBody))
		} else {
			b.WriteString(": " + e.Body)
		}
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// asNote is e as a retry note says it (Config.OnRetry): without the
// provider and the endpoint, which the request's final error names, so
// that a request says its URL once however often it is retried; without
// the attempts, which the note's caller counts; the body cut shorter; and
// the hint only in the first note (first), as what to change is the same
// each time. Its fields are e's.
func (e *Error) asNote(first bool) *Error {
	n := *e
	n.brief = true
	if !first {
		n.Hint = ""
	}
	return &n
}

// maxNoteBody is how much of an error body a retry note quotes.
const maxNoteBody = 160

// ErrIdleTimeout is wrapped by the error of an attempt cut because no byte
// came for Config.IdleTimeout, or only pings and SSE comments did.
var ErrIdleTimeout = errors.New("idle timeout")

// ErrRequestTimeout is wrapped by the error of an attempt cut because it
// took longer than Config.RequestTimeout as a whole.
var ErrRequestTimeout = errors.New("request timeout")

// errStreamCut marks a stream that ended before the reply was complete.
var errStreamCut = errors.New("stream cut mid-reply")

// capture records what the HTTP layer saw during one attempt: send fills
// it (wire.go), so the retry logic reads statuses and headers, not error
// texts.
type capture struct {
	idle        time.Duration     // Config.IdleTimeout; not positive: none
	cut         func(cause error) // cancels the attempt, for the idle watch
	watch       *idleWatch        // started by send
	onEvent     func()            // Config.OnEvent
	method, url string
	status      int
	header      http.Header
	body        string
	sent        bool   // a request reached the HTTP client
	head        []byte // the first bytes of a successful response's body
	final       bool   // the attempt failed in a way another would repeat
	hint        string // what to change, for a final failure (the token limit)
}

// maxHead is how much of a successful response's body capture keeps, to
// say what came back when it was no event stream.
const maxHead = 2 << 10

// notStream is the error of an attempt whose 200 response held no event at
// all: a proxy's page, or one JSON object labelled as something else than
// JSON (one labelled JSON is read whole: wire.go's readWhole). Asking
// again would get the same, so it is final.
// A body that is empty, or holds only what an event stream may (comments
// such as ": keep-alive", fields), is a stream cut before its first event,
// which is retried.
func (c *capture) notStream() error {
	ct := c.header.Get("Content-Type")
	if ct == "" {
		ct = "none"
	}
	body := excerpt(string(c.head), 400)
	if body == "" {
		body = "(an empty body)"
	}
	if onlySSE(c.head) {
		return fmt.Errorf("%w: the server answered %d %s and the stream ended before its first event: %s", errStreamCut, c.status, http.StatusText(c.status), body)
	}
	c.final = true
	return fmt.Errorf("the server answered %d %s with no event stream (Content-Type %s): %s", c.status, http.StatusText(c.status), ct, body)
}

// onlySSE reports whether every line of b is blank or starts as an event
// stream's lines do (":" for a comment, or a field name and ":").
func onlySSE(b []byte) bool {
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == ':' {
			continue
		}
		field, _, _ := strings.Cut(line, ":")
		switch field {
		case "data", "event", "id", "retry":
			continue
		}
		return false
	}
	return true
}

// headBody keeps the first maxHead bytes read in c.head.
type headBody struct {
	io.ReadCloser
	c *capture
}

func (b *headBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.c.watch != nil {
		b.c.watch.sawBytes()
	}
	if k := min(n, maxHead-len(b.c.head)); k > 0 {
		b.c.head = append(b.c.head, p[:k]...)
	}
	return n, err
}

// startWatch starts the idle clocks (idle.go), as the request goes out.
func (c *capture) startWatch() {
	if c.idle > 0 && c.cut != nil && c.watch == nil {
		c.watch = startIdleWatch(c.idle, c.cut)
	}
}

func (c *capture) stop() {
	if c.watch != nil {
		c.watch.stop()
	}
}

// data records that a part of the reply came: the response's head, or an
// event of the reply. The providers' handlers call it for each event but
// pings; SSE comments never reach them (the parser drops them). Bytes of
// any kind reset the idle clock of the wire (headBody); only this resets
// the clock of the reply, so a server that sends only pings is cut.
func (c *capture) data() {
	if c.watch != nil {
		c.watch.sawReply()
	}
	if c.onEvent != nil {
		c.onEvent()
	}
}

// handled says the event the SSE reader returned has been handled: an
// event that was under way is no more (idle.go).
func (c *capture) handled() {
	if c.watch != nil {
		c.watch.partial.Store(false)
	}
}

// partialFlag is where the SSE reader marks an event under way (nil: no
// idle watch).
func (c *capture) partialFlag() *atomic.Bool {
	if c.watch == nil {
		return nil
	}
	return &c.watch.partial
}

// excerpt collapses white space and cuts s to about n bytes.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// retryableStatus reports whether a status is worth another attempt.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// retryAfter reads retry-after-ms or Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

const maxBackoff = 30 * time.Second

// retrier runs attempts of one request under the retry policy.
type retrier struct {
	provider string
	method   string
	url      string // the endpoint, for errors when no request was sent
	max      int    // retries after the first attempt
	budget   time.Duration
	base     time.Duration
	idle     time.Duration
	request  time.Duration // the bound of one attempt as a whole
	onRetry  func(int, time.Duration, error)
	onEvent  func()
}

func newRetrier(provider, url string, cfg Config) retrier {
	r := retrier{provider: provider, method: http.MethodPost, url: url, max: cfg.MaxRetries,
		budget: cfg.MaxRetryWait, base: cfg.RetryBaseWait, idle: cfg.IdleTimeout, request: cfg.RequestTimeout,
		onRetry: cfg.OnRetry, onEvent: cfg.OnEvent}
	if r.idle == 0 {
		r.idle = DefaultIdleTimeout
	}
	if r.request == 0 {
		r.request = DefaultRequestTimeout
	}
	if r.max == 0 {
		r.max = DefaultMaxRetries
	} else if r.max < 0 {
		r.max = 0
	}
	if r.budget <= 0 {
		r.budget = DefaultMaxRetryWait
	}
	if r.base <= 0 {
		r.base = DefaultRetryBaseWait
	}
	return r
}

// backoff is the jittered wait before retry n (0-based): base·2ⁿ, capped,
// then a random point in its upper half.
func (r retrier) backoff(n int) time.Duration {
	d := r.base
	for i := 0; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, maxBackoff)
	half := d / 2
	return half + rand.N(half+1)
}

// attemptFunc runs one attempt. It returns the reply and nil, or an error;
// c holds what the HTTP layer saw.
type attemptFunc func(ctx context.Context, c *capture) (Reply, error)

// do runs fn until it succeeds, fails for good, or the retries run out.
func (r retrier) do(ctx context.Context, onDelta func(Delta), fn attemptFunc) (Reply, error) {
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithCancelCause(ctx)
		c := capture{idle: r.idle, cut: cancel, onEvent: r.onEvent}
		var whole *time.Timer
		if r.request > 0 {
			whole = time.AfterFunc(r.request, func() { cancel(ErrRequestTimeout) })
		}
		reply, err := fn(actx, &c)
		c.stop()
		if whole != nil {
			whole.Stop()
		}
		cause := context.Cause(actx)
		cancel(nil)
		hint := ""
		if err != nil && ctx.Err() == nil {
			switch cause {
			case ErrIdleTimeout:
				err = fmt.Errorf("%w: no data from the model for %s, not a byte", ErrIdleTimeout, r.idle)
				hint = "if the model is slow rather than stalled, raise [provider] idle_timeout in config.toml or --idle-timeout"
			case errOnlyPings:
				err = fmt.Errorf("%w: no data from the model for %s (SSE comments and pings do not count)", ErrIdleTimeout, r.idle)
				hint = "if the model is slow rather than stalled, raise [provider] idle_timeout in config.toml or --idle-timeout"
			case ErrRequestTimeout:
				err = fmt.Errorf("%w: the request took longer than %s", ErrRequestTimeout, r.request)
				hint = "if the model's replies are that long, raise [provider] request_timeout in config.toml or --request-timeout"
			}
		}
		if err == nil {
			reply.Attempts = attempt
			return reply, nil
		}
		fail := r.failure(&c, attempt, err)
		if hint == "" {
			hint = c.hint
		}
		fail.Hint = hint
		if ctx.Err() != nil {
			fail.Status, fail.Body, fail.Err = 0, "", ctx.Err()
			return Reply{}, fail
		}
		if !c.sent || c.final || (c.status >= 400 && !retryableStatus(c.status)) {
			return Reply{}, fail
		}
		if attempt > r.max {
			return Reply{}, fail
		}
		wait := r.backoff(attempt - 1)
		if ra, ok := retryAfter(c.header, time.Now()); ok {
			wait = ra
			if waited+wait > r.budget {
				fail.Note = fmt.Sprintf("the server asked to wait %s, more than the %s left of the retry budget", wait.Round(time.Millisecond), (r.budget - waited).Round(time.Millisecond))
				return Reply{}, fail
			}
		} else if waited+wait > r.budget {
			wait = r.budget - waited
			if wait <= 0 {
				fail.Note = fmt.Sprintf("retry budget of %s spent", r.budget)
				return Reply{}, fail
			}
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			fail.Note = fmt.Sprintf("the run's deadline comes before the next attempt, due in %s", wait.Round(time.Millisecond))
			fail.deadlineFirst = true
			return Reply{}, fail
		}
		if r.onRetry != nil {
			r.onRetry(attempt, wait, fail.asNote(attempt == 1))
		}
		if onDelta != nil {
			onDelta(Delta{Restart: true})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			fail.Note = "cancelled while waiting to retry after " + fail.short()
			fail.Status, fail.Body, fail.Err = 0, "", ctx.Err()
			return Reply{}, fail
		case <-t.C:
		}
		waited += wait
	}
}

func (r retrier) failure(c *capture, attempt int, err error) *Error {
	e := &Error{Provider: r.provider, Method: r.method, URL: r.url, Attempts: attempt, Err: err}
	if c.sent {
		e.Method, e.URL = c.method, c.url
	}
	if c.status >= 400 {
		e.Status, e.Body = c.status, c.body
	}
	return e
}

// short names a failure in a few words, for notes.
func (e *Error) short() string {
	if e.Status != 0 {
		return fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return "a failure"
}
