package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/keychain"
	"github.com/nodwyn/nodwyn/internal/launch"
)

// LoginCmd is `nodwyn login`.
type LoginCmd struct {
	Provider string `arg:"" enum:"openai,anthropic" help:"The provider whose key this is: openai or anthropic."`
}

// LogoutCmd is `nodwyn logout`.
type LogoutCmd struct {
	Provider string `arg:"" enum:"openai,anthropic" help:"The provider whose stored key is deleted: openai or anthropic."`
}

// keyOrder is the lookup order, for the help of login, logout and
// --no-keychain.
const keyOrder = `A run (nodwyn run, and each run of a daemon) takes the first key it finds:

  1. the environment: the variable [provider] key_env names in config.toml,
     else OPENAI_API_KEY or ANTHROPIC_API_KEY
  2. credentials.toml in nodwyn's configuration directory
     (~/.config/nodwyn/credentials.toml): [keys] openai = "..."
  3. $CREDENTIALS_DIRECTORY/PROVIDER, the file a service manager puts there
     (systemd: LoadCredential=openai:/path/to/key)
  4. the system keychain, where 'nodwyn login' stores it: the Secret Service
     on Linux (gnome-keyring, KeePassXC …, over the D-Bus session bus), the
     login Keychain on macOS; service "nodwyn", user PROVIDER

The keychain is not asked at all when 1–3 give a key. It is asked with a
deadline of 2 s: a Secret Service that is hung, or waiting for its password,
fails the run with an error instead of hanging it. 'nodwyn run --no-keychain',
and every run of a daemon started with 'nodwyn daemon --no-keychain', stop
at 3. A key is never shown: not in run.state, the events, the logs or an
error; 'nodwyn doctor' says where a run would find one.`

// Help is shown after the arguments of `nodwyn login --help`.
func (LoginCmd) Help() string {
	return `Stores PROVIDER's API key in the system keychain, replacing the one stored
before. The key is read from the terminal without echo, or from standard input
when that is not a terminal (one line; spaces and line breaks inside are
refused, an empty key too):

    nodwyn login openai
    pass show openai-key | nodwyn login openai

` + keyOrder
}

// Help is shown after the arguments of `nodwyn logout --help`.
func (LogoutCmd) Help() string {
	return `Deletes PROVIDER's key from the system keychain (the one 'nodwyn login'
stored), and says so when none was stored. A key in the environment, in
credentials.toml or in $CREDENTIALS_DIRECTORY is not touched; the command says
when runs would still find one.

` + keyOrder
}

// Run stores the key.
func (c *LoginCmd) Run(e *env) error {
	key, err := readKey(e, c.Provider)
	if err != nil {
		return err
	}
	_, dirs := launch.HomeDirs(e.getenv)
	if err := (keychain.Keychain{Getenv: e.getenv}).Set(c.Provider, key); err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%w, then run 'nodwyn login %s' again\n(nothing stored; the credentials file is %s: [keys] %s = \"...\", mode 0600)",
			keychainFailure(err), c.Provider, config.CredentialsPath(dirs), c.Provider)}
	}
	fmt.Fprintf(e.stdout, "stored: the %s key, in %s\n", c.Provider, keychain.Where(c.Provider))
	if f, err := launch.FindKey(dirs, c.Provider, personKeyEnv(e.getenv, dirs), e.getenv, true); err == nil && f.Key != "" {
		fmt.Fprintf(e.stderr, "note: a run here takes the %s key from %s first; the keychain is asked only when the environment, credentials.toml and $CREDENTIALS_DIRECTORY have none\n", c.Provider, f.Where)
	}
	return nil
}

// Run deletes the key.
func (c *LogoutCmd) Run(e *env) error {
	deleted, err := (keychain.Keychain{Getenv: e.getenv}).Delete(c.Provider)
	if err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%w, then run 'nodwyn logout %s' again (nothing was deleted)", keychainFailure(err), c.Provider)}
	}
	if deleted {
		fmt.Fprintf(e.stdout, "deleted: the %s key, from %s\n", c.Provider, keychain.Where(c.Provider))
	} else {
		fmt.Fprintf(e.stdout, "no %s key was stored in %s: nothing to delete\n", c.Provider, keychain.Where(c.Provider))
	}
	_, dirs := launch.HomeDirs(e.getenv)
	if f, err := launch.FindKey(dirs, c.Provider, personKeyEnv(e.getenv, dirs), e.getenv, true); err == nil && f.Key != "" {
		fmt.Fprintf(e.stderr, "note: a run here still finds a key for %s, in %s\n", c.Provider, f.Where)
	}
	return nil
}

// keychainFailure is a failed keychain call told for login and logout:
// what failed and what to do about the keychain itself. The keychain's
// own message ends with what a run can do instead (--no-keychain), which
// is no flag of these commands.
func keychainFailure(err error) error {
	var ke *keychain.Error
	if !errors.As(err, &ke) {
		return err
	}
	what := fmt.Sprintf("the system keychain: cannot %s the %s key", ke.Op, ke.User)
	switch {
	case errors.Is(ke.Kind, keychain.ErrUnavailable):
		return fmt.Errorf("%s: %w (%s): start a keyring daemon (gnome-keyring-daemon, KeePassXC's Secret Service)", what, ke.Kind, ke.Detail)
	case errors.Is(ke.Kind, keychain.ErrTimeout):
		return fmt.Errorf("%s: %w within %s (is it hung, or waiting for someone to type its password?): unlock or restart it", what, ke.Kind, ke.Timeout)
	}
	if ke.Err == nil {
		return fmt.Errorf("%s (is it locked, or its daemon broken?): unlock or restart it", what)
	}
	return fmt.Errorf("%s: %w (is it locked, or its daemon broken?): unlock or restart it", what, ke.Err)
}

// personKeyEnv is [provider] key_env of the person's own config.toml (a
// project's never names it), for login's and logout's notes; "" when it is
// not set or the file cannot be read.
func personKeyEnv(getenv func(string) string, dirs config.Dirs) string {
	cfg, err := config.LoadWith(dirs, "", nil, getenv)
	if err != nil {
		return ""
	}
	return cfg.Provider.KeyEnv
}

// readKey reads the key: at a terminal without echo, else all of stdin.
func readKey(e *env, provider string) (string, error) {
	var text string
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		t, err := readWithoutEcho(f, e.stderr, fmt.Sprintf("%s API key (not shown as you type; Enter ends it): ", provider))
		if err != nil {
			return "", err
		}
		text = t
	} else {
		b, err := io.ReadAll(io.LimitReader(e.stdin, 4*keychain.MaxKeyBytes))
		if err != nil {
			return "", &exitError{code: ExitFailed, err: fmt.Errorf("reading the key from standard input: %w", err)}
		}
		text = string(b)
	}
	key := strings.TrimSpace(text)
	if key == "" {
		return "", usageErr("no key given: type it at the prompt, or give it on standard input (printf '%%s' \"$KEY\" | nodwyn login %s); nothing stored", provider)
	}
	if err := keychain.CheckKey(key); err != nil {
		return "", usageErr("%v; nothing stored", err)
	}
	return key, nil
}

// readWithoutEcho reads one line from the terminal f without echo. An interrupt
// while it waits puts the terminal back as it was (echo on) and ends the
// command.
func readWithoutEcho(f *os.File, stderr io.Writer, prompt string) (string, error) {
	fd := int(f.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return "", &exitError{code: ExitFailed, err: fmt.Errorf("the terminal: %w", err)}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals...)
	defer signal.Stop(sigs)
	type line struct {
		b   []byte
		err error
	}
	got := make(chan line, 1)
	// The echo goes off before the prompt shows: a key pasted the moment
	// the prompt appears is not echoed (term.ReadPassword turns it off
	// only once it reads).
	if err := echoOff(fd); err != nil {
		return "", &exitError{code: ExitFailed, err: fmt.Errorf("the terminal: %w", err)}
	}
	fmt.Fprint(stderr, prompt)
	go func() {
		b, err := term.ReadPassword(fd)
		got <- line{b, err}
	}()
	select {
	case l := <-got:
		_ = term.Restore(fd, state)
		fmt.Fprintln(stderr)
		if l.err != nil {
			return "", &exitError{code: ExitFailed, err: fmt.Errorf("reading the key from the terminal: %w", l.err)}
		}
		return string(l.b), nil
	case <-sigs:
		_ = term.Restore(fd, state)
		fmt.Fprintln(stderr)
		return "", &exitError{code: ExitInterrupted, err: errors.New("interrupted: nothing stored")}
	}
}

// echoOff turns the terminal's echo off, leaving the rest as it is.
func echoOff(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Lflag &^= unix.ECHO
	return unix.IoctlSetTermios(fd, unix.TCSETS, t)
}
