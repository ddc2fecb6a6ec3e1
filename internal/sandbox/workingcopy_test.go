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
	"time"
)

func newWorkingCopy(t *testing.T, folder string) *WorkingCopySandbox {
	t.Helper()
	host := NewHost(HostOptions{Mark: NewMark(), StopGrace: 500 * time.Millisecond})
	wc, err := NewWorkingCopy(host, folder, t.TempDir(), os.Environ(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wc.Close() })
	return wc
}

func shellLine(dir, line string) Command {
	return Command{Shell: "/bin/sh", Line: line, Dir: dir, Env: os.Environ(), Timeout: 30 * time.Second}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func put(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A check that writes files, deletes a tracked file and changes another
// leaves the real folder as it was; the call reports the copy's hash.
func TestWorkingCopyCommandsNeverReachTheFolder(t *testing.T) {
	folder := t.TempDir()
	put(t, folder, "tracked.txt", "one\n")
	put(t, folder, "sub/keep.go", "package sub\n")
	gitInit(t, folder)
	before, err := HashDir(folder + "/sub")
	if err != nil {
		t.Fatal(err)
	}
	wc := newWorkingCopy(t, folder)
	c := shellLine(folder, "cat tracked.txt; rm tracked.txt; echo x > new.txt; echo y >> sub/keep.go; mkdir -p build && echo o > build/a.o; pwd")
	c.Hash = true
	out, err := wc.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Out, "one\n") || out.ExitCode != 0 {
		t.Fatalf("output %q exit %d", out.Out, out.ExitCode)
	}
	if pwd := strings.TrimSpace(strings.Split(out.Out, "\n")[1]); pwd == folder || !strings.Contains(pwd, "nodwyn-wc-") {
		t.Errorf("the command ran in %s, not in a copy", pwd)
	}
	if !strings.HasPrefix(out.WorkDirHash, "sha256:") {
		t.Errorf("no work dir hash: %q", out.WorkDirHash)
	}
	if b, err := os.ReadFile(filepath.Join(folder, "tracked.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("tracked.txt: %q %v", b, err)
	}
	for _, p := range []string{"new.txt", "build"} {
		if _, err := os.Lstat(filepath.Join(folder, p)); err == nil {
			t.Errorf("%s reached the folder", p)
		}
	}
	if after, _ := HashDir(folder + "/sub"); after != before {
		t.Errorf("sub/ changed in the folder")
	}
	// The copy is gone.
	if ents, _ := os.ReadDir(wc.base); len(ents) != 0 {
		t.Errorf("copies left in %s: %v", wc.base, ents)
	}
}

// A tracked link to the checkout by its absolute path points into the copy:
// what a command writes through it never reaches the folder.
func TestWorkingCopyLinksIntoTheCheckoutStayInTheCopy(t *testing.T) {
	folder := t.TempDir()
	put(t, folder, "data/keep.txt", "keep\n")
	if err := os.Symlink(filepath.Join(folder, "data"), filepath.Join(folder, "out")); err != nil {
		t.Fatal(err)
	}
	gitInit(t, folder)
	wc := newWorkingCopy(t, folder)
	out, err := wc.Run(context.Background(), shellLine(folder, "echo pwned > out/keep.txt && cat data/keep.txt"))
	if err != nil || out.ExitCode != 0 || out.Out != "pwned\n" {
		t.Fatalf("%q exit %d %v", out.Out, out.ExitCode, err)
	}
	if b, _ := os.ReadFile(filepath.Join(folder, "data", "keep.txt")); string(b) != "keep\n" {
		t.Errorf("the folder's data/keep.txt: %q", b)
	}
}

// The same checkout gives the same hash in two copies; what a command
// changes changes it.
func TestWorkingCopyHashFollowsTheContent(t *testing.T) {
	folder := t.TempDir()
	put(t, folder, "a.txt", "a\n")
	wc := newWorkingCopy(t, folder)
	h := func(line string) string {
		t.Helper()
		c := shellLine(folder, line)
		c.Hash = true
		out, err := wc.Run(context.Background(), c)
		if err != nil || out.ExitCode != 0 {
			t.Fatalf("%s: %v exit %d %s", line, err, out.ExitCode, out.Out)
		}
		return out.WorkDirHash
	}
	if a, b := h("true"), h("cat a.txt >/dev/null"); a != b {
		t.Errorf("two copies of the same checkout hash differently: %s %s", a, b)
	}
	if a, b := h("true"), h("chmod +x a.txt"); a == b {
		t.Errorf("a mode bit does not change the hash")
	}
	if a, b := h("true"), h("printf b > a.txt"); a == b {
		t.Errorf("a changed byte does not change the hash")
	}
	// Without Hash the copy is not hashed.
	out, err := wc.Run(context.Background(), shellLine(folder, "true"))
	if err != nil || out.WorkDirHash != "" {
		t.Errorf("a command that did not ask for it got the hash %q (%v)", out.WorkDirHash, err)
	}
}

// Kill-on-drop: what a command starts in the background in the copy, a
// setsid child holding its output included, is not running after the
// call, whatever the run's handling asked for.
func TestWorkingCopyKillsWhatTheCommandStarted(t *testing.T) {
	t.Parallel() // slow and independent: it runs beside the serial tests
	folder := t.TempDir()
	wc := newWorkingCopy(t, folder)
	for _, line := range []string{
		"sleep 300 & echo $!",
		"setsid sleep 300 & echo $!",
	} {
		c := shellLine(folder, line)
		c.Handling, c.LeaveRunning = Release, true // the working copy overrides both
		out, err := wc.Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(strings.Split(out.Out, "\n")[0]))
		if err != nil {
			t.Fatalf("%s: output %q", line, out.Out)
		}
		if PidAlive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s: pid %d still runs after the call", line, pid)
		}
	}
	// And at its time limit the command is stopped, not left running.
	c := shellLine(folder, "echo $$; sleep 300")
	c.Timeout, c.LeaveRunning = 500*time.Millisecond, true
	out, _ := wc.Run(context.Background(), c)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.Split(out.Out, "\n")[0]))
	if err != nil || pid <= 0 {
		t.Fatalf("at its time limit: no pid in the output %q: %v", out.Out, err)
	}
	if out.LeftRunning || PidAlive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("at its time limit the command was left running: %+v", out)
	}
}

// daemonLine starts a setsid daemon that leaves the process group and holds
// no pipe, writing its pid to pidFile before the line goes on.
func daemonLine(pidFile string) string {
	return "setsid sh -c 'echo $$ > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; exec sleep 300' </dev/null >/dev/null 2>&1 & " +
		"while [ ! -s " + pidFile + " ]; do sleep 0.01; done"
}

func readPid(t *testing.T, pidFile string) int {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil || pid <= 0 {
		t.Fatalf("the daemon's pid: %q %v %v", b, err, perr)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// Kill-on-drop reaches what left the process group and holds no pipe (a
// setsid daemon): the call's own mark finds it as the call ends, in
// sandbox mode (Release) too, and a background command's as it ends.
func TestWorkingCopyStopsADaemonAsTheCallEnds(t *testing.T) {
	for _, release := range []bool{false, true} {
		t.Run(map[bool]string{false: "stop", true: "release"}[release], func(t *testing.T) {
			folder := t.TempDir()
			host := NewHost(HostOptions{Mark: NewMark(), Release: release, StopGrace: 500 * time.Millisecond})
			wc, err := NewWorkingCopy(host, folder, t.TempDir(), os.Environ(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer wc.Close()
			pidFile := filepath.Join(t.TempDir(), "pid")
			c := shellLine(folder, daemonLine(pidFile))
			c.Handling = map[bool]Handling{false: Stop, true: Release}[release]
			out, err := wc.Run(context.Background(), c)
			if err != nil || out.ExitCode != 0 {
				t.Fatalf("%q exit %d %v", out.Out, out.ExitCode, err)
			}
			if pid := readPid(t, pidFile); PidAlive(pid) {
				t.Errorf("the setsid daemon %d still runs after Run returned", pid)
			}

			bgFile := filepath.Join(t.TempDir(), "pid")
			f, err := os.Create(filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := wc.Start(shellLine(folder, daemonLine(bgFile)), f)
			if err != nil {
				t.Fatal(err)
			}
			<-p.Exited()
			pid := readPid(t, bgFile)
			eventually(t, "the background command's daemon to be stopped", func() bool { return !PidAlive(pid) })
		})
	}
}

// Start and Close at once: every process started is stopped and every copy
// removed by the time Close returns (run with -race: the registration and
// Close's wait are ordered).
func TestWorkingCopyStartRacesClose(t *testing.T) {
	folder := t.TempDir()
	put(t, folder, "a.txt", "a\n")
	ran := 0
	for i := range 20 {
		host := NewHost(HostOptions{Mark: NewMark(), StopGrace: 200 * time.Millisecond})
		base := t.TempDir()
		wc, err := NewWorkingCopy(host, folder, base, os.Environ(), nil)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan *Process, 1)
		go func() {
			p, _ := wc.Start(shellLine(folder, "exec sleep 300"), f)
			started <- p
		}()
		if i%2 == 1 {
			time.Sleep(time.Duration(i) * time.Millisecond)
		}
		wc.Close()
		p := <-started
		if p != nil {
			if p.State() == nil {
				p.Stop()
				t.Errorf("round %d: the process %d still runs after Close", i, p.Pgid)
			}
		}
		f.Close()
		if ents, _ := os.ReadDir(base); len(ents) != 0 {
			t.Errorf("round %d: copies left after Close: %v", i, ents)
		}
		if p != nil {
			ran++
		}
	}
	t.Logf("%d of 20 started before Close", ran)
}

// Materialize copies only the checkout or a folder inside it.
func TestWorkingCopyMaterializeStaysInTheCheckout(t *testing.T) {
	parent := t.TempDir()
	folder := filepath.Join(parent, "ck")
	put(t, folder, "sub/a.txt", "a\n")
	put(t, parent, "other/b.txt", "b\n")
	put(t, parent, "ckx/c.txt", "c\n")
	wc := newWorkingCopy(t, folder)
	for _, bad := range []string{parent, filepath.Join(parent, "other"), folder + "/../other", folder + "x", "sub"} {
		if wd, err := wc.Materialize(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "is not inside") {
			t.Errorf("Materialize(%s): %v, %v", bad, wd, err)
			wd.Remove()
		}
	}
	for _, good := range []string{folder, folder + "/sub", folder + "/sub/../"} {
		wd, err := wc.Materialize(context.Background(), good)
		if err != nil {
			t.Errorf("Materialize(%s): %v", good, err)
			continue
		}
		wd.Remove()
	}
}

// A background command (Start) gets a copy of its own, removed once it is
// stopped.
func TestWorkingCopyStartAndStop(t *testing.T) {
	folder := t.TempDir()
	put(t, folder, "a.txt", "a\n")
	wc := newWorkingCopy(t, folder)
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := wc.Start(shellLine(folder, "pwd; echo bg > made.txt; exec sleep 300"), f)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the output", func() bool { b, _ := os.ReadFile(f.Name()); return strings.Contains(string(b), "nodwyn-wc-") })
	p.Stop()
	if p.State() == nil {
		t.Fatal("still running after Stop")
	}
	eventually(t, "the copy to be removed", func() bool { ents, _ := os.ReadDir(wc.base); return len(ents) == 0 })
	if _, err := os.Stat(filepath.Join(folder, "made.txt")); err == nil {
		t.Error("the background command wrote into the folder")
	}
}

func TestCapsSayWhatIsContained(t *testing.T) {
	host := NewHost(HostOptions{})
	defer host.Close()
	if s := host.Capabilities().String(); s != "no_sandbox (host execution in the folder; not a security boundary: host paths, network)" {
		t.Errorf("NoSandbox caps %q", s)
	}
	wc, err := NewWorkingCopy(host, t.TempDir(), t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := wc.Capabilities().String(); s != "working_copy (a copy of the checkout per command, kill-on-drop; not a security boundary: host paths, network)" {
		t.Errorf("working copy caps %q", s)
	}
}

// A file the copy may not read is left out and the command runs, told
// which; a copy that cannot be made for another reason says so, without
// blaming the shell.
func TestWorkingCopyUnreadableFiles(t *testing.T) {
	folder := t.TempDir()
	put(t, folder, "a.txt", "a\n")
	put(t, folder, "secret.txt", "root's\n")
	put(t, folder, "bad.txt", "bad\n")
	wc := newWorkingCopy(t, folder)
	refuseOpen(t, map[string]error{"secret.txt": syscall.EACCES})
	out, err := wc.Run(context.Background(), shellLine(folder, "cat a.txt; ls"))
	if err != nil || out.ExitCode != 0 || out.Out != "a\na.txt\nbad.txt\n" {
		t.Fatalf("%q exit %d %v", out.Out, out.ExitCode, err)
	}
	if want := "[the working copy left out 1 path(s) it was not permitted to read: secret.txt]"; !strings.Contains(out.Trailer, want) {
		t.Errorf("trailer %q, want %q", out.Trailer, want)
	}
	refuseOpen(t, map[string]error{"bad.txt": syscall.EIO})
	_, err = wc.Run(context.Background(), shellLine(folder, "true"))
	var se *StartError
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "making the working copy of "+folder+": ") || strings.Contains(err.Error(), "/bin/sh") {
		t.Errorf("Run: %v", err)
	}
	_, err = wc.Start(shellLine(folder, "true"), nil)
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "making the working copy of "+folder+": ") {
		t.Errorf("Start: %v", err)
	}
}
