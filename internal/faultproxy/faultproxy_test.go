package faultproxy_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
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
