package rpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The admission of connections that have not said hello yet: past
// MaxUnauthenticated a newcomer evicts one that is waiting, so those who
// never say hello cannot lock out a client that does (admitWaiting).

const testToken = "secret"

// evictedSays is in the line an evicted connection gets before it ends.
const evictedSays = "closed before its hello"

// serveHello starts a server whose hello wants testToken and whose "echo"
// answers "served". configure, when not nil, changes the server before it
// serves. Its hello timeout is an hour, so no connection here ends by it
// (TestNoHelloInTimeIsClosed shortens it).
func serveHello(t *testing.T, configure func(*Server)) (string, *Server) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d", "s.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(map[string]Handler{"echo": func(ctx context.Context, call *Call) (any, error) { return "served", nil }})
	s.Hello = tokenHello
	s.helloTimeout = time.Hour
	if configure != nil {
		configure(s)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return path, s
}

func tokenHello(ctx context.Context, call *Call) (any, error) {
	var p struct {
		Token string `json:"token"`
	}
	if err := DecodeParams(call.Params, &p); err != nil {
		return nil, err
	}
	if p.Token != testToken {
		return nil, Errorf(CodeRefused, "read the token", "wrong token")
	}
	return "hello", nil
}

const helloLine = `{"jsonrpc":"2.0","id":1,"method":"daemon.hello","params":{"token":"` + testToken + `"}}` + "\n"

// idler is a connection that never says hello.
type idler struct {
	nc    net.Conn
	ended chan string // what the server sent, once it has closed the connection
}

// openIdlers opens n idlers one after another; each one's end goes to its
// ended and, when all is not nil, to all (buffered by the caller).
func openIdlers(path string, n int, all chan<- string) ([]*idler, error) {
	var out []*idler
	for range n {
		nc, err := net.Dial("unix", path)
		if err != nil {
			return out, err
		}
		i := &idler{nc: nc, ended: make(chan string, 1)}
		go func() {
			b, _ := io.ReadAll(nc)
			i.ended <- string(b)
			if all != nil {
				all <- string(b)
			}
		}()
		out = append(out, i)
	}
	return out, nil
}

func closeIdlers(l []*idler) {
	for _, i := range l {
		i.nc.Close()
	}
}

func counts(s *Server) (waiting, evictions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting), s.evictions
}

// The reproduction of issue 27: another process (as an attacker would be)
// opens twice MaxUnauthenticated connections that never say hello, and
// keeps opening more in a loop while a client connects, says hello and
// calls. The client gets through (before, it was refused: the places were
// taken); the idle ones are closed, each with a line saying why; no more
// than MaxUnauthenticated wait at the end; and the log has a line at the
// 1st, 2nd, 4th… eviction, not one for each.
func TestIdleConnectionsCannotLockTheClientOut(t *testing.T) {
	var logMu sync.Mutex
	var logs []string
	path, s := serveHello(t, func(s *Server) {
		s.Logf = func(format string, a ...any) {
			logMu.Lock()
			logs = append(logs, fmt.Sprintf(format, a...))
			logMu.Unlock()
		}
	})
	const first, more = 2 * MaxUnauthenticated, 4 * MaxUnauthenticated
	f := startFlood(t, path, first, more)
	ctx := context.Background()
	c := dial(t, path, nil)
	var res string
	helloErr := c.Call(ctx, HelloMethod, map[string]string{"token": testToken}, nil)
	callErr := c.Call(ctx, "echo", nil, &res)
	if helloErr != nil || callErr != nil || res != "served" {
		t.Fatalf("the client among idle connections: hello %v, call %q %v", helloErr, res, callErr)
	}
	gone := first + more - MaxUnauthenticated
	if line, want := f.next(), fmt.Sprintf("ended %d, told %d", gone, gone); line != want {
		t.Errorf("the idle connections: %q, want %q", line, want)
	}
	waiting, evictions := counts(s)
	if waiting > MaxUnauthenticated || evictions < gone {
		t.Errorf("%d waiting, %d evicted of %d idle: want at most %d waiting", waiting, evictions, first+more, MaxUnauthenticated)
	}
	if err := c.Call(ctx, "echo", nil, &res); err != nil {
		t.Errorf("the client after the flood: %v", err)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if n := len(logs); n == 0 || n > bits.Len(uint(evictions)) || !strings.Contains(logs[0], "had not said hello") {
		t.Errorf("%d evictions logged as %d lines, want one at each power of two: %q", evictions, n, logs)
	}
}

// A hello the client had written when its connection was evicted is
// still read and checked, and a good one keeps the connection, which then
// serves as any other: whether the eviction came while the hello waited
// in the socket or while it was being checked (the hello handler holds it
// here until the eviction has happened).
func TestAHelloOnItsWayWhenEvictedStands(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(map[bool]string{false: "sent", true: "being checked"}[held], func(t *testing.T) {
			entered, release := make(chan struct{}, 1), make(chan struct{})
			path, s := serveHello(t, func(s *Server) {
				if held {
					s.Hello = func(ctx context.Context, call *Call) (any, error) {
						entered <- struct{}{}
						<-release
						return tokenHello(ctx, call)
					}
				}
			})
			old, err := openIdlers(path, MaxUnauthenticated, nil)
			defer func() { closeIdlers(old) }()
			if err != nil {
				t.Fatal(err)
			}
			client, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			if _, err := client.Write([]byte(helloLine)); err != nil {
				t.Fatal(err)
			}
			if held {
				<-entered
			}
			// Oldest first: the client's coming evicts old[0], the newer ones
			// the other old ones, then the client (if it is still waiting),
			// then newer[0]; so once newer[0] has ended the client has been
			// evicted or has said hello before.
			newer, err := openIdlers(path, MaxUnauthenticated+1, nil)
			defer func() { closeIdlers(newer) }()
			if err != nil {
				t.Fatal(err)
			}
			if got := <-newer[0].ended; !strings.Contains(got, evictedSays) {
				t.Errorf("newer[0] was told %q", got)
			}
			if _, evictions := counts(s); held && evictions != MaxUnauthenticated+2 {
				t.Errorf("%d evictions; want %d, the client's among them", evictions, MaxUnauthenticated+2)
			}
			close(release)
			r := bufio.NewReader(client)
			if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result":"hello"`) {
				t.Fatalf("the client's hello: %q %v", line, err)
			}
			client.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"echo"}` + "\n"))
			if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"id":2,"result":"served"`) {
				t.Errorf("a call after the hello: %q %v", line, err)
			}
			for i, o := range old {
				if got := <-o.ended; !strings.Contains(got, evictedSays) {
					t.Errorf("old[%d] was told %q", i, got)
				}
			}
		})
	}
}

// The mechanism underneath: an evicted connection reads, without waiting,
// what had been sent to it, then ends (at once when nothing had been), and
// writes nothing; once its hello is accepted it reads as any other.
func TestAnEvictedConnectionReadsWhatWasSentAndNoMore(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (*conn, net.Conn) {
		t.Helper()
		peer, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		nc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { peer.Close(); nc.Close() })
		return &conn{nc: nc}, peer
	}
	buf := make([]byte, 64)

	c, _ := pair()
	c.evict()
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("evicted with nothing sent: %d %v, want EOF", n, err)
	}
	if err := c.write(message{JSONRPC: Version}); err == nil {
		t.Error("an evicted connection was written to")
	}

	c, peer := pair()
	peer.Write([]byte("sent\n"))
	c.evict()
	if n, err := c.Read(buf); string(buf[:n]) != "sent\n" || err != nil {
		t.Errorf("evicted after a line was sent: %q %v", buf[:n], err)
	}
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("the read after: %d %v, want EOF", n, err)
	}

	c, peer = pair()
	peer.Write([]byte("hello\n"))
	c.evict()
	if n, err := c.Read(buf); string(buf[:n]) != "hello\n" || err != nil {
		t.Errorf("evicted after a hello was sent: %q %v", buf[:n], err)
	}
	c.hello.Store(true) // the hello was good
	peer.Write([]byte("after\n"))
	if n, err := c.Read(buf); string(buf[:n]) != "after\n" || err != nil {
		t.Errorf("after the hello: %q %v", buf[:n], err)
	}
	if err := c.write(message{JSONRPC: Version}); err != nil {
		t.Errorf("writing after the hello: %v", err)
	}
}

// An authenticated connection is never evicted, however many idle ones
// come after it.
func TestAnAuthenticatedConnectionIsNeverEvicted(t *testing.T) {
	path, _ := serveHello(t, nil)
	ctx := context.Background()
	c := dial(t, path, nil)
	if err := c.Call(ctx, HelloMethod, map[string]string{"token": testToken}, nil); err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, 3*MaxUnauthenticated)
	idle, err := openIdlers(path, 3*MaxUnauthenticated, ended)
	defer func() { closeIdlers(idle) }()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 * MaxUnauthenticated {
		<-ended
	}
	var res string
	if err := c.Call(ctx, "echo", nil, &res); err != nil || res != "served" {
		t.Errorf("the authenticated client after %d evictions: %q %v", 2*MaxUnauthenticated, res, err)
	}
}

// Ordinary clients, several at once, each saying hello and calling, all
// get through, and none is evicted.
func TestOrdinaryClientsAllGetThrough(t *testing.T) {
	path, s := serveHello(t, nil)
	var wg sync.WaitGroup
	for i := range MaxUnauthenticated / 2 {
		wg.Go(func() {
			ctx := context.Background()
			c, err := Dial(ctx, path, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			if err := c.Call(ctx, HelloMethod, map[string]string{"token": testToken}, nil); err != nil {
				t.Errorf("client %d: hello: %v", i, err)
				return
			}
			for range 5 {
				var res string
				if err := c.Call(ctx, "echo", nil, &res); err != nil || res != "served" {
					t.Errorf("client %d: %q %v", i, res, err)
				}
			}
		})
	}
	wg.Wait()
	if waiting, evictions := counts(s); waiting != 0 || evictions != 0 {
		t.Errorf("after ordinary clients: %d waiting, %d evicted; want none", waiting, evictions)
	}
}

// flood is the other process of the tests that flood the server
// (RPC_TEST_FLOOD="first more path"). It opens first connections that
// never say hello and says "open"; then, in a goroutine, more in a loop;
// it waits until all but MaxUnauthenticated have been closed, says how
// many were and how many were told why, and holds the rest until its
// stdin ends.
func flood(v string) {
	var first, more int
	var path string
	fmt.Sscan(v, &first, &more, &path)
	ended := make(chan string, first+more)
	l, err := openIdlers(path, first, ended)
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	fmt.Println("open")
	rest := make(chan []*idler, 1)
	go func() {
		m, err := openIdlers(path, more, ended)
		if err != nil {
			fmt.Println("dial:", err)
		}
		rest <- m
	}()
	told := 0
	for range first + more - MaxUnauthenticated {
		if strings.Contains(<-ended, evictedSays) {
			told++
		}
	}
	fmt.Printf("ended %d, told %d\n", first+more-MaxUnauthenticated, told)
	io.Copy(io.Discard, os.Stdin)
	closeIdlers(append(l, <-rest...))
}

type flooder struct {
	t   *testing.T
	out *bufio.Reader
}

// startFlood starts flood in another process and waits for its "open";
// the process ends when the test does.
func startFlood(t *testing.T, path string, first, more int) *flooder {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("RPC_TEST_FLOOD=%d %d %s", first, more, path))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the flooding process: %v", err)
		}
	})
	f := &flooder{t: t, out: bufio.NewReader(stdout)}
	if line := f.next(); line != "open" {
		t.Fatalf("the flooding process: %q", line)
	}
	return f
}

// next is the flooding process's next line.
func (f *flooder) next() string {
	line, err := f.out.ReadString('\n')
	if err != nil {
		f.t.Errorf("the flooding process's output: %v", err)
	}
	return strings.TrimSuffix(line, "\n")
}

// Another process connecting in a loop pushes out only its own
// connections: a client with one connection waits, without its hello,
// through the whole flood, then says hello and is served. (By age alone
// it would have been the first to go.)
func TestAProcessConnectingInALoopPushesOutOnlyItsOwn(t *testing.T) {
	path, s := serveHello(t, nil)
	client, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	const n = 4 * MaxUnauthenticated
	f := startFlood(t, path, 0, n)
	gone := n - MaxUnauthenticated
	if line, want := f.next(), fmt.Sprintf("ended %d, told %d", gone, gone); line != want {
		t.Errorf("the flooding process: %q, want %q", line, want)
	}
	client.Write([]byte(helloLine))
	r := bufio.NewReader(client)
	if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"result":"hello"`) {
		t.Errorf("the client's hello after the flood: %q %v", line, err)
	}
	if _, evictions := counts(s); evictions < gone {
		t.Errorf("%d evictions, want at least %d", evictions, gone)
	}
}
