package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// ListPages hands over each page of the LIST as the API server pages it (the memory API's pages
// hold two objects), asks for the next with the continue token, and stops when the caller has
// what it needs.
func TestListPages(t *testing.T) {
	api := newMemoryAPI(t)
	for i := range 5 {
		name := fmt.Sprintf("team-%d", i)
		api.put("/api/v1/namespaces/"+name, namespaceJSON(name))
	}
	c := api.client()
	var pages [][]string
	err := ListPages(context.Background(), c, Namespaces, func(page []corev1.Namespace) error {
		var names []string
		for _, ns := range page {
			names = append(names, ns.Name)
		}
		pages = append(pages, names)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"team-0", "team-1"}, {"team-2", "team-3"}, {"team-4"}}
	if !slices.EqualFunc(pages, want, slices.Equal) {
		t.Fatalf("pages %v, want %v", pages, want)
	}
	if n := api.countRequests(http.MethodGet, "/api/v1/namespaces"); n != 3 {
		t.Errorf("%d LIST requests, want one per page (3)", n)
	}

	enough := errors.New("enough")
	lists := api.countRequests(http.MethodGet, "/api/v1/namespaces")
	err = ListPages(context.Background(), c, Namespaces, func([]corev1.Namespace) error { return enough })
	if !errors.Is(err, enough) {
		t.Fatalf("the caller's error was not returned: %v", err)
	}
	if n := api.countRequests(http.MethodGet, "/api/v1/namespaces") - lists; n != 1 {
		t.Errorf("%d LIST requests after the caller stopped at the first page, want 1", n)
	}
}
