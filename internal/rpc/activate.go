package rpc

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// listenFDsStart is the first descriptor a service manager passes
// (SD_LISTEN_FDS_START).
const listenFDsStart = 3

// Activated returns the unix socket a service manager passed to this
// process (systemd's socket activation: LISTEN_PID is this process and
// LISTEN_FDS is 1, the socket is descriptor 3) and its path; nil when none
// was passed. It unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES, so no
// program the daemon starts takes the socket for its own. The socket must
// be a listening unix socket with a path, 0600 or stricter, in a directory
// no one else can write to (SocketMode=0600, DirectoryMode=0700): the peer
// check (SO_PEERCRED) holds whatever the mode, but a socket open to others
// is a configuration error, said here.
func Activated() (net.Listener, string, error) {
	return activated(os.Getenv, os.Unsetenv, os.Getpid(), listenFDsStart)
}

func activated(getenv func(string) string, unsetenv func(string) error, pid, fd int) (net.Listener, string, error) {
	lpid, lfds := getenv("LISTEN_PID"), getenv("LISTEN_FDS")
	if lpid == "" && lfds == "" {
		return nil, "", nil
	}
	for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		unsetenv(k)
	}
	if p, err := strconv.Atoi(lpid); err != nil || p != pid {
		return nil, "", nil // meant for another process (a parent's)
	}
	if n, err := strconv.Atoi(lfds); err != nil || n != 1 {
		return nil, "", fmt.Errorf("rpc: the service manager passed LISTEN_FDS=%s; the daemon takes one socket (a .socket unit with one ListenStream= and Accept=no)", lfds)
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "activated socket")
	ln, err := net.FileListener(f) // a duplicate; the original is closed
	f.Close()
	if err != nil {
		return nil, "", fmt.Errorf("rpc: the socket the service manager passed: %w", err)
	}
	ul, ok := ln.(*net.UnixListener)
	if !ok {
		ln.Close()
		return nil, "", fmt.Errorf("rpc: the service manager passed a %s socket; the daemon serves a unix socket only (ListenStream=%%t/nodwyn/daemon.sock)", ln.Addr().Network())
	}
	path := ul.Addr().String()
	if !filepath.IsAbs(path) {
		ul.Close()
		return nil, "", fmt.Errorf("rpc: the socket the service manager passed has no path (%q); give ListenStream= a path", path)
	}
	ul.SetUnlinkOnClose(false) // the service manager's file
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o022 != 0 {
		ul.Close()
		return nil, "", fmt.Errorf("rpc: the socket %s the service manager passed can be connected to by others (mode %04o); set SocketMode=0600 in its .socket unit", path, fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Dir(path)); err == nil && fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		ul.Close()
		return nil, "", fmt.Errorf("rpc: the socket's directory %s can be written by others (mode %04o); set DirectoryMode=0700 in the .socket unit", filepath.Dir(path), fi.Mode().Perm())
	}
	return ul, path, nil
}
