package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The cgroup a session's commands start in: see reap.go.

var cgroupProbe = sync.OnceValues(probeCgroup)

// cgroupUsable returns the directory of nodwyn's own cgroup (v2), under
// which a session's cgroup is made, or why there is none to use. It is
// found out once for the process, by making a cgroup there and starting a
// process into it.
func cgroupUsable() (string, error) { return cgroupProbe() }

func probeCgroup() (string, error) {
	dir, err := ownCgroupDir()
	if err != nil {
		return "", err
	}
	sweepCgroups(dir)
	probe := fmt.Sprintf("%s/nodwyn.%d.probe", dir, os.Getpid())
	fd, err := makeCgroup(probe)
	if err != nil {
		return "", err
	}
	defer removeCgroup(probe, time.Second)
	defer syscall.Close(fd)
	// A program that does not exist: the start fails at exec, after clone3
	// has put the child in the cgroup, or before, when it could not; the
	// child is waited for either way.
	_, err = syscall.ForkExec("/nonexistent/nodwyn-cgroup-probe", []string{"probe"}, &syscall.ProcAttr{
		Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd},
	})
	if !errors.Is(err, syscall.ENOENT) {
		return "", fmt.Errorf("a process could not start in %s: %v", probe, err)
	}
	return dir, nil
}

// ownCgroupDir is where nodwyn's own cgroup v2 is in the file system.
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no /proc/self/cgroup: %v", err)
	}
	var own string
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own, found = p, true
		}
	}
	if !found {
		return "", errors.New("nodwyn is in no cgroup v2 hierarchy")
	}
	if strings.HasSuffix(own, " (deleted)") {
		return "", errors.New("nodwyn's own cgroup was removed")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source super
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(right, "cgroup2 ") {
			continue
		}
		fs := strings.Fields(left)
		if len(fs) < 5 {
			continue
		}
		root, mnt := unescapeMount(fs[3]), unescapeMount(fs[4])
		rel, ok := strings.CutPrefix(own, root)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/") && root != "/") {
			continue
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", errors.New("no cgroup2 file system is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sweepCgroups removes the empty cgroups an earlier nodwyn that is gone
// (killed, or crashed) left in dir.
func sweepCgroups(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "nodwyn.")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, ".")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + pidText); err == nil {
			continue // that nodwyn (or whatever has its pid now) still runs
		}
		_ = syscall.Rmdir(filepath.Join(dir, e.Name())) // refused while populated
	}
}

// makeCgroup makes the cgroup at path and opens it for CgroupFD.
func makeCgroup(path string) (int, error) {
	if err := syscall.Mkdir(path, 0o755); err != nil {
		return -1, fmt.Errorf("mkdir %s: %v", path, err)
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = syscall.Rmdir(path)
		return -1, fmt.Errorf("open %s: %v", path, err)
	}
	return fd, nil
}

// cgroupPids lists the processes in the cgroup at path.
func cgroupPids(path string) []int {
	b, err := os.ReadFile(path + "/cgroup.procs")
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgroupPopulated reports whether a process is still in the cgroup at path
// (cgroup.events' populated; a cgroup that cannot be read counts as empty).
func cgroupPopulated(path string) bool {
	b, err := os.ReadFile(path + "/cgroup.events")
	if err != nil {
		return len(cgroupPids(path)) > 0
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// stopCgroup stops every process in the cgroup at path (SIGTERM and
// SIGCONT, then after grace cgroup.kill, or SIGKILL to each where the
// kernel has no cgroup.kill) and removes it once it is empty.
func stopCgroup(path string, grace time.Duration) {
	if pids := cgroupPids(path); len(pids) > 0 {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT} {
			for _, pid := range pids {
				_ = syscall.Kill(pid, sig)
			}
		}
		waitUntil(grace, func() bool { return !cgroupPopulated(path) })
	}
	if cgroupPopulated(path) {
		killCgroup(path)
		waitUntil(grace+2*time.Second, func() bool { return !cgroupPopulated(path) })
	}
	removeCgroup(path, time.Second)
}

// killCgroup sends SIGKILL to everything in the cgroup, what it forks
// meanwhile included.
func killCgroup(path string) {
	if err := os.WriteFile(path+"/cgroup.kill", []byte("1"), 0); err == nil {
		return
	}
	// Before Linux 5.14: freeze it so nothing forks, kill each, thaw.
	frozen := os.WriteFile(path+"/cgroup.freeze", []byte("1"), 0) == nil
	for round := 0; round < 10; round++ {
		pids := cgroupPids(path)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !frozen {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if frozen {
		_ = os.WriteFile(path+"/cgroup.freeze", []byte("0"), 0)
	}
}

// removeCgroup removes the (empty) cgroup at path, trying again up to d
// while the kernel still counts a process that has just ended.
func removeCgroup(path string, d time.Duration) error {
	var err error
	waitUntil(d, func() bool {
		err = syscall.Rmdir(path)
		return err == nil || errors.Is(err, syscall.ENOENT)
	})
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	return err
}

// waitUntil polls cond, more slowly as it goes, until it holds or d passed.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for wait := 2 * time.Millisecond; ; wait = min(wait*2, 50*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}
