package main

import (
	"net/url"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

func TestClassify(t *testing.T) {
	const kueue = "/apis/kueue.x-k8s.io/v1beta2"
	tests := []struct {
		method, uri, contentType string
		verb, resource, ns, name string
	}{
		{"GET", "/api", "", verbDiscovery, noResource, "", ""},
		{"GET", "/api/v1", "", verbDiscovery, noResource, "", ""},
		{"GET", "/apis", "", verbDiscovery, noResource, "", ""},
		{"GET", "/apis/kueue.x-k8s.io", "", verbDiscovery, noResource, "", ""},
		{"GET", kueue, "", verbDiscovery, noResource, "", ""},
		{"GET", "/version", "", verbDiscovery, noResource, "", ""},
		{"GET", "/version/", "", verbDiscovery, noResource, "", ""},
		{"GET", "/openapi/v2", "", verbOpenAPI, noResource, "", ""},
		{"GET", "/openapi/v3/apis/kueue.x-k8s.io/v1beta2?hash=abc", "", verbOpenAPI, noResource, "", ""},
		{"GET", "/healthz", "", verbOther, noResource, "", ""},
		{"GET", "/", "", verbOther, noResource, "", ""},

		// Core group: cluster-scoped Namespace objects and their subresources.
		{"GET", "/api/v1/namespaces", "", verbList, "namespaces", "", ""},
		{"GET", "/api/v1/namespaces?labelSelector=a%3Db", "", verbList, "namespaces", "", ""},
		{"GET", "/api/v1/namespaces?labelSelector=a%3Db&limit=500", "", verbList, "namespaces", "", ""},
		{"GET", "/api/v1/namespaces?labelSelector=a%3Db&limit=500&continue=abc", "", verbListContinue, "namespaces", "", ""},
		{"GET", "/api/v1/namespaces/hyperpod-ns-bench-0001", "", verbGet, "namespaces", "", "hyperpod-ns-bench-0001"},
		{"PATCH", "/api/v1/namespaces/team-a?fieldManager=x&force=true", "application/apply-patch+yaml", verbApply, "namespaces", "", "team-a"},
		{"PATCH", "/api/v1/namespaces/team-a", "application/merge-patch+json", verbPatch, "namespaces", "", "team-a"},
		{"PUT", "/api/v1/namespaces/team-a/finalize", "application/json", verbUpdate, "namespaces/finalize", "", "team-a"},
		{"GET", "/api/v1/namespaces/team-a/status", "", verbGet, "namespaces/status", "", "team-a"},
		{"DELETE", "/api/v1/namespaces/team-a", "", verbDelete, "namespaces", "", "team-a"},
		{"POST", "/api/v1/namespaces", "application/json", verbCreate, "namespaces", "", ""},

		// Core group: namespaced resources.
		{"GET", "/api/v1/namespaces/team-a/pods", "", verbList, "pods", "team-a", ""},
		{"GET", "/api/v1/namespaces/team-a/pods?limit=1", "", verbList, "pods", "team-a", ""},
		{"GET", "/api/v1/namespaces/team-a/pods/p1", "", verbGet, "pods", "team-a", "p1"},
		{"GET", "/api/v1/namespaces/team-a/pods/p1/log", "", verbGet, "pods/log", "team-a", "p1"},
		{"GET", "/api/v1/pods", "", verbList, "pods", "", ""},
		{"GET", "/api/v1/nodes?labelSelector=x", "", verbList, "nodes", "", ""},
		{"GET", "/api/v1/namespaces/team-a/pods?watch=true", "", verbWatch, "pods", "team-a", ""},
		{"GET", "/api/v1/namespaces/team-a/pods?watch=1&resourceVersion=5", "", verbWatch, "pods", "team-a", ""},
		{"GET", "/api/v1/watch/namespaces/team-a/pods", "", verbWatch, "pods", "team-a", ""},
		{"GET", "/api/v1/watch/namespaces", "", verbWatch, "namespaces", "", ""},
		{"DELETE", "/api/v1/namespaces/team-a/pods", "", verbDeleteCollection, "pods", "team-a", ""},

		// Groups: namespaced and cluster-scoped custom resources.
		{"GET", kueue + "/namespaces/hyperpod-ns-a/localqueues/hyperpod-ns-a-localqueue", "", verbGet, "localqueues", "hyperpod-ns-a", "hyperpod-ns-a-localqueue"},
		{"GET", kueue + "/namespaces/hyperpod-ns-a/localqueues", "", verbList, "localqueues", "hyperpod-ns-a", ""},
		{"GET", kueue + "/localqueues", "", verbList, "localqueues", "", ""},
		{"GET", kueue + "/namespaces/hyperpod-ns-a/workloads?limit=1", "", verbList, "workloads", "hyperpod-ns-a", ""},
		{"GET", kueue + "/clusterqueues/hyperpod-ns-a-clusterqueue", "", verbGet, "clusterqueues", "", "hyperpod-ns-a-clusterqueue"},
		{"GET", kueue + "/clusterqueues", "", verbList, "clusterqueues", "", ""},
		{"GET", kueue + "/resourceflavors/ml.g5.12xlarge", "", verbGet, "resourceflavors", "", "ml.g5.12xlarge"},
		{"PATCH", kueue + "/resourceflavors/ml.g5.12xlarge?fieldManager=m", "application/apply-patch+yaml; charset=utf-8", verbApply, "resourceflavors", "", "ml.g5.12xlarge"},
		{"PATCH", kueue + "/clusterqueues/q", "application/apply-patch+cbor", verbApply, "clusterqueues", "", "q"},
		{"PATCH", kueue + "/clusterqueues/q/status", "application/json-patch+json", verbPatch, "clusterqueues/status", "", "q"},
		{"PUT", kueue + "/clusterqueues/q", "application/json", verbUpdate, "clusterqueues", "", "q"},
		{"POST", kueue + "/clusterqueues", "application/json", verbCreate, "clusterqueues", "", ""},
		{"DELETE", kueue + "/clusterqueues/q", "", verbDelete, "clusterqueues", "", "q"},
		{"GET", kueue + "/watch/clusterqueues", "", verbWatch, "clusterqueues", "", ""},
		{"GET", "/apis/apps/v1/namespaces/x/deployments/d/scale", "", verbGet, "deployments/scale", "x", "d"},
	}
	for _, tc := range tests {
		u, err := url.ParseRequestURI(tc.uri)
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		got := faultproxy.ClassifyRequest(tc.method, u.Path, u.Query(), tc.contentType)
		if benchVerb(got) != tc.verb || got.ResourceLabel() != tc.resource || got.Namespace != tc.ns || got.Name != tc.name {
			t.Errorf("classify(%s %s, %q) = verb %q resource %q ns %q name %q; want %q %q %q %q",
				tc.method, tc.uri, tc.contentType, benchVerb(got), got.ResourceLabel(), got.Namespace, got.Name,
				tc.verb, tc.resource, tc.ns, tc.name)
		}
	}
}

func TestClassifyGroupVersion(t *testing.T) {
	got := faultproxy.ClassifyRequest("GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q", nil, "")
	if got.Group != "kueue.x-k8s.io" || got.Version != "v1beta2" {
		t.Errorf("group/version = %q/%q", got.Group, got.Version)
	}
	got = faultproxy.ClassifyRequest("GET", "/api/v1/namespaces/a", nil, "")
	if got.Group != "" || got.Version != "v1" {
		t.Errorf("core group/version = %q/%q", got.Group, got.Version)
	}
}
