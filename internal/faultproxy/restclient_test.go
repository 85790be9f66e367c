package faultproxy_test

// The provider's retrying client through the proxy: what it survives, and the lost create it
// cannot retry.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
)

// newRESTClient is how the provider talks through the proxy: a rest.Config
// whose Host is the proxy, with the provider's retrying layer installed.
func newRESTClient(t *testing.T, p *faultproxy.Proxy, retry kube.RetrySettings) *rest.RESTClient {
	t.Helper()
	cfg := &rest.Config{Host: p.URL(), BearerToken: "test-token", QPS: -1}
	kube.WrapRetries(cfg, retry)
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	cfg.APIPath = "/api"
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func TestRESTClientWithRetriesSurvivesFaults(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{
		Seed:       1,
		Idempotent: faultproxy.Rates{TooManyRequests: 0.05, InternalError: 0.05, ServiceUnavailable: 0.05, GatewayTimeout: 0.05, ResetBefore: 0.05, ResetAfter: 0.05, Latency: 0.1},
		LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond,
	})
	rc := newRESTClient(t, p, kube.RetrySettings{MaxAttempts: 10, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 60
	start := time.Now()
	for i := 0; i < n; i++ {
		body, err := rc.Get().AbsPath(cmPath).DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %d: %v\n%s", i, err, p.Stats())
		}
		if !strings.Contains(string(body), `"name":"x"`) {
			t.Fatalf("GET %d: body %s", i, body)
		}
	}
	s := p.Stats()
	t.Logf("%d GETs in %v\n%s", n, time.Since(start), s)
	injected := 0
	for _, f := range faultproxy.Faults {
		if f != faultproxy.FaultLatency {
			injected += s.Injected[f]
		}
	}
	// Every injected fault cost exactly one more attempt.
	if injected == 0 || s.Requests != n+injected {
		t.Errorf("requests %d, injected %d, want %d requests", s.Requests, injected, n+injected)
	}
	withAuth := 0
	up.mu.Lock()
	for _, a := range up.auth {
		if a == "Bearer test-token" {
			withAuth++
		}
	}
	seen := len(up.auth)
	up.mu.Unlock()
	if withAuth != seen || seen != s.Forwarded {
		t.Errorf("upstream saw %d requests (%d with the token), proxy forwarded %d", seen, withAuth, s.Forwarded)
	}
}

// TestRESTClientCreateResetAfterIsNotRetried documents the gap the proxy
// exists to expose: a create whose response is lost is not retried by the
// provider's transport (POST is not idempotent) and surfaces as an error,
// although the object was created.
func TestRESTClientCreateResetAfterIsNotRetried(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{NonIdempotent: faultproxy.Rates{ResetAfter: 1}})
	rc := newRESTClient(t, p, kube.RetrySettings{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	_, err := rc.Post().AbsPath("/api/v1/namespaces/default/configmaps").Body([]byte(`{"metadata":{"name":"x"}}`)).
		SetHeader("Content-Type", "application/json").DoRaw(context.Background())
	if err == nil {
		t.Fatal("create succeeded, want a connection error")
	}
	t.Logf("create error: %v", err)
	if got := up.requests(); len(got) != 1 {
		t.Errorf("upstream saw %v, want exactly one create", got)
	}
}

func TestWatchResetAfter(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{Idempotent: faultproxy.Rates{ResetAfter: 1}})
	if resp, _, err := do(t, freshClient(), http.MethodGet, p.URL()+"/api/v1/namespaces/default/configmaps?watch=true", "", ""); err == nil {
		t.Fatalf("status %d, want a connection error", resp.StatusCode)
	}
	if got := up.requests(); len(got) != 1 {
		t.Errorf("upstream saw %v, want the watch once", got)
	}
	if s := p.Stats(); s.ByVerb[faultproxy.VerbWatch].Injected[faultproxy.FaultResetAfter] != 1 {
		t.Errorf("stats:\n%s", s)
	}
}
