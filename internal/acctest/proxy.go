package acctest

import (
	"crypto/tls"
	"net/http"
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
	upstream, err := rest.TLSConfigFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS = true
	p := startProxy(t, upstream, cfg)
	path := filepath.Join(t.TempDir(), "proxy-kubeconfig")
	if err := os.WriteFile(path, p.Kubeconfig(env.Config.BearerToken), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, path
}

// CountingProxy starts a faultproxy in front of the test cluster that injects nothing and
// records every request (faultproxy.Proxy.Recorded), closed when the test ends. It serves plain
// HTTP and holds the harness's credentials, so a provider block with only host set to the URL
// reaches the cluster. Without a cluster it returns nil and an unreachable URL, for
// configurations built before resource.Test skips the test.
func CountingProxy(t testing.TB) (*faultproxy.Proxy, string) {
	t.Helper()
	if env == nil {
		return nil, "http://127.0.0.1:1"
	}
	return CountingProxyTo(t, env.Config)
}

// CountingProxyTo is CountingProxy in front of the cluster cluster reaches, for tests that
// start a control plane of their own.
func CountingProxyTo(t testing.TB, cluster *rest.Config) (*faultproxy.Proxy, string) {
	t.Helper()
	rt, err := rest.TransportFor(cluster)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxyTo(t, cluster, nil, faultproxy.Config{Upstream: rt, Record: true})
	return p, p.URL()
}

// HoldingProxy starts a proxy in front of the test cluster that forwards each request once hold
// has returned for it, closed when the test ends: a test holds a chosen request there (a gate)
// until what must come first has happened. It serves plain HTTP with the harness's credentials,
// as CountingProxy does.
func HoldingProxy(t testing.TB, hold func(*http.Request)) string {
	t.Helper()
	PreCheck(t)
	rt, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	forward := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		hold(r)
		return rt.RoundTrip(r)
	})
	return startProxyTo(t, env.Config, nil, faultproxy.Config{Upstream: forward}).URL()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startProxy starts a faultproxy in front of the test cluster, closed when the test ends.
func startProxy(t testing.TB, upstream *tls.Config, cfg faultproxy.Config) *faultproxy.Proxy {
	t.Helper()
	return startProxyTo(t, env.Config, upstream, cfg)
}

func startProxyTo(t testing.TB, cluster *rest.Config, upstream *tls.Config, cfg faultproxy.Config) *faultproxy.Proxy {
	t.Helper()
	target, err := url.Parse(cluster.Host)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(target, upstream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
