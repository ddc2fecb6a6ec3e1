package prim

import (
	"bufio"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Sandbox mode (ADR 55, decision 4): what a command starts in the
// background keeps running after the command's own program exits; the call
// still returns about a second later.

func TestSandboxBackgroundChildKeepsRunning(t *testing.T) {
	t.Parallel()
	for _, command := range []string{
		"sleep 30 & echo $!",
		"nohup sh -c 'sleep 30' & echo $!",
	} {
		t.Run(command, func(t *testing.T) {
			tools := newTools(t, Options{Sandbox: true})
			start := time.Now()
			res := shell(t, tools, command)
			took := time.Since(start)
			pid := firstInt(t, res.Output)
			killAfter(t, pid)
			if took > 5*time.Second {
				t.Errorf("returned after %v; the background child held it", took)
			}
			if !pidAlive(pid) {
				t.Fatal("sandbox mode: the background child was stopped")
			}
			// Close leaves it alone too.
			tools.Close()
			if !pidAlive(pid) {
				t.Fatal("sandbox mode: Close stopped the background child")
			}
			killGroupOf(pid)
			waitDrains(t, tools)
		})
	}
}

// A background writer after the call returned writes into a pipe that is
// still read: it is not killed by SIGPIPE, and what it writes is dropped.
func TestSandboxBackgroundWriterNeverWritesToAClosedPipe(t *testing.T) {
	t.Parallel()
	tools := newTools(t, Options{Sandbox: true})
	marker := tools.opts.Scratch + "/wrote"
	res := shell(t, tools, `(sleep 1.5; seq 1 100000; touch `+marker+`; exec sleep 30) & echo $!`)
	pid := firstInt(t, res.Output)
	killAfter(t, pid)
	eventually(t, "the writer to finish writing", func() bool { return exec.Command("test", "-e", marker).Run() == nil })
	if !pidAlive(pid) {
		t.Fatal("the background writer died (SIGPIPE?)")
	}
	if strings.Contains(res.Output, "99999") {
		t.Errorf("what came after the call returned is in its result: %q", res.Output[:100])
	}
	killGroupOf(pid)
	waitDrains(t, tools)
	// The next call is unaffected.
	if res := shell(t, tools, "echo next"); res.Output != "next\n[exit status 0]" {
		t.Errorf("next call: %q", res.Output)
	}
}

// A real server (python3 -m http.server) started with nohup … &: its
// address is in the result, and it still answers after the call returned
// and after Close, in sandbox mode only.
func TestSandboxServerStillAnswers(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	if err := exec.Command("python3", "-c", "import http.server").Run(); err != nil {
		t.Skip("python3 cannot import http.server")
	}
	for _, sandbox := range []bool{true, false} {
		name := "default"
		if sandbox {
			name = "sandbox"
		}
		t.Run(name, func(t *testing.T) {
			tools, err := New(Options{Folder: t.TempDir(), Scratch: t.TempDir(), Sandbox: sandbox})
			if err != nil {
				t.Fatal(err)
			}
			defer tools.Close()
			res := shell(t, tools, "nohup python3 -u -m http.server 0 --bind 127.0.0.1 & echo $!")
			pid := firstInt(t, res.Output)
			killAfter(t, pid)
			// python may take longer than procSettle to start on a loaded
			// machine; the address is asked of it then.
			m := regexp.MustCompile(`port (\d+)`).FindStringSubmatch(res.Output)
			if m == nil {
				t.Skipf("the server printed no address within procSettle: %q", res.Output)
			}
			url := "http://127.0.0.1:" + m[1] + "/"
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			if sandbox {
				tools.Close()
				resp, err := client.Get(url)
				if err != nil {
					t.Fatalf("sandbox mode: the server does not answer after Close: %v", err)
				}
				line, _ := bufio.NewReader(resp.Body).ReadString('\n')
				resp.Body.Close()
				if !strings.Contains(strings.ToLower(line), "<!doctype") && resp.StatusCode != 200 {
					t.Errorf("answer %d %q", resp.StatusCode, line)
				}
				killGroupOf(pid)
				waitDrains(t, tools)
			} else {
				waitGone(t, pid)
				if _, err := client.Get(url); err == nil {
					t.Error("default mode: the server still answers")
				}
			}
		})
	}
}

// killGroupOf kills the process group pid is in (what a test left running).
func killGroupOf(pid int) {
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}
