package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{"Retry-After": {"-3"}}, 0, false},
		{http.Header{}, 0, false},
		{nil, 0, false},
	}
	for _, c := range cases {
		got, ok := retryAfter(c.h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("retryAfter(%v) = %v, %v; want %v, %v", c.h, got, ok, c.want, c.ok)
		}
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	r := newRetrier("x", "u", Config{RetryBaseWait: time.Second})
	for n := 0; n < 12; n++ {
		full := min(time.Second<<n, maxBackoff)
		for i := 0; i < 50; i++ {
			d := r.backoff(n)
			if d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	for _, c := range []int{408, 409, 429, 500, 502, 503, 504, 529} {
		if !retryableStatus(c) {
			t.Errorf("%d not retried", c)
		}
	}
	for _, c := range []int{400, 401, 403, 404, 413, 422} {
		if retryableStatus(c) {
			t.Errorf("%d retried", c)
		}
	}
}

func TestRetrierDefaults(t *testing.T) {
	r := newRetrier("x", "u", Config{})
	if r.max != DefaultMaxRetries || r.budget != DefaultMaxRetryWait || r.base != DefaultRetryBaseWait {
		t.Errorf("defaults %+v", r)
	}
	if r := newRetrier("x", "u", Config{MaxRetries: -1}); r.max != 0 {
		t.Errorf("MaxRetries -1 gives %d retries", r.max)
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Provider: "openai", Method: "POST", URL: "http://h/v1/chat/completions", Status: 502, Attempts: 1, Body: "bad gateway"}
	if got := e.Error(); got != "provider openai: POST http://h/v1/chat/completions: 502 Bad Gateway: bad gateway" {
		t.Errorf("got %q", got)
	}
	cut := &Error{Provider: "anthropic", Method: "POST", URL: "http://h/v1/messages", Attempts: 4, Err: errStreamCut}
	if got := cut.Error(); got != "provider anthropic: POST http://h/v1/messages: stream cut mid-reply after 4 attempts" {
		t.Errorf("got %q", got)
	}
	if !errors.Is(cut, errStreamCut) {
		t.Error("Unwrap lost the cause")
	}
}

func TestExcerpt(t *testing.T) {
	if got := excerpt("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("got %q", got)
	}
	if got := excerpt("ééééé", 3); got != "é…" {
		t.Errorf("cut inside a rune: %q", got)
	}
}

func TestLocalErrorNotRetried(t *testing.T) {
	// A failure before any request was sent is not retried.
	r := newRetrier("x", "http://h/p", Config{RetryBaseWait: time.Millisecond})
	calls := 0
	_, err := r.do(ctxT(t), nil, func(_ context.Context, c *capture) (Reply, error) {
		calls++
		return Reply{}, errors.New("cannot encode request")
	})
	if calls != 1 || err == nil || err.Error() != "provider x: POST http://h/p: cannot encode request" {
		t.Errorf("%d calls, err %v", calls, err)
	}
}

// A retry due after the run's deadline is not waited for: the request
// fails at once, saying so, instead of sleeping into the deadline.
func TestRetryStopsAtRunDeadline(t *testing.T) {
	// The deadline is an hour away, the retry two: a retrier that waited
	// would hang here, not merely be slow.
	r := newRetrier("x", "u", Config{MaxRetryWait: 3 * time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	attempts := 0
	errc := make(chan error, 1)
	go func() {
		_, err := r.do(ctx, nil, func(ctx context.Context, c *capture) (Reply, error) {
			attempts++
			c.sent, c.status = true, http.StatusTooManyRequests
			c.header = http.Header{"Retry-After": {"7200"}}
			return Reply{}, errors.New("429")
		})
		errc <- err
	}()
	var err error
	select {
	case err = <-errc:
	case <-time.After(time.Minute):
		t.Fatal("the retrier waits for a retry due after the run's deadline")
	}
	var pe *Error
	if !errors.As(err, &pe) || attempts != 1 || !strings.Contains(pe.Note, "deadline") {
		t.Fatalf("attempts %d, err %v", attempts, err)
	}
	if !errors.Is(err, ErrDeadlineBeforeRetry) { // the run ends for its deadline (exit 3), not as failed
		t.Fatalf("the error does not say the deadline stopped the retries: %v", err)
	}
}

// A request retried says its URL once, in its final error: the retry
// notes are short, and say neither the URL nor the address dialled, and
// what to change is said in the first note only.
func TestRetryNotesSayTheURLOnce(t *testing.T) {
	ws := newWireServer(t, status(200, ``))
	base := ws.srv.URL
	hostport := strings.TrimPrefix(base, "http://")
	ws.srv.Close() // refused
	var notes []string
	m, err := New(fastRetries(Config{Provider: "openai", BaseURL: base + "/v1", Model: "m", MaxRetries: 2,
		OnRetry: func(_ int, _ time.Duration, err error) { notes = append(notes, err.Error()) }}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Stream(ctxT(t), sampleRequest, nil)
	want := []string{"connection failed: dial tcp: connect: connection refused", "connection failed: dial tcp: connect: connection refused"}
	if fmt.Sprint(notes) != fmt.Sprint(want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	if err == nil || err.Error() != "provider openai: POST "+base+"/v1/chat/completions: connection failed: dial tcp: connect: connection refused after 3 attempts" {
		t.Errorf("final error %v", err)
	}
	if err != nil && strings.Count(err.Error(), hostport) != 1 {
		t.Errorf("the final error says %s %d times, want once: %v", hostport, strings.Count(err.Error(), hostport), err)
	}

	// A status, with its body cut short, and the hint said once.
	busy := `{"error":{"message":"` + strings.Repeat("busy ", 100) + `"}}`
	ws = newWireServer(t, status(503, busy))
	notes = nil
	m = newTestOpenAI(t, ws, Config{MaxRetries: 2, OnRetry: func(_ int, _ time.Duration, err error) { notes = append(notes, err.Error()) }})
	_, err = m.Stream(ctxT(t), sampleRequest, nil)
	wantNote := "503 Service Unavailable: " + excerpt(busy, maxNoteBody)
	if len(notes) != 2 || notes[0] != wantNote || notes[1] != wantNote {
		t.Errorf("notes %q, want twice %q", notes, wantNote)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "provider openai: POST "+ws.srv.URL+"/v1/chat/completions: 503 Service Unavailable after 3 attempts: ") {
		t.Errorf("final error %v", err)
	}

	ws = newWireServer(t, stallSilently)
	notes = nil
	m = newTestOpenAI(t, ws, Config{MaxRetries: 2, IdleTimeout: 100 * time.Millisecond, OnRetry: func(_ int, _ time.Duration, err error) { notes = append(notes, err.Error()) }})
	_, err = m.Stream(ctxT(t), sampleRequest, nil)
	first := "idle timeout: no data from the model for 100ms, not a byte; if the model is slow rather than stalled, raise [provider] idle_timeout in config.toml or --idle-timeout"
	if len(notes) != 2 || notes[0] != first || notes[1] != "idle timeout: no data from the model for 100ms, not a byte" {
		t.Errorf("notes %q", notes)
	}
	if err == nil || !strings.HasSuffix(err.Error(), "after 3 attempts; if the model is slow rather than stalled, raise [provider] idle_timeout in config.toml or --idle-timeout") {
		t.Errorf("final error %v", err)
	}
}
