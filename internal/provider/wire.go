package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
)

// The streaming HTTP client the three wire formats share: one POST of a
// JSON body, its status and headers recorded in the attempt's capture (the
// retrier decides from them), and the response read as an event stream.

// checkBase validates a base URL and returns it without trailing slashes.
func checkBase(provider, base, def, example string) (string, *url.URL, error) {
	base = strings.TrimRight(base, "/")
	given := base
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("provider %s: base URL %q is not an http(s) URL; set it like %s", provider, given, example)
	}
	return base, u, nil
}

// send posts body to target with header and returns the reply's events,
// to be closed by the caller: the response's event stream, or, when the
// server answered with one JSON body (Content-Type application/json, a
// server that does not stream), the events whole makes of it. c records
// the request, the status and headers, an error body's excerpt and the
// first bytes of a successful one.
func (c *capture) send(ctx context.Context, hc *http.Client, target string, header http.Header, body []byte, whole wholeFunc) (eventSource, io.Closer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return nil, nil, err
	}
	// The body as bytes the transport writes as they are (no copy);
	// any other reader reads it.
	req.Body, req.ContentLength = newBodyBytes(body), int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return newBodyBytes(body), nil }
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "nodwyn")
	}
	c.sent = true
	c.method = req.Method
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	c.url = u.String()
	c.startWatch()
	res, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// The address dialled, when it is the URL's host and port, which
		// the error names already, is not said again.
		if oe, ok := err.(*net.OpError); ok && oe.Addr != nil && oe.Addr.String() == hostPort(u.Scheme, u.Host) {
			short := *oe
			short.Source, short.Addr = nil, nil
			err = &short
		}
		return nil, nil, fmt.Errorf("connection failed: %w", err)
	}
	c.data()
	c.status = res.StatusCode
	c.header = res.Header
	if res.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		_ = res.Body.Close()
		c.body = excerpt(string(b), 400)
		return nil, nil, fmt.Errorf("%d %s", res.StatusCode, http.StatusText(res.StatusCode))
	}
	hb := &headBody{ReadCloser: res.Body, c: c}
	if isJSON(res.Header.Get("Content-Type")) {
		evs, err := c.readWhole(hb, whole)
		_ = res.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		return evs, io.NopCloser(nil), nil
	}
	sr := newSSEReader(hb)
	sr.partial = c.partialFlag()
	return sr, releasing{res.Body, sr}, nil
}

// eventSource is what a reply's events are read from: an event stream
// (sseReader), or the events made of a whole JSON reply (eventList).
type eventSource interface {
	next() (sseEvent, error)
}

// wholeFunc makes the events of a reply from the whole JSON reply of a
// server that did not stream, as the API's stream would have carried them
// (one event per part, not per token), so that one handler reads both.
// raw is the body as it came. It returns the error the body says it is
// (c.errorReply), or c.notReply when the body is no reply of its API.
type wholeFunc func(c *capture, raw []byte) ([]sseEvent, error)

// eventList is the events a wholeFunc made.
type eventList []sseEvent

func (l *eventList) next() (sseEvent, error) {
	if len(*l) == 0 {
		return sseEvent{}, io.EOF
	}
	ev := (*l)[0]
	*l = (*l)[1:]
	return ev, nil
}

// isJSON reports whether a Content-Type is JSON's (application/json, or a
// type ending +json).
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// readWhole reads a whole JSON reply (maxSSELine at most) and makes its
// events. The reply is under way while it is read, for the idle watch
// (idle.go): its bytes are all of it there is.
func (c *capture) readWhole(body io.Reader, whole wholeFunc) (*eventList, error) {
	if c.watch != nil {
		c.watch.partial.Store(true)
		defer c.watch.partial.Store(false)
	}
	raw, err := io.ReadAll(io.LimitReader(body, maxSSELine+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errStreamCut, err)
	}
	if len(raw) > maxSSELine {
		c.final = true
		return nil, fmt.Errorf("%w: the JSON reply is over %d bytes", errSSETooLong, maxSSELine)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, c.notStream() // an empty body: cut before its first byte, retried
	}
	evs, err := whole(c, raw)
	if err != nil {
		return nil, err
	}
	l := eventList(evs)
	return &l, nil
}

// errorReply is the error of a 200 whose JSON body is the server's error
// (raw, as it came): retried, unless it says the request itself is wrong.
func (c *capture) errorReply(raw string) error {
	c.finalIfRequestWrong(raw)
	return fmt.Errorf("the server answered %d %s with an error: %s", c.status, http.StatusText(c.status), excerpt(raw, 400))
}

// notReply is the error of a 200 whose JSON body is no reply of the API
// (what names the reply, e.g. "chat completion"): asking again would get
// the same, so it is final.
func (c *capture) notReply(what string, raw []byte) error {
	c.final = true
	return fmt.Errorf("the server answered %d %s with JSON that is no %s (Content-Type %s): %s",
		c.status, http.StatusText(c.status), what, c.header.Get("Content-Type"), excerpt(string(raw), 400))
}

// jsonEvent is an event whose data is v's JSON, as a wholeFunc makes it.
func jsonEvent(v any) sseEvent {
	b, _ := json.Marshal(v) // values of json.RawMessage from a body that decoded, and plain fields
	return sseEvent{Data: string(b)}
}

// present reports whether a JSON field came with a value other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// releasing closes a response's body, then gives its reader's buffer back.
type releasing struct {
	body io.Closer
	sr   *sseReader
}

func (r releasing) Close() error {
	err := r.body.Close()
	r.sr.release()
	return err
}

// eventFunc handles one event of a reply; done says the reply is complete.
type eventFunc func(ev sseEvent) (done bool, err error)

// readEvents reads the stream until fn says the reply is done, fn fails or
// the stream ends. It returns how many events there were; a stream that
// ended before the reply did is left to the caller (done false, err nil),
// which knows what it lacks. A read error is a cut stream.
func (c *capture) readEvents(sr eventSource, fn eventFunc) (n int, done bool, err error) {
	for {
		ev, err := sr.next()
		if err == io.EOF {
			return n, false, nil
		}
		if errors.Is(err, errSSETooLong) {
			c.final = true
			return n, false, err
		}
		if err != nil {
			return n, false, fmt.Errorf("%w: %w", errStreamCut, err)
		}
		n++
		done, err := fn(ev)
		c.handled()
		if err != nil || done {
			return n, done, err
		}
	}
}

// decodeEvent decodes an event's JSON data into v. An event the stream
// ended in (no blank line after it) that does not decode is a cut stream.
func decodeEvent(ev sseEvent, v any) error {
	if err := json.Unmarshal([]byte(ev.Data), v); err != nil {
		if ev.atEOF {
			return fmt.Errorf("%w: the stream ended inside an event", errStreamCut)
		}
		return fmt.Errorf("malformed event in the stream: %w: %s", err, excerpt(ev.Data, 200))
	}
	return nil
}

// midStream is the error of an error event in a 200 stream; raw is the
// error as the server sent it. It is retried, unless the server says the
// request itself is wrong (asking again would get the same).
func (c *capture) midStream(raw string) error {
	c.finalIfRequestWrong(raw)
	return fmt.Errorf("the server sent an error mid-stream: %s", excerpt(raw, 400))
}

// finalIfRequestWrong makes the attempt's failure final when the error
// the server sent (raw) says the request itself is wrong.
func (c *capture) finalIfRequestWrong(raw string) {
	low := strings.ToLower(raw)
	for _, s := range []string{"invalid_request_error", "context_length_exceeded", "invalid_prompt"} {
		if strings.Contains(low, s) {
			c.final = true
		}
	}
}

// ErrOutputLimit is wrapped by the error of a reply that hit its output
// token limit in the middle of a tool call (finish_reason "length",
// stop_reason "max_tokens", or a Responses reply incomplete for
// max_output_tokens): the call's arguments are cut off, so the reply is of
// no use, and asking again would get the same. The error names the limit
// and how to raise it. A reply that hits the limit in its text is no error:
// it comes back with its StopReason.
var ErrOutputLimit = errors.New("the reply hit its output token limit")

// ended says whether a stream that has ended was whole: one with no event
// at all is not a stream (notStream); one without the event that ends it
// (marker) was cut.
func (c *capture) ended(events int, sawEnd bool, marker string) error {
	if events == 0 {
		return c.notStream()
	}
	if !sawEnd {
		return fmt.Errorf("%w: the stream ended with no %s", errStreamCut, marker)
	}
	return nil
}

// outputLimit is the final error of a reply cut by its token limit in a
// call to tool; field and limit are what the request sent (limit 0: none).
func (c *capture) outputLimit(field string, limit int, tool string) error {
	c.final = true
	if limit > 0 {
		c.hint = fmt.Sprintf("raise the output token limit (%s) or ask for the work in smaller pieces", field)
		return fmt.Errorf("%w (%s = %d) in the middle of a call to %s, whose arguments are cut off", ErrOutputLimit, field, limit, tool)
	}
	c.hint = fmt.Sprintf("raise the server's default output limit, send a larger %s, or ask for the work in smaller pieces", field)
	return fmt.Errorf("%w (none was sent, so the server's default applies) in the middle of a call to %s, whose arguments are cut off", ErrOutputLimit, tool)
}

// cutArgs reports whether a tool call's arguments are no complete JSON
// value, as they are when a token limit cut them.
func cutArgs(args string) bool {
	return strings.TrimSpace(args) == "" || !json.Valid([]byte(args))
}

// toolResultText is a tool message's content for a provider with no error
// flag (and never empty, which some servers refuse).
func toolResultText(msg Message) string {
	s := msg.Content
	if msg.IsError && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "error") {
		s = "Error: " + s
	}
	if strings.TrimSpace(s) == "" {
		s = "(no output)"
	}
	return s
}

func schemaOrEmpty(s map[string]any) map[string]any {
	if s == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// bodyBytes is a request's body that is bytes already: the transport takes
// them as they are (Bytes), any other reader reads them.
type bodyBytes struct {
	*bytes.Reader
	b []byte
}

func newBodyBytes(b []byte) bodyBytes { return bodyBytes{bytes.NewReader(b), b} }
func (r bodyBytes) Close() error      { return nil }
func (r bodyBytes) Bytes() []byte     { return r.b }

// schemaCache keeps the JSON of the tool schemas the last request sent, by
// the schema maps themselves: a request lists the same tools every turn,
// with the same maps (prim makes each once, and Request says they are only
// read), and encoding a map reflects over it and sorts its keys each time.
// Only the last request's are kept, so a caller that makes new maps each
// turn keeps nothing alive.
type schemaCache struct {
	mu   sync.Mutex
	last []cachedSchema
}

type cachedSchema struct {
	m   map[string]any // held, so its address is not another map's
	raw json.RawMessage
}

// encode returns each tool's schema as conv makes it from the tool's
// Parameters, for a request's body: its JSON, encoded as encodeBody
// encodes a request, or the map itself where that fails (for encodeBody
// to report).
func (c *schemaCache) encode(tools []Tool, conv func(map[string]any) map[string]any) []any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]any, len(tools))
	next := make([]cachedSchema, len(tools))
	for i, t := range tools {
		if i < len(c.last) && sameMap(c.last[i].m, t.Parameters) {
			out[i], next[i] = c.last[i].raw, c.last[i]
			continue
		}
		m := conv(t.Parameters)
		raw, err := encodeBody(m)
		if err != nil {
			out[i] = m
			continue
		}
		out[i], next[i] = json.RawMessage(raw), cachedSchema{m: t.Parameters, raw: raw}
	}
	c.last = next
	return out
}

// sameMap reports whether a and b are the same map (not equal ones).
func sameMap(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// argsOrEmpty is a tool call's arguments as sent back in the history: as
// the model wrote them, or {} when it wrote nothing.
func argsOrEmpty(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}

// opaque is a provider's item as Reply.Reasoning keeps it: compact JSON
// with <, > and & escaped as encoding/json writes them, so that the JSON
// round trip of a saved session gives it back byte for byte. The value is
// the one the provider sent.
func opaque(raw []byte) json.RawMessage {
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	var e bytes.Buffer
	json.HTMLEscape(&e, c.Bytes())
	return e.Bytes()
}

// reasoningOf returns the items of msg.Reasoning whose "type" is one of
// types, unchanged.
func reasoningOf(msg Message, types ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, item := range msg.Reasoning {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(item, &head) != nil {
			continue
		}
		for _, t := range types {
			if head.Type == t {
				out = append(out, item)
			}
		}
	}
	return out
}

// encoded is a request body made already, which encodeBody returns as it is.
type encoded []byte

// encodeBody encodes a request body (HTML characters unescaped, as the
// model wrote them). It fails only for a tool schema holding what JSON
// cannot say, a local error the caller reports without sending.
func encodeBody(v any) ([]byte, error) {
	if e, ok := v.(encoded); ok {
		return e, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("cannot encode the request: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
