package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The subreaper, where no cgroup can be made: see reap.go.
//
// nodwyn is made the child subreaper of its process (once, process-wide),
// so what a command orphans — a daemon that left its group and session,
// cleared its environment and closed the pipe — becomes nodwyn's child
// instead of init's. Such an adopted child must be told from nodwyn's own
// children (git, the watchdog, a test binary's helpers), which os/exec waits
// for and must not be waited for by anyone else: os/exec holds a pidfd for
// each child it started until it has waited for it (Go 1.23, Linux 5.4),
// so a child for which this process holds no pidfd is one os/exec does not
// wait for. Those are the adopted: they are reaped when they end (SIGCHLD)
// and stopped when the sessions they may belong to have ended. Each is
// waited for by its own pidfd (waitid P_PIDFD), never by wait4(-1).
//
// Attribution. A process's start time is known (/proc/pid/stat), and each
// session's time is known from its first command to its Close: an adopted
// process belongs to the sessions whose time holds its start (a process
// can only start while some ancestor runs, and a session's commands run
// only in its time). It is stopped when all of these have ended, and never
// when one of them is a sandbox-mode session (Release). One in another
// cgroup than nodwyn's is a cgroup session's, and its own.

// reaper is the process's subreaper.
var reaper = &subreaper{orphans: map[procKey]*orphan{}, own: map[procKey]bool{}}

type subreaper struct {
	once sync.Once
	err  error // why there is none

	mu      sync.Mutex // held by every sweep: one at a time
	ivs     []*interval
	orphans map[procKey]*orphan
	own     map[procKey]bool // children os/exec holds a pidfd for: never adopted
}

// interval is a session's time, in clock ticks after boot.
type interval struct {
	from, to uint64 // to: 0 while the session is open
	release  bool   // sandbox mode: what started in its time is left alone
	closing  bool   // its Close is stopping what is its
}

type procKey struct {
	pid   int
	start uint64
}

// orphan is an adopted process and the sessions it may belong to.
type orphan struct {
	cands     []*interval
	elsewhere bool // in another cgroup: not the subreaper's to stop
}

var subreaperCheck = sync.OnceValue(checkSubreaper)

// subreaperUsable reports why there can be no subreaper (nil: there can).
func subreaperUsable() error { return subreaperCheck() }

func checkSubreaper() error {
	// What os/exec checks before it uses pidfds (os.checkPidfd): without
	// them, its children cannot be told from adopted ones.
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return errors.New("no pidfds (pidfd_open: " + err.Error() + ")")
	}
	defer syscall.Close(fd)
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil); !errors.Is(err, syscall.ECHILD) {
		return errors.New("no pidfds (waitid P_PIDFD: " + fmt.Sprint(err) + ")")
	}
	if err := unix.PidfdSendSignal(fd, 0, nil, 0); err != nil {
		return errors.New("no pidfds (pidfd_send_signal: " + err.Error() + ")")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return errors.New("no /proc")
	}
	return nil
}

// enable makes this process the subreaper and starts reaping, once.
func (r *subreaper) enable() error {
	r.once.Do(func() {
		if r.err = subreaperUsable(); r.err != nil {
			return
		}
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			r.err = errors.New("prctl PR_SET_CHILD_SUBREAPER: " + err.Error())
			return
		}
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGCHLD)
		go func() {
			for range ch {
				r.sweep(false, 0)
			}
		}()
	})
	return r.err
}

// enabled reports whether this process is the subreaper.
func (r *subreaper) enabled() bool {
	var on int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0); err != nil {
		return false
	}
	return on != 0
}

// open starts a session's time.
func (r *subreaper) open(release bool) *interval {
	iv := &interval{from: nowTicks(), release: release}
	if iv.from > 0 {
		iv.from-- // a tick's rounding
	}
	r.mu.Lock()
	r.ivs = append(r.ivs, iv)
	if len(r.ivs) > 4096 {
		r.prune()
	}
	r.mu.Unlock()
	return iv
}

// prune drops the oldest closed times no orphan refers to.
func (r *subreaper) prune() {
	used := map[*interval]bool{}
	for _, o := range r.orphans {
		for _, iv := range o.cands {
			used[iv] = true
		}
	}
	keep := r.ivs[:0]
	drop := len(r.ivs) - 2048
	for _, iv := range r.ivs {
		if drop > 0 && iv.to != 0 && !used[iv] {
			drop--
			continue
		}
		keep = append(keep, iv)
	}
	r.ivs = keep
}

// close ends a sandbox-mode session's time: nothing is stopped.
func (r *subreaper) close(iv *interval) {
	r.mu.Lock()
	iv.to = nowTicks() + 1
	r.mu.Unlock()
}

// closeSession stops the adopted processes whose sessions have all ended
// now that iv's has, and what they leave (their children are adopted in
// turn), then ends iv's time.
func (r *subreaper) closeSession(iv *interval, grace time.Duration) {
	r.mu.Lock()
	iv.closing = true
	r.mu.Unlock()
	for round := 0; round < 6; round++ {
		stopped, young := r.sweep(true, grace)
		if stopped == 0 && young == 0 {
			break
		}
		if stopped == 0 {
			time.Sleep(20 * time.Millisecond) // two ticks: see young
		}
	}
	r.mu.Lock()
	iv.to = nowTicks() + 1
	r.mu.Unlock()
}

// sweep reaps adopted processes that have ended, notes those that appeared
// with the sessions they may belong to and, with stop, stops those whose
// sessions have all ended. It returns how many it stopped and how many it
// left to a later look because they are too young to be told from a child
// os/exec is starting (whose pidfd is made just after the child is).
func (r *subreaper) sweep(stop bool, grace time.Duration) (stopped, young int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kids := children()
	seen := map[procKey]bool{}
	for _, k := range kids {
		seen[procKey{k.pid, k.start}] = true
	}
	for key := range r.orphans {
		if !seen[key] {
			delete(r.orphans, key)
		}
	}
	for key := range r.own {
		if !seen[key] {
			delete(r.own, key)
		}
	}
	var held map[int]bool // read once, when a verdict is needed
	heldBy := func(pid int) bool {
		if held == nil {
			held = goPidfds()
		}
		return held[pid]
	}
	now := nowTicks()
	var victims []procInfo
	for _, k := range kids {
		key := procKey{k.pid, k.start}
		zombie := k.state == 'Z' || k.state == 'X'
		if !zombie && r.own[key] {
			continue
		}
		o := r.orphans[key]
		if o == nil || zombie {
			if heldBy(k.pid) {
				if !zombie {
					r.own[key] = true
				}
				continue
			}
		}
		if zombie {
			reapZombie(k)
			delete(r.orphans, key)
			continue
		}
		if o == nil {
			if k.start+2 > now {
				young++
				continue
			}
			o = r.attribute(k)
			r.orphans[key] = o
		}
		if stop && r.ended(o) {
			victims = append(victims, k)
		}
	}
	if len(victims) > 0 {
		stopAdopted(victims, grace)
		for _, v := range victims {
			delete(r.orphans, procKey{v.pid, v.start})
		}
	}
	return len(victims), young
}

// attribute finds the sessions an adopted process may belong to.
func (r *subreaper) attribute(k procInfo) *orphan {
	if !sameCgroup(k.pid) {
		return &orphan{elsewhere: true}
	}
	o := &orphan{}
	for _, iv := range r.ivs {
		if iv.from <= k.start && (iv.to == 0 || k.start <= iv.to) {
			o.cands = append(o.cands, iv)
		}
	}
	return o
}

// ended reports whether every session o may belong to has ended (or is
// ending) and none was in sandbox mode.
func (r *subreaper) ended(o *orphan) bool {
	if o.elsewhere || len(o.cands) == 0 {
		return false // nodwyn's own, or a cgroup's
	}
	for _, iv := range o.cands {
		if iv.release || (iv.to == 0 && !iv.closing) {
			return false
		}
	}
	return true
}

// children lists this process's children (every thread's), from
// /proc/self/task/*/children, or from all of /proc where the kernel has no
// such file.
func children() []procInfo {
	self := os.Getpid()
	var pids []int
	tasks, err := os.ReadDir("/proc/self/task")
	listed := err == nil
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			listed = false
			break
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	var out []procInfo
	if listed {
		for _, pid := range pids {
			if p, ok := readProc(pid); ok && p.ppid == self {
				out = append(out, p)
			}
		}
		return out
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok && p.ppid == self {
			out = append(out, p)
		}
	}
	return out
}

// goPidfds is the set of processes this process holds a pidfd for: the
// children os/exec started and has not waited for yet.
func goPidfds() map[int]bool {
	held := map[int]bool{}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return held
	}
	for _, e := range ents {
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || l != "anon_inode:[pidfd]" {
			continue
		}
		b, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Pid:"); ok {
				if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && pid > 0 {
					held[pid] = true
				}
			}
		}
	}
	return held
}

// sameCgroup reports whether pid is in this process's cgroup (v2), as an
// orphan of a command started without a cgroup is.
func sameCgroup(pid int) bool {
	line := func(path string) string {
		b, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "0::") {
				return l
			}
		}
		return ""
	}
	return line("/proc/"+strconv.Itoa(pid)+"/cgroup") == line("/proc/self/cgroup")
}

// pin opens a pidfd on p's process and checks it is still the process p
// describes (the same start) and still this process's child.
func pin(p procInfo) (int, bool) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		return -1, false
	}
	now, ok := readProc(p.pid)
	if !ok || now.start != p.start || now.ppid != os.Getpid() {
		syscall.Close(fd)
		return -1, false
	}
	return fd, true
}

// reapZombie waits for an adopted child that has ended.
func reapZombie(p procInfo) {
	fd, ok := pin(p)
	if !ok {
		return
	}
	defer syscall.Close(fd)
	var info unix.Siginfo
	_ = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
}

// stopAdopted stops adopted processes (each with its process group when it
// leads one of its own): SIGTERM and SIGCONT, SIGKILL after grace, and waits
// for each by its pidfd.
func stopAdopted(ps []procInfo, grace time.Duration) {
	own := syscall.Getpgrp()
	type victim struct {
		fd    int
		group int
		done  bool
	}
	var vs []*victim
	for _, p := range ps {
		fd, ok := pin(p)
		if !ok {
			continue
		}
		v := &victim{fd: fd}
		if p.pgid == p.pid && p.pgid != own {
			v.group = p.pgid
		}
		vs = append(vs, v)
	}
	signal := func(sig syscall.Signal) {
		for _, v := range vs {
			if v.group > 0 {
				_ = syscall.Kill(-v.group, sig)
			}
			if !v.done {
				_ = unix.PidfdSendSignal(v.fd, sig, nil, 0)
			}
		}
	}
	reapAll := func() bool {
		all := true
		for _, v := range vs {
			if v.done {
				continue
			}
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PIDFD, v.fd, &info, unix.WEXITED|unix.WNOHANG, nil)
			if err != nil || info.Signo != 0 {
				v.done = true
				continue
			}
			all = false
		}
		return all
	}
	signal(syscall.SIGTERM)
	signal(syscall.SIGCONT)
	if !waitUntil(grace, reapAll) {
		signal(syscall.SIGKILL)
		waitUntil(2*time.Second, reapAll)
	} else {
		for _, v := range vs {
			if v.group > 0 && GroupAlive(v.group) {
				_ = syscall.Kill(-v.group, syscall.SIGKILL)
			}
		}
	}
	for _, v := range vs {
		syscall.Close(v.fd)
	}
}
