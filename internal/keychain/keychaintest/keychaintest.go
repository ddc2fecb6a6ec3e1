// Package keychaintest runs tests against a real Secret Service that is
// nobody's keyring: [Run] re-executes the test binary, for one test, under a
// D-Bus session bus of its own (dbus-run-session) with gnome-keyring-daemon
// on it, and with HOME, the XDG directories and XDG_RUNTIME_DIR in a fresh
// temporary directory, so a person's own keyring is never read or written.
// [AbsentBus] and [HungBus] name buses that are not there or never answer.
package keychaintest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childVar marks the re-executed test binary, and says which bus it has.
const childVar = "NODWYN_TEST_PRIVATE_BUS"

// Bus is what the private session bus offers.
type Bus string

const (
	// SecretService: gnome-keyring-daemon serves the Secret Service on the
	// bus, its login keyring created and unlocked with a throwaway password.
	SecretService Bus = "secret-service"
	// BareBus: a session bus on which nothing provides the Secret Service
	// (and nothing can be started to: the bus knows no service files).
	BareBus Bus = "bare"
)

// InChild reports whether this process is a test binary [Run] started.
func InChild() bool { return os.Getenv(childVar) != "" }

// Run runs inner on a private session bus of the kind bus says: in this
// process when it is the child [Run] started for this test, else by
// starting that child and reporting its result. It skips the test, with a
// message naming the missing program, where dbus-run-session or
// gnome-keyring-daemon is not installed, except when $CI is set: CI
// installs them (.ci/run), so there their absence fails the test.
func Run(t *testing.T, bus Bus, inner func(t *testing.T)) {
	t.Helper()
	if got := Bus(os.Getenv(childVar)); got != "" {
		if got != bus {
			t.Fatalf("keychaintest: the child has bus %q, the test asks for %q", got, bus)
		}
		inner(t)
		return
	}
	progs := []string{"dbus-run-session"}
	if bus == SecretService {
		progs = append(progs, "gnome-keyring-daemon")
	}
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			msg := p + " is not installed: this test needs a real Secret Service (Debian: apt-get install dbus-daemon dbus-bin gnome-keyring; .ci/run installs them)"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}

	// Short paths: the bus's and the keyring's sockets live here.
	dir, err := os.MkdirTemp("", "nkt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(dir) })
	home := filepath.Join(dir, "home")
	runtimeDir := filepath.Join(dir, "run")
	for _, d := range []string{home, runtimeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}

	args := []string{}
	script := `exec "$0" "$@"`
	switch bus {
	case SecretService:
		// --unlock reads the login keyring's password from stdin and
		// creates the keyring when there is none (a fresh HOME).
		script = `printf '%s' throwaway-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null || { echo "keychaintest: gnome-keyring-daemon did not start" >&2; exit 97; }
exec "$0" "$@"`
	case BareBus:
		conf := filepath.Join(dir, "bus.conf")
		if err := os.WriteFile(conf, []byte(bareBusConfig(runtimeDir)), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config-file="+conf)
	default:
		t.Fatalf("keychaintest: unknown bus %q", bus)
	}
	var pat []string
	for _, part := range strings.Split(t.Name(), "/") {
		pat = append(pat, "^"+regexp.QuoteMeta(part)+"$")
	}
	args = append(args, "--", "sh", "-c", script, os.Args[0],
		"-test.run="+strings.Join(pat, "/"), "-test.v", "-test.count=1", "-test.timeout=2m")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dbus-run-session", args...)
	cmd.Dir, _ = os.Getwd()
	cmd.Env = childEnv(bus, home, runtimeDir)
	// The bus may start a service of its own (a second
	// gnome-keyring-daemon, activated when the first is slow to claim its
	// name on a loaded machine) that outlives the bus. It is in the bus's
	// process group, which is killed when the child is done, and the
	// output goes to a file, so such a process never holds a pipe the wait
	// needs closed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outFile, err := os.Create(filepath.Join(dir, "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, outFile
	start := time.Now()
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the bus started and left
	}
	out, _ := os.ReadFile(outFile.Name())
	text := string(out)
	switch {
	case err != nil:
		t.Fatalf("the test under a private session bus (%s) failed: %v\n%s", bus, err, text)
	case strings.Contains(text, "--- SKIP: "+t.Name()+" "):
		t.Skipf("skipped under the private session bus:\n%s", text)
	case !strings.Contains(text, "--- PASS: "+t.Name()+" "):
		t.Fatalf("the test did not run under the private session bus (%s):\n%s", bus, text)
	}
	t.Logf("passed under a private session bus (%s) in %v", bus, time.Since(start).Round(time.Millisecond))
}

// childEnv is this process's environment without the bus and the
// directories it names, and with the temporary ones.
func childEnv(bus Bus, home, runtimeDir string) []string {
	drop := map[string]bool{"DBUS_SESSION_BUS_ADDRESS": true, "HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true,
		"XDG_CACHE_HOME": true, "XDG_STATE_HOME": true, "XDG_RUNTIME_DIR": true, "GNOME_KEYRING_CONTROL": true, "SSH_AUTH_SOCK": true, childVar: true, "GORACE": true}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			env = append(env, kv)
		}
	}
	// A binary built with -race sleeps 1 s at exit (atexit_sleep_ms) so
	// late goroutines can report; the child's test has ended by then.
	env = append(env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=50"))
	return append(env, childVar+"="+string(bus), "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_RUNTIME_DIR="+runtimeDir)
}

// bareBusConfig is a session bus that knows no service files: nothing on
// it provides org.freedesktop.secrets, and nothing can be activated to.
func bareBusConfig(dir string) string {
	return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=` + dir + `</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`
}

// removeAll removes dir, retrying a little while a daemon that is going
// away still writes into it.
func removeAll(dir string) {
	for i := 0; i < 20; i++ {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AbsentBus returns a DBUS_SESSION_BUS_ADDRESS that names a socket that
// does not exist.
func AbsentBus(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nkt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return "unix:path=" + filepath.Join(dir, "no-bus")
}

// HungBus returns a DBUS_SESSION_BUS_ADDRESS whose socket accepts
// connections and never answers, as a hung bus or Secret Service does, and
// a function that counts the connections it accepted so far. Its
// connections are closed when the test ends, which lets a call stuck on
// them return.
func HungBus(t testing.TB) (addr string, accepted func() int) {
	t.Helper()
	dir, err := os.MkdirTemp("", "nkt")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "hung-bus")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		os.RemoveAll(dir)
	})
	return "unix:path=" + sock, func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}
}
