package rpc

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A socket passed as systemd does is taken, with its path, and the LISTEN_
// variables are cleared; one meant for another process, of the wrong
// kind or too open is not.
func TestActivated(t *testing.T) {
	listen := func(t *testing.T, mode os.FileMode) (int, string) {
		dir := filepath.Join(t.TempDir(), "rt")
		os.Mkdir(dir, 0o700)
		path := filepath.Join(dir, "sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, mode)
		f, err := ln.(*net.UnixListener).File()
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		t.Cleanup(func() { f.Close() })
		fd, err := syscall.Dup(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		return fd, path
	}
	env := func(vars map[string]string) (func(string) string, func(string) error) {
		return func(k string) string { return vars[k] }, func(k string) error { delete(vars, k); return nil }
	}
	pid := os.Getpid()

	fd, path := listen(t, 0o600)
	vars := map[string]string{"LISTEN_PID": strconv.Itoa(pid), "LISTEN_FDS": "1", "LISTEN_FDNAMES": "daemon.sock"}
	get, unset := env(vars)
	ln, got, err := activated(get, unset, pid, fd)
	if err != nil || ln == nil || got != path {
		t.Fatalf("activated: %v %q %v, want the listener on %s", ln, got, err, path)
	}
	if len(vars) != 0 {
		t.Errorf("LISTEN_ variables left for the runs' commands: %v", vars)
	}
	go func() {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
		}
	}()
	if c, err := ln.Accept(); err != nil {
		t.Errorf("accepting on the passed socket: %v", err)
	} else {
		c.Close()
	}
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("closing removed the service manager's socket file: %v", err)
	}

	// None passed; passed to another process (a parent): not taken.
	get, unset = env(map[string]string{})
	if ln, _, err := activated(get, unset, pid, fd); ln != nil || err != nil {
		t.Errorf("nothing passed: %v %v", ln, err)
	}
	vars = map[string]string{"LISTEN_PID": strconv.Itoa(pid + 1), "LISTEN_FDS": "1"}
	get, unset = env(vars)
	if ln, _, err := activated(get, unset, pid, fd); ln != nil || err != nil || len(vars) != 0 {
		t.Errorf("another process's socket: %v %v, vars %v", ln, err, vars)
	}

	// Refused, each with the fix in the .socket unit.
	fd2, _ := listen(t, 0o666)
	for name, c := range map[string]struct {
		fds  string
		fd   int
		want string
	}{
		"two sockets": {"2", fd, "one ListenStream="},
		"open to all": {"1", fd2, "SocketMode=0600"},
	} {
		get, unset := env(map[string]string{"LISTEN_PID": strconv.Itoa(pid), "LISTEN_FDS": c.fds})
		ln, _, err := activated(get, unset, pid, c.fd)
		if ln != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v %v, want an error naming %s", name, ln, err, c.want)
		}
	}
}
