package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// In sandbox mode (AllowAncestorWrites) ordinary writes in a directory above
// a denied one work — a file in the /tmp above the home, ~/.bashrc made or
// appended, git config --global, a directory made and written in one
// command — while what is denied stays unreadable and cannot be linked,
// renamed or moved out; without it the same writes are refused, as before.
func TestFloorLetsSandboxModeWriteInAncestors(t *testing.T) {
	needFloor(t)
	top := t.TempDir() // stands for the /tmp a harness's home is under
	h := newCanaryHomeAt(t, filepath.Join(top, "home"))
	os.Remove(filepath.Join(h.home, ".bashrc"))
	writes := []string{
		`echo x > ` + top + `/file && echo y >> ` + top + `/file`,
		`nohup sh -c 'echo started' > ` + top + `/srv.log 2>&1 &`,
		`echo 'export X=1' >> ~/.bashrc`,
		`echo 'export Y=1' >> ~/.profile && : > ~/.hushlogin`,
		`mkdir ~/newd && echo y > ~/newd/f`,
		`mkdir -p ~/.config/go/telemetry && echo t > ~/.config/go/telemetry/mode`,
		`echo a > ~/solution.sh`,
		`echo b > ~/solution.sh && cat ~/solution.sh && rm ~/.hushlogin`, // an edit of what the last command made
	}
	before := h.host(t, true)
	for _, l := range writes[:3] {
		if o := h.run(t, before, l); o.ExitCode == 0 && !strings.Contains(l, "nohup") {
			t.Errorf("without ancestor writes %s went through:\n%s", l, o.Text())
		}
	}

	sb := h.host(t, true)
	sb.opts.Floor.AllowAncestorWrites()
	for _, l := range writes {
		if o := h.run(t, sb, l); o.ExitCode != 0 {
			t.Errorf("%s: refused in sandbox mode:\n%s", l, o.Text())
		}
	}
	// What was written is there, and read from the next command on.
	for _, l := range []string{
		`grep -q y ` + top + `/file`, `grep -q 'export X=1' ~/.bashrc`, `cat ~/newd/f`, `grep -q b ~/solution.sh`,
	} {
		if o := h.run(t, sb, l); o.ExitCode != 0 {
			t.Errorf("%s: not readable in the next command:\n%s", l, o.Text())
		}
	}
	// What the kernel cannot give: a file new in an ancestor opened to be
	// read in the same command (git's lock file). The note says so.
	if _, err := exec.LookPath("git"); err == nil {
		o := h.run(t, sb, `git config --global user.name Sandbox`)
		if o.ExitCode == 0 || !strings.Contains(o.Trailer, "only from the next command") {
			t.Errorf("git config --global: want a refusal with the note:\n%s", o.Text())
		}
	}

	// The denied paths: not read, not linked, renamed or moved out, by any
	// of these, and a later command reads nothing of them either.
	for _, l := range []string{
		`cat ~/.ssh/id_rsa`,
		`ln ~/.ssh/id_rsa ~/stolen`,
		`mv ~/.ssh/id_rsa ~/stolen`,
		`mv ~/.ssh ~/ssh2`,
		`mv ~/.aws/credentials ` + top + `/c`,
		`cp ~/.aws/credentials ~/c2`,
		`ln -s ~/.ssh/id_rsa ~/sym && cat ~/sym`,
		`echo x > ~/.ssh/new && cat ~/.ssh/new`,
	} {
		o := h.run(t, sb, l)
		if h.leaked(t, o) {
			t.Errorf("%s leaked:\n%s", l, o.Text())
		}
	}
	for _, l := range []string{`cat ~/stolen ~/ssh2/id_rsa ` + top + `/c ~/c2 ~/sym ~/.ssh/new 2>&1; cat ~/.ssh/id_rsa ~/.aws/credentials 2>&1; true`} {
		if o := h.run(t, sb, l); h.leaked(t, o) {
			t.Errorf("a later command read a denied file:\n%s", o.Text())
		}
	}
	for _, rel := range []string{".ssh/id_rsa", ".aws/credentials"} {
		if b, _ := os.ReadFile(filepath.Join(h.home, rel)); !strings.HasPrefix(string(b), canary) {
			t.Errorf("%s was moved or changed: %q", rel, b)
		}
	}
}
