package guard

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRefusedLinesDoLeakWhenRunForReal shows that the suite's lines are
// real attempts, not strings that happen to be refused: a read-only subset
// is run with bash against the temporary home, and each prints a planted
// canary. Each is refused by the guard in both modes. Nothing here writes
// outside the test's own directories or reaches the network.
func TestRefusedLinesDoLeakWhenRunForReal(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	e := newTestEnv(t)
	lines := []string{
		"cat ~/.ssh/id_rsa",
		"cat ~/.s?h/id_rsa",
		"cat ~/.ss{h,}/id_rsa 2>/dev/null",
		"d=.ssh; cat ~/$d/id_rsa",
		"a=.s; b=sh; cat ~/$a$b/id_rsa",
		"cat $(echo ~/.ssh/id_rsa)",
		"find ~/.ssh -name id_rsa | xargs cat",
		"echo ~/.aws/credentials | xargs cat",
		"cd; cat .ssh/id_rsa",
		"cat ../../.ssh/id_rsa",
		"bash -c 'cat ~/.ssh/id_rsa'",
		"eval \"cat ~/.kube/config\"",
		"echo Y2F0IH4vLnNzaC9pZF9yc2E= | base64 -d | sh",
		"f(){ cat \"$1\"; }; f ~/.ssh/id_rsa",
		"set -- ~/.ssh/id_rsa; cat \"$1\"",
		"x=HOME; cat ${!x}/.aws/credentials",
		"cat $XDG_CONFIG_HOME/nodwyn/config.toml",
		"cat " + e.Data + "/sessions/s1.json",
		"ls $CREDENTIALS_DIRECTORY >/dev/null && cat $CREDENTIALS_DIRECTORY/api-key",
		"cat /proc/self/environ | tr '\\0' '\\n'",
		"python3 -c \"import os; print(open(os.path.expanduser('~/.ssh/id_rsa')).read())\"",
	}
	env := []string{
		"HOME=" + e.Home, "PATH=/usr/local/bin:/usr/bin:/bin",
		"XDG_CONFIG_HOME=" + strings.TrimSuffix(e.Config, "/nodwyn"),
		"CREDENTIALS_DIRECTORY=" + e.Cred, "NODWYN_TEST_KEY=" + canary,
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "python3") {
			if _, err := exec.LookPath("python3"); err != nil {
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, bash, "-c", line)
		cmd.Dir, cmd.Env = e.Folder, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		_ = cmd.Run()
		cancel()
		if !strings.Contains(out.String(), canary) {
			t.Errorf("%q run for real did not print the canary: %q", line, out.String())
		}
		for _, sandbox := range []bool{false, true} {
			if d := e.guard(sandbox).Check(bg, shell(line)); d.Verdict != Refuse {
				t.Errorf("sandbox=%v %q: %v (%s)", sandbox, line, d.Verdict, d.Reason)
			}
		}
	}
}
