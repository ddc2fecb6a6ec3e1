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
// ends with the named error; ctxT's 30 s is only a safety bound.

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

func TestOpenAIPingsOnlyAfterFirstChunkIsIdleTimeout(t *testing.T) {
	ws := newWireServer(t, keepSending(oaFirstChunk, ": ping\n\n"))
	m := newTestOpenAI(t, ws, Config{IdleTimeout: 300 * time.Millisecond, MaxRetries: -1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	wantTimeout(t, err, ErrIdleTimeout, "[provider] idle_timeout", "--idle-timeout")
	if !strings.Contains(err.Error(), "pings do not count") {
		t.Errorf("error %q does not say pings do not count", err)
	}
}

func TestAnthropicPingEventsOnlyAfterFirstEventIsIdleTimeout(t *testing.T) {
	first := events("message_start\n" + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"c1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`)
	ws := newWireServer(t, keepSending(first, events("ping\n"+`{"type":"ping"}`)+": keep-alive\n\n"))
	m := newTestAnthropic(t, ws, Config{IdleTimeout: 300 * time.Millisecond, MaxRetries: -1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	wantTimeout(t, err, ErrIdleTimeout, "[provider] idle_timeout", "--idle-timeout")
}

func TestStallWithNoBytesIsIdleTimeout(t *testing.T) {
	ws := newWireServer(t, stallSilently)
	m := newTestOpenAI(t, ws, Config{IdleTimeout: 300 * time.Millisecond, MaxRetries: -1})
	_, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	wantTimeout(t, err, ErrIdleTimeout, "[provider] idle_timeout", "--idle-timeout")
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
	m := newTestOpenAI(t, ws, Config{IdleTimeout: 300 * time.Millisecond, OnRetry: func(_ int, _ time.Duration, err error) { cause = err }})
	reply, err := m.Stream(ctxT(t), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil || reply.Text != "moving" || reply.Attempts != 2 {
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
