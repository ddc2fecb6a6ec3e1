package provider

import (
	"crypto/x509"
	"net/http"
	"strings"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// A static binary must reach an HTTPS endpoint from an image with no CA
// certificates, and a run against an http:// endpoint should spend nothing
// on certificates at all. So:
//
//   - for an http:// base URL nothing CA-related runs, at start or later;
//   - for https:// the client's transport settles its roots at its first
//     handshake, not at New: when the system has roots, tls.Config.RootCAs
//     stays nil and Go verifies with its own system pool, which it loads
//     once, then; only when the system has none is a pool built from the
//     roots embedded in the binary (golang.org/x/crypto/x509roots/fallback/bundle;
//     about 20 ms and 0.7 MB, which importing the fallback package would
//     spend at every start).

// systemRoots reports the system's CA pool (a variable for tests).
var systemRoots = x509.SystemCertPool

// hasSystemRoots reports whether the system has roots Go can verify with.
func hasSystemRoots() bool {
	sys, err := systemRoots()
	return err == nil && sys != nil && !sys.Equal(x509.NewCertPool())
}

func embeddedRoots() *x509.CertPool {
	p := x509.NewCertPool()
	for c := range bundle.Roots() {
		cert, err := x509.ParseCertificate(c.Certificate)
		if err != nil {
			continue
		}
		if c.Constraint == nil {
			p.AddCert(cert)
		} else {
			p.AddCertWithConstraint(cert, c.Constraint)
		}
	}
	return p
}

// defaultHTTPClient is the client of a provider given none: nodwyn's own
// transport (transport.go), whose CA roots are settled as said above.
func defaultHTTPClient(base string) *http.Client {
	return &http.Client{Transport: newWireTransport(strings.HasPrefix(strings.ToLower(base), "https:"))}
}
