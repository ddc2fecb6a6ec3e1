package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctorChildVar, set to a folder, makes TestDoctorChild the process a test
// starts: nodwyn doctor -C FOLDER, after CleanEnvironment as main does.
const doctorChildVar = "NODWYN_TEST_DOCTOR_CHILD"

// TestDoctorChild is not a test of its own: run by
// TestDoctorNamesAParentHoldingTheKey as a child, it is nodwyn doctor.
func TestDoctorChild(t *testing.T) {
	folder := os.Getenv(doctorChildVar)
	if folder == "" {
		t.Skip("run by TestDoctorNamesAParentHoldingTheKey")
	}
	CleanEnvironment()
	code := Main([]string{"doctor", "-C", folder}, strings.NewReader(""), os.Stdout, os.Stderr, Getenv)
	fmt.Printf("doctor exit %d\n", code)
}

// doctorUnder runs nodwyn doctor (TestDoctorChild) from `sh -c script`, sh
// started with env besides a home of its own: its output and sh's pid.
func doctorUnder(t *testing.T, script string, env ...string) (string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	folder := filepath.Join(home, "proj")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	// "; exit $?" keeps sh from replacing itself with its last command: sh
	// stays the child's parent.
	cmd := exec.Command("sh", "-c", script+"; exit $?", exe, "-test.run=^TestDoctorChild$", "-test.count=1")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "NODWYN_PROVIDER=openai", "NODWYN_PROFILE=",
		doctorChildVar + "=" + folder}, env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if !strings.Contains(out.String(), "doctor exit ") {
		t.Fatalf("doctor did not run: %s", out.String())
	}
	return out.String(), pid
}

// A shell started with the key in its environment keeps it in
// /proc/<shell>/environ for as long as it runs, whatever nodwyn hides of its
// own: doctor names that shell and says where else to keep the key. A
// shell that only exported it, or holds another value under the name, is
// not named.
func TestDoctorNamesAParentHoldingTheKey(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	const key = "sk-doctor-canary-6d1f0c2a9b8e7d6c5b4a"

	t.Run("started with it", func(t *testing.T) {
		out, sh := doctorUnder(t, `"$0" "$@"`, "OPENAI_API_KEY="+key, "OPENAI_BASE_URL=https://user:url-canary-9931@llm.example/v1")
		if !strings.Contains(out, "\napi key: found in $OPENAI_API_KEY\n") {
			t.Errorf("the key is not from the environment:\n%s", out)
		}
		want := fmt.Sprintf("\nkey in a parent: $OPENAI_API_KEY is in the environment sh (pid %d) was started with", sh)
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not name the shell (want %q):\n%s", want, out)
		}
		for _, place := range []string{"'nodwyn login openai'", filepath.Join("nodwyn", "credentials.toml") + " under [keys] (mode 0600)"} {
			if !strings.Contains(out, place) {
				t.Errorf("doctor does not offer %s:\n%s", place, out)
			}
		}
		if strings.Contains(out, key) || strings.Contains(out, "url-canary") {
			t.Errorf("doctor shows a secret:\n%s", out)
		}
		// The base URL CleanEnvironment hid (its password) is still nodwyn's,
		// and shown without the password.
		if !strings.Contains(out, "\nprovider: openai, model (none), base_url https://user:xxxxx@llm.example/v1\n") {
			t.Errorf("the base URL is lost or shown whole:\n%s", out)
		}
		// nodwyn's own environ is clean: the warning is about the parent.
		if !strings.Contains(out, "\nkey in /proc: no secret-looking variable") {
			t.Errorf("doctor's own environ:\n%s", out)
		}
	})

	t.Run("exported by the shell", func(t *testing.T) {
		// export changes the shell's variables, not the environment it was
		// started with, which is what /proc/<shell>/environ shows.
		out, _ := doctorUnder(t, `export OPENAI_API_KEY="$K"; unset K; "$0" "$@"`, "K="+key)
		if !strings.Contains(out, "\napi key: found in $OPENAI_API_KEY\n") {
			t.Errorf("the key is not from the environment:\n%s", out)
		}
		if !strings.Contains(out, "\nkey in a parent: no process above this one holds $OPENAI_API_KEY") {
			t.Errorf("a parent named:\n%s", out)
		}
	})

	t.Run("another value", func(t *testing.T) {
		out, _ := doctorUnder(t, `OPENAI_API_KEY="$K" "$0" "$@"`, "K="+key, "OPENAI_API_KEY=sk-an-old-key-0000000000000000")
		if !strings.Contains(out, "\nkey in a parent: no process above this one holds $OPENAI_API_KEY") {
			t.Errorf("a parent holding another value named:\n%s", out)
		}
	})
}

// The walk up, on a made-up /proc: each process of this user whose
// environ has the key is named, from the parent up to pid 1; another
// user's, an unreadable one, and one with the name but another value are
// passed over.
func TestParentsHolding(t *testing.T) {
	proc := t.TempDir()
	type p struct {
		pid, ppid, uid int
		comm, environ  string
	}
	for _, x := range []p{
		{50, 40, 1000, "bash", "HOME=/h\x00OPENAI_API_KEY=sk-1 \x00"},
		{40, 30, 0, "sudo", "OPENAI_API_KEY=sk-1\x00"}, // another user
		{30, 20, 1000, "tmux: server", "OPENAI_API_KEY=sk-2\x00"},
		{20, 10, 1000, "sshd", ""}, // unreadable (no environ file)
		{10, 1, 1000, "systemd", "XOPENAI_API_KEY=sk-1\x00OPENAI_API_KEY=sk-1\x00"},
		{1, 0, 1000, "init", "OPENAI_API_KEY=sk-1"},
		{99, 1, 1000, "elsewhere", "OPENAI_API_KEY=sk-1"}, // not above
	} {
		dir := filepath.Join(proc, fmt.Sprint(x.pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		status := fmt.Sprintf("Name:\t%s\nPPid:\t%d\nUid:\t%d\t%d\t%d\t%d\n", x.comm, x.ppid, x.uid, x.uid, x.uid, x.uid)
		os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644)
		os.WriteFile(filepath.Join(dir, "comm"), []byte(x.comm+"\n"), 0o644)
		if x.comm != "sshd" {
			os.WriteFile(filepath.Join(dir, "environ"), []byte(x.environ), 0o644)
		}
	}
	got := strings.Join(parentsHolding("OPENAI_API_KEY", "sk-1", proc, 50, 1000), ", ")
	if want := "bash (pid 50), systemd (pid 10), init (pid 1)"; got != want {
		t.Errorf("held by %q, want %q", got, want)
	}
	if got := parentsHolding("OPENAI_API_KEY", "sk-9", proc, 50, 1000); len(got) != 0 {
		t.Errorf("a key nobody holds: %q", got)
	}
	if got := parentsHolding("OPENAI_API_KEY", "sk-1", proc, 77, 1000); len(got) != 0 {
		t.Errorf("a pid that is not there: %q", got)
	}
}

func TestShownValue(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.openai.com/v1":                "https://api.openai.com/v1",
		"https://user:password@host/v1":            "https://user:xxxxx@host/v1",
		"postgres://me@host/db":                    "postgres://me@host/db",
		"https://user:pw@host/v1?token=abcdef0123": "(not shown: it holds a secret)",
		"sk-" + strings.Repeat("k", 40):            "(not shown: it holds a secret)",
		"":                                         "",
	} {
		if got := shownValue(in); got != want {
			t.Errorf("shownValue(%q) = %q, want %q", in, got, want)
		}
	}
}
