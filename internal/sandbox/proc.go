package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Process handling shared by every command a sandbox runs.
// in its own process group (Setpgid), whose id is the leader's pid; a group
// is stopped with SIGTERM and, after a grace, SIGKILL.

// StopGroup sends SIGTERM (and SIGCONT, so a stopped process sees it) to
// the process group pgid, waits up to grace for it to end, then sends
// SIGKILL. It returns when the group is gone or has been sent SIGKILL.
func StopGroup(pgid int, grace time.Duration) {
	if pgid <= 0 {
		return
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	deadline := time.Now().Add(grace)
	for wait := 5 * time.Millisecond; time.Now().Before(deadline); wait = min(wait*2, 100*time.Millisecond) {
		if !GroupAlive(pgid) {
			return
		}
		time.Sleep(wait)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// GroupAlive reports whether the process group pgid has a member that is
// not a zombie. A zombie counts as gone: where nothing reaps orphans (an
// init that does not wait), an ended process stays a zombie for good.
func GroupAlive(pgid int) bool {
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

// PidAlive reports whether pid is a running (not zombie) process.
func PidAlive(pid int) bool {
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

// MarkEnv is the variable every program a session's tools start gets, with
// the session's own mark (Tools.Mark) as its value. It is inherited by what
// those programs start in turn, double-forked setsid daemons included, so
// StopMarked finds them wherever they were re-parented.
const MarkEnv = "NODWYN_PROCS"

// NewMark returns a fresh random mark.
func NewMark() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
	}
	return hex.EncodeToString(b[:])
}

// StopMarked stops every process whose environment holds MarkEnv=mark, and
// the process group of each (but the groups in spare): SIGTERM and SIGCONT,
// then SIGKILL after grace to what is still there. It looks again, a few
// times, for what was started meanwhile. It returns how many processes it
// found. Where there is no /proc it finds none. A program that cleared its
// environment (env -i) and left its group is not found.
func StopMarked(mark string, grace time.Duration, spare ...int) int {
	if mark == "" {
		return 0
	}
	return stopCarrying(MarkEnv+"="+mark, grace, spare...)
}

// stopCarrying is StopMarked for the environment entry env ("NAME=value").
func stopCarrying(env string, grace time.Duration, spare ...int) int {
	entry := []byte(env)
	skip := map[int]bool{0: true, 1: true}
	for _, pg := range spare {
		skip[pg] = true
	}
	skip[syscall.Getpgrp()] = true
	found := 0
	for round := 0; round < 3; round++ {
		pids, groups := markedProcs(entry, skip)
		if len(pids) == 0 {
			break
		}
		found += len(pids)
		signalAll(pids, groups, syscall.SIGTERM)
		signalAll(pids, groups, syscall.SIGCONT)
		deadline := time.Now().Add(grace)
		for wait := 5 * time.Millisecond; time.Now().Before(deadline) && anyAlive(pids, groups); wait = min(wait*2, 100*time.Millisecond) {
			time.Sleep(wait)
		}
		signalAll(pids, groups, syscall.SIGKILL)
	}
	return found
}

func signalAll(pids []int, groups map[int]bool, sig syscall.Signal) {
	for pg := range groups {
		_ = syscall.Kill(-pg, sig)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

func anyAlive(pids []int, groups map[int]bool) bool {
	for _, pid := range pids {
		if PidAlive(pid) {
			return true
		}
	}
	for pg := range groups {
		if GroupAlive(pg) {
			return true
		}
	}
	return false
}

// markedProcs lists the live processes (not this one) whose environment
// holds entry, and their process groups but those in skip.
func markedProcs(entry []byte, skip map[int]bool) ([]int, map[int]bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	self := os.Getpid()
	var pids []int
	groups := map[int]bool{}
	var unsure, still []int // an empty environment: a process in the middle of execve, or one that cleared it
	look := func(pid int, again bool) {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			return
		}
		state, pg, ok := procStat(pid)
		if !ok || state == 'Z' || state == 'X' {
			return
		}
		if len(env) == 0 && pg != 0 { // pgid 0: a kernel thread
			if !again {
				unsure = append(unsure, pid)
			} else {
				still = append(still, pid)
			}
			return
		}
		if !hasEntry(env, entry) {
			return
		}
		pids = append(pids, pid)
		if !skip[pg] {
			groups[pg] = true
		}
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		look(pid, false)
	}
	// A daemon that execs right after it starts has no environment to read
	// for that moment: look at those again, twice at most.
	for _, wait := range []time.Duration{10 * time.Millisecond, 40 * time.Millisecond} {
		if len(unsure) == 0 {
			break
		}
		time.Sleep(wait)
		still = nil
		for _, pid := range unsure {
			look(pid, true)
		}
		unsure = still
	}
	return pids, groups
}

// hasEntry reports whether a NUL-separated environment block holds entry
// as one whole entry.
func hasEntry(env, entry []byte) bool {
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		if i < 0 {
			i = len(env)
		}
		if bytes.Equal(env[:i], entry) {
			return true
		}
		env = env[min(i+1, len(env)):]
	}
	return false
}
