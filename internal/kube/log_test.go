package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// mixedHandler answers by path so one client can exercise retries, give-ups,
// errors and dropped connections.
func mixedHandler(t *testing.T) func(w http.ResponseWriter, r *http.Request, n int) {
	var flaky atomic.Int32
	return func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/namespaces/flaky"):
			if flaky.Add(1) <= 2 {
				writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
				return
			}
			writeObject(w, http.StatusOK, namespaceJSON("flaky"))
		case strings.HasSuffix(r.URL.Path, "/namespaces/throttled"):
			writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "0")
		case strings.HasSuffix(r.URL.Path, "/namespaces/dropped"):
			dropConnection(t, w)
		case strings.HasSuffix(r.URL.Path, "/namespaces/conflict"):
			writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict, "")
		case r.Method == http.MethodPost:
			writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
		default:
			writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "")
		}
	}
}

func exerciseClient(ctx context.Context, cs kubernetes.Interface) {
	nss := cs.CoreV1().Namespaces()
	_, _ = nss.Get(ctx, "flaky", metav1.GetOptions{})
	_, _ = nss.Get(ctx, "throttled", metav1.GetOptions{})
	_, _ = nss.Get(ctx, "missing", metav1.GetOptions{})
	_, _ = nss.Update(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dropped"}}, metav1.UpdateOptions{})
	_, _ = nss.Update(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "conflict"}}, metav1.UpdateOptions{})
	_, _ = nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, metav1.CreateOptions{})
	_ = nss.Delete(ctx, "missing", metav1.DeleteOptions{})
}

func assertLogged(t *testing.T, logs string) {
	t.Helper()
	if logs == "" {
		t.Fatal("nothing was logged: the test cannot tell whether secrets leak")
	}
	for _, want := range []string{
		"sending Kubernetes API request",
		"retrying Kubernetes API request",
		"giving up on Kubernetes API request",
		"Kubernetes API request failed",
		`"kube_status":503`,
		`"kube_path":"/api/v1/namespaces/flaky"`,
		`"kube_method":"PUT"`,
		`"kube_attempt":3`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q", want)
		}
	}
}

func TestTokenNeverLogged(t *testing.T) {
	api := newFakeAPI(t, mixedHandler(t))
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)

	client := NewClient(api.settings(RetrySettings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}))
	cs, err := client.Clientset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exerciseClient(ctx, cs)

	logs := buf.String()
	assertLogged(t, logs)
	for _, secret := range []string{testToken, base64.StdEncoding.EncodeToString([]byte(testToken)), "Bearer "} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
	// The server did get the token, so it was in play.
	if api.seen()[0].Authorization != "Bearer "+testToken {
		t.Error("the token was not sent")
	}
}

func TestClientKeyNeverLogged(t *testing.T) {
	pki := newClientPKI(t)
	api := &fakeAPI{}
	api.Server = httptest.NewUnstartedServer(api.handler(mixedHandler(t)))
	api.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.Pool}
	api.StartTLS()
	t.Cleanup(api.Close)

	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	client := NewClient(Settings{
		Host:                 api.URL,
		ClusterCACertificate: serverCAPEM(api.Server),
		ClientCertificate:    pki.CertPEM,
		ClientKey:            pki.KeyPEM,
		Retry:                RetrySettings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond},
	})
	cs, err := client.Clientset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Proves the client certificate authenticated us (the server requires it).
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "flaky", metav1.GetOptions{}); err != nil {
		t.Fatalf("Get over mutual TLS: %v", err)
	}
	exerciseClient(ctx, cs)

	logs := buf.String()
	assertLogged(t, logs)
	for name, pemData := range map[string]string{"client key": pki.KeyPEM, "client certificate": pki.CertPEM} {
		for _, line := range strings.Split(pemData, "\n") {
			if line == "" || strings.HasPrefix(line, "-----") {
				continue
			}
			if strings.Contains(logs, line) {
				t.Errorf("logs contain a line of the %s", name)
			}
		}
	}
	if strings.Contains(logs, "PRIVATE KEY") {
		t.Error("logs contain a PEM private key header")
	}
}
