package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// The proxy forwards to the API server, records each request whole and counts it; reset
// starts a new window.
func TestCountingProxy(t *testing.T) {
	var gotBody string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PATCH" {
			b, _ := io.ReadAll(r.Body)
			gotBody = string(b)
		}
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"kind":"Status"}`)
	}))
	defer api.Close()
	p, err := startCountingProxy(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.close() }()

	do := func(method, uri, contentType, body string) int {
		req, _ := http.NewRequest(method, p.URL+uri, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	do("GET", "/api/v1/namespaces/old", "", "")
	p.reset()
	do("GET", "/api/v1/namespaces/a", "", "")
	if code := do("GET", "/api/v1/namespaces/missing", "", ""); code != 404 {
		t.Errorf("status %d through the proxy, want 404", code)
	}
	do("GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", "", "")
	do("GET", "/apis", "", "")
	do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q?fieldManager=m", "application/apply-patch+yaml", "spec: {}")

	reqs := p.snapshot()
	if len(reqs) != 5 {
		t.Fatalf("%d requests recorded, want 5: %+v", len(reqs), reqs)
	}
	if gotBody != "spec: {}" || string(reqs[4].Body) != "spec: {}" || reqs[4].URI != "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q?fieldManager=m" {
		t.Errorf("apply forwarded %q, recorded %+v", gotBody, reqs[4])
	}
	if reqs[1].Status != 404 || reqs[0].Status != 200 {
		t.Errorf("statuses %d, %d; want 200, 404", reqs[0].Status, reqs[1].Status)
	}
	c := countRequests(reqs)
	want := map[string]int{"get namespaces": 2, "list clusterqueues": 1, "discovery -": 1, "apply clusterqueues": 1}
	for k, v := range want {
		if c.ByVerbResource[k] != v {
			t.Errorf("%s: %d, want %d (all: %v)", k, c.ByVerbResource[k], v, c.ByVerbResource)
		}
	}
	if c.Total != 5 || c.Failed != 0 || c.ByVerb[verbGet] != 2 || c.ByResource["clusterqueues"] != 2 {
		t.Errorf("counts %+v", c)
	}

	// Replaying GETs sends them again, one after another, through the proxy.
	rep, err := newReplayer(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	p.reset()
	res, err := rep.replay(context.Background(), readsOnly(reqs))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 4 || res.Mismatches != 0 || len(p.snapshot()) != 4 {
		t.Errorf("replay %+v, proxy saw %d requests; want 4 and no mismatches", res, len(p.snapshot()))
	}
}

func TestReplayFilters(t *testing.T) {
	reqs := []recordedRequest{
		{Method: "GET", URI: "/api/v1/namespaces/a"},
		{Method: "DELETE", URI: "/api/v1/namespaces/a"},
		{Method: "GET", URI: "/api/v1/namespaces/a"},
		{Method: "GET", URI: "/api/v1/namespaces/a"},
		{Method: "GET", URI: "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"},
		{Method: "DELETE", URI: "/api/v1/namespaces/a"},
		{Method: "PATCH", URI: "/api/v1/namespaces/b"},
	}
	uris := func(rs []recordedRequest) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Method+" "+r.URI)
		}
		return strings.Join(s, ", ")
	}
	if got, want := uris(withoutRepeatedReads(reqs)), "GET /api/v1/namespaces/a, DELETE /api/v1/namespaces/a, "+
		"GET /apis/kueue.x-k8s.io/v1beta2/clusterqueues, DELETE /api/v1/namespaces/a, PATCH /api/v1/namespaces/b"; got != want {
		t.Errorf("withoutRepeatedReads = %s\nwant %s", got, want)
	}
	if got := len(readsOnly(reqs)); got != 4 {
		t.Errorf("readsOnly kept %d, want all 4 GETs (a plan's floor repeats what the plan read)", got)
	}
}
