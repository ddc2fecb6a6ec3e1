package provider

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Fault-injecting servers for the idle and request timeouts. Each test
// gives short timeouts (300 ms) and no retries, and checks that the request
// ends with the named error; ctxT's 30 s is only a safety bound. What is
// asserted is which error ends the request, never how long it took.

// keepSending writes first (real events), then repeats every (SSE
// comments, pings or more real events) every 20 ms until the client hangs
// up; the reply never completes.
func keepSending(first, every string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_, _ = io.WriteString(w, first)
		_ = rc.Flush()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
				if _, err := io.WriteString(w, every); err != nil {
					return
				}
				if rc.Flush() != nil {
					return
				}
			}
		}
	}
}

// stallSilently answers nothing at all, not even headers.
func stallSilently(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

var oaFirstChunk = events(oaChunk(`[{"index":0,"delta":{"role":"assistant","content":"thinking"},"finish_reason":null}]`))

func wantTimeout(t *testing.T, err error, sentinel error, key, flag string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("err = %v, want %v", err, sentinel)
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("err %T is not a *provider.Error: %v", err, err)
	}
	for _, s := range []string{key, flag, "300ms"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// A server that keeps its connection open with pings while the model never
// answers is stalled: the pings' bytes keep the wire's clock running, not
// the reply's (idle.go).
func TestOpenAIPingsOnlyAfterFirstChunkIsIdleTimeout(t *testing.T) {
	ws := newWireServer(t, keepSending(oaFirstChunk, ": ping\n\n"))
	m := newTestOpenAI(t, ws, Config{IdleTimeout: 300 * time.Millisecond, MaxRetries: -1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	wantTimeout(t, err, ErrIdleTimeout, "[provider] idle_timeout", "--idle-timeout")
	if !strings.Contains(err.Error(), "no data from the model for 300ms (SSE comments and pings do not count)") {
		t.Errorf("error %q does not say only pings came", err)
	}
}

func TestAnthropicPingEventsOnlyAfterFirstEventIsIdleTimeout(t *testing.T) {
	first := events("message_start\n" + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"c1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`)
	ws := newWireServer(t, keepSending(first, events("ping\n"+`{"type":"ping"}`)+": keep-alive\n\n"))
	m := newTestAnthropic(t, ws, Config{IdleTimeout: 300 * time.Millisecond, MaxRetries: -1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	wantTimeout(t, err, ErrIdleTimeout, "[provider] idle_timeout", "--idle-timeout")
	if !strings.Contains(err.Error(), "(SSE comments and pings do not count)") {
		t.Errorf("error %q does not say only pings came", err)
	}
}

func TestStallWithNoBytesIsIdleTimeout(t *testing.T) {
	ws := newWireServer(t, stallSilently)
	m := newTestOpenAI(t, ws, Config{IdleTimeout: 300 * time.Millisecond, MaxRetries: -1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	wantTimeout(t, err, ErrIdleTimeout, "[provider] idle_timeout", "--idle-timeout")
	if !strings.Contains(err.Error(), "no data from the model for 300ms, not a byte") {
		t.Errorf("error %q does not say no byte came", err)
	}
}

// trickle writes the first n bytes of payload one at a time, each flushed,
// with a pause of gap after each (a slow link, or a proxy that passes on
// what it has), then the rest.
func trickle(payload string, n int, gap time.Duration) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for i := range n {
			if _, err := io.WriteString(w, payload[i:i+1]); err != nil || rc.Flush() != nil {
				return
			}
			time.Sleep(gap) // the link's pace, not a wait for a state
		}
		_, _ = io.WriteString(w, payload[n:])
	}
}

// A reply whose bytes keep coming is not idle, however long an event takes
// to arrive whole: here a comment, then the first event, a byte at a time,
// take longer than the idle timeout (over 150 bytes, 3 ms apart at least,
// against 250 ms). Before the idle clock counted bytes, the first event
// was cut as "no data".
func TestTrickledReplyIsNotIdle(t *testing.T) {
	const idle, gap = 250 * time.Millisecond, 3 * time.Millisecond
	text := strings.Repeat("slow ", 10)
	first, _, _ := strings.Cut(oaText(text), "\n\n")
	stream := ": keep-alive\n\n" + oaText(text)
	n := len(": keep-alive\n\n") + len(first) + 2
	if time.Duration(n)*gap <= idle {
		t.Fatalf("%d bytes %s apart arrive within the idle timeout %s: the test proves nothing", n, gap, idle)
	}
	ws := newWireServer(t, trickle(stream, n, gap))
	var seen atomic.Int64
	m := newTestOpenAI(t, ws, Config{IdleTimeout: idle, MaxRetries: -1, OnEvent: func() { seen.Add(1) }})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Text != text {
		t.Fatalf("reply %q, err %v", reply.Text, err)
	}
	// OnEvent still counts the head and the reply's events, not bytes.
	if n := seen.Load(); n != 5 {
		t.Errorf("OnEvent called %d times, want 5 (the head and 4 events)", n)
	}
}

// A server that keeps sending real events but never finishes is bounded
// by the request timeout, which the idle timeout cannot do.
func TestStreamThatNeverEndsIsRequestTimeout(t *testing.T) {
	more := events(oaChunk(`[{"index":0,"delta":{"content":"."},"finish_reason":null}]`))
	ws := newWireServer(t, keepSending(oaFirstChunk, more))
	var seen atomic.Int64
	m := newTestOpenAI(t, ws, Config{RequestTimeout: 300 * time.Millisecond, MaxRetries: -1, OnEvent: func() { seen.Add(1) }})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	wantTimeout(t, err, ErrRequestTimeout, "[provider] request_timeout", "--request-timeout")
	if seen.Load() < 2 {
		t.Errorf("OnEvent called %d times, want the headers and each chunk", seen.Load())
	}
}

// A timed-out attempt is a retryable failure: the next attempt is made,
// and the retry's cause names the timeout.
func TestIdleTimeoutIsRetried(t *testing.T) {
	ws := newWireServer(t, keepSending(oaFirstChunk, ": ping\n\n"), sseSplit(oaText("moving"), 100))
	var cause error
	m := newTestOpenAI(t, ws, Config{IdleTimeout: 300 * time.Millisecond, OnRetry: func(n int, _ time.Duration, err error) {
		if n == 1 {
			cause = err
		}
	}})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	// At least 2 attempts: the good one is not bound to beat 300 ms on a
	// loaded machine, and another retry proves nothing less.
	if err != nil || reply.Text != "moving" || reply.Attempts < 2 {
		t.Fatalf("reply %+v, err %v", reply, err)
	}
	if !errors.Is(cause, ErrIdleTimeout) || !strings.Contains(cause.Error(), "idle_timeout") {
		t.Errorf("retry cause %v", cause)
	}
}

func TestTimeoutDefaults(t *testing.T) {
	r := newRetrier("x", "u", Config{})
	if r.idle != 2*time.Minute || r.request != 10*time.Minute {
		t.Errorf("idle %s request %s, want 2m and 10m", r.idle, r.request)
	}
	r = newRetrier("x", "u", Config{IdleTimeout: -1, RequestTimeout: -1})
	if r.idle > 0 || r.request > 0 {
		t.Errorf("negative timeouts not off: idle %s request %s", r.idle, r.request)
	}
}
