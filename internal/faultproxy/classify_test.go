package faultproxy

import (
	"net/http"
	"net/url"
	"testing"
)

func TestClassifyRequest(t *testing.T) {
	const kueue = "/apis/kueue.x-k8s.io/v1beta2"
	tests := []struct {
		method, uri, contentType string
		want                     Request
	}{
		{"GET", "/apis/kueue.x-k8s.io", "", Request{Verb: VerbGet, NonResource: NonResourceDiscovery}},
		{"GET", "/version", "", Request{Verb: VerbGet, NonResource: NonResourceDiscovery}},
		{"GET", "/openapi/v3/apis/kueue.x-k8s.io/v1beta2?hash=abc", "", Request{Verb: VerbGet, NonResource: NonResourceOpenAPI}},
		{"POST", "/healthz", "", Request{Verb: VerbCreate, NonResource: NonResourceOther}},
		{"DELETE", "/api/v1/watch", "", Request{Verb: VerbDelete, NonResource: NonResourceOther}},
		{"GET", "/api/v1/namespaces?limit=500&continue=abc", "", Request{Verb: VerbList, Version: "v1", Resource: "namespaces", Continue: true}},
		{"GET", "/api/v1/namespaces/team-a", "", Request{Verb: VerbGet, Version: "v1", Resource: "namespaces", Name: "team-a"}},
		{"PUT", "/api/v1/namespaces/team-a/finalize", "application/json", Request{Verb: VerbUpdate, Version: "v1", Resource: "namespaces", Subresource: "finalize", Name: "team-a"}},
		{"GET", "/api/v1/watch/namespaces/team-a/pods", "", Request{Verb: VerbWatch, Version: "v1", Resource: "pods", Namespace: "team-a"}},
		{"GET", "/api/v1/namespaces/team-a/pods?watch=1&continue=x", "", Request{Verb: VerbWatch, Version: "v1", Resource: "pods", Namespace: "team-a"}},
		{"DELETE", "/api/v1/namespaces/team-a/pods", "", Request{Verb: VerbDeleteCollection, Version: "v1", Resource: "pods", Namespace: "team-a"}},
		{"PATCH", kueue + "/resourceflavors/f?fieldManager=m", "application/apply-patch+yaml; charset=utf-8", Request{Verb: VerbApply, Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors", Name: "f"}},
		{"PATCH", kueue + "/clusterqueues/q/status", "application/json-patch+json", Request{Verb: VerbPatch, Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues", Subresource: "status", Name: "q"}},
		{"GET", "/apis/apps/v1/namespaces/x/deployments/d/scale", "", Request{Verb: VerbGet, Group: "apps", Version: "v1", Resource: "deployments", Subresource: "scale", Namespace: "x", Name: "d"}},
		{"OPTIONS", kueue + "/clusterqueues", "", Request{Verb: VerbOther, Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}},
	}
	for _, tc := range tests {
		u, err := url.ParseRequestURI(tc.uri)
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		if got := ClassifyRequest(tc.method, u.Path, u.Query(), tc.contentType); got != tc.want {
			t.Errorf("ClassifyRequest(%s %s, %q) = %+v, want %+v", tc.method, tc.uri, tc.contentType, got, tc.want)
		}
	}
	if got := (Request{Resource: "namespaces", Subresource: "finalize"}).ResourceLabel(); got != "namespaces/finalize" {
		t.Errorf("ResourceLabel = %q", got)
	}
	if got := (Request{NonResource: NonResourceDiscovery}).ResourceLabel(); got != NoResource {
		t.Errorf("ResourceLabel of discovery = %q", got)
	}
}

func TestMatchRequest(t *testing.T) {
	match := MatchRequest(func(r Request) bool { return r.Verb == VerbApply && r.Resource == "clusterqueues" })
	for _, c := range []struct {
		method, path, contentType string
		want                      bool
	}{
		{"PATCH", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q", "application/apply-patch+yaml", true},
		{"PATCH", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q", "application/merge-patch+json", false},
		{"GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q", "", false},
		{"PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/n/localqueues/q", "application/apply-patch+yaml", false},
	} {
		r, err := http.NewRequest(c.method, "http://127.0.0.1"+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", c.contentType)
		if got := match(r); got != c.want {
			t.Errorf("%s %s %s: match %t, want %t", c.method, c.path, c.contentType, got, c.want)
		}
	}
}
