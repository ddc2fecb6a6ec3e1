package daemon

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/rpc"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// The daemon does not serve the processes its runs start: a descendant of
// the daemon, or a process carrying a run's mark, is refused; the
// person's own processes are served.
func TestDaemonRefusesItsRunsProcesses(t *testing.T) {
	child := exec.Command("sleep", "5")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if err := admit(rpc.Peer{PID: child.Process.Pid}); err == nil {
		t.Error("a child of the daemon was admitted")
	}
	marked := exec.Command("sleep", "5")
	marked.Env = []string{sandbox.MarkEnv + "=x"}
	setsid := exec.Command("setsid", "-f", "sh", "-c", "exec sleep 5")
	setsid.Env = []string{sandbox.MarkEnv + "=x", "PATH=" + os.Getenv("PATH")}
	if err := setsid.Run(); err != nil {
		t.Skip("no setsid:", err)
	}
	// The setsid child has left the daemon's tree; its mark still names it.
	out, _ := exec.Command("pgrep", "-f", "^sleep 5$", "-n").Output()
	var pid int
	for _, f := range strings.Fields(string(out)) {
		pid = atoiOr(f)
	}
	if pid > 0 && pid != child.Process.Pid {
		if err := admit(rpc.Peer{PID: pid}); err == nil {
			t.Error("a setsid process with a run's mark was admitted")
		}
		p, _ := os.FindProcess(pid)
		p.Kill()
	}
	if err := admit(rpc.Peer{PID: os.Getppid()}); err != nil {
		t.Errorf("the test's parent (not the daemon's) was refused: %v", err)
	}
}

func atoiOr(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
