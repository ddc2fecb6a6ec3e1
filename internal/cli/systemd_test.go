package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The systemd units in examples/systemd are valid as systemd reads them
// (systemd-analyze verify --user), with the daemon's default socket.
func TestTheSystemdUnitsVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed: the example units are not verified here")
	}
	dir := t.TempDir()
	rt := filepath.Join(dir, "run")
	os.Mkdir(rt, 0o700)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nodwyn.socket", "nodwyn.service"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if name == "nodwyn.service" {
			if !strings.Contains(text, "\nExecStart=%h/.local/bin/nodwyn daemon\n") {
				t.Fatalf("%s does not start nodwyn daemon from ~/.local/bin", name)
			}
			// verify checks that the program exists; this test's binary stands in.
			text = strings.ReplaceAll(text, "\nExecStart=%h/.local/bin/nodwyn", "\nExecStart="+self)
		}
		if name == "nodwyn.socket" && !strings.Contains(text, "\nListenStream=%t/nodwyn/daemon.sock\n") {
			t.Errorf("%s does not listen on the daemon's default socket ($XDG_RUNTIME_DIR/nodwyn/daemon.sock)", name)
		}
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	cmd := exec.Command("systemd-analyze", "verify", "--user", "nodwyn.socket", "nodwyn.service")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+rt, "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "Failed to initialize manager") {
		t.Skipf("systemd-analyze cannot run a user manager here: %s", out)
	}
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
