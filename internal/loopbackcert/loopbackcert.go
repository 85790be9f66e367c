// Package loopbackcert makes the serving certificates of the local harness's servers on
// 127.0.0.1 (the fault proxy, Kueue's webhook server). Each is self-signed: a client trusts it
// with the certificate itself as its CA bundle.
package loopbackcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// Cert is a serving certificate for 127.0.0.1 and localhost that is its own CA.
type Cert struct {
	// PEM is the certificate, and the CA bundle that trusts it.
	PEM []byte
	// KeyPEM is its private key.
	KeyPEM []byte
}

// New makes a certificate named commonName, valid from an hour ago (clocks differ a little)
// until validFor from now.
func New(commonName string, validFor time.Duration) (Cert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Cert{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return Cert{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Cert{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Cert{}, err
	}
	return Cert{
		PEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// TLS returns the certificate and its key for a tls.Config.
func (c Cert) TLS() (tls.Certificate, error) { return tls.X509KeyPair(c.PEM, c.KeyPEM) }
