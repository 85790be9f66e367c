package kube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

const testToken = "s3cr3t-b34r3r-t0k3n-0123456789abcdef"

// fastRetry keeps the retry tests quick.
var fastRetry = RetrySettings{MaxAttempts: 5, MinBackoff: 2 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}

// fakeAPI is an httptest server that speaks just enough of the Kubernetes API:
// the handler gets the 1-based number of the request.
type fakeAPI struct {
	*httptest.Server

	mu       sync.Mutex
	requests []seenRequest
}

type seenRequest struct {
	Method, Path, Query, ContentType, Authorization string
}

func newFakeAPI(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	// TLS, as in real life: clientcmd only sends credentials over https.
	f.Server = httptest.NewTLSServer(f.handler(handle))
	t.Cleanup(f.Close)
	return f
}

// onClock is c, before its first use, with its retries counting their budget in and waiting
// on clock.
func onClock(c *Client, clock retrypolicy.Clock) *Client {
	c.clock = clock
	return c
}

// settings returns Settings that reach the fake API with a bearer token.
func (f *fakeAPI) settings(r RetrySettings) Settings {
	return Settings{Host: f.URL, ClusterCACertificate: serverCAPEM(f.Server), Token: testToken, Retry: r}
}

func (f *fakeAPI) handler(handle func(w http.ResponseWriter, r *http.Request, n int)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, seenRequest{
			Method:        r.Method,
			Path:          r.URL.Path,
			Query:         r.URL.RawQuery,
			ContentType:   r.Header.Get("Content-Type"),
			Authorization: r.Header.Get("Authorization"),
		})
		n := len(f.requests)
		f.mu.Unlock()
		handle(w, r, n)
	})
}

func (f *fakeAPI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeAPI) seen() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.requests...)
}

// writeStatus answers with a metav1.Status body, as the API server does for
// errors.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, retryAfter string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  string(reason) + " from the fake API server",
		Reason:   reason,
		Code:     int32(code),
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
		if secs, err := strconv.Atoi(retryAfter); err == nil {
			st.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(secs)}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// writeObjectNotFound answers 404 for a missing object as the API server does: a Status whose
// details name the object (path ends in .../<resource>/<name>).
func writeObjectNotFound(w http.ResponseWriter, path string) {
	parts := strings.Split(path, "/")
	name, resource := parts[len(parts)-1], parts[len(parts)-2]
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: fmt.Sprintf("%s %q not found", resource, name), Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
		Details: &metav1.StatusDetails{Name: name, Kind: resource},
	})
}

// writeObject answers 200 (or code) with a JSON object.
func writeObject(w http.ResponseWriter, code int, obj map[string]interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(obj)
}

func namespaceJSON(name string) map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]interface{}{"name": name, "resourceVersion": "1"},
	}
}

// dropConnection closes the connection without an answer: the client sees
// EOF / connection reset.
func dropConnection(t *testing.T, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Errorf("response writer cannot hijack")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// testPKI is a throw-away CA-signed client certificate.
type testPKI struct {
	CertPEM, KeyPEM string
	Pool            *x509.CertPool
}

func newClientPKI(t *testing.T) testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(42),
		Subject:               pkix.Name{CommonName: "test-user", Organization: []string{"test-group"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return testPKI{
		CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		KeyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
		Pool:    pool,
	}
}

func serverCAPEM(srv *httptest.Server) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}
