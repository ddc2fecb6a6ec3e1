package provider

import (
	"crypto/x509"
	"testing"
)

// The embedded roots are a real pool: the test's own machine aside, a static
// binary in an image without certificates verifies with them.
func TestEmbeddedRootsAreAUsablePool(t *testing.T) {
	p := embeddedRoots()
	if p.Equal(x509.NewCertPool()) {
		t.Fatal("the embedded pool is empty")
	}
	c := defaultHTTPClient()
	if c == nil {
		t.Fatal("no client")
	}
}
