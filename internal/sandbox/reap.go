package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Nothing a session started outlives it outside sandbox mode (issue 28),
// whatever it did to its environment (env -i wipes the mark), its process
// group and session (setsid) and its descriptors (the output pipe). Two
// mechanisms, the first that works on the machine:
//
//   - A cgroup (v2) of the session's own, made under nodwyn's cgroup as
//     the session starts its first command. Every command starts in it
//     (clone3 CLONE_INTO_CGROUP: SysProcAttr.UseCgroupFD), and so does all
//     it starts; no process can leave it without write rights on a cgroup
//     elsewhere. Close stops what is still in it (SIGTERM, after the grace
//     cgroup.kill) and removes it. Exact: one session's Close reaches its
//     own processes and nothing else. It needs a writable cgroup2 hierarchy
//     (root; a person's delegated subtree) and clone3.
//   - Otherwise the subreaper (reap_subreaper.go): nodwyn becomes the child
//     subreaper of its process, so what a command orphans is re-parented to
//     nodwyn instead of init, and Close stops the orphans attributable to
//     it. Attribution is by time: an orphan belongs to the sessions that
//     were open when it started, and is stopped when the last of them has
//     ended; one whose time overlaps a sandbox-mode session's is left
//     alone. One session at a time (nodwyn run) is exact; the daemon's runs
//     at once share what none of them can be told apart by.
//
// With Release (sandbox mode) neither is used: what commands start in the
// background keeps running after the session and after nodwyn.

// Confinement says, in one line, how what the session's commands start is
// kept from outliving it: "cgroup /sys/fs/cgroup/…", "subreaper (…)", or
// why neither is there (for doctor and the run's first line).
func (h *NoSandbox) Confinement() string { return h.conf.describe() }

// StartProgram starts cmd, a program nodwyn runs on its own account with the
// commands' environment in a folder the model writes (git status, whose
// filter driver may start others), as a command is started: under the
// floor, in the session's cgroup, counted in the session's time for the
// subreaper; see Starting.
func (h *NoSandbox) StartProgram(cmd *exec.Cmd) error {
	h.Starting()
	done, err := h.conf.prepare(cmd)
	if err != nil {
		return err
	}
	defer done()
	return StartFloored(h.opts.Floor, cmd)
}

const (
	confUndecided = iota
	confCgroup
	confSubreaper
	confNone
	confRelease
)

// confine is one session's part in it.
type confine struct {
	release bool
	cgErr   error // set: no cgroup, for this reason (tests; a cgroup that could not be made)

	mu     sync.RWMutex // read-held while a command starts into the cgroup
	mode   int
	why    string // why there is no cgroup (and no subreaper)
	path   string // the session's cgroup
	fd     int    // open on path while commands may start; -1 otherwise
	closed bool
	iv     *interval // the session's time, for the subreaper's attribution
}

var cgroupSeq atomic.Int64

func newConfine(release bool) *confine {
	return &confine{release: release, fd: -1}
}

// decide chooses the mechanism (c.mu held); nothing is made yet.
func (c *confine) decide() {
	if c.mode != confUndecided {
		return
	}
	if c.release {
		c.mode = confRelease
		return
	}
	err := c.cgErr
	var parent string
	if err == nil {
		parent, err = cgroupUsable()
	}
	if err == nil {
		c.mode = confCgroup
		c.path = fmt.Sprintf("%s/nodwyn.%d.%d", parent, os.Getpid(), cgroupSeq.Add(1))
		return
	}
	c.why = err.Error()
	if serr := subreaperUsable(); serr != nil {
		c.mode = confNone
		c.why = "no cgroup: " + c.why + "; no subreaper: " + serr.Error()
		return
	}
	c.mode = confSubreaper
	c.why = "no cgroup: " + c.why
}

func (c *confine) describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.decide()
	switch c.mode {
	case confRelease:
		return "none: sandbox mode leaves what commands start in the background running"
	case confCgroup:
		return "cgroup " + c.path
	case confSubreaper:
		return "subreaper (" + c.why + ")"
	}
	return "process groups and the session's mark only (" + c.why + ")"
}

// prepare readies cmd to start as one of the session's commands: in the
// session's cgroup (made on the first call), or with the subreaper on and
// the session's time open. done must be called once cmd has started (or
// failed to): the cgroup is not removed while a command starts into it.
func (c *confine) prepare(cmd *exec.Cmd) (done func(), err error) {
	c.mu.Lock()
	c.decide()
	switch c.mode {
	case confRelease:
		if c.iv == nil {
			// Registered only so the subreaper, which another session in this
			// process may have turned on, leaves alone what this one started.
			c.iv = reaper.open(true)
		}
	case confCgroup:
		if c.fd < 0 && !c.closed {
			fd, err := makeCgroup(c.path)
			if err != nil {
				c.mode, c.path, c.cgErr = confUndecided, "", err
				c.decide()
			} else {
				c.fd = fd
			}
		}
	}
	if c.mode == confSubreaper && c.iv == nil {
		if err := reaper.enable(); err != nil {
			c.mode, c.why = confNone, c.why+"; no subreaper: "+err.Error()
		} else {
			c.iv = reaper.open(false)
		}
	}
	c.mu.Unlock()

	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return nil, errors.New("the sandbox is closed")
	}
	if cmd != nil && c.mode == confCgroup && c.fd >= 0 {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = c.fd
	}
	return c.mu.RUnlock, nil
}

// teardown stops what the session's commands left (see the top of the
// file) and removes the cgroup. With Release it only closes the session's
// time.
func (c *confine) teardown(grace time.Duration) {
	c.mu.Lock()
	c.closed = true
	mode, path, fd, iv := c.mode, c.path, c.fd, c.iv
	c.fd = -1
	c.mu.Unlock()
	if fd >= 0 {
		syscall.Close(fd)
		stopCgroup(path, grace)
	}
	if iv != nil {
		if mode == confRelease {
			reaper.close(iv)
		} else {
			reaper.closeSession(iv, grace)
		}
	}
}

// procInfo is what /proc/pid/stat says of a process that reaping needs.
type procInfo struct {
	pid   int
	state byte
	ppid  int
	pgid  int
	start uint64 // clock ticks after boot
}

// readProc reads /proc/pid/stat.
func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	return parseStat(pid, b)
}

func parseStat(pid int, b []byte) (procInfo, bool) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime ...; comm may hold spaces and parentheses.
	i := lastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procInfo{}, false
	}
	f := fields(b[i+2:])
	if len(f) < 20 || len(f[0]) == 0 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{state: f[0][0], ppid: ppid, pgid: pgid, start: start, pid: pid}, true
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func fields(b []byte) []string {
	var out []string
	start := -1
	for i, c := range b {
		if c == ' ' || c == '\n' {
			if start >= 0 {
				out = append(out, string(b[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, string(b[start:]))
	}
	return out
}

// nowTicks is the time since boot in the clock ticks of /proc/pid/stat's
// starttime (USER_HZ, 100 a second on every architecture Linux has).
func nowTicks() uint64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := fields(b)
	if len(f) == 0 {
		return 0
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return uint64(secs * 100)
}
