package kube

import (
	"context"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// By default nothing throttles on the client: neither the config nor the clients built from it
// carry a rate limiter, where client-go's own would allow 5 QPS, burst 10.
func TestClientHasNoRateLimiterByDefault(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeObject(w, http.StatusOK, namespaceJSON("x"))
	})
	ctx := context.Background()
	c := NewClient(api.settings(RetrySettings{}))
	cfg, err := c.RESTConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimiter != nil || cfg.QPS >= 0 {
		t.Fatalf("default config has a rate limiter (qps %v, limiter %v)", cfg.QPS, cfg.RateLimiter)
	}
	cs, err := c.Clientset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if limiter := cs.CoreV1().RESTClient().GetRateLimiter(); limiter != nil {
		t.Errorf("the clientset throttles at %v QPS", limiter.QPS())
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "x", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// qps and burst, set in the provider block or through KUBE_QPS/KUBE_BURST, still install one
// limiter shared by the typed and the dynamic client.
func TestClientRateLimiterFromSettings(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeObject(w, http.StatusOK, namespaceJSON("x"))
	})
	for _, tc := range []struct {
		name string
		env  map[string]string
		set  func(*Settings)
		want float32
	}{
		{name: "attribute", set: func(s *Settings) { q := 7.0; s.QPS = &q }, want: 7},
		{name: "environment", env: map[string]string{EnvQPS: "3", EnvBurst: "4"}, want: 3},
		{name: "attribute wins over environment", env: map[string]string{EnvQPS: "3"}, set: func(s *Settings) { q := 9.0; s.QPS = &q }, want: 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := api.settings(RetrySettings{})
			if tc.set != nil {
				tc.set(&s)
			}
			if err := s.ApplyEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }); err != nil {
				t.Fatal(err)
			}
			cfg, err := NewClient(s).RESTConfig(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if cfg.RateLimiter == nil || cfg.RateLimiter.QPS() != tc.want {
				t.Fatalf("want a %v QPS limiter, got %v", tc.want, cfg.RateLimiter)
			}
		})
	}
}
