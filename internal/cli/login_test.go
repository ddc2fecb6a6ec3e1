//go:build linux

// The keychain's tests are Linux's: a real Secret Service (gnome-keyring on
// a private D-Bus session bus, keychaintest) and a pseudo-terminal.

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/daemon"
	"github.com/nodwyn/nodwyn/internal/keychain"
	"github.com/nodwyn/nodwyn/internal/keychain/keychaintest"
	"github.com/nodwyn/nodwyn/internal/launch"
)

// fakeOpenAI is an OpenAI-compatible server whose every reply is "Done.";
// it keeps each request's Authorization header.
type fakeOpenAI struct {
	URL  string // the base URL, …/v1
	mu   sync.Mutex
	auth []string
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		head := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[`
		fmt.Fprintf(w, "data: %s\n\n", head+`{"index":0,"delta":{"role":"assistant","content":"Done."}}]}`)
		fmt.Fprintf(w, "data: %s\n\n", head+`{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL + "/v1"
	return f
}

// sent is the Authorization header of every request since the last call.
func (f *fakeOpenAI) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.auth
	f.auth = nil
	return out
}

// keyEnv is homeEnv(home) with vars over it ("" unsets one).
func keyEnv(home string, vars map[string]string) func(string) string {
	base := homeEnv(home)
	return func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return base(k)
	}
}

// busVars are the process's session bus, for an environment that is to
// reach the Secret Service keychaintest started.
func busVars(more map[string]string) map[string]string {
	m := map[string]string{"DBUS_SESSION_BUS_ADDRESS": os.Getenv("DBUS_SESSION_BUS_ADDRESS"), "XDG_RUNTIME_DIR": os.Getenv("XDG_RUNTIME_DIR")}
	for k, v := range more {
		m[k] = v
	}
	return m
}

func nodwyn(getenv func(string) string, stdin string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &stdout, &stderr, getenv)
	return code, stdout.String(), stderr.String()
}

// runOpenAI is a whole nodwyn run with the openai provider; base "" is the
// official endpoint.
func runOpenAI(getenv func(string) string, proj, base string, flags ...string) (int, string, string) {
	args := []string{"run", "--unattended", "--provider", "openai", "--model", "m"}
	if base != "" {
		args = append(args, "--base-url", base)
	}
	args = append(args, flags...)
	return nodwyn(getenv, "", append(args, "-C", proj, "say done")...)
}

// keyProject is a home and a project folder in it.
func keyProject(t *testing.T) (home, proj string) {
	home = t.TempDir()
	proj = filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	return home, proj
}

// noKeyIn fails when key is in any of texts or in any file under dirs.
func noKeyIn(t *testing.T, key string, texts []string, dirs ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, key) {
			t.Errorf("the key is shown:\n%s", s)
		}
	}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(key)) {
				t.Errorf("the key is in %s", p)
			}
			return nil
		})
	}
}

// login stores the key; a run takes it from the keychain when nothing
// before it has one, and the environment, credentials.toml and
// $CREDENTIALS_DIRECTORY win over it; --no-keychain (of a run, or of a
// daemon for its runs) leaves it alone; logout deletes it. The key is never
// shown.
func TestKeychainLoginRunLogout(t *testing.T) {
	keychaintest.Run(t, keychaintest.SecretService, func(t *testing.T) {
		start := time.Now()
		const key = "sk-keychain-0123456789abcdef"
		home, proj := keyProject(t)
		getenv := keyEnv(home, busVars(nil))
		_, dirs := launch.HomeDirs(getenv)
		srv := newFakeOpenAI(t)
		var shown []string

		// Nothing stored yet: the run says where a key can go.
		code, out, errs := runOpenAI(getenv, proj, "")
		if code != ExitUsage || out != "" || !strings.Contains(errs, "no API key for openai: set OPENAI_API_KEY, put it in "+config.CredentialsPath(dirs)+" under [keys], or store it with 'nodwyn login openai'") {
			t.Fatalf("a run with no key anywhere: exit %d\n%s%s", code, out, errs)
		}

		// Refused: no key, two keys; nothing is stored.
		if code, _, errs := nodwyn(getenv, "\n", "login", "openai"); code != ExitUsage || !strings.Contains(errs, "no key given") {
			t.Errorf("login with an empty key: exit %d\n%s", code, errs)
		}
		if code, _, errs := nodwyn(getenv, "sk-one-0123456789\nsk-two-0123456789\n", "login", "openai"); code != ExitUsage || !strings.Contains(errs, "line break") || strings.Contains(errs, "sk-one") {
			t.Errorf("login with two lines: exit %d\n%s", code, errs)
		}
		if f, err := launch.FindKey(dirs, "openai", "", getenv, false); err != nil || f.Key != "" {
			t.Fatalf("a refused login stored %q (%v)", f.Key, err)
		}

		code, out, errs = nodwyn(getenv, key+"\n", "login", "openai")
		if code != 0 || out != "stored: the openai key, in the Secret Service (service nodwyn, user openai)\n" || errs != "" {
			t.Fatalf("login: exit %d\nstdout %q\nstderr %q", code, out, errs)
		}
		shown = append(shown, out, errs)
		if f, err := launch.FindKey(dirs, "openai", "", getenv, false); err != nil || f.Key != key || f.Where != "the Secret Service (service nodwyn, user openai)" {
			t.Fatalf("findKey after login = %+v, %v", f, err)
		}

		// A whole run: the server gets the keychain's key.
		code, out, errs = runOpenAI(getenv, proj, srv.URL)
		if got := srv.sent(); code != 0 || out != "Done.\n" || len(got) != 1 || got[0] != "Bearer "+key {
			t.Fatalf("a run with the key in the keychain: exit %d, sent %q\n%s%s", code, got, out, errs)
		}
		shown = append(shown, out, errs)
		writeUserConfig(t, dirs, "[provider]\nname = \"openai\"\nmodel = \"m\"\n")
		if code, out, errs := nodwyn(getenv, "", "doctor", "-C", proj); code != 0 || !strings.Contains(out, "\napi key: found in the Secret Service (service nodwyn, user openai)\n") {
			t.Errorf("doctor: exit %d\n%s%s", code, out, errs)
		} else {
			shown = append(shown, out, errs)
		}

		// The environment wins, and login says it would.
		envKey := "sk-environment-0123456789"
		withEnv := keyEnv(home, busVars(map[string]string{"OPENAI_API_KEY": envKey}))
		if code, _, _ := runOpenAI(withEnv, proj, srv.URL); code != 0 {
			t.Errorf("a run with the key in the environment: exit %d", code)
		}
		if got := srv.sent(); len(got) != 1 || got[0] != "Bearer "+envKey {
			t.Errorf("with $OPENAI_API_KEY set the server got %q", got)
		}
		if code, _, errs := nodwyn(withEnv, key+"\n", "login", "openai"); code != 0 || !strings.Contains(errs, "note: a run here takes the openai key from $OPENAI_API_KEY first") {
			t.Errorf("login with the environment's key set: exit %d\n%s", code, errs)
		}
		// So do credentials.toml and $CREDENTIALS_DIRECTORY.
		credDir := t.TempDir()
		os.WriteFile(filepath.Join(credDir, "openai"), []byte("sk-credentials-directory-0123\n"), 0o600)
		if f, _ := launch.FindKey(dirs, "openai", "", keyEnv(home, busVars(map[string]string{"CREDENTIALS_DIRECTORY": credDir})), false); f.Key != "sk-credentials-directory-0123" {
			t.Errorf("$CREDENTIALS_DIRECTORY does not win over the keychain: %+v", f)
		}
		writeCredentials(t, dirs, "[keys]\nopenai = \"sk-credentials-file-0123456\"\n")
		if f, _ := launch.FindKey(dirs, "openai", "", getenv, false); f.Key != "sk-credentials-file-0123456" {
			t.Errorf("credentials.toml does not win over the keychain: %+v", f)
		}
		os.Remove(config.CredentialsPath(dirs))

		// --no-keychain: the keychain's key is not sent, and a run that
		// needs one says why it has none.
		if code, _, errs := runOpenAI(getenv, proj, srv.URL, "--no-keychain"); code != 0 {
			t.Errorf("--no-keychain with a local server: exit %d\n%s", code, errs)
		}
		if got := srv.sent(); len(got) != 1 || got[0] != "" {
			t.Errorf("--no-keychain: the server got %q", got)
		}
		code, out, errs = runOpenAI(getenv, proj, "", "--no-keychain")
		if code != ExitUsage || !strings.Contains(errs, "no API key for openai") || !strings.Contains(errs, "--no-keychain: the system keychain was not asked") {
			t.Errorf("--no-keychain with the official endpoint: exit %d\n%s", code, errs)
		}
		shown = append(shown, out, errs)

		// A daemon's runs ask the keychain, unless the daemon was started
		// with --no-keychain; run.state and the events never hold the key.
		for _, noKeychain := range []bool{false, true} {
			d, stop := startKeyDaemon(t, home, getenv, noKeychain)
			code, out, errs := nodwyn(getenv, "", "run", "--daemon", d.sock, "--unattended", "--provider", "openai", "--model", "m", "--base-url", srv.URL, "-C", proj, "say done")
			want := "Bearer " + key
			if noKeychain {
				want = ""
			}
			if got := srv.sent(); code != 0 || len(got) != 1 || got[0] != want {
				t.Errorf("a run of a daemon (--no-keychain %v): exit %d, the server got %q, want %q\n%s%s", noKeychain, code, got, want, errs, d.stderr)
			}
			f := &follower{}
			c := d.client(f)
			list, _ := json.Marshal(d.call(c, "run.list", nil))
			var runs struct {
				Runs []struct {
					ID string `json:"id"`
				} `json:"runs"`
			}
			json.Unmarshal(list, &runs)
			for _, r := range runs.Runs {
				st, _ := json.Marshal(d.call(c, "run.state", map[string]any{"id": r.ID}))
				d.call(c, "run.events", map[string]any{"id": r.ID})
				f.mu.Lock()
				ev, _ := json.Marshal(f.events)
				f.mu.Unlock()
				if len(runs.Runs) != 1 || !bytes.Contains(ev, []byte(`"type":"model"`)) && !bytes.Contains(ev, []byte("Done.")) {
					t.Errorf("the daemon's runs %s, events %s", list, ev)
				}
				shown = append(shown, string(st), string(ev))
			}
			shown = append(shown, string(list), out, errs)
			stop()
			shown = append(shown, d.stderr.String())
		}

		// Another provider's key is its own entry.
		if code, _, _ := nodwyn(getenv, "sk-ant-keychain-0123456789", "login", "anthropic"); code != 0 {
			t.Fatal("login anthropic")
		}

		// logout deletes; a second one says nothing was stored.
		code, out, errs = nodwyn(getenv, "", "logout", "openai")
		if code != 0 || out != "deleted: the openai key, from the Secret Service (service nodwyn, user openai)\n" {
			t.Errorf("logout: exit %d\n%s%s", code, out, errs)
		}
		if f, err := launch.FindKey(dirs, "openai", "", getenv, false); err != nil || f.Key != "" {
			t.Errorf("after logout findKey = %+v, %v", f, err)
		}
		if code, _, errs := runOpenAI(getenv, proj, ""); code != ExitUsage || !strings.Contains(errs, "no API key for openai") {
			t.Errorf("a run after logout: exit %d\n%s", code, errs)
		}
		code, out, errs = nodwyn(getenv, "", "logout", "openai")
		if code != 0 || out != "no openai key was stored in the Secret Service (service nodwyn, user openai): nothing to delete\n" {
			t.Errorf("a second logout: exit %d\n%s%s", code, out, errs)
		}
		if f, _ := launch.FindKey(dirs, "anthropic", "", getenv, false); f.Key != "sk-ant-keychain-0123456789" {
			t.Errorf("logout openai touched anthropic's key: %+v", f)
		}
		// logout with the environment's key set says runs still find one.
		if code, _, errs := nodwyn(keyEnv(home, busVars(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-env-0123456789"})), "", "logout", "anthropic"); code != 0 || !strings.Contains(errs, "note: a run here still finds a key for anthropic, in $ANTHROPIC_API_KEY") {
			t.Errorf("logout with the environment's key set: exit %d\n%s", code, errs)
		}

		noKeyIn(t, key, shown, dirs.Data, dirs.Config)
		t.Logf("the keychain's whole path: %v", time.Since(start).Round(time.Millisecond))
	})
}

// At a terminal login reads the key without echo; an interrupt while it
// waits puts the echo back and stores nothing.
func TestLoginAtATerminal(t *testing.T) {
	keychaintest.Run(t, keychaintest.SecretService, func(t *testing.T) {
		const key = "sk-typed-at-the-terminal-0123"
		home, _ := keyProject(t)
		getenv := keyEnv(home, busVars(nil))
		_, dirs := launch.HomeDirs(getenv)

		p, slave := newPTYScreen(t)
		stderr := &syncBuffer{}
		var stdout bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- Main([]string{"login", "openai"}, slave, &stdout, stderr, getenv) }()
		waitFor(t, func() bool { return strings.Contains(stderr.String(), "openai API key (not shown as you type") })
		if echoOn(t, slave) { // a key pasted now would be echoed
			t.Error("the prompt showed with the echo still on")
		}
		if _, err := p.master.Write([]byte(key + "\n")); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			if code != 0 || !strings.HasPrefix(stdout.String(), "stored: the openai key") {
				t.Fatalf("login at a terminal: exit %d\n%s%s", code, stdout.String(), stderr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("login at a terminal did not end:\n%s", stderr)
		}
		// A marker written after login ended comes out of the terminal
		// after anything it echoed while login read the key.
		const marker = "login-has-ended-marker"
		if _, err := slave.WriteString(marker); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return strings.Contains(p.String(), marker) })
		if echoed := p.String(); strings.Contains(echoed, "sk-typed") {
			t.Errorf("the key was echoed: %q", echoed)
		}
		if f, err := launch.FindKey(dirs, "openai", "", getenv, false); err != nil || f.Key != key {
			t.Fatalf("the key typed at the terminal: %+v, %v", f, err)
		}
		if !echoOn(t, slave) {
			t.Error("the echo is off after login")
		}

		// Interrupted at the prompt: echo back on, exit 130, nothing stored.
		if _, err := (keychain.Keychain{Getenv: getenv}).Delete("openai"); err != nil {
			t.Fatal(err)
		}
		stderr2 := &syncBuffer{}
		go func() { done <- Main([]string{"login", "openai"}, slave, io.Discard, stderr2, getenv) }()
		waitFor(t, func() bool { return strings.Contains(stderr2.String(), "openai API key") })
		waitFor(t, func() bool { return !echoOn(t, slave) }) // the prompt has turned the echo off
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			if code != ExitInterrupted || !strings.Contains(stderr2.String(), "interrupted: nothing stored") {
				t.Errorf("login interrupted: exit %d\n%s", code, stderr2)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("login did not end on an interrupt:\n%s", stderr2)
		}
		if !echoOn(t, slave) {
			t.Error("the echo is still off after an interrupted login")
		}
		if f, _ := launch.FindKey(dirs, "openai", "", getenv, false); f.Key != "" {
			t.Errorf("an interrupted login stored %q", f.Key)
		}
	})
}

func echoOn(t *testing.T, tty *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A service manager's credential: $CREDENTIALS_DIRECTORY/<provider>, its
// whitespace trimmed, after the environment and credentials.toml.
func TestKeyFromTheCredentialsDirectory(t *testing.T) {
	const key = "sk-loaded-credential-0123456789"
	home, proj := keyProject(t)
	credDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(credDir, "openai"), []byte("  "+key+"\n\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	getenv := keyEnv(home, map[string]string{"CREDENTIALS_DIRECTORY": credDir})
	_, dirs := launch.HomeDirs(getenv)

	f, err := launch.FindKey(dirs, "openai", "", getenv, false)
	if err != nil || f.Key != key || f.Where != filepath.Join(credDir, "openai")+" ($CREDENTIALS_DIRECTORY/openai)" {
		t.Fatalf("findKey = %+v, %v", f, err)
	}
	if f, _ := launch.FindKey(dirs, "anthropic", "", getenv, true); f.Key != "" {
		t.Errorf("anthropic took openai's credential: %+v", f)
	}
	srv := newFakeOpenAI(t)
	code, out, errs := runOpenAI(getenv, proj, srv.URL)
	if got := srv.sent(); code != 0 || len(got) != 1 || got[0] != "Bearer "+key {
		t.Fatalf("a run with the key in $CREDENTIALS_DIRECTORY: exit %d, the server got %q\n%s", code, got, errs)
	}
	writeUserConfig(t, dirs, "[provider]\nname = \"openai\"\nmodel = \"m\"\n")
	_, dout, _ := nodwyn(getenv, "", "doctor", "-C", proj)
	if !strings.Contains(dout, "\napi key: found in "+filepath.Join(credDir, "openai")+" ($CREDENTIALS_DIRECTORY/openai)\n") {
		t.Errorf("doctor:\n%s", dout)
	}
	noKeyIn(t, key, []string{out, errs, dout}, dirs.Data)

	// The environment and credentials.toml come first.
	if f, _ := launch.FindKey(dirs, "openai", "", keyEnv(home, map[string]string{"CREDENTIALS_DIRECTORY": credDir, "OPENAI_API_KEY": "sk-env-0123456789"}), false); f.Key != "sk-env-0123456789" {
		t.Errorf("the environment does not win: %+v", f)
	}
	writeCredentials(t, dirs, "[keys]\nopenai = \"sk-file-0123456789\"\n")
	if f, _ := launch.FindKey(dirs, "openai", "", getenv, false); f.Key != "sk-file-0123456789" {
		t.Errorf("credentials.toml does not win: %+v", f)
	}
	os.Remove(config.CredentialsPath(dirs))

	// An empty file is no key; a relative directory, or one the file cannot
	// be read from, is an error that names it (never its content).
	os.WriteFile(filepath.Join(credDir, "anthropic"), []byte(" \n"), 0o600)
	if f, err := launch.FindKey(dirs, "anthropic", "", getenv, true); err != nil || f.Key != "" {
		t.Errorf("an empty credential = %+v, %v", f, err)
	}
	code, _, errs = runOpenAI(keyEnv(home, map[string]string{"CREDENTIALS_DIRECTORY": "creds"}), proj, srv.URL)
	if code != ExitUsage || !strings.Contains(errs, `$CREDENTIALS_DIRECTORY is "creds", not an absolute path`) {
		t.Errorf("a relative $CREDENTIALS_DIRECTORY: exit %d\n%s", code, errs)
	}
	os.Remove(filepath.Join(credDir, "anthropic"))
	os.Mkdir(filepath.Join(credDir, "anthropic"), 0o700)
	if _, err := launch.FindKey(dirs, "anthropic", "", getenv, true); err == nil || !strings.Contains(err.Error(), "$CREDENTIALS_DIRECTORY/anthropic") {
		t.Errorf("an unreadable credential: %v", err)
	}
}

// No keychain is touched when an earlier source gives the key, nor with
// --no-keychain: a bus that never answers is never connected to. When the
// keychain is asked and hangs, the run fails at its 2 s deadline with an
// error that says what to do.
func TestTheKeychainIsAskedOnlyWhenNeeded(t *testing.T) {
	if keychaintest.InChild() {
		t.Skip("the child holds a session bus of its own")
	}
	addr, accepted := keychaintest.HungBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr) // where godbus looks
	home, proj := keyProject(t)
	credDir := t.TempDir()
	os.WriteFile(filepath.Join(credDir, "openai"), []byte("sk-credential-0123456789"), 0o600)
	bus := map[string]string{"DBUS_SESSION_BUS_ADDRESS": addr}
	getenv := keyEnv(home, bus)
	_, dirs := launch.HomeDirs(getenv)

	for name, env := range map[string]map[string]string{
		"the environment":        {"DBUS_SESSION_BUS_ADDRESS": addr, "OPENAI_API_KEY": "sk-env-0123456789"},
		"the key_env variable":   {"DBUS_SESSION_BUS_ADDRESS": addr, "MY_KEY": "sk-mine-0123456789"},
		"$CREDENTIALS_DIRECTORY": {"DBUS_SESSION_BUS_ADDRESS": addr, "CREDENTIALS_DIRECTORY": credDir},
	} {
		keyEnvName := ""
		if name == "the key_env variable" {
			keyEnvName = "MY_KEY"
		}
		if f, err := launch.FindKey(dirs, "openai", keyEnvName, keyEnv(home, env), false); err != nil || f.Key == "" {
			t.Errorf("%s: findKey = %+v, %v", name, f, err)
		}
		// Asked, the hung bus would have accepted a connection (and held
		// findKey for the keychain's deadline); how long the path takes
		// is BenchmarkFindKeyFromAnEarlierSource's.
		if n := accepted(); n != 0 {
			t.Fatalf("%s: the bus was connected to %d times though the key was found before the keychain", name, n)
		}
	}
	writeCredentials(t, dirs, "[keys]\nopenai = \"sk-file-0123456789\"\n")
	if f, err := launch.FindKey(dirs, "openai", "", getenv, false); err != nil || f.Key != "sk-file-0123456789" {
		t.Errorf("credentials.toml: findKey = %+v, %v", f, err)
	}
	os.Remove(config.CredentialsPath(dirs))
	if f, err := launch.FindKey(dirs, "openai", "", getenv, true); err != nil || f.Key != "" {
		t.Errorf("--no-keychain: findKey = %+v, %v", f, err)
	}
	srv := newFakeOpenAI(t)
	if code, _, errs := runOpenAI(keyEnv(home, map[string]string{"DBUS_SESSION_BUS_ADDRESS": addr, "OPENAI_API_KEY": "sk-env-0123456789"}), proj, srv.URL); code != 0 {
		t.Errorf("a run with the key in the environment: exit %d\n%s", code, errs)
	}
	if code, _, errs := runOpenAI(getenv, proj, srv.URL, "--no-keychain"); code != 0 {
		t.Errorf("a run with --no-keychain: exit %d\n%s", code, errs)
	}
	if got := srv.sent(); len(got) != 2 || got[0] != "Bearer sk-env-0123456789" || got[1] != "" {
		t.Errorf("the server got %q", got)
	}
	if n := accepted(); n != 0 {
		t.Fatalf("the bus was connected to %d times while an earlier source had the key or --no-keychain was given", n)
	}

	// Asked, the hung keychain fails the run at its deadline: the run ends
	// (a generous deadline of its own stands for "never"), after the
	// keychain's deadline has passed, with an error that says what to do.
	// How long after is BenchmarkARunWithAHungKeychain's.
	type result struct {
		code int
		errs string
	}
	ended := make(chan result, 1)
	start := time.Now()
	go func() {
		code, _, errs := runOpenAI(getenv, proj, "")
		ended <- result{code, errs}
	}()
	var r result
	select {
	case r = <-ended:
	case <-time.After(60 * time.Second):
		t.Fatal("a run with a hung keychain did not end")
	}
	if r.code != ExitUsage || !strings.Contains(r.errs, "the system keychain did not answer within 2s to read the openai key") || !strings.Contains(r.errs, "use --no-keychain / the credentials file") {
		t.Errorf("a run with a hung keychain: exit %d\n%s", r.code, r.errs)
	}
	if accepted() == 0 {
		t.Error("the run did not ask the keychain")
	}
	// A lower bound only: a loaded machine can make the run later, never
	// earlier, so this cannot fail for want of CPU.
	if d := time.Since(start); d < keychain.DefaultGetTimeout {
		t.Errorf("the run with a hung keychain gave up after %v, before the keychain's deadline of %v", d, keychain.DefaultGetTimeout)
	}
}

// What finding a key in the environment costs with a keychain that would
// hang if asked (TestTheKeychainIsAskedOnlyWhenNeeded checks it is not):
// microseconds, where asking would be the keychain's 2 s deadline.
func BenchmarkFindKeyFromAnEarlierSource(b *testing.B) {
	addr, _ := keychaintest.HungBus(b)
	b.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	home := b.TempDir()
	getenv := keyEnv(home, map[string]string{"DBUS_SESSION_BUS_ADDRESS": addr, "OPENAI_API_KEY": "sk-env-0123456789"})
	_, dirs := launch.HomeDirs(getenv)
	for b.Loop() {
		if f, err := launch.FindKey(dirs, "openai", "", getenv, false); err != nil || f.Key == "" {
			b.Fatalf("findKey = %+v, %v", f, err)
		}
	}
}

// How long a run with a hung keychain takes to fail: the keychain's
// deadline (keychain.DefaultGetTimeout) and what the run adds to it,
// reported as ms-past-deadline/op.
func BenchmarkARunWithAHungKeychain(b *testing.B) {
	addr, _ := keychaintest.HungBus(b)
	b.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	home := b.TempDir()
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		b.Fatal(err)
	}
	getenv := keyEnv(home, map[string]string{"DBUS_SESSION_BUS_ADDRESS": addr})
	n := 0
	for b.Loop() {
		if code, _, errs := runOpenAI(getenv, proj, ""); code != ExitUsage || !strings.Contains(errs, "did not answer within") {
			b.Fatalf("a run with a hung keychain: exit %d\n%s", code, errs)
		}
		n++
	}
	past := b.Elapsed() - time.Duration(n)*keychain.DefaultGetTimeout
	b.ReportMetric(float64(past)/float64(time.Millisecond)/float64(n), "ms-past-deadline/op")
}

// Where there is no Secret Service, a run that needs no key (a local
// server) goes on without one, and one that needs one says why the
// keychain had none and what to do.
func TestNoSecretServiceHere(t *testing.T) {
	home, proj := keyProject(t)
	getenv := keyEnv(home, map[string]string{"DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""})
	srv := newFakeOpenAI(t)
	if code, _, errs := runOpenAI(getenv, proj, srv.URL); code != 0 {
		t.Errorf("a run against a local server: exit %d\n%s", code, errs)
	}
	if got := srv.sent(); len(got) != 1 || got[0] != "" {
		t.Errorf("the server got %q", got)
	}
	code, _, errs := runOpenAI(getenv, proj, "")
	if code != ExitUsage || !strings.Contains(errs, "no API key for openai") || !strings.Contains(errs, "no Secret Service on this machine") || !strings.Contains(errs, "start a keyring daemon") {
		t.Errorf("a run with no key and no Secret Service: exit %d\n%s", code, errs)
	}
	code, _, errs = nodwyn(getenv, "sk-0123456789abcdef", "login", "openai")
	if code != ExitFailed || !strings.Contains(errs, "cannot store the openai key: no Secret Service on this machine") || !strings.Contains(errs, "nothing stored; the credentials file is ") || strings.Contains(errs, "sk-0123") {
		t.Errorf("login with no Secret Service: exit %d\n%s", code, errs)
	}
	// The commands and their help.
	_, out, _ := nodwyn(getenv, "", "login", "--help")
	for _, want := range []string{"without echo", "$CREDENTIALS_DIRECTORY/PROVIDER", "--no-keychain", "deadline of 2 s", `service "nodwyn", user PROVIDER`} {
		if !strings.Contains(out, want) {
			t.Errorf("login --help does not say %q:\n%s", want, out)
		}
	}
	if code, _, errs := nodwyn(getenv, "", "login", "mistral"); code != ExitUsage || !strings.Contains(errs, "openai") {
		t.Errorf("login of an unknown provider: exit %d\n%s", code, errs)
	}
}

// startKeyDaemon is a daemon in this process with getenv as its
// environment, with --no-keychain or not.
func startKeyDaemon(t *testing.T, home string, getenv func(string) string, noKeychain bool) (*testDaemon, func()) {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "nkd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	_, dirs := launch.HomeDirs(getenv)
	d := &testDaemon{t: t, home: home, data: dirs.Data, sock: filepath.Join(sockDir, "d.sock"), stderr: &syncBuffer{}, done: make(chan int, 1)}
	args := []string{"daemon", "--no-kernel-floor", "--socket", d.sock}
	if noKeychain {
		args = append(args, "--no-keychain")
	}
	go func() { d.done <- Main(args, strings.NewReader(""), io.Discard, d.stderr, getenv) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if c, err := daemon.Dial(ctx, d.data, d.sock, nil); err == nil {
			c.Close()
			stop := sync.OnceFunc(d.stop)
			t.Cleanup(stop)
			return d, stop
		}
		select {
		case code := <-d.done:
			t.Fatalf("the daemon exited %d: %s", code, d.stderr)
		case <-ctx.Done():
			t.Fatalf("the daemon did not start: %s", d.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func writeUserConfig(t *testing.T, dirs config.Dirs, text string) {
	t.Helper()
	if err := os.MkdirAll(dirs.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirs.Config, "config.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeCredentials(t *testing.T, dirs config.Dirs, text string) {
	t.Helper()
	if err := os.MkdirAll(dirs.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.CredentialsPath(dirs), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
