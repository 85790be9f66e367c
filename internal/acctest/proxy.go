package acctest

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

// FaultProxy starts a faultproxy in front of the test cluster, closed when the test ends, and
// writes a kubeconfig for it. The proxy serves TLS, because clientcmd drops credentials for
// http:// servers, and presents the harness's client certificate upstream.
func FaultProxy(t testing.TB, cfg faultproxy.Config) (*faultproxy.Proxy, string) {
	t.Helper()
	PreCheck(t)
	target, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := rest.TLSConfigFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS = true
	p, err := faultproxy.New(target, upstream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	path := filepath.Join(t.TempDir(), "proxy-kubeconfig")
	if err := os.WriteFile(path, p.Kubeconfig(env.Config.BearerToken), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, path
}
