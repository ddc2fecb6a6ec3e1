package keychain

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/keychain/keychaintest"
	"github.com/zalando/go-keyring"
)

// Against gnome-keyring-daemon on a session bus of the test's own: stores,
// reads, replaces, deletes, under service "nodwyn" and the provider's name.
func TestAgainstARealSecretService(t *testing.T) {
	keychaintest.Run(t, keychaintest.SecretService, func(t *testing.T) {
		start := time.Now()
		var k Keychain
		if key, err := k.Get("openai"); err != nil || key != "" {
			t.Fatalf("Get before anything is stored = %q, %v; want \"\" and no error", key, err)
		}
		if deleted, err := k.Delete("openai"); err != nil || deleted {
			t.Fatalf("Delete before anything is stored = %v, %v; want false and no error", deleted, err)
		}
		if err := k.Set("openai", "sk-first-0123456789"); err != nil {
			t.Fatal(err)
		}
		if key, err := k.Get("openai"); err != nil || key != "sk-first-0123456789" {
			t.Fatalf("Get = %q, %v", key, err)
		}
		// The entry is service nodwyn, user openai, as go-keyring sees it.
		if key, err := keyring.Get("nodwyn", "openai"); err != nil || key != "sk-first-0123456789" {
			t.Fatalf("go-keyring's Get(nodwyn, openai) = %q, %v", key, err)
		}
		// A second Set replaces the key; another provider's is its own.
		if err := k.Set("openai", "sk-second-0123456789"); err != nil {
			t.Fatal(err)
		}
		if err := k.Set("anthropic", "sk-ant-0123456789"); err != nil {
			t.Fatal(err)
		}
		if key, err := k.Get("openai"); err != nil || key != "sk-second-0123456789" {
			t.Fatalf("Get after the second Set = %q, %v", key, err)
		}
		if key, err := k.Get("anthropic"); err != nil || key != "sk-ant-0123456789" {
			t.Fatalf("Get(anthropic) = %q, %v", key, err)
		}
		if deleted, err := k.Delete("openai"); err != nil || !deleted {
			t.Fatalf("Delete = %v, %v; want true", deleted, err)
		}
		if key, err := k.Get("openai"); err != nil || key != "" {
			t.Fatalf("Get after Delete = %q, %v", key, err)
		}
		if deleted, err := k.Delete("openai"); err != nil || deleted {
			t.Fatalf("a second Delete = %v, %v; want false", deleted, err)
		}
		if key, err := k.Get("anthropic"); err != nil || key != "sk-ant-0123456789" {
			t.Fatalf("Get(anthropic) after deleting openai's = %q, %v", key, err)
		}
		// What is not a key is refused before the keychain is asked.
		for _, bad := range []string{"", "sk-a sk-b", "sk-a\nsk-b", "sk-\x1b[2J", strings.Repeat("k", MaxKeyBytes+1)} {
			if err := k.Set("openai", bad); err == nil {
				t.Errorf("Set(%q) stored it", bad)
			} else if len(bad) > 4 && strings.Contains(err.Error(), bad) {
				t.Errorf("Set's error shows the text: %v", err)
			}
		}
		if key, err := k.Get("openai"); err != nil || key != "" {
			t.Fatalf("a refused Set stored %q (%v)", key, err)
		}
		// An environment that names no bus never reaches the one the process has.
		if _, err := (Keychain{Getenv: func(string) string { return "" }}).Get("anthropic"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Get with no bus in Getenv = %v, want ErrUnavailable", err)
		}
		t.Logf("against the Secret Service: %v", time.Since(start).Round(time.Millisecond))
	})
}

// A session bus on which nothing provides the Secret Service: every call
// says so, and what to do. It is the bus's answer, not a deadline passing
// (that is ErrTimeout).
func TestNoSecretServiceOnTheBus(t *testing.T) {
	keychaintest.Run(t, keychaintest.BareBus, func(t *testing.T) {
		var k Keychain
		_, err := k.Get("openai")
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTimeout) {
			t.Fatalf("Get = %v, want ErrUnavailable", err)
		}
		for _, want := range []string{"cannot read the openai key", "no Secret Service on this machine", "nothing on the session bus provides org.freedesktop.secrets", "start a keyring daemon", "--no-keychain / the credentials file"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Get's error %q does not say %q", err, want)
			}
		}
		if err := k.Set("openai", "sk-0123456789"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cannot store the openai key") {
			t.Errorf("Set = %v", err)
		}
		if deleted, err := k.Delete("openai"); deleted || !errors.Is(err, ErrUnavailable) {
			t.Errorf("Delete = %v, %v", deleted, err)
		}
	})
}

// No session bus at all: unavailable at once, and the D-Bus library is never
// asked: it would run dbus-launch to start a bus, and a dbus-launch first
// on the PATH notes that it ran.
func TestNoSessionBus(t *testing.T) {
	dir := t.TempDir()
	ran := fakeDBusLaunch(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "") // what the library would read
	t.Setenv("XDG_RUNTIME_DIR", dir)
	k := Keychain{Getenv: func(name string) string {
		if name == "XDG_RUNTIME_DIR" {
			return dir // no bus socket in it
		}
		return ""
	}}
	_, err := k.Get("openai")
	if ran() {
		t.Error("Get asked the D-Bus library: it ran dbus-launch")
	}
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "$DBUS_SESSION_BUS_ADDRESS is unset") || !strings.Contains(err.Error(), "start a keyring daemon (") || !strings.HasSuffix(err.Error(), " or use --no-keychain / the credentials file") {
		t.Fatalf("Get = %v", err)
	}
	if err := k.Set("openai", "sk-0123456789"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Set = %v", err)
	}
	if _, err := k.Delete("openai"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Delete = %v", err)
	}
	if ran() {
		t.Error("Set or Delete asked the D-Bus library: it ran dbus-launch")
	}
}

// fakeDBusLaunch puts a dbus-launch first on the PATH that notes it ran and
// starts no bus; ran reports whether it did.
func fakeDBusLaunch(t *testing.T) (ran func() bool) {
	t.Helper()
	bin := t.TempDir()
	mark := filepath.Join(bin, "ran")
	script := "#!/bin/sh\n: > '" + mark + "'\necho 'no bus here' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "dbus-launch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() bool { _, err := os.Stat(mark); return err == nil }
}

// within fails t unless f returns within a generous deadline: a call that
// should give up at its own deadline, or at once, must not hang the test.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(DefaultGetTimeout + 30*time.Second):
		t.Fatalf("%s has not returned", what)
	}
}

// Where a bus is named: DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus.
func TestWhichSessionBus(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if unavailable(getenv) == "" {
		t.Error("an empty environment names a bus")
	}
	env["DBUS_SESSION_BUS_ADDRESS"] = "autolaunch:"
	if unavailable(getenv) == "" {
		t.Error("autolaunch: names a bus")
	}
	env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/run/user/1000/bus"
	if unavailable(getenv) != "" {
		t.Error("DBUS_SESSION_BUS_ADDRESS names no bus")
	}
	delete(env, "DBUS_SESSION_BUS_ADDRESS")
	env["XDG_RUNTIME_DIR"] = dir
	if unavailable(getenv) == "" {
		t.Error("an XDG_RUNTIME_DIR without bus names a bus")
	}
	if err := os.WriteFile(filepath.Join(dir, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if unavailable(getenv) != "" {
		t.Error("$XDG_RUNTIME_DIR/bus names no bus")
	}
}

// A bus whose socket is not there: unavailable, with the address.
func TestAbsentBus(t *testing.T) {
	if keychaintest.InChild() {
		t.Skip("the child holds a session bus of its own")
	}
	addr := keychaintest.AbsentBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	var err error
	within(t, "Get on an absent bus", func() { _, err = Keychain{}.Get("openai") })
	// The connection's refusal, not a deadline passing (ErrTimeout).
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "the session bus "+addr+" does not answer") || !strings.Contains(err.Error(), "--no-keychain") {
		t.Fatalf("Get = %v", err)
	}
}

// A bus that never answers: the read gives up at its deadline (the default,
// 2 s) with an error that says what to do; a store at its own.
func TestHungBus(t *testing.T) {
	if keychaintest.InChild() {
		t.Skip("the child holds a session bus of its own")
	}
	addr, accepted := keychaintest.HungBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	var err error
	within(t, "Get on a hung bus", func() { _, err = Keychain{}.Get("openai") })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Get = %v, want ErrTimeout", err)
	}
	if accepted() == 0 {
		t.Fatal("Get never connected to the bus")
	}
	for _, want := range []string{"did not answer within 2s to read the openai key", "unlock or restart it", "--no-keychain / the credentials file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Get's error %q does not say %q", err, want)
		}
	}
	// The deadline the error names is the one its timer had (call).
	within(t, "Set on a hung bus", func() {
		err = Keychain{ChangeTimeout: 100 * time.Millisecond}.Set("openai", "sk-0123456789")
	})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "within 100ms to store the openai key") {
		t.Errorf("Set = %v", err)
	}
	if strings.Contains(err.Error(), "sk-0123456789") {
		t.Errorf("Set's error shows the key: %v", err)
	}
}

func TestWhere(t *testing.T) {
	if got := Where("openai"); !strings.Contains(got, "(service nodwyn, user openai)") || !strings.HasPrefix(got, "the ") {
		t.Errorf("Where = %q", got)
	}
	if _, err := (Keychain{}).Get(""); err == nil {
		t.Error("Get of no user")
	}
}

// The time bounds the tests above leave out, as figures: a machine with no
// session bus, or whose bus's socket is gone, is told so at once (tens of
// microseconds), and a hung bus costs a read its deadline and no more
// (BenchmarkGetOnAHungBus: GetTimeout, 100 ms, a call).
// go test -run '^$' -bench . ./internal/keychain/
func BenchmarkGetWithNoSessionBus(b *testing.B) {
	k := Keychain{Getenv: func(string) string { return "" }}
	for b.Loop() {
		if _, err := k.Get("openai"); !errors.Is(err, ErrUnavailable) {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetOnAnAbsentBus(b *testing.B) {
	b.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(b.TempDir(), "no-bus"))
	for b.Loop() {
		if _, err := (Keychain{}).Get("openai"); !errors.Is(err, ErrUnavailable) {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetOnAHungBus(b *testing.B) {
	addr, _ := keychaintest.HungBus(b)
	b.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	k := Keychain{GetTimeout: 100 * time.Millisecond}
	for b.Loop() {
		if _, err := k.Get("openai"); !errors.Is(err, ErrTimeout) {
			b.Fatal(err)
		}
	}
}

// What the private bus's test leaves behind holding its output (as a
// second gnome-keyring-daemon the bus activates on a loaded machine does)
// neither fails the test nor outlives it.
func TestAPrivateBusLeavesNothingRunning(t *testing.T) {
	pidFile := os.Getenv("NODWYN_KEYCHAINTEST_LEFT") // the parent's, in the child
	if !keychaintest.InChild() {
		pidFile = filepath.Join(t.TempDir(), "left.pid")
		t.Setenv("NODWYN_KEYCHAINTEST_LEFT", pidFile)
	}
	keychaintest.Run(t, keychaintest.BareBus, func(t *testing.T) {
		left := exec.Command("sleep", "600")
		left.Stdout, left.Stderr = os.Stdout, os.Stderr
		if err := left.Start(); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(pidFile, []byte(strconv.Itoa(left.Process.Pid)), 0o600)
	})
	if keychaintest.InChild() {
		return
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the child did not start its process: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	// Killed with the bus's process group, it is gone once reaped by init;
	// wait for that state, not for a time.
	for syscall.Kill(pid, 0) == nil {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			break // a zombie: killed, waiting for its reaper
		}
		runtime.Gosched()
	}
}
