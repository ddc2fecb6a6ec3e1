package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Issue 28, item 2: nothing a session started outlives it outside sandbox
// mode, whatever it did to its environment, process group and descriptors.
// Each test runs under both mechanisms: the session's cgroup (where one can
// be made: root, a delegated subtree) and the subreaper (asked for).

var reapModes = []string{"cgroup", "subreaper"}

func reapHost(t *testing.T, mode string, release bool) *NoSandbox {
	t.Helper()
	h := NewHost(HostOptions{Mark: NewMark(), Release: release, StopGrace: 300e6, Settle: 50e6})
	switch mode {
	case "cgroup":
		if _, err := cgroupUsable(); err != nil {
			t.Skipf("no cgroup here: %v", err)
		}
	case "subreaper":
		if err := subreaperUsable(); err != nil {
			t.Skipf("no subreaper here: %v", err)
		}
		h.conf.cgErr = errors.New("the test asks for the subreaper")
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// escapes are command lines that leave the command's process group and
// session, clear the environment (the mark with it) and hold none of the
// output pipe; each writes its daemon's pid to P and waits for it.
var escapes = map[string]string{
	"env -i setsid nohup": `/usr/bin/env -i setsid nohup /bin/sh -c 'echo $$ > @P@.tmp; mv @P@.tmp @P@; exec sleep 1000' </dev/null >/dev/null 2>&1 &
while [ ! -s @P@ ]; do sleep 0.01; done`,
	"closes every descriptor": `/usr/bin/env -i setsid /bin/sh -c 'exec 0<&- 1>&- 2>&-; echo $$ > @P@.tmp; mv @P@.tmp @P@; exec sleep 1000' &
while [ ! -s @P@ ]; do sleep 0.01; done`,
	"python double fork": `python3 -c '
import os, sys
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): os._exit(0)
os.closerange(0, 65536)
fd = os.open("@P@.tmp", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"%d\n" % os.getpid()); os.close(fd); os.rename("@P@.tmp", "@P@")
os.execve("/bin/sleep", ["sleep", "1000"], {})
'
while [ ! -s @P@ ]; do sleep 0.01; done`,
}

// escape runs one of escapes in h and returns its daemon's pid, alive
// after the call (else the test would show nothing).
func escape(t *testing.T, h *NoSandbox, name string) int {
	t.Helper()
	if strings.Contains(name, "python") {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("no python3")
		}
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "daemon.pid")
	c := shellLine(dir, strings.ReplaceAll(escapes[name], "@P@", pidFile))
	c.Env = append(c.Env, MarkEnv+"="+h.opts.Mark)
	out, err := h.Run(context.Background(), c)
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("%s: %q exit %d %v", name, out.Out, out.ExitCode, err)
	}
	pid := readPid(t, pidFile)
	if !PidAlive(pid) {
		t.Fatalf("%s: the daemon %d did not outlive its command", name, pid)
	}
	return pid
}

// gone waits until pid has ended and no zombie of it is this process's to
// reap (one whose parent is init is init's).
func gone(t *testing.T, pid int) {
	t.Helper()
	eventually(t, "the daemon to end and be reaped", func() bool {
		p, ok := readProc(pid)
		return !ok || (p.state == 'Z' && p.ppid != os.Getpid())
	})
}

func TestCloseStopsWhatLeftEverything(t *testing.T) {
	for _, mode := range reapModes {
		for name := range escapes {
			t.Run(mode+"/"+name, func(t *testing.T) {
				h := reapHost(t, mode, false)
				pid := escape(t, h, name)
				h.Close()
				gone(t, pid)
			})
		}
	}
}

// In sandbox mode what a command started keeps running after Close.
func TestSandboxModeLeavesWhatLeftEverything(t *testing.T) {
	for _, mode := range reapModes {
		t.Run(mode, func(t *testing.T) {
			h := reapHost(t, mode, true)
			pid := escape(t, h, "env -i setsid nohup")
			h.Close()
			if !PidAlive(pid) {
				t.Fatalf("sandbox mode: Close stopped the daemon %d", pid)
			}
			if c := h.Confinement(); !strings.HasPrefix(c, "none: sandbox mode") {
				t.Errorf("Confinement: %q", c)
			}
			syscall.Kill(pid, syscall.SIGKILL)
			gone(t, pid)
		})
	}
}

// Two sessions in one process: closing one stops its own daemon and leaves
// the other's. Under the subreaper, the second session starts after the
// first's daemon did, so that daemon is the first's alone; the second's
// daemon started while both were open and is stopped when the last of them
// ends.
func TestClosingOneSessionLeavesAnothersDaemon(t *testing.T) {
	for _, mode := range reapModes {
		t.Run(mode, func(t *testing.T) {
			a := reapHost(t, mode, false)
			pa := escape(t, a, "env -i setsid nohup")
			pinfo, _ := readProc(pa)
			eventually(t, "a clock tick", func() bool { return nowTicks() > pinfo.start+3 })
			b := reapHost(t, mode, false)
			pb := escape(t, b, "closes every descriptor")
			a.Close()
			gone(t, pa)
			if !PidAlive(pb) {
				t.Fatalf("closing one session stopped the other's daemon")
			}
			b.Close()
			gone(t, pb)
		})
	}
}

// The subreaper adopts what a command orphans, reaps it when it ends on its
// own (no zombie piles up while the session runs), and never waits for nor
// stops nodwyn's own children: os/exec still gets their exit status, and a
// helper that looks like a daemon (its own session) survives Close.
func TestSubreaperReapsOrphansAndLeavesOwnChildren(t *testing.T) {
	h := reapHost(t, "subreaper", false)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "p")
	c := shellLine(dir, strings.ReplaceAll(`/usr/bin/env -i setsid /bin/sh -c 'echo $$ > @P@.tmp; mv @P@.tmp @P@; exec sleep 0.5' </dev/null >/dev/null 2>&1 &
while [ ! -s @P@ ]; do sleep 0.01; done`, "@P@", pidFile))
	if out, err := h.Run(context.Background(), c); err != nil || out.ExitCode != 0 {
		t.Fatalf("%q %v", out.Out, err)
	}
	pid := readPid(t, pidFile)
	if !reaper.enabled() {
		t.Fatal("this process is not the subreaper")
	}
	if p, ok := readProc(pid); ok && p.state != 'Z' && p.ppid != os.Getpid() {
		t.Errorf("the orphan %d has parent %d, not this process", pid, p.ppid)
	}
	eventually(t, "the orphan to end on its own and be reaped", func() bool {
		_, ok := readProc(pid)
		return !ok
	})

	helper := exec.Command("sleep", "1000")
	helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { helper.Process.Kill(); helper.Wait() }()
	quick := exec.Command("sh", "-c", "exit 7")
	if err := quick.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the child to be a zombie", func() bool {
		p, ok := readProc(quick.Process.Pid)
		return ok && p.state == 'Z'
	})
	reaper.sweep(false, 0)
	if err := quick.Wait(); ExitCode(quick.ProcessState) != 7 {
		t.Errorf("os/exec lost its child's exit status: %v", err)
	}
	h.Close()
	if !PidAlive(helper.Process.Pid) {
		t.Errorf("Close stopped a child this process started itself")
	}
}

// The cgroup: every command starts in it, Start's too; Confinement names
// it; Close removes it, leaving no empty directory.
func TestSessionCgroup(t *testing.T) {
	h := reapHost(t, "cgroup", false)
	conf := h.Confinement()
	path, ok := strings.CutPrefix(conf, "cgroup ")
	if !ok {
		t.Fatalf("Confinement: %q", conf)
	}
	dir := t.TempDir()
	out, err := h.Run(context.Background(), shellLine(dir, "cat /proc/self/cgroup"))
	if err != nil || !strings.Contains(out.Out, "/"+filepath.Base(path)+"\n") {
		t.Fatalf("the command is not in %s: %q %v", path, out.Out, err)
	}
	f, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := h.Start(shellLine(dir, "exec sleep 1000"), f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(readFile(t, path+"/cgroup.procs")), " "), strconv.Itoa(p.Pgid)) {
		t.Errorf("Start's process %d is not in the cgroup", p.Pgid)
	}
	h.Close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the session's cgroup is still there after Close: %v", err)
	}
	if _, err := h.Run(context.Background(), shellLine(dir, "true")); err == nil {
		t.Errorf("a command ran after Close")
	}
}

// Under the kernel floor too (the command starts on a restricted thread).
func TestSessionCgroupUnderTheFloor(t *testing.T) {
	needFloor(t)
	if _, err := cgroupUsable(); err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	f, err := NewFloor([]string{t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHost(HostOptions{Mark: NewMark(), Floor: f, StopGrace: 300e6, Settle: 50e6})
	defer h.Close()
	pid := escape(t, h, "env -i setsid nohup")
	path := strings.TrimPrefix(h.Confinement(), "cgroup ")
	if !strings.Contains(readFile(t, "/proc/"+strconv.Itoa(pid)+"/cgroup"), filepath.Base(path)) {
		t.Errorf("the daemon is not in the session's cgroup")
	}
	h.Close()
	gone(t, pid)
}

// A session that starts nothing makes no cgroup and turns nothing on.
func TestConfinementSaysTheMechanism(t *testing.T) {
	s := reapHost(t, "subreaper", false)
	if c := s.Confinement(); !strings.HasPrefix(c, "subreaper (no cgroup: the test asks") {
		t.Errorf("Confinement: %q", c)
	}
	if _, err := cgroupUsable(); err == nil {
		h := NewHost(HostOptions{})
		c := h.Confinement()
		h.Close()
		if path, ok := strings.CutPrefix(c, "cgroup "); !ok {
			t.Errorf("Confinement: %q", c)
		} else if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a session that ran nothing left %s", path)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkRunConfined is a command's cost under each mechanism, beside
// sandbox mode's none: go test -run - -bench RunConfined ./internal/sandbox/
func BenchmarkRunConfined(b *testing.B) {
	for _, mode := range []string{"none", "cgroup", "subreaper"} {
		b.Run(mode, func(b *testing.B) {
			h := NewHost(HostOptions{Release: mode == "none", Settle: 50e6})
			switch mode {
			case "cgroup":
				if _, err := cgroupUsable(); err != nil {
					b.Skip(err)
				}
			case "subreaper":
				if err := subreaperUsable(); err != nil {
					b.Skip(err)
				}
				h.conf.cgErr = errors.New("asked for")
			}
			defer h.Close()
			for b.Loop() {
				o, err := h.Run(context.Background(), Command{Argv: []string{"/bin/true"}, Dir: "/", Env: os.Environ()})
				if err != nil || o.ExitCode != 0 {
					b.Fatal(err, o.Text())
				}
			}
		})
	}
}

// BenchmarkSweep is what the subreaper does on each SIGCHLD (every command
// that ends) with one child of the process running.
func BenchmarkSweep(b *testing.B) {
	if err := subreaperUsable(); err != nil {
		b.Skip(err)
	}
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for b.Loop() {
		reaper.sweep(false, 0)
	}
}

// Under the subreaper, a sandbox-mode session's daemon is left running when
// another session open at the same time in the process ends: sandbox mode's
// promise wins over a guess.
func TestSubreaperLeavesASandboxSessionsDaemon(t *testing.T) {
	a := reapHost(t, "subreaper", false)
	if out, err := a.Run(context.Background(), shellLine(t.TempDir(), "true")); err != nil || out.ExitCode != 0 {
		t.Fatalf("%q %v", out.Out, err)
	}
	r := reapHost(t, "", true)
	pid := escape(t, r, "env -i setsid nohup")
	r.Close()
	if !PidAlive(pid) {
		t.Fatalf("sandbox mode: Close stopped the daemon")
	}
	a.Close()
	if !PidAlive(pid) {
		t.Fatalf("closing a session stopped a sandbox-mode session's daemon")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	gone(t, pid)
}
