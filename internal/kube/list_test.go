package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Reading ahead, the request for the next page goes out before a page is handed over, and the
// caller gets the same pages in the same order; without, no request goes out while the caller
// holds a page.
func TestPagesOfReadsAhead(t *testing.T) {
	tokens := []string{"", "1", "2"} // the continue token of each page's request
	asked := make(chan string, len(tokens))
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		cont := r.URL.Query().Get("continue")
		asked <- cont
		i := slices.Index(tokens, cont)
		next := ""
		if i+1 < len(tokens) {
			next = tokens[i+1]
		}
		writeObject(w, http.StatusOK, map[string]any{"metadata": map[string]any{"continue": next},
			"items": []any{namespaceJSON(fmt.Sprintf("team-%d", i))}})
	})
	c := NewClient(api.settings(fastRetry))
	ctx := context.Background()
	if err := c.init(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ahead := range []bool{false, true} {
		t.Run(fmt.Sprintf("ahead=%v", ahead), func(t *testing.T) {
			var names []string
			taken := 0 // requests taken from asked
			err := pagesOf(ctx, c, Namespaces, "", ahead, func(page []corev1.Namespace) error {
				held := len(names)
				for taken <= held { // this page's own request, answered already
					<-asked
					taken++
				}
				switch {
				case ahead && held+1 < len(tokens):
					select {
					case got := <-asked:
						if got != tokens[held+1] {
							t.Errorf("asked for the page of token %q while holding page %d, want %q", got, held, tokens[held+1])
						}
						taken++
					case <-time.After(30 * time.Second): // a bound on a failure, not a wait for success
						t.Fatalf("the next page was not asked for while the caller held page %d", held)
					}
				case !ahead && len(asked) > 0:
					t.Errorf("without reading ahead, the page of token %q was asked for while the caller held page %d", <-asked, held)
				}
				for _, ns := range page {
					names = append(names, ns.Name)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"team-0", "team-1", "team-2"}; !slices.Equal(names, want) {
				t.Errorf("pages hold %v, want %v", names, want)
			}
		})
	}
}

// A refusal of a later page is the listing's error, whether or not the page was asked for ahead.
func TestPagesOfLaterPageRefused(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Query().Get("continue") != "" {
			writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, "")
			return
		}
		writeObject(w, http.StatusOK, map[string]any{"metadata": map[string]any{"continue": "1"},
			"items": []any{namespaceJSON("team-0")}})
	})
	c := NewClient(api.settings(fastRetry))
	ctx := context.Background()
	if err := c.init(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ahead := range []bool{false, true} {
		pages := 0
		err := pagesOf(ctx, c, Namespaces, "", ahead, func([]corev1.Namespace) error {
			pages++
			return nil
		})
		if !apierrors.IsForbidden(err) || pages != 1 {
			t.Errorf("ahead=%v: %d pages handed over and error %v, want 1 and the second page's refusal", ahead, pages, err)
		}
	}
}
