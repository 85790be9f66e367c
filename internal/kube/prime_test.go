package kube

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const primeLabel = "app.kubernetes.io/managed-by"

// primeAPI holds 40 labelled namespaces and 2 without the label (read last).
func primeAPI(t *testing.T) *memoryAPI {
	api := newMemoryAPI(t)
	for i := range 42 {
		obj := namespaceJSON(fmt.Sprintf("team-%02d", i))
		if i < 40 {
			obj["metadata"].(map[string]any)["labels"] = map[string]any{primeLabel: "us"}
		}
		api.put(fmt.Sprintf("/api/v1/namespaces/team-%02d", i), obj)
	}
	return api
}

func readAll(t *testing.T, c *Client) {
	t.Helper()
	for i := range 42 {
		var ns corev1.Namespace
		name := fmt.Sprintf("team-%02d", i)
		found, err := c.Get(context.Background(), Namespaces, "", name, &ns)
		if err != nil || !found || ns.Name != name {
			t.Fatalf("%s: found %v, name %q, err %v", name, found, ns.Name, err)
		}
		if i < 40 && ns.Labels[primeLabel] != "us" {
			t.Fatalf("%s lost its labels: %v", name, ns.Labels)
		}
	}
}

// requestCounts counts GETs of single namespaces and first LIST pages.
func requestCounts(api *memoryAPI) (gets, lists int) {
	for _, r := range api.seen() {
		switch {
		case r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/api/v1/namespaces/"):
			gets++
		case r.Method == http.MethodGet && r.Path == "/api/v1/namespaces":
			lists++
		}
	}
	return gets, lists
}

// After primeAfter reads of a kind, one label-selected LIST answers the rest; objects without
// the label are still read with a GET.
func TestListPrimingAfterManyReads(t *testing.T) {
	api := primeAPI(t)
	readAll(t, NewClient(api.settings(fastRetry), WithListPriming(primeLabel+"=us")))
	gets, lists := requestCounts(api)
	if wantGets := primeAfter - 1 + 2; gets != wantGets {
		t.Errorf("%d GETs, want %d (before the LIST, then the two unlabelled namespaces)", gets, wantGets)
	}
	if lists != 20 { // one LIST: 40 labelled namespaces, two per page
		t.Errorf("%d LIST pages, want 20", lists)
	}
}

// The LIST is made once per kind, however many pages it has (two per page here).
func TestListPrimingListsOncePerKind(t *testing.T) {
	api := primeAPI(t)
	c := NewClient(api.settings(fastRetry), WithListPriming(primeLabel+"=us"))
	readAll(t, c)
	readAll(t, c)
	_, lists := requestCounts(api)
	if lists != 20 {
		t.Errorf("%d LIST pages, want 20 (one LIST of 40 namespaces, two per page)", lists)
	}
}

// Without list permission every object is read with a GET, and the LIST is tried once.
func TestListPrimingForbiddenFallsBackToGets(t *testing.T) {
	api := primeAPI(t)
	api.forbid["LIST"] = true
	readAll(t, NewClient(api.settings(fastRetry), WithListPriming(primeLabel+"=us")))
	gets, lists := requestCounts(api)
	if gets != 42 || lists != 1 {
		t.Errorf("%d GETs and %d LISTs, want 42 and 1", gets, lists)
	}
}

// Without the option a Client never lists.
func TestNoListPrimingByDefault(t *testing.T) {
	api := primeAPI(t)
	readAll(t, NewClient(api.settings(fastRetry)))
	if gets, lists := requestCounts(api); gets != 42 || lists != 0 {
		t.Errorf("%d GETs and %d LISTs, want 42 and 0", gets, lists)
	}
}
