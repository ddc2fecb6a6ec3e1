//go:build (dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd

package keychain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	dbus "github.com/godbus/dbus/v5"
)

// Here go-keyring asks the Secret Service over the D-Bus session bus (the
// same build constraint as its keyring_unix.go).

const (
	backend         = "the Secret Service"
	unavailableText = "no Secret Service on this machine"
	startOne        = "start a keyring daemon (gnome-keyring-daemon, KeePassXC's Secret Service)"
)

// unavailable says why there is no session bus to ask, or "" when there is
// one: DBUS_SESSION_BUS_ADDRESS, else the socket $XDG_RUNTIME_DIR/bus, as
// godbus looks. Without either godbus would run dbus-launch to start a bus.
func unavailable(getenv func(string) string) string {
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return ""
	}
	if rd := getenv("XDG_RUNTIME_DIR"); rd != "" {
		if _, err := os.Stat(filepath.Join(rd, "bus")); err == nil {
			return ""
		}
	}
	return "no D-Bus session bus: $DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus"
}

// unavailableError says why err means there is no Secret Service to ask
// (the bus's socket is not there, or nothing on the bus provides the
// service), or "" when err is another failure.
func unavailableError(err error, getenv func(string) string) string {
	var de dbus.Error
	if !errors.As(err, &de) {
		var dp *dbus.Error
		if errors.As(err, &dp) && dp != nil {
			de = *dp
		}
	}
	switch de.Name {
	case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
		return "nothing on the session bus provides org.freedesktop.secrets"
	}
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
		addr := getenv("DBUS_SESSION_BUS_ADDRESS")
		if addr == "" {
			addr = filepath.Join(getenv("XDG_RUNTIME_DIR"), "bus")
		}
		return fmt.Sprintf("the session bus %s does not answer: %v", addr, err)
	}
	return ""
}
