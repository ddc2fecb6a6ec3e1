package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestStopGroupAndGroupAlive(t *testing.T) {
	for _, script := range []string{
		"sleep 30 & sleep 30",
		"trap '' TERM; sleep 30 & sleep 30", // ignores SIGTERM: SIGKILL after the grace
	} {
		cmd := exec.Command("sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pgid := cmd.Process.Pid
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if !GroupAlive(pgid) || !PidAlive(pgid) {
			t.Fatalf("%s: group not alive after start", script)
		}
		if _, pg, ok := procStat(pgid); !ok || pg != pgid {
			t.Errorf("procStat: pgid %d ok %v, want %d", pg, ok, pgid)
		}
		StopGroup(pgid, 200*time.Millisecond)
		<-done
		eventually(t, "the group to end", func() bool { return !GroupAlive(pgid) })
	}
	StopGroup(0, 0) // no group: nothing to do
}
