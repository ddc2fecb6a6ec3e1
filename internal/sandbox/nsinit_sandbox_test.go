package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Sandbox mode with the home under /tmp (issue 27 item 7): commands write
// in the directories above denied paths — a file in /tmp, ~/.bashrc
// appended, git config --global, a directory made and written in one
// command — while the catalogue stays unreadable and nodwyn's own
// directories are empty and read-only to them, the scratch directory kept;
// what a command leaves running outlives the namespace's holder.
func TestSandboxNSLetsTheTaskWriteAncestors(t *testing.T) {
	needFloor(t)
	h := newCanaryHome(t)
	above := filepath.Dir(h.home) // an ancestor of every denied path
	config := filepath.Join(h.home, ".config/nodwyn")
	netrc := filepath.Join(h.home, ".netrc")
	os.WriteFile(netrc, []byte(canary+" netrc\n"), 0o600)
	ns, err := NewSandboxNS(append(h.deny, netrc), []string{h.scratch})
	if err != nil {
		t.Skipf("no mount namespace for sandbox mode here: %v", err)
	}
	f, err := NewFloor(append(h.deny, netrc), []string{h.scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SetNamespaces(ns)
	f.GrantAll()
	env := "export HOME=" + h.home + "; "
	for _, line := range []string{
		"echo x > " + above + "/from-the-task && cat " + above + "/from-the-task > /dev/null",
		"echo 'export X=1' >> ~/.bashrc",
		"git config --global user.name task && git config --global --get user.name",
		"mkdir ~/made && echo y > ~/made/f && cat ~/made/f",
		"sed -i 's/rc/RC/' ~/.bashrc",
		"echo s > " + h.scratch + "/s",
	} {
		if out, ok := runUnder(t, f, h.folder, env+line); !ok {
			t.Errorf("sandbox mode refused ordinary work in an ancestor: %s\n%s", line, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(h.home, ".bashrc")); !strings.Contains(string(b), "export X=1") {
		t.Errorf("~/.bashrc is %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.scratch, "s")); string(b) != "s\n" {
		t.Errorf("the scratch directory was not written through: %q", b)
	}
	for _, line := range []string{
		"cat ~/.ssh/id_rsa",
		"cat ~/.netrc | grep " + canary,
		"echo x >> ~/.netrc",
		"cat ~/.aws/credentials",
		"cat ~/.config/nodwyn/credentials",
		"cat ~/.local/share/nodwyn/journal/key",
		"ls ~/.config/nodwyn | grep credentials",
		"echo 'base_url = \"http://evil\"' > ~/.config/nodwyn/config.toml",
		"mv ~/.ssh ~/ssh2",
		"ln ~/.ssh/id_rsa ~/stolen",
	} {
		if out, ok := runUnder(t, f, h.folder, env+line); ok || strings.Contains(out, canary) {
			t.Errorf("sandbox mode let through: %s\n%s", line, out)
		}
	}
	if _, err := os.Stat(filepath.Join(config, "config.toml")); err == nil {
		t.Error("a command planted nodwyn's config.toml")
	}
	// A server the task started runs on after the session.
	bg := exec.Command("sleep", "3600")
	if err := StartFloored(f, bg); err != nil {
		t.Fatal(err)
	}
	defer func() { bg.Process.Kill(); bg.Wait() }()
	ns.Close()
	if !PidAlive(bg.Process.Pid) {
		t.Error("a background process did not outlive the sandbox namespace's holder")
	}
}

// The file tools' own opens (Floor.Do) are not in the sandbox namespace:
// under GrantAll they keep the denying ruleset.
func TestGrantAllLeavesDoDenying(t *testing.T) {
	needFloor(t)
	h := newCanaryHome(t)
	f, err := NewFloor(h.deny, []string{h.scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.GrantAll()
	err = f.Do(func() error {
		_, err := os.ReadFile(filepath.Join(h.home, ".ssh", "id_rsa"))
		return err
	})
	if err == nil {
		t.Error("Do read a denied file under GrantAll")
	}
}
