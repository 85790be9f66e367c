package faultproxy_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
)

// upstream is a tiny fake API server that counts what reaches it.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD path"
	auth []string // Authorization headers

	// A request for slowPath signals slowStarted, then waits for release.
	slowStarted chan struct{}
	release     chan struct{}

	// firstEventRead, when set (under mu), holds a watch after its first event until it is closed.
	firstEventRead chan struct{}
}

const slowPath = "/api/v1/namespaces/default/configmaps/slow"

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{slowStarted: make(chan struct{}, 10), release: make(chan struct{})}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.seen = append(u.seen, r.Method+" "+r.URL.Path)
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.mu.Unlock()
		if r.URL.Path == slowPath {
			u.slowStarted <- struct{}{}
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		}
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			u.mu.Lock()
			firstEventRead := u.firstEventRead
			u.mu.Unlock()
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, `{"type":"ADDED","object":{"n":%d}}`+"\n", i)
				w.(http.Flusher).Flush()
				if i == 0 && firstEventRead != nil {
					select {
					case <-r.Context().Done():
						return
					case <-firstEventRead:
					}
				}
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		w.Header().Set("X-Echo", r.Header.Get("X-Custom"))
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		fmt.Fprintf(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"method":%q,"body":%q}}`, r.Method, body)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

func startProxy(t *testing.T, up *upstream, cfg faultproxy.Config) *faultproxy.Proxy {
	t.Helper()
	target, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(target, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// freshClient uses a new connection per request, so that Go's transparent
// retry of idempotent requests on reused connections cannot hide a reset.
func freshClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
}

func do(t *testing.T, c *http.Client, method, u, contentType, body string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

const cmPath = "/api/v1/namespaces/default/configmaps/x"

func TestStatusFaults(t *testing.T) {
	cases := []struct {
		name       string
		rates      faultproxy.Rates
		fault      faultproxy.Fault
		code       int
		reason     string
		retryAfter string
	}{
		{"429", faultproxy.Rates{TooManyRequests: 1}, faultproxy.FaultTooManyRequests, 429, "TooManyRequests", "3"},
		{"500", faultproxy.Rates{InternalError: 1}, faultproxy.FaultInternalError, 500, "InternalError", ""},
		{"503", faultproxy.Rates{ServiceUnavailable: 1}, faultproxy.FaultServiceUnavailable, 503, "ServiceUnavailable", ""},
		{"504", faultproxy.Rates{GatewayTimeout: 1}, faultproxy.FaultGatewayTimeout, 504, "Timeout", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t)
			p := startProxy(t, up, faultproxy.Config{Seed: 1, Idempotent: tc.rates, NonIdempotent: tc.rates, RetryAfterSeconds: 3})
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				resp, body, err := do(t, http.DefaultClient, method, p.URL()+cmPath, "", "")
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tc.code {
					t.Errorf("%s: status %d, want %d", method, resp.StatusCode, tc.code)
				}
				if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
					t.Errorf("%s: Retry-After %q, want %q", method, got, tc.retryAfter)
				}
				var st metav1.Status
				if err := json.Unmarshal(body, &st); err != nil {
					t.Fatalf("%s: body %q: %v", method, body, err)
				}
				if st.Kind != "Status" || st.Status != metav1.StatusFailure || string(st.Reason) != tc.reason || int(st.Code) != tc.code {
					t.Errorf("%s: Status %+v", method, st)
				}
				if tc.retryAfter != "" && (st.Details == nil || st.Details.RetryAfterSeconds != 3) {
					t.Errorf("%s: details %+v, want retryAfterSeconds 3", method, st.Details)
				}
			}
			if got := up.requests(); len(got) != 0 {
				t.Errorf("upstream saw %v, want nothing", got)
			}
			s := p.Stats()
			if s.Injected[tc.fault] != 2 || s.Forwarded != 0 || s.Requests != 2 {
				t.Errorf("stats:\n%s", s)
			}
		})
	}
}

func TestResetBefore(t *testing.T) {
	up := newUpstream(t)
	rates := faultproxy.Rates{ResetBefore: 1}
	p := startProxy(t, up, faultproxy.Config{Idempotent: rates, NonIdempotent: rates})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		if resp, _, err := do(t, freshClient(), method, p.URL()+cmPath, "application/json", "{}"); err == nil {
			t.Errorf("%s: got status %d, want a connection error", method, resp.StatusCode)
		} else {
			t.Logf("%s: %v", method, err)
		}
	}
	if got := up.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
	if s := p.Stats(); s.Injected[faultproxy.FaultResetBefore] != 2 || s.Forwarded != 0 {
		t.Errorf("stats:\n%s", s)
	}
}

func TestResetAfter(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{NonIdempotent: faultproxy.Rates{ResetAfter: 1}})
	resp, _, err := do(t, freshClient(), http.MethodPost, p.URL()+"/api/v1/namespaces/default/configmaps", "application/json", `{"metadata":{"name":"x"}}`)
	if err == nil {
		t.Fatalf("got status %d, want a connection error", resp.StatusCode)
	}
	t.Logf("client error: %v", err)
	if got, want := up.requests(), []string{"POST /api/v1/namespaces/default/configmaps"}; !reflect.DeepEqual(got, want) {
		t.Errorf("upstream saw %v, want %v", got, want)
	}
	s := p.Stats()
	if s.Injected[faultproxy.FaultResetAfter] != 1 || s.Forwarded != 1 || s.ByVerb[faultproxy.VerbCreate].Forwarded != 1 {
		t.Errorf("stats:\n%s", s)
	}
}

func TestLatency(t *testing.T) {
	up := newUpstream(t)
	rates := faultproxy.Rates{Latency: 1}
	p := startProxy(t, up, faultproxy.Config{Idempotent: rates, LatencyMin: 50 * time.Millisecond, LatencyMax: 80 * time.Millisecond})
	start := time.Now()
	resp, _, err := do(t, http.DefaultClient, http.MethodGet, p.URL()+cmPath, "", "")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resp %v, err %v", resp, err)
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Errorf("took %v, want at least 50ms", el)
	}
	d := p.Decisions()
	if len(d) != 1 || d[0].Latency < 50*time.Millisecond || d[0].Latency > 80*time.Millisecond || d[0].Fault != "" {
		t.Errorf("decisions %+v", d)
	}
	if s := p.Stats(); s.Injected[faultproxy.FaultLatency] != 1 || s.Forwarded != 1 {
		t.Errorf("stats:\n%s", s)
	}
}

func TestRateZeroForwardsUnchanged(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{Seed: 7})

	req, _ := http.NewRequest(http.MethodPost, p.URL()+"/api/v1/namespaces/default/configmaps", strings.NewReader(`{"a":1}`))
	req.Header.Set("Authorization", "Bearer secret-token")
	req.Header.Set("X-Custom", "hello")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Upstream") != "yes" || resp.Header.Get("X-Echo") != "hello" {
		t.Errorf("status %d headers %v", resp.StatusCode, resp.Header)
	}
	if want := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"method":"POST","body":"{\"a\":1}"}}`; string(body) != want {
		t.Errorf("body %s, want %s", body, want)
	}
	up.mu.Lock()
	auth := up.auth[0]
	up.mu.Unlock()
	if auth != "Bearer secret-token" {
		t.Errorf("upstream Authorization %q", auth)
	}

	// A watch streams: the first event arrives while the upstream holds back the rest. Were the
	// proxy to buffer the answer, neither would ever finish: the client's timeout ends the wait.
	firstEventRead := make(chan struct{})
	up.mu.Lock()
	up.firstEventRead = firstEventRead
	up.mu.Unlock()
	resp, err = (&http.Client{Timeout: time.Minute}).Get(p.URL() + "/api/v1/namespaces/default/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var events []string
	for sc.Scan() {
		if len(events) == 0 {
			close(firstEventRead)
		}
		events = append(events, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Errorf("reading the watch after %d events: %v", len(events), err)
	}
	if len(events) != 3 || events[2] != `{"type":"ADDED","object":{"n":2}}` {
		t.Errorf("events %q", events)
	}
	s := p.Stats()
	if s.Requests != 2 || s.Forwarded != 2 || len(p.Decisions()) != 2 {
		t.Errorf("stats:\n%s", s)
	}
	for f, n := range s.Injected {
		if n != 0 {
			t.Errorf("injected %d %s", n, f)
		}
	}
}

// requestSequence is a fixed mix of verbs.
var requestSequence = []struct{ method, path, contentType string }{
	{"GET", cmPath, ""},
	{"GET", "/api/v1/namespaces/default/configmaps", ""},
	{"POST", "/api/v1/namespaces/default/configmaps", "application/json"},
	{"PATCH", cmPath, "application/apply-patch+yaml"},
	{"PATCH", cmPath, "application/merge-patch+json"},
	{"PUT", cmPath, "application/json"},
	{"DELETE", cmPath, ""},
	{"GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/q", ""},
	{"DELETE", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", ""},
}

func runSequence(t *testing.T, seed int64, n int) ([]faultproxy.Decision, faultproxy.Stats) {
	t.Helper()
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{
		Seed:          seed,
		Idempotent:    faultproxy.Rates{TooManyRequests: 0.1, InternalError: 0.1, ServiceUnavailable: 0.1, GatewayTimeout: 0.1, ResetBefore: 0.1, ResetAfter: 0.1, Latency: 0.2},
		NonIdempotent: faultproxy.Rates{ResetBefore: 0.2, ResetAfter: 0.2, InternalError: 0.1},
		LatencyMin:    time.Millisecond, LatencyMax: 3 * time.Millisecond,
	})
	c := freshClient()
	for i := 0; i < n; i++ {
		r := requestSequence[i%len(requestSequence)]
		_, _, _ = do(t, c, r.method, p.URL()+r.path, r.contentType, "{}")
	}
	return p.Decisions(), p.Stats()
}

func TestDeterministic(t *testing.T) {
	const n = 90
	a, sa := runSequence(t, 42, n)
	b, sb := runSequence(t, 42, n)
	c, _ := runSequence(t, 43, n)
	if len(a) != n {
		t.Fatalf("%d decisions, want %d", len(a), n)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different decisions:\n%v\n%v", a, b)
	}
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("same seed, different stats:\n%s\n%s", sa, sb)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 42 and 43 gave the same decisions")
	}
	t.Logf("seed 42:\n%s", sa)
}

func TestStatsPerVerb(t *testing.T) {
	a, s := runSequence(t, 5, 90)

	// Recount from the decisions and check idempotency classes were applied.
	want := map[string]map[faultproxy.Fault]int{}
	injected := map[faultproxy.Fault]int{}
	forwarded := 0
	retries := map[string]int{}
	lastFaulted := map[string]bool{} // method+path
	for i, d := range a {
		key := d.Method + " " + d.Path
		if d.Retry != lastFaulted[key] {
			t.Errorf("decision %d %+v: Retry %v, want %v", i, d, d.Retry, lastFaulted[key])
		}
		if lastFaulted[key] {
			retries[d.Verb]++
			retries[""]++
		}
		lastFaulted[key] = d.Fault != ""
		if want[d.Verb] == nil {
			want[d.Verb] = map[faultproxy.Fault]int{}
		}
		if d.Fault != "" {
			want[d.Verb][d.Fault]++
			injected[d.Fault]++
		}
		if d.Latency > 0 {
			want[d.Verb][faultproxy.FaultLatency]++
			injected[faultproxy.FaultLatency]++
		}
		switch d.Fault {
		case "", faultproxy.FaultResetAfter:
			forwarded++
		}
		nonIdem := d.Verb == faultproxy.VerbCreate || d.Verb == faultproxy.VerbPatch || d.Verb == faultproxy.VerbDelete || d.Verb == faultproxy.VerbDeleteCollection
		if nonIdem && (d.Latency > 0 || (d.Fault != "" && d.Fault != faultproxy.FaultResetBefore && d.Fault != faultproxy.FaultResetAfter && d.Fault != faultproxy.FaultInternalError)) {
			t.Errorf("non-idempotent %s got idempotent-only fault %+v", d.Verb, d)
		}
	}
	if s.Requests != 90 || s.Forwarded != forwarded || s.Retries != retries[""] || s.Retries == 0 {
		t.Errorf("requests %d forwarded %d retries %d, want 90, %d and %d (> 0)", s.Requests, s.Forwarded, s.Retries, forwarded, retries[""])
	}
	if !reflect.DeepEqual(s.Injected, injected) {
		t.Errorf("injected %v, want %v", s.Injected, injected)
	}
	wantRequests := map[string]int{
		faultproxy.VerbGet: 20, faultproxy.VerbList: 10, faultproxy.VerbCreate: 10, faultproxy.VerbApply: 10,
		faultproxy.VerbPatch: 10, faultproxy.VerbUpdate: 10, faultproxy.VerbDelete: 10, faultproxy.VerbDeleteCollection: 10,
	}
	for verb, n := range wantRequests {
		vs := s.ByVerb[verb]
		if vs.Requests != n || vs.Retries != retries[verb] {
			t.Errorf("%s: %d requests %d retries, want %d and %d", verb, vs.Requests, vs.Retries, n, retries[verb])
		}
		for _, f := range faultproxy.Faults {
			if vs.Injected[f] != want[verb][f] {
				t.Errorf("%s %s: %d, want %d", verb, f, vs.Injected[f], want[verb][f])
			}
		}
	}
	if len(s.ByVerb) != len(wantRequests) {
		t.Errorf("verbs %v", s.ByVerb)
	}
	if str := s.String(); !strings.Contains(str, "DELETECOLLECTION") || !strings.Contains(str, "reset-after") || !strings.Contains(str, "retries") || !strings.Contains(str, "total") {
		t.Errorf("String:\n%s", str)
	}
}

func TestMatch(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{
		Idempotent: faultproxy.Rates{ServiceUnavailable: 1},
		Match:      faultproxy.PathPrefix("/apis/kueue.x-k8s.io"),
	})
	for path, code := range map[string]int{
		cmPath: 200,
		"/apis/kueue.x-k8s.io/v1beta1/clusterqueues/q": 503,
		"/apis/kueue.x-k8s.io.other/v1/things":         200,
		"/apis/kueue.x-k8s.io":                         503,
	} {
		resp, _, err := do(t, http.DefaultClient, http.MethodGet, p.URL()+path, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != code {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	s := p.Stats()
	if s.Requests != 4 || s.Forwarded != 2 || s.Injected[faultproxy.FaultServiceUnavailable] != 2 || len(p.Decisions()) != 2 {
		t.Errorf("stats:\n%s", s)
	}
}

func TestWatchFaultOnlyBeforeStream(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{Idempotent: faultproxy.Rates{GatewayTimeout: 1}})
	resp, _, err := do(t, http.DefaultClient, http.MethodGet, p.URL()+"/apis/kueue.x-k8s.io/v1beta1/workloads?watch=true", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 504 || len(up.requests()) != 0 {
		t.Errorf("status %d, upstream %v", resp.StatusCode, up.requests())
	}
	if s := p.Stats(); s.ByVerb[faultproxy.VerbWatch].Injected[faultproxy.FaultGatewayTimeout] != 1 {
		t.Errorf("stats:\n%s", s)
	}
}

func TestConfigValidation(t *testing.T) {
	target, _ := url.Parse("http://127.0.0.1:1")
	for _, cfg := range []faultproxy.Config{
		{Idempotent: faultproxy.Rates{InternalError: 0.6, ResetAfter: 0.6}},
		{NonIdempotent: faultproxy.Rates{Latency: 1.5}},
		{Idempotent: faultproxy.Rates{ResetBefore: -0.1}},
		{LatencyMin: -time.Second},
	} {
		if p, err := faultproxy.New(target, nil, cfg); err == nil {
			_ = p.Close()
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func TestKubeconfig(t *testing.T) {
	up := newUpstream(t)

	// Plain HTTP: clientcmd keeps the server but drops the token.
	plain := startProxy(t, up, faultproxy.Config{})
	cfg, err := clientcmd.RESTConfigFromKubeConfig(plain.Kubeconfig("tok"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != plain.URL() || cfg.BearerToken != "" {
		t.Errorf("plain: host %q token %q; clientcmd no longer drops credentials for http://?", cfg.Host, cfg.BearerToken)
	}

	// TLS: the token is kept and the proxy's CA is trusted.
	p := startProxy(t, up, faultproxy.Config{TLS: true})
	if !strings.HasPrefix(p.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL %s", p.URL())
	}
	cfg, err = clientcmd.RESTConfigFromKubeConfig(p.Kubeconfig(`tok"en`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != p.URL() || cfg.BearerToken != `tok"en` || string(cfg.CAData) != string(p.CAData()) {
		t.Errorf("tls: host %q token %q", cfg.Host, cfg.BearerToken)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := do(t, hc, http.MethodGet, p.URL()+cmPath, "", "")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET through TLS proxy: %v %v", resp, err)
	}
	if resp.ProtoMajor != 1 {
		t.Errorf("client used %s, want HTTP/1.1", resp.Proto)
	}
	up.mu.Lock()
	auth := up.auth[len(up.auth)-1]
	up.mu.Unlock()
	if auth != `Bearer tok"en` {
		t.Errorf("upstream Authorization %q", auth)
	}
}

func TestTLSResetBefore(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{TLS: true, NonIdempotent: faultproxy.Rates{ResetBefore: 1}})
	hc, err := rest.HTTPClientFor(&rest.Config{Host: p.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: p.CAData()}})
	if err != nil {
		t.Fatal(err)
	}
	if resp, _, err := do(t, hc, http.MethodPost, p.URL()+"/api/v1/namespaces/default/configmaps", "application/json", "{}"); err == nil {
		t.Fatalf("status %d, want a connection error", resp.StatusCode)
	} else {
		t.Logf("client error: %v", err)
	}
	if got := up.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v", got)
	}
}

// newRESTClient is how the provider talks through the proxy: a rest.Config
// whose Host is the proxy, with the provider's retrying layer installed.
func newRESTClient(t *testing.T, p *faultproxy.Proxy, retry kube.RetrySettings) *rest.RESTClient {
	t.Helper()
	cfg := &rest.Config{Host: p.URL(), BearerToken: "test-token", QPS: -1}
	kube.WrapRetries(cfg, retry)
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	cfg.APIPath = "/api"
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func TestRESTClientWithRetriesSurvivesFaults(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{
		Seed:       1,
		Idempotent: faultproxy.Rates{TooManyRequests: 0.05, InternalError: 0.05, ServiceUnavailable: 0.05, GatewayTimeout: 0.05, ResetBefore: 0.05, ResetAfter: 0.05, Latency: 0.1},
		LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond,
	})
	rc := newRESTClient(t, p, kube.RetrySettings{MaxAttempts: 10, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 60
	start := time.Now()
	for i := 0; i < n; i++ {
		body, err := rc.Get().AbsPath(cmPath).DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %d: %v\n%s", i, err, p.Stats())
		}
		if !strings.Contains(string(body), `"name":"x"`) {
			t.Fatalf("GET %d: body %s", i, body)
		}
	}
	s := p.Stats()
	t.Logf("%d GETs in %v\n%s", n, time.Since(start), s)
	injected := 0
	for _, f := range faultproxy.Faults {
		if f != faultproxy.FaultLatency {
			injected += s.Injected[f]
		}
	}
	// Every injected fault cost exactly one more attempt.
	if injected == 0 || s.Requests != n+injected {
		t.Errorf("requests %d, injected %d, want %d requests", s.Requests, injected, n+injected)
	}
	withAuth := 0
	up.mu.Lock()
	for _, a := range up.auth {
		if a == "Bearer test-token" {
			withAuth++
		}
	}
	seen := len(up.auth)
	up.mu.Unlock()
	if withAuth != seen || seen != s.Forwarded {
		t.Errorf("upstream saw %d requests (%d with the token), proxy forwarded %d", seen, withAuth, s.Forwarded)
	}
}

// TestRESTClientCreateResetAfterIsNotRetried documents the gap the proxy
// exists to expose: a create whose response is lost is not retried by the
// provider's transport (POST is not idempotent) and surfaces as an error,
// although the object was created.
func TestRESTClientCreateResetAfterIsNotRetried(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{NonIdempotent: faultproxy.Rates{ResetAfter: 1}})
	rc := newRESTClient(t, p, kube.RetrySettings{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	_, err := rc.Post().AbsPath("/api/v1/namespaces/default/configmaps").Body([]byte(`{"metadata":{"name":"x"}}`)).
		SetHeader("Content-Type", "application/json").DoRaw(context.Background())
	if err == nil {
		t.Fatal("create succeeded, want a connection error")
	}
	t.Logf("create error: %v", err)
	if got := up.requests(); len(got) != 1 {
		t.Errorf("upstream saw %v, want exactly one create", got)
	}
}

func TestWatchResetAfter(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{Idempotent: faultproxy.Rates{ResetAfter: 1}})
	if resp, _, err := do(t, freshClient(), http.MethodGet, p.URL()+"/api/v1/namespaces/default/configmaps?watch=true", "", ""); err == nil {
		t.Fatalf("status %d, want a connection error", resp.StatusCode)
	}
	if got := up.requests(); len(got) != 1 {
		t.Errorf("upstream saw %v, want the watch once", got)
	}
	if s := p.Stats(); s.ByVerb[faultproxy.VerbWatch].Injected[faultproxy.FaultResetAfter] != 1 {
		t.Errorf("stats:\n%s", s)
	}
}

// TestUpstreamClientCertificate: the proxy presents the client certificate
// of the upstream tls.Config to an API server that requires one.
func TestUpstreamClientCertificate(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "admin"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)

	var cn atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn.Store(r.TLS.PeerCertificates[0].Subject.CommonName)
		_, _ = fmt.Fprint(w, `{"kind":"Status"}`)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()

	upTLS := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone() // trusts srv
	upTLS.Certificates = []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}
	target, _ := url.Parse(srv.URL)
	p, err := faultproxy.New(target, upTLS, faultproxy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	resp, _, err := do(t, http.DefaultClient, http.MethodGet, p.URL()+"/version", "", "")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if got, _ := cn.Load().(string); got != "admin" {
		t.Errorf("upstream saw client certificate %q", got)
	}
}

// decisionKey identifies a decision independently of arrival order.
type decisionKey struct {
	method, path string
	n            int
}

func byKey(t *testing.T, ds []faultproxy.Decision) map[decisionKey]faultproxy.Decision {
	t.Helper()
	m := make(map[decisionKey]faultproxy.Decision, len(ds))
	for _, d := range ds {
		k := decisionKey{d.Method, d.Path, d.N}
		if _, dup := m[k]; dup {
			t.Errorf("two decisions for %v", k)
		}
		m[k] = d
	}
	return m
}

// runClients sends, from one goroutine per client, rounds × the request
// sequence on the client's own object paths; order shuffles the clients'
// progress differently for each value.
func runClients(t *testing.T, seed int64, clients, rounds int, order uint64) []faultproxy.Decision {
	t.Helper()
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{
		Seed:          seed,
		Idempotent:    faultproxy.Rates{TooManyRequests: 0.1, InternalError: 0.1, ServiceUnavailable: 0.1, GatewayTimeout: 0.1, ResetBefore: 0.1, ResetAfter: 0.1, Latency: 0.2},
		NonIdempotent: faultproxy.Rates{ResetBefore: 0.2, ResetAfter: 0.2, InternalError: 0.1},
		LatencyMin:    time.Millisecond, LatencyMax: 2 * time.Millisecond,
	})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := freshClient()
			for i := range rounds * len(requestSequence) {
				// Client-dependent pauses: a different interleaving per order.
				if (uint64(c*31+i)*order)%5 == 0 {
					time.Sleep(time.Duration((uint64(c)+order)%3) * time.Millisecond)
				}
				r := requestSequence[i%len(requestSequence)]
				path := strings.Replace(r.path, "default", fmt.Sprintf("ns-%d", c), 1)
				req, _ := http.NewRequest(r.method, p.URL()+path, strings.NewReader("{}"))
				if r.contentType != "" {
					req.Header.Set("Content-Type", r.contentType)
				}
				if resp, err := hc.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()
	return p.Decisions()
}

// TestDeterministicUnderConcurrency: concurrent clients interleaving
// differently get the same decision for every request (method, path, n), and
// a client alone gets the same decisions as among others.
func TestDeterministicUnderConcurrency(t *testing.T) {
	const clients, rounds = 6, 4
	n := clients * rounds * len(requestSequence)
	a := runClients(t, 42, clients, rounds, 1)
	b := runClients(t, 42, clients, rounds, 7)
	alone := runClients(t, 42, 1, rounds, 3)
	other := runClients(t, 43, clients, rounds, 1)
	if len(a) != n || len(b) != n || len(alone) != rounds*len(requestSequence) {
		t.Fatalf("%d, %d and %d decisions, want %d, %d and %d", len(a), len(b), len(alone), n, n, rounds*len(requestSequence))
	}
	ka, kb := byKey(t, a), byKey(t, b)
	if !reflect.DeepEqual(ka, kb) {
		for k, d := range ka {
			if kb[k] != d {
				t.Errorf("%v: %+v, then %+v", k, d, kb[k])
			}
		}
	}
	for k, d := range byKey(t, alone) {
		if ka[k] != d {
			t.Errorf("%v alone: %+v, among others: %+v", k, d, ka[k])
		}
	}
	if reflect.DeepEqual(ka, byKey(t, other)) {
		t.Error("seeds 42 and 43 gave the same decisions")
	}
	// The comparison with the client alone cannot be vacuous: alone, its
	// requests arrive with no others between them.
	faults := 0
	for _, d := range a {
		if d.Fault != "" {
			faults++
		}
	}
	if faults == 0 {
		t.Error("no faults injected")
	}
}

// TestRetries: a request is a retry when the previous one with the same
// method and path got a fault.
func TestRetries(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{Idempotent: faultproxy.Rates{ServiceUnavailable: 1}})
	other := "/api/v1/namespaces/default/configmaps/y"
	for _, r := range []struct{ method, path string }{
		{"GET", cmPath},   // 503, first
		{"GET", cmPath},   // 503, retry
		{"GET", other},    // 503, first of its path
		{"POST", cmPath},  // forwarded, other method
		{"POST", cmPath},  // forwarded, previous was not faulted
		{"GET", cmPath},   // 503, retry
		{"PUT", cmPath},   // 503 (PUT is idempotent), first
		{"PUT", cmPath},   // retry
		{"DELETE", other}, // forwarded
	} {
		_, _, _ = do(t, http.DefaultClient, r.method, p.URL()+r.path, "application/json", "{}")
	}
	s := p.Stats()
	if s.Retries != 3 || s.ByVerb[faultproxy.VerbGet].Retries != 2 || s.ByVerb[faultproxy.VerbUpdate].Retries != 1 || s.ByVerb[faultproxy.VerbCreate].Retries != 0 {
		t.Errorf("retries:\n%s", s)
	}
	var retry []bool
	for _, d := range p.Decisions() {
		retry = append(retry, d.Retry)
	}
	if want := []bool{false, true, false, false, false, true, false, true, false}; !reflect.DeepEqual(retry, want) {
		t.Errorf("Retry %v, want %v", retry, want)
	}
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// TestDownUp: during an outage new connections are refused, idle ones are
// closed and a request in flight completes; after Up the same URL works.
func TestDownUp(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			up := newUpstream(t)
			p := startProxy(t, up, faultproxy.Config{TLS: useTLS})
			url0 := p.URL()
			newClient := func(keepAlive bool) *http.Client {
				tr := &http.Transport{DisableKeepAlives: !keepAlive}
				if useTLS {
					pool := x509.NewCertPool()
					pool.AppendCertsFromPEM(p.CAData())
					tr.TLSClientConfig = &tls.Config{RootCAs: pool}
				}
				return &http.Client{Transport: tr, Timeout: 10 * time.Second}
			}
			keep := newClient(true)
			get := func(c *http.Client, path string) (int, error) {
				resp, _, err := do(t, c, http.MethodGet, p.URL()+path, "", "")
				if err != nil {
					return 0, err
				}
				return resp.StatusCode, nil
			}
			if code, err := get(keep, cmPath); err != nil || code != 200 {
				t.Fatalf("before Down: %d %v", code, err)
			}

			// A slow request is being forwarded when the outage starts.
			slow := make(chan error, 1)
			go func() {
				code, err := get(newClient(false), slowPath)
				if err == nil && code != 200 {
					err = fmt.Errorf("status %d", code)
				}
				slow <- err
			}()
			<-up.slowStarted
			// Between a client's requests its keep-alive connection is idle, but the response
			// can reach the client before the server marks the connection idle: wait for that,
			// or the outage starts with two requests in flight.
			waitForActive(t, p, 1)
			p.Down()
			p.Down() // idempotent

			if _, err := get(newClient(false), cmPath); !isRefused(err) {
				t.Errorf("new connection while down: %v, want connection refused", err)
			}
			// The idle keep-alive connection was closed: the client has to
			// dial, and is refused.
			if _, err := get(keep, cmPath); !isRefused(err) {
				t.Errorf("keep-alive client while down: %v, want connection refused", err)
			}
			close(up.release)
			if err := <-slow; err != nil {
				t.Errorf("request in flight during Down: %v", err)
			}

			if err := p.Up(); err != nil {
				t.Fatal(err)
			}
			if err := p.Up(); err != nil { // idempotent
				t.Fatal(err)
			}
			if p.URL() != url0 {
				t.Errorf("URL %s after Up, was %s", p.URL(), url0)
			}
			if code, err := get(keep, cmPath); err != nil || code != 200 {
				t.Errorf("after Up: %d %v", code, err)
			}
			// Only the requests that got through reached upstream.
			if got, want := up.requests(), []string{"GET " + cmPath, "GET " + slowPath, "GET " + cmPath}; !reflect.DeepEqual(got, want) {
				t.Errorf("upstream saw %v, want %v", got, want)
			}
			if s := p.Stats(); s.Requests != 3 || s.Forwarded != 3 {
				t.Errorf("stats:\n%s", s)
			}
		})
	}
}

// TestDownResetsRequestOnOpenConnection: a request that arrives during an
// outage on a connection that stayed open (here pipelined behind a slow
// request) is reset without being forwarded and counted as FaultDown.
func TestDownResetsRequestOnOpenConnection(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\nGET %s HTTP/1.1\r\nHost: x\r\n\r\n", slowPath, cmPath); err != nil {
		t.Fatal(err)
	}
	<-up.slowStarted
	p.Down()
	close(up.release)

	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("slow request: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("slow request: status %d", resp.StatusCode)
	}
	if resp, err := http.ReadResponse(br, nil); err == nil {
		t.Errorf("pipelined request during outage: status %d, want the connection cut", resp.StatusCode)
	}
	// The connection is closed when it goes idle, which the client may see
	// before the proxy has read the pipelined request from its buffer.
	var s faultproxy.Stats
	err = acctest.Eventually(context.Background(), 5*time.Second, "the proxy counting the pipelined request",
		func(context.Context) (bool, string, error) {
			s = p.Stats()
			return s.Requests >= 2, fmt.Sprintf("%d requests", s.Requests), nil
		})
	if err != nil {
		t.Error(err)
	}
	if got, want := up.requests(), []string{"GET " + slowPath}; !reflect.DeepEqual(got, want) {
		t.Errorf("upstream saw %v, want %v", got, want)
	}
	if s.Requests != 2 || s.Forwarded != 1 || s.Injected[faultproxy.FaultDown] != 1 || s.ByVerb[faultproxy.VerbGet].Injected[faultproxy.FaultDown] != 1 {
		t.Errorf("stats:\n%s", s)
	}
	if ds := p.Decisions(); len(ds) != 2 || ds[1].Fault != faultproxy.FaultDown || ds[1].N != 0 {
		t.Errorf("decisions %+v", ds)
	}
	if !strings.Contains(s.String(), "down") {
		t.Errorf("String:\n%s", s)
	}
}

// TestDownUpWhileRequestsFlow: outages toggled from another goroutine while
// clients send requests; every request is either forwarded or counted, and
// all succeed again after Up. Each phase lasts until requests met it: some
// reached the proxy while it was up, some met the outage (a refused
// connection, or a request reset as FaultDown). Run with -race.
func TestDownUpWhileRequestsFlow(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, up, faultproxy.Config{Seed: 3, Idempotent: faultproxy.Uniform(0.2), Match: faultproxy.PathPrefix("/api")})
	stop := make(chan struct{})
	// finished receives a signal each time a client's request ends, however it ended: the
	// proxy has counted it by then.
	finished := make(chan struct{}, 1)
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 5 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := hc.Get(p.URL() + cmPath)
				if err != nil {
					if strings.Contains(err.Error(), "connection refused") {
						refused.Add(1)
					}
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				select {
				case finished <- struct{}{}:
				default:
				}
			}
		}()
	}
	metOutage := func() int64 { return refused.Load() + int64(p.Stats().Injected[faultproxy.FaultDown]) }
	// waitUntil checks cond again each time a request ends; the minute bounds a hang only.
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		hang := time.After(time.Minute)
		for !cond() {
			select {
			case <-finished:
			case <-hang:
				t.Fatalf("no request %s within a minute:\n%s", what, p.Stats())
			}
		}
	}
	for range 10 {
		received := p.Stats().Requests
		waitUntil("reached the proxy while it was up", func() bool { return p.Stats().Requests > received })
		met := metOutage()
		p.Down()
		waitUntil("met the outage", func() bool { return metOutage() > met })
		if err := p.Up(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	s := p.Stats()
	status := 0
	for _, f := range []faultproxy.Fault{faultproxy.FaultTooManyRequests, faultproxy.FaultInternalError, faultproxy.FaultServiceUnavailable, faultproxy.FaultGatewayTimeout, faultproxy.FaultResetBefore, faultproxy.FaultDown} {
		status += s.Injected[f]
	}
	if s.Requests == 0 || s.Requests != s.Forwarded+status {
		t.Errorf("requests %d != forwarded %d + not forwarded %d:\n%s", s.Requests, s.Forwarded, status, s)
	}
	if code, err := func() (int, error) {
		resp, _, err := do(t, http.DefaultClient, http.MethodGet, p.URL()+"/version", "", "")
		if err != nil {
			return 0, err
		}
		return resp.StatusCode, nil
	}(); err != nil || code != 200 {
		t.Errorf("after the last Up: %d %v", code, err)
	}
	t.Logf("\n%s", s)
}

func TestUpAfterClose(t *testing.T) {
	up := newUpstream(t)
	target, _ := url.Parse(up.URL)
	p, err := faultproxy.New(target, nil, faultproxy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.Down()
	if err := p.Close(); err != nil {
		t.Errorf("Close while down: %v", err)
	}
	if err := p.Up(); err == nil {
		t.Error("Up after Close: no error")
	}
}

// TestCreatesKeyedByObject: creates of different objects share the
// collection's path; each gets the decision of its own object name whatever
// the order, and the body reaches the server intact.
func TestCreatesKeyedByObject(t *testing.T) {
	const coll = "/api/v1/namespaces"
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("team-%d", i))
	}
	run := func(order []string) map[string]faultproxy.Decision {
		up := newUpstream(t)
		p := startProxy(t, up, faultproxy.Config{Seed: 9, NonIdempotent: faultproxy.Rates{ResetBefore: 0.25, InternalError: 0.25}})
		for _, n := range order {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, n)
			resp, got, err := do(t, freshClient(), http.MethodPost, p.URL()+coll, "application/json", body)
			if err == nil && resp.StatusCode == http.StatusCreated && !strings.Contains(string(got), strings.ReplaceAll(body, `"`, `\"`)) {
				t.Errorf("upstream got %s, want body %s", got, body)
			}
		}
		m := map[string]faultproxy.Decision{}
		for _, d := range p.Decisions() {
			m[d.Object] = d
		}
		return m
	}
	fwd := run(names)
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	rev := run(reversed)
	faults := 0
	for _, n := range names {
		if fwd[n] != rev[n] {
			t.Errorf("%s: %+v in order, %+v reversed", n, fwd[n], rev[n])
		}
		if fwd[n].Object != n || fwd[n].N != 0 {
			t.Errorf("%s: decision %+v", n, fwd[n])
		}
		if fwd[n].Fault != "" {
			faults++
		}
	}
	if faults == 0 || faults == len(names) {
		t.Errorf("%d of %d creates faulted: the test shows nothing", faults, len(names))
	}
}

// waitForActive waits until at most n of the proxy's client connections are serving a request.
func waitForActive(t *testing.T, p *faultproxy.Proxy, n int) {
	t.Helper()
	err := acctest.Eventually(context.Background(), 5*time.Second, fmt.Sprintf("at most %d connections serving a request", n),
		func(context.Context) (bool, string, error) {
			active := faultproxy.ActiveConns(p)
			return active <= n, fmt.Sprintf("%d serve one", active), nil
		})
	if err != nil {
		t.Fatal(err)
	}
}
