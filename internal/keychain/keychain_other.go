//go:build !((dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd)

package keychain

import (
	"errors"
	"runtime"

	"github.com/zalando/go-keyring"
)

// Here go-keyring uses the platform's own store (macOS's security command,
// Windows's Credential Manager), or none at all (ErrUnsupportedPlatform).

var backend = func() string {
	switch runtime.GOOS {
	case "darwin":
		return "the login Keychain"
	case "windows":
		return "the Windows Credential Manager"
	}
	return "the system keychain"
}()

const (
	unavailableText = "no system keychain nodwyn can use here"
	startOne        = "keep the key in the environment"
)

func unavailable(func(string) string) string { return "" }

func unavailableError(err error, _ func(string) string) string {
	if errors.Is(err, keyring.ErrUnsupportedPlatform) {
		return "go-keyring does not support " + runtime.GOOS
	}
	return ""
}
