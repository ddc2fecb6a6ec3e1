package provider

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"sync"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// A static binary must reach an HTTPS endpoint from an image with no CA
// certificates. The system's roots are used when it has any; otherwise a
// pool is built from the roots embedded in the binary
// (golang.org/x/crypto/x509roots/fallback/bundle). That pool is built only
// then, on the first HTTPS client, rather than at every start as importing
// the fallback package would do (about 20 ms and 0.7 MB).

var fallbackRoots = sync.OnceValue(func() *x509.CertPool {
	if sys, err := x509.SystemCertPool(); err == nil && !sys.Equal(x509.NewCertPool()) {
		return nil // the system has roots: use them
	}
	return embeddedRoots()
})

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

// defaultHTTPClient is the client of a provider given none: the default
// transport, with the embedded roots when the system has none.
func defaultHTTPClient() *http.Client {
	roots := fallbackRoots()
	if roots == nil {
		return &http.Client{}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	return &http.Client{Transport: tr}
}
