package provider

// The fallback root certificates are used only when the system has none, so
// a static binary can reach an HTTPS endpoint from an image without CA
// certificates.
import _ "golang.org/x/crypto/x509roots/fallback"
