// Package daemon is nodwyn's daemon (as tailscale's ipnserver is its
// server): the socket (its own, or one a service manager passed), the
// token only the daemon's own user can read, the admission of a peer, and
// the JSON-RPC server that answers with the method table
// (internal/daemon/methods) from the runs (internal/daemon/runs). Dial is
// its clients' side of the socket and the token.
package daemon

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/daemon/methods"
	"github.com/nodwyn/nodwyn/internal/daemon/runs"
	"github.com/nodwyn/nodwyn/internal/daemon/wire"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/rpc"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"github.com/nodwyn/nodwyn/internal/store"
)

// Config is a daemon's: nodwyn daemon's flags and its process.
type Config struct {
	Socket        string // --socket ("" : the service manager's, else DefaultSocket)
	NoKeychain    bool   // --no-keychain: no run asks the system keychain
	NoKernelFloor bool   // --no-kernel-floor: serve without the floor, and let run.start ask for none
	Getenv        func(string) string
	Stderr        io.Writer
	Version       string
}

// DefaultSocket is where a daemon listens and clients look by default.
func DefaultSocket(getenv func(string) string, dirs config.Dirs) string {
	if rd := getenv("XDG_RUNTIME_DIR"); rd != "" && filepath.IsAbs(rd) {
		return filepath.Join(rd, "nodwyn", "daemon.sock")
	}
	return filepath.Join(dirs.Data, "daemon.sock")
}

// TokenPath is where the daemon on sock keeps its token: in the data
// directory, which the guard's denylist and the kernel floor keep from
// every command a run starts.
func TokenPath(dataDir, sock string) string {
	h := sha256.Sum256([]byte(sock))
	return filepath.Join(dataDir, "daemon", hex.EncodeToString(h[:8])+".token")
}

func usageErr(format string, a ...any) error {
	return &launch.Error{Kind: launch.Usage, Err: fmt.Errorf(format, a...)}
}

// Serve serves runs until ctx ends (a signal), daemon.stop, or the
// listener fails. Its errors before it serves are *launch.Error of kind
// Usage (nodwyn daemon exits 2).
func Serve(ctx context.Context, c Config) error {
	_, dirs := launch.HomeDirs(c.Getenv)
	// A socket a service manager passed (a systemd .socket unit) is served
	// instead of one of our own; the service manager keeps its file.
	activated, asock, err := rpc.Activated()
	if err != nil {
		return &launch.Error{Kind: launch.Usage, Err: err}
	}
	sock := c.Socket
	if activated != nil {
		if sock != "" && filepath.Clean(sock) != asock {
			activated.Close()
			return usageErr("--socket %s: the service manager passed the socket %s; leave out --socket or make them the same", sock, asock)
		}
		sock = asock
	}
	if sock == "" {
		sock = DefaultSocket(c.Getenv, dirs)
	}
	sock, err = filepath.Abs(sock)
	if err != nil {
		return usageErr("--socket: %v", err)
	}
	st, err := store.Open(dirs.Data)
	if err != nil {
		return err
	}
	// The token is kept from the runs' commands by the kernel floor: where
	// it cannot be had, the daemon does not serve unless the person says so.
	if _, err := sandbox.NewFloor([]string{filepath.Dir(TokenPath(dirs.Data, sock))}, nil); err != nil && !c.NoKernelFloor {
		return usageErr("the kernel floor cannot be had here (%v): without it a command of a run could read the daemon's token, answer its own confirms, start runs and send the provider's key elsewhere\n(run nodwyn run in process instead, or give nodwyn daemon --no-kernel-floor to serve anyway)", err)
	}
	ln := activated
	if ln == nil {
		ln, err = rpc.Listen(sock)
		if err != nil {
			if errors.Is(err, rpc.ErrInUse) {
				return usageErr("%w\n(stop it with daemon.stop, or give another --socket)", err)
			}
			return &launch.Error{Kind: launch.Usage, Err: err}
		}
	}
	token, tpath, err := writeToken(dirs.Data, sock)
	if err != nil {
		ln.Close()
		return err
	}
	backend := runs.New(runs.Config{Dirs: dirs, Store: st, Getenv: c.Getenv, Stderr: c.Stderr, Version: c.Version, NoKeychain: c.NoKeychain})
	var srv *rpc.Server
	shutdown := func(why string) {
		if !backend.Shutdown(why) {
			return
		}
		// The clients following a run get its last events and the answer
		// that says it ended before their connections close.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		srv.Shutdown(sctx)
		cancel()
	}
	srv = rpc.NewServer(methods.Methods(backend, methods.Info{Socket: sock, Data: dirs.Data, Version: c.Version,
		Started: time.Now(), AllowNoFloor: c.NoKernelFloor, Stop: shutdown}))
	srv.Hello = hello(token, dirs.Data, c.Version)
	srv.Admit = admit
	srv.Logf = func(format string, a ...any) { fmt.Fprintf(c.Stderr, "nodwyn daemon: "+format+"\n", a...) }

	go func() {
		select {
		case <-ctx.Done():
			shutdown("the daemon was stopped by a signal")
		case <-backend.Stopping():
		}
	}()
	how := ""
	if activated != nil {
		how = ", passed by the service manager"
	}
	fmt.Fprintf(c.Stderr, "nodwyn daemon: serving on %s%s (pid %d); stop it with daemon.stop or Ctrl-C\n", sock, how, os.Getpid())
	serr := srv.Serve(ln)
	shutdown("the daemon stopped")
	backend.Wait()
	os.Remove(tpath)
	if activated == nil { // the service manager's socket is its own
		os.Remove(sock)
	}
	return serr
}

// hello is daemon.hello: the token the daemon wrote, or the connection
// is refused.
func hello(token, dataDir, version string) rpc.Handler {
	return func(ctx context.Context, call *rpc.Call) (any, error) {
		var p wire.HelloParams
		if err := rpc.DecodeParams(call.Params, &p); err != nil {
			return nil, err
		}
		if subtle.ConstantTimeCompare([]byte(p.Token), []byte(token)) != 1 {
			return nil, rpc.Errorf(rpc.CodeRefused, "read the token from "+filepath.Join(dataDir, "daemon")+" as nodwyn's clients do", "wrong token")
		}
		return map[string]any{"daemon": "nodwyn", "version": version, "pid": os.Getpid()}, nil
	}
}

// admit refuses a peer that a run of this daemon started (it descends from
// the daemon, or carries a run's process mark): the model's commands must
// not answer their own confirms or start runs of their own.
func admit(p rpc.Peer) error {
	me := os.Getpid()
	if p.PID == me {
		return nil // the daemon's own process (a client in it, as in its tests)
	}
	// The peer's ancestors, to pid 1: a process gone before it is looked at
	// (it connected and left the socket to a child) is refused. This is a
	// first line only: a process that double-forks is reparented away from
	// the daemon and may drop the mark, so the token (which the kernel
	// floor keeps from every command) is what holds.
	pid := p.PID
	for i := 0; ; i++ {
		parent := parentOf(pid)
		if parent < 0 || i > 1<<16 {
			return fmt.Errorf("the peer (pid %d) could not be looked at in /proc; connect from a process that stays while it talks", p.PID)
		}
		if parent == me {
			return errors.New("a process started by one of this daemon's runs cannot drive the daemon")
		}
		if parent <= 1 {
			break
		}
		pid = parent
	}
	if env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "environ")); err == nil &&
		strings.Contains("\x00"+string(env), "\x00"+sandbox.MarkEnv+"=") {
		return errors.New("a process started by a nodwyn run cannot drive the daemon")
	}
	return nil
}

// parentOf is pid's parent from /proc (-1 when it cannot be read).
func parentOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return -1
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return n
}

// writeToken makes the daemon's token (32 random bytes, hex) and writes it
// 0600 in a 0700 directory of the data directory.
func writeToken(dataDir, sock string) (string, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	tok := hex.EncodeToString(b)
	p := TokenPath(dataDir, sock)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", "", fmt.Errorf("the daemon's token: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("the daemon's token: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", "", fmt.Errorf("the daemon's token: %w", err)
	}
	return tok, p, nil
}

// Dial connects to the daemon on sock and says hello with the token
// it left in dataDir.
// A daemon that is starting (or was just restarted over a stale socket
// and token) is waited for this long.
func Dial(ctx context.Context, dataDir, sock string, onNotify func(string, json.RawMessage)) (*rpc.Client, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		c, again, err := dialOnce(ctx, dataDir, sock, onNotify)
		if err == nil || !again || time.Now().After(deadline) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func dialOnce(ctx context.Context, dataDir, sock string, onNotify func(string, json.RawMessage)) (*rpc.Client, bool, error) {
	// Connect first: on a socket a service manager holds, the connection
	// is what starts the daemon, which then writes its token.
	c, err := rpc.Dial(ctx, sock, onNotify)
	if err != nil {
		return nil, true, fmt.Errorf("connecting to the daemon on %s: %w (start one with: nodwyn daemon --socket %s)", sock, err, sock)
	}
	b, err := os.ReadFile(TokenPath(dataDir, sock))
	if err != nil {
		c.Close()
		return nil, true, fmt.Errorf("no daemon's token for %s in %s (%v): is a daemon running there, with this XDG_DATA_HOME? (start one with: nodwyn daemon --socket %s)", sock, filepath.Join(dataDir, "daemon"), err, sock)
	}
	if err := c.Call(ctx, rpc.HelloMethod, wire.HelloParams{Token: strings.TrimSpace(string(b))}, nil); err != nil {
		c.Close()
		var re *rpc.Error
		return nil, errors.As(err, &re) && re.Message == "wrong token", fmt.Errorf("the daemon on %s: %w", sock, err)
	}
	return c, false, nil
}
