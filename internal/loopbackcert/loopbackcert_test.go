package loopbackcert

import (
	"crypto/x509"
	"testing"
	"time"
)

// The certificate serves 127.0.0.1 and localhost, verifies with itself as the CA for the
// requested time, and its key pairs with it.
func TestNew(t *testing.T) {
	const validFor = 48 * time.Hour
	c, err := New("test", validFor)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.TLS()
	if err != nil {
		t.Fatalf("certificate and key do not pair: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "test" {
		t.Errorf("common name %q, want test", cert.Subject.CommonName)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.PEM) {
		t.Fatal("PEM holds no certificate")
	}
	now := time.Now()
	for _, tc := range []struct {
		name string
		host string
		at   time.Time
		ok   bool
	}{
		{"loopback address", "127.0.0.1", now, true},
		{"localhost", "localhost", now, true},
		{"shortly before it was made", "127.0.0.1", now.Add(-time.Minute), true},
		{"near its end", "127.0.0.1", now.Add(validFor - time.Minute), true},
		{"after its end", "127.0.0.1", now.Add(validFor + time.Minute), false},
		{"another host", "example.com", now, false},
	} {
		_, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.host, CurrentTime: tc.at})
		if (err == nil) != tc.ok {
			t.Errorf("%s: verify error %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// Two certificates are distinct: a fresh key and serial each.
func TestNewIsFresh(t *testing.T) {
	a, err := New("a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New("a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.KeyPEM) == string(b.KeyPEM) || string(a.PEM) == string(b.PEM) {
		t.Error("two calls returned the same certificate or key")
	}
}
