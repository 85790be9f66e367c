package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// certValidity is the lifetime of the client CA and of the certificates it signs, as of
// envtest's own.
const certValidity = 7 * 24 * time.Hour

// certAuthority signs the users' client certificates.
type certAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCertAuthority(commonName string) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: commonName}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := createCertificate(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key}, nil
}

// createCertificate sets tmpl's serial number and validity and signs it with signerKey.
func createCertificate(tmpl, signer *x509.Certificate, pub *ecdsa.PublicKey, signerKey *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = serial, now.Add(-time.Hour), now.Add(certValidity)
	return x509.CreateCertificate(rand.Reader, tmpl, signer, pub, signerKey)
}

// issue signs a certificate for a new key; tmpl gives the subject, names and usages. It returns
// the certificate and the key, PEM-encoded.
func (ca *certAuthority) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, _ error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := createCertificate(tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func (ca *certAuthority) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// save writes the certificate and the key to certPath and keyPath.
func (ca *certAuthority) save(certPath, keyPath string) error {
	keyPEM, err := encodeKey(ca.key)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certPath, ca.certPEM(), 0o644)
}

// loadCertAuthority reads what save wrote.
func loadCertAuthority(certPath, keyPath string) (*certAuthority, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, err
	}
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		return nil, fmt.Errorf("%s or %s holds no PEM block", certPath, keyPath)
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certPath, err)
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("the key %s does not belong to the certificate %s", keyPath, certPath)
	}
	return &certAuthority{cert: cert, key: key}, nil
}

// Files of the client CA in the API server's certificate directory (StateDir/apiserver).
const (
	ClientCACertFile = "client-ca.crt"
	ClientCAKeyFile  = "client-ca.key"
)

// clientCertAuthn is the API server's authentication (envtest.Authn): client certificates
// signed by a CA whose key it keeps next to the certificate in the API server's certificate
// directory, so that a process attached to the cluster (Attach) can add users as well as the
// one that started it. envtest's own keeps the key in memory only.
type clientCertAuthn struct {
	certDir string
	ca      *certAuthority
}

var _ envtest.Authn = (*clientCertAuthn)(nil)

func (a *clientCertAuthn) paths() (certPath, keyPath string) {
	return filepath.Join(a.certDir, ClientCACertFile), filepath.Join(a.certDir, ClientCAKeyFile)
}

// Configure points the API server at the CA certificate Start writes.
func (a *clientCertAuthn) Configure(certDir string, args *envtest.Arguments) error {
	a.certDir = certDir
	certPath, _ := a.paths()
	args.Set("client-ca-file", certPath)
	return nil
}

// Start makes the CA and writes it, before the API server starts.
func (a *clientCertAuthn) Start() error {
	if a.certDir == "" {
		return errors.New("localcluster: client CA started before it was configured")
	}
	ca, err := newCertAuthority("hyperpod local client CA")
	if err != nil {
		return err
	}
	if err := ca.save(a.paths()); err != nil {
		return fmt.Errorf("saving the client CA: %w", err)
	}
	a.ca = ca
	return nil
}

// load reads the CA that Start wrote in certDir.
func (a *clientCertAuthn) load(certDir string) error {
	a.certDir = certDir
	ca, err := loadCertAuthority(a.paths())
	if err != nil {
		return err
	}
	a.ca = ca
	return nil
}

// clientCert signs a client certificate for user: the API server reads the user name from its
// common name and the groups from its organizations.
func (a *clientCertAuthn) clientCert(user envtest.User) (certPEM, keyPEM []byte, _ error) {
	if a.ca == nil {
		return nil, nil, errors.New("localcluster: the client CA is not started")
	}
	return a.ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user.Name, Organization: user.Groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// AddUser returns a copy of baseCfg that authenticates as user.
func (a *clientCertAuthn) AddUser(user envtest.User, baseCfg *rest.Config) (*rest.Config, error) {
	certPEM, keyPEM, err := a.clientCert(user)
	if err != nil {
		return nil, fmt.Errorf("signing a client certificate for %s: %w", user.Name, err)
	}
	cfg := rest.CopyConfig(baseCfg)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	return cfg, nil
}

// Stop does nothing: the CA's files go with the state directory.
func (a *clientCertAuthn) Stop() error { return nil }
