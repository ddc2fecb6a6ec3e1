package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
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
	wg     sync.WaitGroup // the connections
	active sync.WaitGroup // the handlers running
	unauth atomic.Int32   // connections that have not said hello yet
	cancel context.CancelFunc
	ctx    context.Context

	// Logf, when set, hears about connections refused and requests that
	// could not be read.
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
const (
	HelloTimeout       = 5 * time.Second
	PreHelloMessage    = 4 << 10
	MaxUnauthenticated = 32
)

// NewServer returns a server for methods; only peers of this process's
// uid, or root, are served.
func NewServer(methods map[string]Handler) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{methods: methods, uid: os.Getuid(), conns: map[*conn]struct{}{}, ctx: ctx, cancel: cancel}
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
			closed := s.closed
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
	if why == "" && s.Hello != nil {
		if n := s.unauth.Add(1); n > MaxUnauthenticated {
			s.unauth.Add(-1)
			why = fmt.Sprintf("%d connections are waiting to say hello already; say hello (with the token) as you connect", MaxUnauthenticated)
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
	if s.closed {
		s.mu.Unlock()
		cancel()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	if s.Hello != nil {
		c.unauth = &s.unauth
		c.helloTimer = time.AfterFunc(HelloTimeout, func() {
			if !c.hello.Load() {
				c.nc.Close() // no hello in time
			}
		})
	}
	go func() {
		defer s.wg.Done()
		s.serveConn(c)
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
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
	sc := bufio.NewScanner(c.nc)
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
	defer handlers.Wait()
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
				c.authenticated()
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
		s.closed = true
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
	unauth     *atomic.Int32 // the server's count, while this one has not said hello
	helloTimer *time.Timer
	unauthOnce sync.Once
	ctx        context.Context
	cancel     context.CancelFunc

	wmu    sync.Mutex
	closed bool
}

// authenticated marks the hello said: the connection leaves the count of
// unauthenticated ones and its deadline.
func (c *conn) authenticated() {
	c.hello.Store(true)
	c.leaveUnauth()
}

func (c *conn) leaveUnauth() {
	if c.unauth != nil {
		c.unauthOnce.Do(func() {
			c.unauth.Add(-1)
			c.helloTimer.Stop()
		})
	}
}

func (c *conn) close() {
	c.leaveUnauth()
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
