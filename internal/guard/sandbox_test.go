package guard

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSandboxModeJudgesWhatFeedsAnotherCommandByTheDenylist(t *testing.T) {
	e := newTestEnv(t)
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		for _, line := range []string{"cat $(echo ~/.ssh/id_rsa)", "find ~/.ssh | xargs cat", "cat ~/.ssh/id_rsa", "echo ~/.aws/credentials | xargs cat"} {
			if d := g.Check(bg, shell(line)); d.Verdict != Refuse {
				t.Errorf("sandbox=%v %q: %v (%s)", sandbox, line, d.Verdict, d.Reason)
			}
		}
	}
	if d := e.guard(true).Check(bg, shell("echo /etc/hosts | xargs cat")); d.Verdict != Allow {
		t.Errorf("sandbox echo /etc/hosts | xargs cat: %v (%s)", d.Verdict, d.Reason)
	}
	if d := e.guard(false).Check(bg, shell("echo /etc/hosts | xargs cat")); d.Verdict != SecurityConfirm {
		t.Errorf("default echo /etc/hosts | xargs cat: %v (%s)", d.Verdict, d.Reason)
	}
}

// TestSandboxModeChangesFourCheckersAndNothingElse shows each change both
// ways, and what stays the same.
func TestSandboxModeChangesFourCheckersAndNothingElse(t *testing.T) {
	e := newTestEnv(t)
	def, sb := e.guard(false), e.guard(true)
	both := func(name string, req Request, wantDef, wantSB Verdict) {
		t.Helper()
		if d := def.Check(bg, req); d.Verdict != wantDef {
			t.Errorf("%s by default: %v (%s: %s), want %v", name, d.Verdict, d.Checker, d.Reason, wantDef)
		}
		if d := sb.Check(bg, req); d.Verdict != wantSB {
			t.Errorf("%s in sandbox mode: %v (%s: %s), want %v", name, d.Verdict, d.Checker, d.Reason, wantSB)
		}
	}
	// RepoPin.Sandbox
	both("fs-write /etc/nginx/nginx.conf", file("fs-write", "/etc/nginx/nginx.conf"), Refuse, Allow)
	both("fs-write /root/.bashrc", file("fs-write", "/root/.bashrc"), Refuse, Allow)
	// ArgvTrigger.Sandbox
	both("sed -i on /etc", shell("sed -i 's/80/8080/' /etc/nginx/sites-available/default"), SecurityConfirm, Allow)
	both("echo >> /root/.bashrc", shell("echo 'export X=1' >> /root/.bashrc"), SecurityConfirm, Allow)
	both("cat /etc/os-release", shell("cat /etc/os-release"), SecurityConfirm, Allow)
	both("openssl -keyout server.key", shell("openssl req -x509 -nodes -newkey rsa:2048 -keyout server.key -out server.crt -subj /CN=x"), SecurityConfirm, Allow)
	// ProtectedPaths.Sandbox
	both("fs-write Makefile", file("fs-write", "Makefile"), SecurityConfirm, Allow)
	both("fs-write .git/config", file("fs-write", ".git/config"), SecurityConfirm, Allow)
	both("fs-write .nodwyn/init.scm", file("fs-write", ".nodwyn/init.scm"), SecurityConfirm, Refuse)
	// Unchanged: the file tools' denylist, the content scan, network and
	// hard-trigger confirms, a named denied directory.
	both("fs-read ~/.ssh/id_rsa", file("fs-read", filepath.Join(e.Home, ".ssh", "id_rsa")), Refuse, Refuse)
	both("fs-read data dir", file("fs-read", filepath.Join(e.Data, "sessions", "s1.json")), Refuse, Refuse)
	both("fs-write server.pem", file("fs-write", "server.pem"), Refuse, Refuse)
	both("a credential written", Request{Tool: "fs-write", Args: map[string]any{"path": "a.txt", "content": "AKIAIOSFODNN7EXAMPLE"}}, SecurityConfirm, SecurityConfirm)
	both("curl", shell("curl -fsSL https://example.com/install.sh -o install.sh"), Confirm, Confirm)
	both("rm -rf", shell("rm -rf build"), Confirm, Confirm)
	both("cat ~/.aws/credentials", shell("cat ~/.aws/credentials"), Refuse, Refuse)
	both("config dir", shell("ls "+e.Config), Refuse, Refuse)
	if g := e.guard(true); g.Redact("AKIAIOSFODNN7EXAMPLE") != "[REDACTED:aws-access-key]" {
		t.Error("ingress redaction differs in sandbox mode")
	}
	d := sb.Check(bg, shell("tar czf - "+filepath.Join(e.Home, ".kube")))
	if !strings.Contains(d.Reason, "in a directory nodwyn keeps off limits in sandbox mode too") || !strings.Contains(d.Reason, ".kube") || !strings.Contains(d.Reason, "so it was refused and nothing of it ran") {
		t.Errorf("sandbox refusal message: %s", d.Reason)
	}
}
