package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// asker is an Ask that records each question and answers from a script
// (the same answer for every question when it has one entry).
type asker struct {
	mu      sync.Mutex
	asked   []string
	answers []Answer
	hold    chan struct{} // when set, each question waits for a receive on it
	started chan string   // when set, told of each question as it starts
}

func (k *asker) ask(ctx context.Context, host string, port int, why string) Answer {
	k.mu.Lock()
	k.asked = append(k.asked, host)
	n := len(k.asked)
	k.mu.Unlock()
	if k.started != nil {
		k.started <- host
	}
	if k.hold != nil {
		select {
		case <-k.hold:
		case <-ctx.Done():
			return Answer{Why: "declined: the proxy closed"}
		}
	}
	if len(k.answers) == 1 {
		return k.answers[0]
	}
	return k.answers[n-1]
}

func (k *asker) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.asked)
}

// A host no rule allows is asked about: once lets this connection through
// and asks again next time; session adds it, and the next connection is
// not asked; a decline is the 403 with who declined, and the host is not
// dialled. A listed host is never asked about.
func TestAskingOnceSessionNo(t *testing.T) {
	e := newEcho(t)
	list := &Allowlist{}
	list.Add(Rule{Pattern: "listed.test", Source: "test"})
	k := &asker{answers: []Answer{{Allow: true}, {Allow: true, Session: true}, {Why: "declined by a person, who said: \"not that one\""}}}
	a := &Asking{List: list, Ask: k.ask}
	l := newLab(t, a.Decide, map[string]string{"listed.test": "203.0.113.9"})
	target := "127.0.0.1:" + e.port()

	for i, want := range []string{RuleOnce, RuleSession, `"127.0.0.1" from person, session`} {
		c, br, resp := connect(t, "tcp", l.p.Addr(), target, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%d: %s", i, resp.Status)
		}
		io.WriteString(c, "hi\n")
		if line, _ := br.ReadString('\n'); line != "HI\n" {
			t.Fatalf("%d: %q", i, line)
		}
		c.Close()
		if rec := l.next(t); !rec.Allowed || rec.Rule != want {
			t.Errorf("%d: record %+v, want the rule %q", i, rec, want)
		}
	}
	if k.count() != 2 {
		t.Errorf("asked %d times (%v), want 2: the host allowed for the session is not asked about again", k.count(), k.asked)
	}

	// Another host: declined, with the person's words in the refusal.
	k.answers = k.answers[2:]
	_, br, resp := connect(t, "tcp", l.p.Addr(), "127.0.0.2:"+e.port(), nil)
	body, _ := io.ReadAll(br)
	if resp.StatusCode != 403 || !strings.Contains(string(body), `declined by a person, who said: "not that one"`) ||
		!strings.Contains(string(body), `no allowed host or pattern matches "127.0.0.2"`) {
		t.Errorf("%s: %q", resp.Status, body)
	}
	if rec := l.next(t); rec.Allowed || !strings.Contains(rec.Rule, "declined by a person") {
		t.Errorf("record %+v", rec)
	}
	if e.count() != 3 {
		t.Errorf("the echo server saw %d connections, want 3 (the declined one never dialled)", e.count())
	}
	// The listed host is decided by the list alone (it resolves to a
	// documentation address nobody answers on: only the question matters).
	before := k.count()
	a.Decide(t.Context(), "listed.test", 443)
	if k.count() != before {
		t.Error("a listed host was asked about")
	}
}

// Two connections to the same host at once are one question: the second
// waits for the first's answer and takes it; another host is asked about
// at the same time (the session serializes what the person sees).
func TestAskingSameHostOnce(t *testing.T) {
	e := newEcho(t)
	k := &asker{answers: []Answer{{Allow: true}}, hold: make(chan struct{}), started: make(chan string, 4)}
	a := &Asking{List: &Allowlist{}, Ask: k.ask}
	l := newLab(t, a.Decide, nil)
	target := "127.0.0.1:" + e.port()

	results := make(chan string, 2)
	open := func(target string) {
		go func() { results <- connectStatus(l.p.Addr(), target) }()
	}
	open(target)
	if h := <-k.started; h != "127.0.0.1" {
		t.Fatalf("asked about %q", h)
	}
	open(target)
	// The second connection is waiting on the first's question.
	for {
		a.mu.Lock()
		w := a.waiting
		a.mu.Unlock()
		if w == 1 {
			break
		}
		runtime.Gosched()
	}
	k.hold <- struct{}{} // the one answer: yes, once
	for range 2 {
		if r := <-results; !strings.HasPrefix(r, "200") {
			t.Errorf("status %s", r)
		}
	}
	if k.count() != 1 {
		t.Errorf("asked %d times, want once", k.count())
	}
	for range 2 {
		if rec := l.next(t); !rec.Allowed || rec.Rule != RuleOnce {
			t.Errorf("record %+v", rec)
		}
	}
}

// A yes lets a name reach public addresses only: a name that resolves to
// loopback is refused after the yes (the person was asked about a name,
// not about this machine), while an address answered yes is reached.
func TestAskingYesToANameIsNotLocal(t *testing.T) {
	e := newEcho(t)
	k := &asker{answers: []Answer{{Allow: true, Session: true}}}
	a := &Asking{List: &Allowlist{}, Ask: k.ask}
	l := newLab(t, a.Decide, map[string]string{"rebind.test": "127.0.0.1"})
	_, br, resp := connect(t, "tcp", l.p.Addr(), "rebind.test:"+e.port(), nil)
	body, _ := io.ReadAll(br)
	if resp.StatusCode != 403 || !strings.Contains(string(body), "loopback or link-local") {
		t.Errorf("%s %q", resp.Status, body)
	}
	l.next(t)
	// Allowed for the session, and still not local.
	_, _, resp = connect(t, "tcp", l.p.Addr(), "rebind.test:"+e.port(), nil)
	if resp.StatusCode != 403 || k.count() != 1 {
		t.Errorf("%s, asked %d", resp.Status, k.count())
	}
	l.next(t)
	if e.count() != 0 {
		t.Errorf("the loopback server was reached %d times", e.count())
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if !localOK(host) {
			t.Errorf("localOK(%q)", host)
		}
	}
	if localOK("rebind.test") {
		t.Error("localOK of a name")
	}
}

// The proxy's own address is refused before anyone is asked.
func TestAskingNotAboutTheProxy(t *testing.T) {
	k := &asker{answers: []Answer{{Allow: true}}}
	a := &Asking{List: &Allowlist{}, Ask: k.ask}
	l := newLab(t, a.Decide, nil)
	_, _, resp := connect(t, "tcp", l.p.Addr(), l.p.Addr(), nil)
	if resp.StatusCode != 403 || k.count() != 0 {
		t.Errorf("%s, asked %d", resp.Status, k.count())
	}
	if rec := l.next(t); !strings.Contains(rec.Rule, "own address") {
		t.Errorf("record %+v", rec)
	}
}

// Closing the proxy ends a question and those waiting on it.
func TestAskingEndsAtClose(t *testing.T) {
	k := &asker{answers: []Answer{{Allow: true}}, hold: make(chan struct{}), started: make(chan string, 1)}
	a := &Asking{List: &Allowlist{}, Ask: k.ask}
	l := newLab(t, a.Decide, nil)
	go connectStatus(l.p.Addr(), "127.0.0.1:9")
	<-k.started
	l.p.Close()
	if rec := l.next(t); rec.Allowed {
		t.Errorf("record %+v", rec)
	}
}

// connectStatus sends a CONNECT and returns the status line (or the error),
// closing the connection: for a goroutine, which may not call t.Fatal.
func connectStatus(proxyAddr, target string) string {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// BenchmarkDecideAllowed: the decision for an allowed host, by the list
// alone and through Asking (which asks only about what the list refuses):
// the confirm path must add nothing measurable to the allowed path.
//
// go test -run - -bench DecideAllowed -count 5 ./internal/egress/
func BenchmarkDecideAllowed(b *testing.B) {
	list := &Allowlist{}
	list.Add(Rule{Pattern: "proxy.golang.org", Source: "go.mod"}, Rule{Pattern: "*.npmjs.org", Source: "package.json"},
		Rule{Pattern: "github.com", Source: "git remote"})
	asking := &Asking{List: list, Ask: func(context.Context, string, int, string) Answer { panic("asked") }}
	for _, c := range []struct {
		name   string
		decide func(context.Context, string, int) Decision
	}{{"list", list.Decide}, {"asking", asking.Decide}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if !c.decide(b.Context(), "registry.npmjs.org", 443).Allow {
					b.Fatal("refused")
				}
			}
		})
	}
}
