package session

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// viaProxy is a bash line that asks the session's proxy ($http_proxy) for
// url by hand (no curl needed; NO_PROXY would send curl to 127.0.0.1
// directly), printing the status line and body.
func viaProxy(url string) string {
	host := strings.TrimPrefix(url, "http://")
	host = host[:strings.Index(host, "/")]
	return fmt.Sprintf(`p=${http_proxy#http://}; p=${p%%/}; exec 3<>/dev/tcp/${p%%:*}/${p##*:} || exit 9; printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' >&3; cat <&3`, url, host)
}

// hostServer is a server on the person's 127.0.0.1, which no rule allows.
func hostServer(t *testing.T) (url, port string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello-from-the-host")
	}))
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	return srv.URL, port
}

// scripts writes each line into a script of the folder, and returns the
// commands that run them: the guard asks about a line that opens a
// connection (an ordinary confirm, which an unattended run declines), and
// does not read a script, as a program the model wrote and runs next is
// not read. What is tested here is what holds whatever the guard says.
func scripts(t *testing.T, folder string, lines ...string) []string {
	t.Helper()
	var cmds []string
	for i, l := range lines {
		name := fmt.Sprintf("net%d.sh", i)
		if err := os.WriteFile(filepath.Join(folder, name), []byte(l+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, "bash "+name)
	}
	return cmds
}

// modelCalls is a script whose model runs each line with shell-exec.
func modelCalls(lines ...string) string {
	s := ""
	for _, l := range lines {
		b, _ := json.Marshal(map[string]string{"command": l})
		s += "> reply\ncall shell-exec " + string(b) + "\n"
	}
	return s + "> reply\nDone.\n"
}

// netConns are the run's net.conn events.
func (r *run) netConns() []map[string]any {
	var out []map[string]any
	for _, ev := range r.events {
		if ev.Type == "net.conn" {
			out = append(out, ev.Data)
		}
	}
	return out
}

// needProxy skips a run whose commands do not go through the proxy here,
// saying why (its run.start's network line).
func needProxy(t *testing.T, r *run) {
	t.Helper()
	for _, ev := range r.events {
		if ev.Type == "run.start" {
			c, _ := ev.Data["confinement"].(map[string]any)
			if n, _ := c["network"].(string); !strings.HasPrefix(n, "only through nodwyn's proxy") {
				t.Skipf("commands do not go through the proxy here: %s", n)
			}
			return
		}
	}
	t.Fatal("no run.start")
}

// The proxy's question about an unlisted host, answered by a person (yes,
// always, no) and by nobody (unattended, --yolo included), in a whole
// scripted run whose command connects through the proxy to the person's
// 127.0.0.1: with the session's network namespace, and with Landlock's TCP
// rules where there is none (namespaces = "off").
func TestEgressConfirm(t *testing.T) {
	for _, ns := range []string{"on", "off"} {
		t.Run("namespaces "+ns, func(t *testing.T) { egressConfirm(t, ns) })
	}
}

func egressConfirm(t *testing.T, namespaces string) {
	url, port := hostServer(t)
	get := viaProxy(url + "/x")
	type answer struct{ yes, always bool }
	cases := []struct {
		name                 string
		unattended, yolo     bool
		answer               answer
		asked                int
		reached              bool
		rules                []string
		refusal, firstAnswer string
	}{
		{name: "yes once", answer: answer{yes: true}, asked: 2, reached: true,
			rules: []string{egress.RuleOnce, egress.RuleOnce}},
		{name: "always", answer: answer{yes: true, always: true}, asked: 1, reached: true,
			rules: []string{egress.RuleSession, `"127.0.0.1" from person, session`}},
		{name: "no", asked: 2, refusal: "declined by a person"},
		{name: "attended --yolo asks", yolo: true, answer: answer{yes: true}, asked: 2, reached: true,
			rules: []string{egress.RuleOnce, egress.RuleOnce}},
		{name: "unattended", unattended: true, refusal: "an unattended run declines a security confirm"},
		{name: "unattended --yolo", unattended: true, yolo: true, refusal: "an unattended run declines a security confirm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := baseOpts(t)
			opts.ConfigSeam.Namespaces, opts.ConfigSeamNamespacesFrom = namespaces, "the test"
			opts.Unattended, opts.Yolo = c.unattended, c.yolo
			var mu sync.Mutex
			var asked []string
			opts.Confirm = func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool) {
				mu.Lock()
				defer mu.Unlock()
				if !NetConfirm(req, d) || !OffersAlways(req, d) {
					t.Errorf("asked %+v %+v, not the proxy's question", req, d)
					return false, false
				}
				asked = append(asked, req.Args["address"].(string))
				return c.answer.yes, c.answer.always
			}
			r := runSession(t, opts, modelCalls(scripts(t, opts.Folder, get, get)...))
			needProxy(t, r)
			if r.out.Status != "finished" {
				t.Fatalf("status %s: %s", r.out.Status, r.out.Text)
			}
			mu.Lock()
			if len(asked) != c.asked || c.asked > 0 && asked[0] != "127.0.0.1:"+port {
				t.Errorf("asked %q, want %d questions about 127.0.0.1:%s", asked, c.asked, port)
			}
			mu.Unlock()
			reqs := r.model.Requests()
			for i := 1; i <= 2; i++ {
				out := lastMessage(reqs[i]).Content
				if got := strings.Contains(out, "hello-from-the-host"); got != c.reached {
					t.Errorf("call %d reached the host = %v, want %v: %q", i, got, c.reached, out)
				}
				if c.refusal != "" && (!strings.Contains(out, "403") || !strings.Contains(out, c.refusal)) {
					t.Errorf("call %d: the refusal does not say %q: %q", i, c.refusal, out)
				}
			}
			conns := r.netConns()
			if len(conns) != 2 {
				t.Fatalf("net.conn events %v", conns)
			}
			for i, cn := range conns {
				rule, _ := cn["rule"].(string)
				if cn["allowed"] != c.reached || c.rules != nil && rule != c.rules[i] || c.refusal != "" && !strings.Contains(rule, c.refusal) {
					t.Errorf("net.conn %d: %v", i, cn)
				}
			}
		})
	}
}

// Where the session has no network namespace, Landlock keeps commands to
// the proxy's port: a direct connection to the person's 127.0.0.1 is
// refused by the kernel, and reachable on a port of [sandbox] allow_ports;
// curl through the proxy to an allowed host works. The run's first lines
// say what is left open.
func TestEgressLandlockFallback(t *testing.T) {
	url, port := hostServer(t)
	direct := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%s && echo DIRECT-CONNECTED || echo direct-refused`, port)
	curl := fmt.Sprintf(`curl -sS --noproxy '' -x "$http_proxy" %s/x || echo curl-failed`, strings.Replace(url, "127.0.0.1", "localhost", 1))
	for _, allowPort := range []bool{false, true} {
		opts := baseOpts(t)
		opts.ConfigSeam.Namespaces, opts.ConfigSeamNamespacesFrom = "off", "the test"
		opts.ConfigSeam.AllowHosts = []string{"localhost"}
		if allowPort {
			var p int
			fmt.Sscan(port, &p)
			opts.ConfigSeam.AllowPorts = []int{p}
		}
		r := runSession(t, opts, modelCalls(scripts(t, opts.Folder, direct, curl)...))
		needProxy(t, r)
		reqs := r.model.Requests()
		out := lastMessage(reqs[1]).Content
		if got := strings.Contains(out, "DIRECT-CONNECTED"); got != allowPort {
			t.Errorf("allow_ports=%v: the direct connection got through = %v: %q", allowPort, got, out)
		}
		if !allowPort && !strings.Contains(out, "Permission denied") {
			t.Errorf("the refused connection does not say the kernel refused it: %q", out)
		}
		if out := lastMessage(reqs[2]).Content; !strings.Contains(out, "hello-from-the-host") {
			t.Errorf("curl through the proxy to an allowed host: %q", out)
		}
		for _, ev := range r.events {
			if ev.Type == "run.start" {
				n := ev.Data["confinement"].(map[string]any)["network"].(string)
				for _, want := range []string{`no network namespace ([sandbox] namespaces = "off" in the test), so Landlock lets commands connect over TCP only to port`, "ignores the proxy settings", "UDP", "any other host is refused"} {
					if !strings.Contains(n, want) {
						t.Errorf("the network line %q does not say %q", n, want)
					}
				}
			}
		}
	}
}

// Where Landlock has no TCP rules and there is no namespace, the network
// is open and the first line says why.
func TestEgressOpenWithoutTCPRules(t *testing.T) {
	if _, err := sandbox.LandlockABI(); err != nil {
		t.Skip(err)
	}
	f, err := sandbox.NewFloor(nil, nil)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if f.ABI() >= sandbox.NetABI {
		t.Skip("this kernel's Landlock has TCP rules (the ABI cannot be lowered from here)")
	}
	opts := baseOpts(t)
	opts.ConfigSeam.Namespaces, opts.ConfigSeamNamespacesFrom = "off", "the test"
	r := runSession(t, opts, modelCalls("true"))
	for _, ev := range r.events {
		if ev.Type == "run.start" {
			if n := ev.Data["confinement"].(map[string]any)["network"].(string); !strings.Contains(n, "open") || !strings.Contains(n, "no TCP rules") {
				t.Errorf("network line %q", n)
			}
		}
	}
}

// Questions go to the person one at a time: one that comes while another
// is out (two connections at once, a tool call's confirm) waits for it.
func TestAskingOneQuestionAtATime(t *testing.T) {
	var mu sync.Mutex
	out, most := 0, 0
	release := make(chan struct{})
	entered := make(chan struct{}, 3)
	s := &Session{}
	s.opts.Confirm = func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool) {
		mu.Lock()
		out++
		most = max(most, out)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		out--
		mu.Unlock()
		return true, false
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, ok := s.ask(t.Context(), guard.Request{Tool: "shell-exec"}, guard.Decision{Verdict: guard.Confirm}); !ok || !a.yes {
				t.Error("not answered yes")
			}
		}()
	}
	for range 3 {
		<-entered // one question is out
		release <- struct{}{}
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d questions were out at once", most)
	}
	// A question waiting its turn gives up when its context ends.
	s.asking.line <- struct{}{} // another question is out
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if a, ok := s.ask(ctx, guard.Request{}, guard.Decision{Verdict: guard.Confirm}); !ok || a.yes {
		t.Errorf("answer %+v %v", a, ok)
	}
	<-s.asking.line
}

// The proxy's question waits at most the bound, and is not asked between
// turns or without anyone to ask; a person's note goes with the decline.
func TestAskNetBounds(t *testing.T) {
	turn, endTurn := context.WithCancel(t.Context())
	asked := 0
	var answer func(ctx context.Context) (bool, bool, string)
	s := &Session{}
	s.opts.ConfirmNote = func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool, string) {
		asked++
		return answer(ctx)
	}
	s.asking.wait = 1 // a nanosecond: nobody answers in time
	s.asking.setTurn(turn)
	answer = func(ctx context.Context) (bool, bool, string) { <-ctx.Done(); return false, false, "" }
	if a := s.askNet(t.Context(), "example.com", 443, ""); a.Allow || !strings.Contains(a.Why, "no answer within") {
		t.Errorf("late: %+v", a)
	}
	s.asking.wait = 0
	answer = func(ctx context.Context) (bool, bool, string) { return false, false, "use the mirror" }
	if a := s.askNet(t.Context(), "example.com", 443, ""); a.Allow || a.Why != `declined by a person, who said: "use the mirror"` {
		t.Errorf("note: %+v", a)
	}
	answer = func(ctx context.Context) (bool, bool, string) { endTurn(); <-ctx.Done(); return false, false, "" }
	if a := s.askNet(t.Context(), "example.com", 443, ""); a.Allow || !strings.Contains(a.Why, "while the question waited") {
		t.Errorf("turn ended: %+v", a)
	}
	n := asked
	if a := s.askNet(t.Context(), "example.com", 443, ""); a.Allow || !strings.Contains(a.Why, "no turn") || asked != n {
		t.Errorf("between turns: %+v (asked %d)", a, asked-n)
	}
	s.opts.NoConfirm = true
	if a := s.askNet(t.Context(), "example.com", 443, ""); a.Allow || !strings.Contains(a.Why, "--no-confirm") {
		t.Errorf("--no-confirm: %+v", a)
	}
}
