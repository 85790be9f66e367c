package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var testClusterQueues = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}

// routeNotFoundJSON is the API server's answer for a path it does not serve.
func routeNotFoundJSON(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: "the server could not find the requested resource", Reason: metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{}, Code: http.StatusNotFound,
	})
}

// kueueAPI serves the kueue.x-k8s.io group in the given versions (none: not installed); every
// v1beta2 path is a route 404, as on a cluster without that version.
func kueueAPI(t *testing.T, versions ...string) *fakeAPI {
	return newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.URL.Path == "/apis/kueue.x-k8s.io" && len(versions) > 0:
			g := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: "kueue.x-k8s.io"}
			for _, v := range versions {
				g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: "kueue.x-k8s.io/" + v, Version: v})
			}
			writeObject(w, http.StatusOK, toMap(t, g))
		case strings.HasPrefix(r.URL.Path, "/apis/kueue.x-k8s.io/v1beta2/"), r.URL.Path == "/apis/kueue.x-k8s.io":
			routeNotFoundJSON(w)
		case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/"):
			writeObjectNotFound(w, r.URL.Path)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("404 page not found"))
		}
	})
}

func toMap(t *testing.T, v any) map[string]any {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A cluster with only Kueue v1beta1 is refused with the Kueue version needed, never read as
// "the object is gone"; the served versions are asked once per run.
func TestGetOnV1beta1OnlyCluster(t *testing.T) {
	api := kueueAPI(t, "v1beta1")
	c, ctx := NewClient(api.settings(fastRetry)), context.Background()
	for range 2 {
		var out map[string]any
		found, err := c.Get(ctx, testClusterQueues, "", "hyperpod-ns-a-clusterqueue", &out)
		if found || !IsAPINotServed(err) {
			t.Fatalf("found %v, err %v: want an APINotServedError", found, err)
		}
		for _, want := range []string{"does not serve kueue.x-k8s.io/v1beta2 clusterqueues", "serves kueue.x-k8s.io v1beta1 only", "Kueue to v0.15 or newer"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if IsObjectNotFound(err) {
			t.Error("an API not served passes for a missing object")
		}
	}
	discovery := 0
	for _, r := range api.seen() {
		if r.Path == "/apis/kueue.x-k8s.io" {
			discovery++
		}
	}
	if discovery != 1 {
		t.Errorf("%d discovery requests, want 1: %+v", discovery, api.seen())
	}
}

func TestWritesOnClusterWithoutKueue(t *testing.T) {
	api := kueueAPI(t)
	c, ctx := NewClient(api.settings(fastRetry)), context.Background()
	obj := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "kueue.x-k8s.io/v1beta2", Kind: "ClusterQueue"}, ObjectMeta: metav1.ObjectMeta{Name: "q"}}
	for name, err := range map[string]error{
		"apply":  c.Apply(ctx, testClusterQueues, "test", obj, nil),
		"create": c.Create(ctx, testClusterQueues, "test", obj),
		"delete": c.DeleteAndWait(ctx, testClusterQueues, "", "q", 10*time.Millisecond),
	} {
		if !IsAPINotServed(err) || !strings.Contains(fmtErr(err), "Kueue is not installed") {
			t.Errorf("%s: %v, want Kueue is not installed", name, err)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A missing object is a 404 naming it: no discovery, no error. A 404 that is not a Status (a
// proxy, or an old server's router) is not taken for a missing object.
func TestObjectNotFoundVersusRouteNotFound(t *testing.T) {
	api := kueueAPI(t, "v1beta1", "v1beta2")
	c, ctx := NewClient(api.settings(fastRetry)), context.Background()
	var ns corev1.Namespace
	if found, err := c.Get(ctx, Namespaces, "", "gone", &ns); found || err != nil {
		t.Errorf("missing namespace: found %v, err %v", found, err)
	}
	if n := api.count(); n != 1 {
		t.Errorf("%d requests for a missing object, want 1", n)
	}
	rf := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}
	var out map[string]any
	if _, err := c.Get(ctx, rf, "", "x", &out); !IsAPINotServed(err) || !strings.Contains(err.Error(), "serves no version of example.com") {
		t.Errorf("text 404: %v", err)
	}
}

// ServesKind reads the kinds of every group from one aggregated-discovery response, once per
// client.
func TestServesKind(t *testing.T) {
	var accept string
	f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		accept = r.Header.Get("Accept")
		w.Header().Set("Content-Type", aggregatedDiscovery)
		_, _ = w.Write([]byte(`{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
			{"metadata":{"name":"kueue.x-k8s.io"},"versions":[{"version":"v1beta2","resources":[
				{"resource":"clusterqueues","responseKind":{"group":"kueue.x-k8s.io","version":"v1beta2","kind":"ClusterQueue"}}]}]},
			{"metadata":{"name":"example.com"},"versions":[{"version":"v1","resources":[
				{"resource":"widgets","responseKind":{"group":"example.com","version":"v1","kind":"Widget"}},
				{"resource":"widgets/status"}]}]}]}`))
	})
	c := NewClient(f.settings(fastRetry))
	for _, tt := range []struct {
		kind string
		want bool
	}{{"ClusterQueue", true}, {"Widget", true}, {"KueueManagerConfig", false}} {
		got, err := c.ServesKind(context.Background(), tt.kind)
		if err != nil || got != tt.want {
			t.Errorf("ServesKind(%q) = %v, %v; want %v", tt.kind, got, err, tt.want)
		}
	}
	if n := len(f.seen()); n != 1 {
		t.Errorf("%d requests, want 1 for every question", n)
	}
	if accept != aggregatedDiscovery {
		t.Errorf("Accept = %q, want aggregated discovery", accept)
	}
}
