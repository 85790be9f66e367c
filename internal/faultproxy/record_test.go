package faultproxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

// addHeader is an upstream transport that adds credentials, as rest.TransportFor does.
type addHeader struct{ next http.RoundTripper }

func (a addHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer upstream")
	return a.next.RoundTrip(r)
}

// With Record, every request is kept whole with its status and classification; with Upstream,
// requests reach the target through that transport; ResetRecorded starts a new window.
func TestRecordThroughUpstreamTransport(t *testing.T) {
	var auth, body string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer api.Close()
	target, _ := url.Parse(api.URL)
	p, err := faultproxy.New(target, nil, faultproxy.Config{Upstream: addHeader{http.DefaultTransport}, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	do := func(method, uri, contentType, payload string) {
		req, _ := http.NewRequest(method, p.URL()+uri, strings.NewReader(payload))
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do("GET", "/api/v1/namespaces/old", "", "")
	p.ResetRecorded()
	do("GET", "/api/v1/namespaces/missing", "", "")
	do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q?fieldManager=m", "application/apply-patch+yaml", "spec: {}")
	if auth != "Bearer upstream" || body != "spec: {}" {
		t.Errorf("upstream got Authorization %q and body %q", auth, body)
	}
	got := p.Recorded()
	if len(got) != 2 {
		t.Fatalf("recorded %d requests, want 2: %+v", len(got), got)
	}
	if r := got[0]; r.Method != "GET" || r.URI != "/api/v1/namespaces/missing" || r.Status != http.StatusNotFound || r.Class.Verb != faultproxy.VerbGet {
		t.Errorf("first request recorded as %+v", r)
	}
	if r := got[1]; r.URI != "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q?fieldManager=m" || string(r.Body) != "spec: {}" ||
		r.ContentType != "application/apply-patch+yaml" || r.Status != http.StatusOK || r.Class.Verb != faultproxy.VerbApply || r.Class.Name != "q" {
		t.Errorf("second request recorded as %+v", r)
	}
	if s := p.Stats(); s.Requests != 3 || s.Forwarded != 3 {
		t.Errorf("stats %+v, want 3 requests forwarded", s)
	}
}
