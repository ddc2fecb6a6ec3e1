package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Peer is who is at the other end of a connection, as the kernel says.
type Peer struct {
	PID, UID, GID int
}

// Call is one request as a handler sees it.
type Call struct {
	Method string
	Params json.RawMessage
	Peer   Peer
	conn   *conn
}

// Notify sends a notification on the connection the call came on (the
// events of run.events). It fails once the connection has closed.
func (c *Call) Notify(method string, params any) error { return c.conn.notify(method, params) }

// Handler answers one method. The context ends when the peer disconnects
// or the server closes. An error that is an *Error goes to the peer as it
// is; any other is an internal error (its text in the message).
type Handler func(ctx context.Context, call *Call) (any, error)

// Server serves methods on a unix socket.
type Server struct {
	methods map[string]Handler
	uid     int

	mu     sync.Mutex
	ln     net.Listener
	conns  map[*conn]struct{}
	closed bool
	// draining: Shutdown stopped accepting and waits for the connections
	// to end before it closes the rest (Close still runs in full).
	draining bool
	wg       sync.WaitGroup // the connections
	active   sync.WaitGroup // the handlers running
	cancel   context.CancelFunc
	ctx      context.Context

	// waiting are the connections that have not said hello yet (when the
	// server has a Hello) and have not been evicted, oldest first; at most
	// MaxUnauthenticated. evictions counts those evicted to make room.
	waiting   []*conn
	evictions int

	helloTimeout time.Duration // HelloTimeout; tests shorten or lengthen it

	// Logf, when set, hears about connections refused or evicted (at the
	// 1st, 2nd, 4th… eviction) and requests that could not be read.
	Logf func(format string, a ...any)

	// Admit, when set, may refuse a peer the uid check let through (its
	// error's text goes to the peer).
	Admit func(Peer) error

	// Hello, when set, is the method every connection must call first and
	// successfully (HelloMethod): until it has, every other request is
	// refused. The daemon checks a token there that only its own user's
	// processes outside its runs can read.
	Hello Handler
}

// HelloMethod is the method a connection authenticates with when the
// server has a Hello.
const HelloMethod = "daemon.hello"

// Until a connection has said hello (when the server has a Hello), what it
// may cost is small: its hello must come within HelloTimeout, a line before
// it may be at most PreHelloMessage bytes, and at most MaxUnauthenticated
// such connections are held at once. A process that can reach the socket
// but not the token cannot take the daemon's descriptors or memory.
//
// Nor can it lock the person out by holding those places: a connection
// past MaxUnauthenticated is never refused, it evicts one that is waiting
// (admitWaiting says which, and why that is fair to a client that says
// hello as it connects). Refusing the newcomer instead, as this once did,
// let whoever holds the places keep them for good, reconnecting as each
// one's HelloTimeout ran out.
const (
	HelloTimeout       = 5 * time.Second
	PreHelloMessage    = 4 << 10
	MaxUnauthenticated = 32
)

// NewServer returns a server for methods; only peers of this process's
// uid, or root, are served.
func NewServer(methods map[string]Handler) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{methods: methods, uid: os.Getuid(), conns: map[*conn]struct{}{}, ctx: ctx, cancel: cancel, helloTimeout: HelloTimeout}
}

// Methods lists the methods served, sorted.
func (s *Server) Methods() []string {
	out := make([]string, 0, len(s.methods))
	for m := range s.methods {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// ErrInUse is Listen's error when a server already answers on the socket.
var ErrInUse = errors.New("a daemon is already listening on this socket")

// Listen makes the socket's directory (0700, which it must be if it
// exists and is not the system's temporary directory) and listens on path
// (0600). A socket file left by a daemon that died is removed first; one
// that a live server answers on is ErrInUse.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rpc: the socket's directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("rpc: the socket's directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("rpc: %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("rpc: the socket's directory %s is open to others (mode %04o); make it 0700 (chmod 700 %s) or choose a directory of your own", dir, fi.Mode().Perm(), dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("rpc: the socket's directory %s belongs to uid %d, not to this user (%d)", dir, st.Uid, os.Getuid())
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("rpc: %s exists and is not a socket; remove it or choose another --socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("rpc: %s: %w", path, ErrInUse)
		}
		if err := os.Remove(path); err != nil { // a daemon that died left it
			return nil, fmt.Errorf("rpc: removing the stale socket %s: %w", path, err)
		}
	}
	old := unix.Umask(0o177)
	ln, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("rpc: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("rpc: %w", err)
	}
	return ln, nil
}

// Serve accepts connections on ln until Close (then it returns nil) or
// an accept error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed || s.draining
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
				errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) {
				// Out of descriptors (or a peer gone before the accept): wait
				// and go on, as net/http does; the daemon and its runs stay.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				if s.Logf != nil {
					s.Logf("rpc: accept: %v; retrying in %v", err, backoff)
				}
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.accept(c)
	}
}

func (s *Server) accept(nc net.Conn) {
	peer, err := peerOf(nc)
	var why string
	switch {
	case err != nil:
		why = "the peer's credentials could not be read: " + err.Error()
	case peer.UID != s.uid && peer.UID != 0:
		why = fmt.Sprintf("this daemon serves only uid %d (and root); the peer is uid %d", s.uid, peer.UID)
	case s.Admit != nil:
		if aerr := s.Admit(peer); aerr != nil {
			why = aerr.Error()
		}
	}
	if why != "" {
		if s.Logf != nil {
			s.Logf("rpc: refused a connection: %s", why)
		}
		b, _ := json.Marshal(message{JSONRPC: Version, ID: json.RawMessage("null"),
			Error: Errorf(CodeRefused, "connect as the user who started the daemon", "%s", why)})
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		nc.Write(append(b, '\n'))
		nc.Close()
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	c := &conn{nc: nc, peer: peer, ctx: ctx, cancel: cancel}
	s.mu.Lock()
	if s.closed || s.draining {
		s.mu.Unlock()
		cancel()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	var evicted *conn
	if s.Hello != nil {
		evicted = s.admitWaiting(c)
	}
	n := s.evictions
	s.mu.Unlock()
	// Said at the 1st, 2nd, 4th, 8th… eviction: a process connecting in a
	// loop is seen, without a line for each of its connections.
	if evicted != nil && s.Logf != nil && n&(n-1) == 0 {
		s.Logf("rpc: closed a connection from pid %d that had not said hello, to make room for a newer one (%d so far; is a process connecting without the token?)", evicted.peer.PID, n)
	}
	if s.Hello != nil {
		c.helloTimer = time.AfterFunc(s.helloTimeout, func() {
			if !c.hello.Load() {
				c.nc.Close() // no hello in time
			}
		})
	}
	go func() {
		defer s.wg.Done()
		s.serveConn(c)
		s.mu.Lock()
		s.leaveWaiting(c)
		delete(s.conns, c)
		s.mu.Unlock()
		if c.helloTimer != nil {
			c.helloTimer.Stop()
		}
	}()
}

// admitWaiting puts c, just accepted, among the connections waiting to
// say hello, evicting one first when MaxUnauthenticated are waiting (with
// s.mu held); it returns the one evicted (nil when none was).
//
// The newcomer is always let in: refusing it would leave the places to
// whoever took them first. The one evicted is the oldest waiting
// connection of the process (peer pid) with the most waiting, the
// newcomer counted. So a process that connects in a loop pushes out only
// its own connections, and a client with one connection is safe from it
// however slow its hello. A same-uid attacker can fork, one connection a
// process; against that only age is left, and the oldest goes.
//
// By age, a client that says hello as it connects still gets through. To
// push it out, MaxUnauthenticated connections newer than it must be
// accepted before its hello is written, and evict does not lose a hello
// written before the eviction (waiting in the socket, perhaps before the
// connection's goroutine has run: under a flood the accept loop is
// usually ahead of them, and closing the oldest outright lost the client
// every time in the tests; or being checked). What is left is a client
// that stalls between its connect and its write for as long as that many
// accepts take, against an attacker with as many processes: its hello
// finds the connection closed, with a line saying why, and it may connect
// again. Authenticated connections are not in s.waiting and are never
// evicted. A shorter hello deadline under pressure would add nothing: an
// evicted connection gives up its place at once, whatever its deadline.
func (s *Server) admitWaiting(c *conn) *conn {
	var v *conn
	if len(s.waiting) >= MaxUnauthenticated { // never more: one goes
		count := map[int]int{c.peer.PID: 1}
		most := 1
		for _, w := range s.waiting {
			count[w.peer.PID]++
			most = max(most, count[w.peer.PID])
		}
		// Found: most is a waiting process's count, or 1, which all have.
		i := slices.IndexFunc(s.waiting, func(w *conn) bool { return count[w.peer.PID] == most })
		v = s.waiting[i]
		s.waiting = slices.Delete(s.waiting, i, i+1)
		v.evict()
		s.evictions++
	}
	s.waiting = append(s.waiting, c)
	return v
}

// leaveWaiting takes c out of s.waiting, if it is there (with s.mu held).
func (s *Server) leaveWaiting(c *conn) {
	if i := slices.Index(s.waiting, c); i >= 0 {
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
}

// peerOf reads the peer's credentials with SO_PEERCRED.
func peerOf(nc net.Conn) (Peer, error) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return Peer{UID: -1}, errors.New("not a unix socket")
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return Peer{UID: -1}, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{UID: -1}, err
	}
	if cerr != nil {
		return Peer{UID: -1}, cerr
	}
	return Peer{PID: int(cred.Pid), UID: int(cred.Uid), GID: int(cred.Gid)}, nil
}

func (s *Server) serveConn(c *conn) {
	defer c.close()
	sc := bufio.NewScanner(c) // c.Read: the nc's, but for an evicted connection
	sc.Buffer(make([]byte, 0, 4<<10), MaxMessage)
	limit := func() int {
		if s.Hello != nil && !c.hello.Load() {
			return PreHelloMessage
		}
		return MaxMessage
	}
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			if i > limit() {
				return 0, nil, bufio.ErrTooLong
			}
			return i + 1, bytes.TrimSuffix(data[:i], []byte("\r")), nil
		}
		if len(data) > limit() {
			return 0, nil, bufio.ErrTooLong
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	var handlers sync.WaitGroup
	// Deferred after c.close, so run before it: the peer has gone (or the
	// server closes), so the handlers' context ends before they are waited.
	defer func() { c.cancel(); handlers.Wait() }()
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			c.respond(json.RawMessage("null"), nil, Errorf(CodeParseError, "send one JSON object per line", "not JSON: %v", err))
			continue
		}
		if m.JSONRPC != Version || m.Method == "" {
			id := m.ID
			if len(id) == 0 {
				id = json.RawMessage("null")
			}
			c.respond(id, nil, Errorf(CodeInvalidRequest, `send {"jsonrpc": "2.0", "id": N, "method": "…", "params": {…}}`, "not a JSON-RPC 2.0 request"))
			continue
		}
		h, ok := s.methods[m.Method]
		if s.Hello != nil && !c.hello.Load() {
			if m.Method != HelloMethod {
				if len(m.ID) > 0 {
					c.respond(m.ID, nil, Errorf(CodeRefused, "call "+HelloMethod+" with the daemon's token first (nodwyn's own clients do)", "not authenticated"))
				}
				continue
			}
			// Synchronously: nothing else on the connection runs before it.
			res, err := s.run(c.ctx, s.Hello, &Call{Method: m.Method, Params: m.Params, Peer: c.peer, conn: c})
			if err == nil {
				// Out of the waiting ones, under the lock evictions take: from
				// here it is never evicted (if it was while its hello was
				// checked, the hello stands and its reads go on, c.Read).
				s.mu.Lock()
				c.hello.Store(true)
				s.leaveWaiting(c)
				s.mu.Unlock()
				c.helloTimer.Stop()
			}
			if len(m.ID) > 0 {
				c.respond(m.ID, res, err)
			}
			continue
		}
		if !ok {
			if len(m.ID) > 0 {
				c.respond(m.ID, nil, &Error{Code: CodeMethodNotFound, Message: "no method " + m.Method,
					Data: map[string]any{"known": s.Methods(), "fix": "use one of the known methods (docs/rpc.md)"}})
			}
			continue
		}
		call := &Call{Method: m.Method, Params: m.Params, Peer: c.peer, conn: c}
		handlers.Add(1)
		s.active.Add(1)
		go func(id json.RawMessage) {
			defer s.active.Done()
			defer handlers.Done()
			res, err := s.run(c.ctx, h, call)
			if len(id) == 0 {
				return // a notification gets no answer
			}
			c.respond(id, res, err)
		}(m.ID)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, net.ErrClosed) {
		if errors.Is(err, bufio.ErrTooLong) {
			c.respond(json.RawMessage("null"), nil, Errorf(CodeParseError, "send smaller messages (say hello first: until then a line may be 4 KiB)", "a message longer than %d bytes", limit()))
		}
		if s.Logf != nil {
			s.Logf("rpc: connection from pid %d: %v", c.peer.PID, err)
		}
	}
	if c.evicted.Load() && !c.hello.Load() {
		c.sendNow(message{JSONRPC: Version, ID: json.RawMessage("null"), Error: Errorf(CodeRefused,
			"connect again and say "+HelloMethod+" (with the token) at once; if nodwyn's own client got this, a process is connecting to the daemon without the token (the daemon's log names its pid)",
			"this connection was closed before its hello: %d newer connections that had not said hello came, and the oldest give way", MaxUnauthenticated)})
	}
}

// run calls h, turning a panic into an internal error: one bad request
// never takes the daemon down.
func (s *Server) run(ctx context.Context, h Handler, call *Call) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Errorf(CodeInternalError, "this is a bug in nodwyn; the daemon goes on", "%s: internal error: %v", call.Method, r)
		}
	}()
	return h(ctx, call)
}

// Shutdown stops accepting, lets the handlers that are running finish and
// send their answers (until ctx ends), then closes as Close does.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln != nil {
		s.mu.Lock()
		s.draining = true // not closed: Close below must still end every context
		s.mu.Unlock()
		ln.Close()
	}
	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return s.Close()
}

// Close stops accepting, ends every connection's context and waits for the
// handlers to return.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.cancel()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	for _, c := range conns {
		c.nc.Close()
	}
	s.wg.Wait()
	return err
}

type conn struct {
	nc         net.Conn
	peer       Peer
	hello      atomic.Bool
	helloTimer *time.Timer
	ctx        context.Context
	cancel     context.CancelFunc

	// evicted is set (under the server's lock, once) when the connection
	// gives its place to a newer one before its hello; lastLook, the
	// reading goroutine's own, when it has read what was on its way then.
	evicted  atomic.Bool
	lastLook bool

	wmu    sync.Mutex
	closed bool
}

// expired is a deadline in the past: it ends a blocked read or write now.
var expired = time.Unix(1, 0)

// evict makes a connection that has not said hello give way. Closing it
// outright would lose a hello that is on its way (written by the client,
// not yet read by the connection's goroutine, perhaps not yet started):
// evict only ends the reading and writing that wait on the peer, and Read
// then looks once more, without waiting, at what the peer has sent. So a
// hello written before the eviction is read and checked; if it is good
// the connection stays (and reads as any other), else it ends. Nothing is
// waited for: an evicted connection is gone as soon as its goroutine has
// run.
func (c *conn) evict() {
	c.evicted.Store(true)
	c.nc.SetReadDeadline(expired)
	c.nc.SetWriteDeadline(expired)
}

// Read reads the connection for its scanner. Once it is evicted, the read
// that ends (the deadline) is followed by one look at what is queued,
// which is all it gets, unless its hello has been accepted meanwhile.
func (c *conn) Read(p []byte) (int, error) {
	for {
		n, err := c.nc.Read(p)
		if err == nil || !c.evicted.Load() || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		if c.hello.Load() {
			// Its hello (already sent when it was evicted) was good. The
			// eviction's deadline was set before the hello was accepted
			// (both under the server's lock), so clearing it here is final.
			c.nc.SetReadDeadline(time.Time{})
			continue
		}
		if c.lastLook {
			return 0, io.EOF
		}
		c.lastLook = true
		return c.recvQueued(p)
	}
}

// recvQueued reads what the peer has sent without waiting (the deadline
// makes nc.Read refuse to try), io.EOF when there is nothing.
func (c *conn) recvQueued(p []byte) (int, error) {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return 0, io.EOF
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, io.EOF
	}
	n := 0
	rc.Control(func(fd uintptr) {
		if m, _, err := unix.Recvfrom(int(fd), p, unix.MSG_DONTWAIT); err == nil {
			n = m
		}
	})
	if n <= 0 {
		return 0, io.EOF
	}
	return n, nil
}

// sendNow writes m if it can without waiting (an evicted connection's
// last word, whose write deadline has passed), and drops it if not.
func (c *conn) sendNow(m message) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return
	}
	if sc, ok := c.nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { unix.Send(int(fd), append(b, '\n'), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL) })
		}
	}
}

func (c *conn) close() {
	c.cancel()
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
	c.nc.Close()
}

func (c *conn) write(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	// A peer that stops reading must not hold a handler (and the run it
	// follows) for ever.
	c.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	// Nor an evicted one before its hello. The deadline is set first: an
	// eviction this misses sets its own deadline after it, so the write
	// below cannot wait.
	if c.evicted.Load() && !c.hello.Load() {
		return net.ErrClosed
	}
	_, err = c.nc.Write(append(b, '\n'))
	if err != nil {
		c.closed = true
		c.nc.Close()
	}
	return err
}

func (c *conn) notify(method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.write(message{JSONRPC: Version, Method: method, Params: b})
}

func (c *conn) respond(id json.RawMessage, res any, err error) {
	m := message{JSONRPC: Version, ID: id}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		m.Error = e
	} else {
		b, merr := json.Marshal(res)
		if merr != nil {
			m.Error = &Error{Code: CodeInternalError, Message: "the result could not be encoded: " + merr.Error()}
		} else {
			m.Result = b
		}
	}
	c.write(m)
}
