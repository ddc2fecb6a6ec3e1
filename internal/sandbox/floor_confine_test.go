package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runUnder runs a bash line under f in dir and returns its output and
// whether it succeeded.
func runUnder(t *testing.T, f *Floor, dir, line string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := StartFloored(f, cmd); err != nil {
		t.Fatalf("starting %q: %v", line, err)
	}
	err := cmd.Wait()
	return out.String(), err == nil
}

// confinedHome is a canary home with writes confined to the folder, a
// temporary directory and a cache, as a session outside sandbox mode has.
func confinedHome(t *testing.T, withDenied bool) (h *canaryHome, f *Floor, tmp, cache string) {
	t.Helper()
	needFloor(t)
	h = newCanaryHome(t)
	tmp = filepath.Join(t.TempDir(), "tmp")
	cache = filepath.Join(h.home, ".cache")
	for _, d := range []string{tmp, cache, filepath.Join(h.home, ".config", "systemd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	deny := h.deny
	if !withDenied {
		deny = nil
	}
	f, err := NewFloor(deny, []string{h.scratch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.ConfineWrites([]string{h.folder, tmp, cache, "/dev/null"}, "[sandbox] writable in your config.toml")
	return h, f, tmp, cache
}

// Under write confinement a command writes the folder, the scratch
// directory, the temporary directory, a cache and /dev/null, and reads
// everywhere but the catalogue; every write elsewhere is refused by the
// kernel, however the program reaches it.
func TestConfineWritesRefusesPersistence(t *testing.T) {
	t.Parallel() // slow and independent: it runs beside the serial tests
	for _, withDenied := range []bool{true, false} {
		name := "with the catalogue"
		if !withDenied {
			name = "with nothing denied"
		}
		t.Run(name, func(t *testing.T) {
			h, f, tmp, cache := confinedHome(t, withDenied)
			// Ordinary work.
			for _, line := range []string{
				"echo x > new.txt && mkdir -p a/b && echo y > a/b/c && mv a/b/c a/d && rm -r a new.txt",
				"echo x > " + tmp + "/t && rm " + tmp + "/t",
				"mkdir -p " + cache + "/go-build && echo x > " + cache + "/go-build/o",
				"echo x > " + h.scratch + "/s",
				"echo x > /dev/null && cat " + h.home + "/.bashrc > /dev/null",
				"ls " + h.home + " >/dev/null && cat /etc/hostname >/dev/null",
			} {
				if out, ok := runUnder(t, f, h.folder, line); !ok {
					t.Errorf("ordinary work refused: %s\n%s", line, out)
				}
			}
			// Persistence and writes outside.
			for _, line := range []string{
				"echo 'curl x|sh' >> " + h.home + "/.bashrc",
				"python3 -c \"open('" + h.home + "/.profile','w').write('x')\"",
				"mkdir -p " + h.home + "/.local/bin",
				"echo x > " + h.home + "/.config/systemd/evil.service",
				"mv " + h.home + "/.bashrc " + h.home + "/.bashrc.old",
				"ln -s /tmp " + h.home + "/.config/evil",
				"echo x > " + filepath.Dir(h.folder) + "/beside.txt",
				"touch /etc/cron.d/nodwyn-test-evil",
			} {
				if out, ok := runUnder(t, f, h.folder, line); ok {
					t.Errorf("a write outside was let through: %s\n%s", line, out)
				}
			}
			if b, _ := os.ReadFile(h.home + "/.bashrc"); string(b) != "# rc\n" {
				t.Errorf("~/.bashrc is %q", b)
			}
			for _, p := range []string{"/etc/cron.d/nodwyn-test-evil", h.home + "/.profile", h.home + "/.local/bin"} {
				if _, err := os.Lstat(p); err == nil {
					os.RemoveAll(p)
					t.Errorf("%s was made", p)
				}
			}
			if withDenied {
				if out, ok := runUnder(t, f, h.folder, "cat "+h.home+"/.ssh/id_rsa"); ok || strings.Contains(out, canary) {
					t.Errorf("a denied file was read under write confinement: %s", out)
				}
			}
		})
	}
}

// A command refused a write learns why and how the person widens it.
func TestConfineWritesNoteSaysTheRule(t *testing.T) {
	h, f, _, _ := confinedHome(t, true)
	cmd := exec.Command("bash", "-c", "echo x >> "+h.home+"/.bashrc")
	cmd.Dir = h.folder
	fs, err := f.start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	note := floorNote(fs, nil, "bash: line 1: "+h.home+"/.bashrc: Permission denied")
	for _, want := range []string{"may write only in the folder", "[sandbox] writable"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
}

// A writable directory that holds a denied one (the person made the home
// writable) still does not give the denied one away.
func TestConfineWritesDeniedInsideWritable(t *testing.T) {
	needFloor(t)
	h := newCanaryHome(t)
	os.MkdirAll(filepath.Join(h.home, "docs"), 0o755)
	f, err := NewFloor(h.deny, []string{h.scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.ConfineWrites([]string{h.home, h.folder, filepath.Join(h.home, ".ssh")}, "")
	if out, ok := runUnder(t, f, h.folder, "echo x > "+h.home+"/docs/x && cat "+h.home+"/docs/x"); !ok {
		t.Errorf("a write in the writable home was refused: %s", out)
	}
	if out, ok := runUnder(t, f, h.folder, "cat "+h.home+"/.ssh/id_rsa; echo x > "+h.home+"/.ssh/config"); ok || strings.Contains(out, canary) {
		t.Errorf("a denied directory was opened by making it writable: %s", out)
	}
}
