package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

// behindProxy is a Client that reaches api through a fault-injecting proxy.
func behindProxy(t *testing.T, api *memoryAPI, cfg faultproxy.Config) (*Client, *faultproxy.Proxy) {
	t.Helper()
	target, err := url.Parse(api.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(target, api.Server.Client().Transport.(*http.Transport).TLSClientConfig, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return NewClient(Settings{Host: p.URL(), Token: testToken, Retry: fastRetry}), p
}

func claim(name, owner string) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"example.com/owner": owner}},
	}
}

// A create whose response was lost after the server created the object succeeds: the object
// carries the create's own identity. It is created once.
func TestCreateWithLostResponse(t *testing.T) {
	api := newMemoryAPI(t)
	c, p := behindProxy(t, api, faultproxy.Config{Seed: 1, NonIdempotent: faultproxy.Rates{ResetAfter: 1}})
	if err := c.Create(context.Background(), Namespaces, "test", claim("team-a", "id-1")); err != nil {
		t.Fatalf("create with its response lost: %v", err)
	}
	if api.creates != 1 {
		t.Errorf("%d objects created, want 1", api.creates)
	}
	if s := p.Stats(); s.Injected[faultproxy.FaultResetAfter] != 1 {
		t.Errorf("faults injected: %v", s)
	}
}

// Another writer's object of that name is still refused.
func TestCreateRefusesAnotherOwnersObject(t *testing.T) {
	api := newMemoryAPI(t)
	c := api.client()
	ctx := context.Background()
	if err := c.Create(ctx, Namespaces, "test", claim("team-a", "id-1")); err != nil {
		t.Fatal(err)
	}
	err := NewClient(api.settings(fastRetry)).Create(ctx, Namespaces, "test", claim("team-a", "id-2"))
	if !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("another owner's create: %v, want ErrAlreadyExists", err)
	}
}

// With resets before and after the server and 5xx answers on creates, every create ends in
// success with exactly one object each (deterministic with the seed).
func TestCreatesUnderFaults(t *testing.T) {
	api := newMemoryAPI(t)
	faults := faultproxy.Config{Seed: 7, NonIdempotent: faultproxy.Uniform(0.3), Idempotent: faultproxy.Uniform(0.3)}
	c, p := behindProxy(t, api, faults)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 20 {
		if err := c.Create(ctx, Namespaces, "test", claim(fmt.Sprintf("team-%d", i), fmt.Sprintf("id-%d", i))); err != nil {
			t.Fatalf("create %d: %v\n%s", i, err, p.Stats())
		}
	}
	if api.creates != 20 {
		t.Errorf("%d objects created, want 20", api.creates)
	}
	t.Logf("faults:\n%s", p.Stats())
}
