package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestWipeEntries(t *testing.T) {
	area := []byte("HOME=/h\x00OPENAI_API_KEY=sk-1\x00PATH=/bin\x00X_TOKEN=t\x00")
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=sk-1", "X_TOKEN=t"}); err != nil {
		t.Fatal(err)
	}
	want := "HOME=/h\x00" + strings.Repeat("\x00", len("OPENAI_API_KEY=sk-1")) + "\x00PATH=/bin\x00" + strings.Repeat("\x00", len("X_TOKEN=t")) + "\x00"
	if string(area) != want {
		t.Errorf("wiped: %q, want %q", area, want)
	}
	// Every entry of a hidden name goes, not only the one the runtime
	// kept: a second copy (a wrapper that appended to the environment) is
	// a live key too.
	area = []byte("OPENAI_API_KEY=first\x00PATH=/bin\x00OPENAI_API_KEY=second\x00OPENAI_API_KEY=\x00")
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=first"}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(area, []byte("second")) || bytes.Contains(area, []byte("OPENAI")) || !bytes.Contains(area, []byte("PATH=/bin")) {
		t.Errorf("wiped: %q", area)
	}
	// An area that is not the environment the process has (a value
	// changed, an entry missing) is refused, and the caller re-executes.
	area = []byte("HOME=/h\x00OPENAI_API_KEY=sk-2\x00")
	before := bytes.Clone(area)
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=sk-1"}); err == nil {
		t.Error("a key that is not in the area: no error")
	}
	// a prefix of an entry is not the entry
	if err := wipeEntries(area, []string{"OPENAI_API_KEY=sk-"}); err == nil {
		t.Error("a prefix of an entry: no error")
	}
	if !bytes.Equal(area, before) {
		t.Errorf("an entry that is not one of hide was wiped: %q", area)
	}
}

// The wipe on this process itself: /proc/self/environ no longer holds the
// entry, and what the runtime copied at start is untouched.
func TestScrubEnvironOfThisProcess(t *testing.T) {
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Skipf("no /proc/self/environ: %v", err)
	}
	var victim string
	for _, kv := range strings.Split(string(env), "\x00") {
		if strings.HasPrefix(kv, "PATH=") {
			victim = kv
		}
	}
	if victim == "" {
		t.Skip("no PATH in this process's environment")
	}
	if err := scrubEnviron([]string{victim}); err != nil {
		t.Fatalf("scrubEnviron: %v", err)
	}
	after, _ := os.ReadFile("/proc/self/environ")
	if bytes.Contains(after, []byte(victim)) {
		t.Errorf("/proc/self/environ still holds %q", victim)
	}
	if len(after) != len(env) {
		t.Errorf("/proc/self/environ: %d bytes, was %d", len(after), len(env))
	}
	if os.Getenv("PATH") == "" {
		t.Error("the runtime's copy of PATH went with it")
	}
}

// cleanChildVar, set, makes TestCleanEnvironmentChild the process a test
// starts: it runs CleanEnvironment as nodwyn's main does and reports.
const cleanChildVar = "NODWYN_TEST_CLEAN_CHILD"

// TestCleanEnvironmentChild is not a test of its own: run by
// TestCleanEnvironmentByValue as a child, it cleans its environment and
// prints, after "REPORT ", its /proc/self/environ and what Getenv and
// os.Getenv give for each variable the test set.
func TestCleanEnvironmentChild(t *testing.T) {
	names := strings.Split(os.Getenv(cleanChildVar), ",")
	if names[0] == "" {
		t.Skip("run by TestCleanEnvironmentByValue")
	}
	CleanEnvironment()
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	report := map[string]any{"environ": strings.Split(string(environ), "\x00")}
	getenv, osenv := map[string]string{}, map[string]string{}
	for _, n := range names {
		getenv[n], osenv[n] = Getenv(n), os.Getenv(n)
	}
	report["getenv"], report["os"] = getenv, osenv
	b, _ := json.Marshal(report)
	fmt.Printf("REPORT %s\n", b)
}

// Variables secret by their value's shape leave /proc/<pid>/environ as the
// secret-named ones do, and stay readable to nodwyn (Getenv), in both ways
// CleanEnvironment has: the wipe in place and the re-exec. The ordinary
// ones, a DATABASE_URL with no password among them, stay where they were.
func TestCleanEnvironmentByValue(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	anthropic := "sk-ant-api03-" + strings.Repeat("Cx7", 30)
	secret := map[string]string{
		"DATABASE_URL":    "postgres://app:pw-canary-4417@db.example/app",
		"OPENAI_BASE_URL": "https://user:url-canary-9931@llm.example/v1",
		"PASTED":          anthropic,
		"HTTPS_PROXY":     "http://me:proxy-canary-2207@127.0.0.1:9",
		"MYSQL_PWD":       "pwd-canary-5150",
		"SSH_AUTH_SOCK":   "/tmp/ssh-x/agent.1",
	}
	ordinary := map[string]string{
		"TEST_DATABASE_URL": "postgres:///db?host=/var/run/postgresql",
		"GOPATH":            "/go-path",
		"LANG":              "C.UTF-8",
		"PWD":               "/work/dir",
		"OLDPWD":            "/work",
		"HTTP_PROXY":        "http://proxy.example:3128",
		"NODWYN_BASE":       "https://api.openai.com/v1",
	}
	var names []string
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for _, m := range []map[string]string{secret, ordinary} {
		for n, v := range m {
			names = append(names, n)
			env = append(env, n+"="+v)
		}
	}
	env = append(env, cleanChildVar+"="+strings.Join(names, ","))
	for _, byExec := range []bool{false, true} {
		t.Run(fmt.Sprintf("byExec=%v", byExec), func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^TestCleanEnvironmentChild$", "-test.count=1")
			cmd.Env = env
			if byExec {
				cmd.Env = append(slices.Clone(env), hideByExecVar+"=1")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			_, line, ok := strings.Cut(string(out), "REPORT ")
			if !ok {
				t.Fatalf("no report: %s", out)
			}
			line, _, _ = strings.Cut(line, "\n")
			var r struct {
				Environ []string
				Getenv  map[string]string
				OS      map[string]string
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			all := strings.Join(r.Environ, "\x00")
			if byExec != strings.Contains(all, envFDVar+"=") {
				t.Errorf("re-executed: %v, want %v", !byExec, byExec)
			}
			for n, v := range secret {
				if strings.Contains(all, v) {
					t.Errorf("/proc/self/environ still holds %s=%s", n, v)
				}
				if r.Getenv[n] != v {
					t.Errorf("Getenv(%s) = %q, want %q: hidden, not lost", n, r.Getenv[n], v)
				}
			}
			// Taken out of the Go environment, which children inherit,
			// except the proxy net/http reads from it itself.
			for n, v := range secret {
				want := ""
				if n == "HTTPS_PROXY" {
					want = v
				}
				if r.OS[n] != want {
					t.Errorf("os.Getenv(%s) = %q, want %q", n, r.OS[n], want)
				}
			}
			for n, v := range ordinary {
				if !slices.Contains(r.Environ, n+"="+v) {
					t.Errorf("/proc/self/environ lost %s=%s", n, v)
				}
				if r.Getenv[n] != v || r.OS[n] != v {
					t.Errorf("%s: Getenv %q, os.Getenv %q, want %q", n, r.Getenv[n], r.OS[n], v)
				}
			}
		})
	}
}
