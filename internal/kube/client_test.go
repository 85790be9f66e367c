package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

func TestNewClientDoesNoIO(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeObject(w, http.StatusOK, namespaceJSON("x"))
	})
	ctx := context.Background()
	c := NewClient(api.settings(RetrySettings{}))
	if _, err := c.Clientset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dynamic(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RESTConfig(ctx); err != nil {
		t.Fatal(err)
	}
	if got := api.count(); got != 0 {
		t.Errorf("building the clients made %d requests (discovery?), want 0", got)
	}

	// An unreachable cluster (TEST-NET-3) and an exec plugin that does not
	// exist: building clients must still succeed, only requests may fail.
	c = NewClient(Settings{Host: "https://203.0.113.10:6443", Exec: &ExecSettings{
		APIVersion: "client.authentication.k8s.io/v1beta1", Command: "/nonexistent/aws",
	}})
	if _, err := c.Clientset(ctx); err != nil {
		t.Fatalf("unreachable host: %v", err)
	}
	if _, err := c.Dynamic(ctx); err != nil {
		t.Fatalf("unreachable host: %v", err)
	}
}

func TestClientErrorRememberedAndBuiltOnce(t *testing.T) {
	ctx := context.Background()
	c := NewClient(Settings{}) // nothing configured: never fails here
	_, err1 := c.Clientset(ctx)
	if err1 == nil || !strings.Contains(err1.Error(), EnvHost) {
		t.Fatalf("want the what-to-set error, got %v", err1)
	}
	_, err2 := c.Dynamic(ctx)
	if err2 != err1 {
		t.Errorf("error not remembered: %v vs %v", err1, err2)
	}

	calls := 0
	var mu sync.Mutex
	boom := errors.New("boom")
	c = &Client{build: func() (*rest.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return nil, boom
	}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Clientset(ctx); !errors.Is(err, boom) {
				t.Errorf("got %v", err)
			}
		}()
	}
	wg.Wait()
	if calls != 1 {
		t.Errorf("config built %d times, want 1", calls)
	}

	// Invalid retry settings surface the same way.
	c = NewClient(Settings{Host: "https://h", Retry: RetrySettings{MaxAttempts: -2}})
	if _, err := c.Clientset(ctx); err == nil || !strings.Contains(err.Error(), "max_attempts") {
		t.Errorf("negative max_attempts: %v", err)
	}
}

func TestNewClientFromConfigDynamicRetries(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeStatus(w, http.StatusBadGateway, metav1.StatusReasonInternalError, "")
			return
		}
		if n == 2 {
			writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "")
			return
		}
		writeObject(w, http.StatusOK, map[string]interface{}{
			"apiVersion": "kueue.x-k8s.io/v1beta2",
			"kind":       "ClusterQueue",
			"metadata":   map[string]interface{}{"name": "hyperpod-ns-a-clusterqueue"},
		})
	})
	orig := &rest.Config{Host: api.URL, TLSClientConfig: rest.TLSClientConfig{CAData: []byte(serverCAPEM(api.Server))}}
	c := NewClientFromConfig(orig, fastRetry)
	dyn, err := c.Dynamic(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if orig.WrapTransport != nil {
		t.Error("NewClientFromConfig modified the caller's config")
	}
	gvr := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}

	_, err = dyn.Resource(gvr).Get(context.Background(), "hyperpod-ns-a-clusterqueue", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("want NotFound after a retried 502, got %v", err)
	}
	obj, err := dyn.Resource(gvr).Get(context.Background(), "hyperpod-ns-a-clusterqueue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetName() != "hyperpod-ns-a-clusterqueue" {
		t.Errorf("name %q", obj.GetName())
	}
	seen := api.seen()
	if len(seen) != 3 || seen[0].Path != "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/hyperpod-ns-a-clusterqueue" {
		t.Errorf("requests: %+v", seen)
	}

	cfg, err := c.RESTConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WrapTransport == nil || cfg.UserAgent != DefaultUserAgent {
		t.Errorf("RESTConfig lacks the retry layer or user agent")
	}
}
