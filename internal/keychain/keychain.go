// Package keychain keeps the providers' API keys in the system keychain, a
// thin layer over github.com/zalando/go-keyring: the Secret Service on Linux
// and the BSDs (gnome-keyring, KeePassXC … over the D-Bus session bus), the
// login Keychain on macOS, the Credential Manager on Windows.
//
// An entry is service [Service] ("nodwyn"), user the provider's name
// ("openai", "anthropic"). A key that is not stored is "" and no error.
// Every call has a deadline: [DefaultGetTimeout] for a read (a run reads the
// keychain when it starts, and a hung Secret Service must not hang it),
// [DefaultChangeTimeout] for a store or a delete (a person is there, and
// the keyring may ask them for its password). A call past its deadline is
// left running in a goroutine of its own, which ends when the bus answers or
// closes; the caller gets an error that says what to do.
//
// The errors never contain a key: they say which entry, what failed and the
// fix ([*Error]).
package keychain

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/zalando/go-keyring"
)

// Service is the service name of nodwyn's entries.
const Service = "nodwyn"

// The deadlines of a call when [Keychain]'s fields are zero.
const (
	DefaultGetTimeout    = 2 * time.Second
	DefaultChangeTimeout = 30 * time.Second
)

// MaxKeyBytes is the longest key [Keychain.Set] stores (macOS's keychain
// takes about 3000 bytes per entry; no provider's key comes near it).
const MaxKeyBytes = 2048

var (
	// ErrUnavailable: this machine has no keychain to ask (no Secret
	// Service on the session bus, no session bus at all, or a platform
	// go-keyring does not support).
	ErrUnavailable = errors.New(unavailableText)
	// ErrTimeout: the keychain did not answer within the call's deadline.
	ErrTimeout = errors.New("the system keychain did not answer")
)

// Keychain reads and writes nodwyn's entries. The zero value is ready: it
// reads the process's environment and uses the default deadlines.
type Keychain struct {
	// Getenv is the environment that says whether there is a session bus
	// to ask (DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus): without
	// one the keychain is [ErrUnavailable] at once, and godbus never tries to
	// start a bus of its own with dbus-launch. nil is os.Getenv. The D-Bus
	// library itself reads the process's environment, so a caller passes the
	// environment the process has (nodwyn's cli.Getenv) or one that names no
	// bus.
	Getenv func(string) string
	// GetTimeout and ChangeTimeout are the deadlines of a read and of a
	// store or delete; zero is [DefaultGetTimeout] and [DefaultChangeTimeout].
	GetTimeout, ChangeTimeout time.Duration
}

// Error is a failed call: which entry, what failed, and what to do.
type Error struct {
	Op      string        // "read", "store" or "delete"
	User    string        // the provider
	Kind    error         // ErrUnavailable, ErrTimeout, or nil for another failure
	Detail  string        // why it is unavailable (no bus, nothing on the bus …)
	Err     error         // the underlying error, if any
	Timeout time.Duration // the deadline that passed (Kind ErrTimeout)
}

// The other places a key can be kept, which every error ends with.
const elsewhere = "use --no-keychain / the credentials file"

func (e *Error) Error() string {
	what := fmt.Sprintf("%s the %s key", e.Op, e.User)
	switch e.Kind {
	case ErrUnavailable:
		return fmt.Sprintf("the system keychain: cannot %s: %s (%s): %s or %s", what, ErrUnavailable, e.Detail, startOne, elsewhere)
	case ErrTimeout:
		return fmt.Sprintf("%s within %s to %s (is it hung, or waiting for someone to type its password?): unlock or restart it, or %s", ErrTimeout, e.Timeout, what, elsewhere)
	}
	return fmt.Sprintf("the system keychain: cannot %s: %v (is it locked, or its daemon broken?): unlock or restart it, or %s", what, e.Err, elsewhere)
}

// Unwrap gives errors.Is the kind and the cause.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// Where names the keychain an entry for user is kept in, for messages:
// "the Secret Service (service nodwyn, user openai)".
func Where(user string) string {
	return fmt.Sprintf("%s (service %s, user %s)", backend, Service, user)
}

func (k Keychain) getenv(name string) string {
	if k.Getenv == nil {
		return os.Getenv(name)
	}
	return k.Getenv(name)
}

// Get returns the key stored for user: "" and no error when none is.
func (k Keychain) Get(user string) (string, error) {
	if err := checkUser(user); err != nil {
		return "", err
	}
	var key string
	err := k.call("read", user, orDefault(k.GetTimeout, DefaultGetTimeout), func() error {
		var err error
		key, err = keyring.Get(Service, user)
		return err
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return key, nil
}

// Set stores key for user, replacing the one stored before. An empty key,
// one with spaces or control characters in it, or one longer than
// [MaxKeyBytes] is refused.
func (k Keychain) Set(user, key string) error {
	if err := checkUser(user); err != nil {
		return err
	}
	if err := CheckKey(key); err != nil {
		return err
	}
	return k.call("store", user, orDefault(k.ChangeTimeout, DefaultChangeTimeout), func() error {
		return keyring.Set(Service, user, key)
	})
}

// Delete deletes the key stored for user; false and no error when none was.
func (k Keychain) Delete(user string) (bool, error) {
	if err := checkUser(user); err != nil {
		return false, err
	}
	err := k.call("delete", user, orDefault(k.ChangeTimeout, DefaultChangeTimeout), func() error {
		return keyring.Delete(Service, user)
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// CheckKey refuses what is not a key: nothing, a space or a control
// character inside (two keys pasted, a line break), or more than
// [MaxKeyBytes]. Its errors never show the text.
func CheckKey(key string) error {
	switch {
	case key == "":
		return errors.New("the key is empty: give the key itself")
	case strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return errors.New("the key has a space, a line break or a control character in it: give the key alone, on one line")
	case len(key) > MaxKeyBytes:
		return fmt.Errorf("the key is %d bytes, more than the %d a keychain entry takes: is it a key?", len(key), MaxKeyBytes)
	}
	return nil
}

func checkUser(user string) error {
	if user == "" || strings.ContainsFunc(user, unicode.IsControl) {
		return fmt.Errorf("keychain: %q is not a provider's name", user)
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// call runs f (one go-keyring call) with a deadline. When the deadline
// passes first, f is left to finish in its goroutine: a D-Bus call cannot be
// cancelled, and it ends when the bus answers or closes.
func (k Keychain) call(op, user string, timeout time.Duration, f func() error) error {
	if detail := unavailable(k.getenv); detail != "" {
		return &Error{Op: op, User: user, Kind: ErrUnavailable, Detail: detail}
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, keyring.ErrNotFound) {
			return err
		}
		if errors.Is(err, keyring.ErrSetDataTooBig) {
			return fmt.Errorf("the system keychain: cannot %s the %s key: it is too long for a keychain entry", op, user)
		}
		if detail := unavailableError(err, k.getenv); detail != "" {
			return &Error{Op: op, User: user, Kind: ErrUnavailable, Detail: detail, Err: err}
		}
		return &Error{Op: op, User: user, Err: err}
	case <-t.C:
		return &Error{Op: op, User: user, Kind: ErrTimeout, Timeout: timeout}
	}
}
