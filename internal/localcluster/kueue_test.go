package localcluster

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestKueueFromEnv(t *testing.T) {
	for value, want := range map[string]bool{"": true, "on": true, "1": true, "off": false, "OFF": false, "0": false, "false": false, "no": false} {
		t.Setenv(EnvKueue, value)
		if got := KueueFromEnv(); got != want {
			t.Errorf("%s=%q: %v, want %v", EnvKueue, value, got, want)
		}
	}
}

// The enabled conversion patches of the module's CRD kustomization are found, the commented
// ones are not.
func TestPatchLine(t *testing.T) {
	for line, want := range map[string]string{
		"- path: patches/webhook_in_clusterqueues.yaml":    "patches/webhook_in_clusterqueues.yaml",
		"#- path: patches/webhook_in_resourceflavors.yaml": "",
		"- path: patches/cainjection_in_workloads.yaml":    "",
	} {
		got := ""
		if m := patchLine.FindStringSubmatch(line); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

func TestURLClientConfig(t *testing.T) {
	path := "/validate-kueue-x-k8s-io-v1beta2-clusterqueue"
	cc := urlClientConfig("https://127.0.0.1:9443", admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{Name: "webhook-service", Namespace: "system", Path: &path},
	}, []byte("CA"))
	if cc.Service != nil || cc.URL == nil || *cc.URL != "https://127.0.0.1:9443"+path || string(cc.CABundle) != "CA" {
		t.Errorf("client config %+v", cc)
	}
}

// The serving certificate is for 127.0.0.1 and signed by the returned CA.
func TestWriteServingCert(t *testing.T) {
	dir := t.TempDir()
	caPEM, err := writeServingCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no CA")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("serving certificate does not verify for 127.0.0.1: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tls.key")); err != nil {
		t.Error(err)
	}
}

func TestKueueConfiguration(t *testing.T) {
	cfg := kueueConfiguration(9443, 8081, "/tmp/certs")
	for _, want := range []string{"kind: Configuration", "leaderElect: false", "enable: false", "port: 9443",
		"healthProbeBindAddress: 127.0.0.1:8081", `bindAddress: "0"`, "- batch/job", "preemptionStrategies:"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration lacks %q:\n%s", want, cfg)
		}
	}
}
