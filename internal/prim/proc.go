package prim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Process handling shared by shell-exec and shell-start. Every command runs
// in its own process group (Setpgid), whose id is the leader's pid; a group
// is stopped with SIGTERM and, after a grace, SIGKILL.

// stopGroup sends SIGTERM (and SIGCONT, so a stopped process sees it) to
// the process group pgid, waits up to grace for it to end, then sends
// SIGKILL. It returns when the group is gone or has been sent SIGKILL.
func stopGroup(pgid int, grace time.Duration) {
	if pgid <= 0 {
		return
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	deadline := time.Now().Add(grace)
	for wait := 5 * time.Millisecond; time.Now().Before(deadline); wait = min(wait*2, 100*time.Millisecond) {
		if !groupAlive(pgid) {
			return
		}
		time.Sleep(wait)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// groupAlive reports whether the process group pgid has a member that is
// not a zombie. A zombie counts as gone: where nothing reaps orphans (an
// init that does not wait), an ended process stays a zombie for good.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc to look in: the signal's answer stands
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pg, ok := procStat(pid)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// pidAlive reports whether pid is a running (not zombie) process.
func pidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	state, _, ok := procStat(pid)
	if !ok {
		_, err := os.Stat("/proc/self")
		return err != nil // no /proc: trust kill's answer
	}
	return state != 'Z' && state != 'X'
}

// procStat reads a process's state and process group from /proc/pid/stat.
func procStat(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 3 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}

// pipeInode returns the inode of a pipe, as /proc/pid/fd shows it
// ("pipe:[inode]"), or 0.
func pipeInode(f *os.File) uint64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// killPipeHolders sends SIGKILL to every other process that has the pipe
// with this inode open: what escaped its process group (setsid) but still
// holds a command's output. Where there is no /proc it does nothing.
func killPipeHolders(inode uint64) {
	if inode == 0 {
		return
	}
	want := "pipe:[" + strconv.FormatUint(inode, 10) + "]"
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && l == want {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}
