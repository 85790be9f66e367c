// Package faultproxy is a fault-injecting reverse proxy for tests: it sits
// between a Kubernetes client (the provider) and an API server and answers a
// seeded, reproducible share of the requests with throttling, server errors,
// dropped connections or extra latency.
//
// # Pointing a client at it
//
// The proxy listens on 127.0.0.1 (random port) and speaks HTTP/1.1 only, so
// that it can hijack and reset connections (an HTTP/2 server cannot). By
// default it serves plain HTTP; with Config.TLS it serves HTTPS with a fresh
// self-signed certificate for 127.0.0.1 (CAData), still HTTP/1.1 only (no h2
// in ALPN). Upstream it speaks whatever the target URL says (https for a real
// API server) with the *tls.Config given to New, so client-certificate
// authentication is done by the proxy itself. The Authorization header
// (bearer tokens) is forwarded untouched.
//
//   - rest.Config built in code: rest.Config{Host: p.URL(), BearerToken: tok}
//     works over plain HTTP (omit the token when the upstream tls.Config
//     carries a client certificate). The upstream tls.Config for a rest.Config
//     cfg is rest.TLSConfigFor(cfg).
//   - kubeconfig files (clientcmd, hence the provider's config_path, and its
//     host/token attributes, which go through clientcmd too): clientcmd drops
//     every credential (token, client certificate, exec plugin) for an http://
//     server. Use plain HTTP only when the proxy holds the credentials (client
//     certificate in the upstream tls.Config), otherwise set Config.TLS and use
//     Proxy.Kubeconfig, which embeds CAData as certificate-authority-data.
//
// # What is injected
//
// Every request that Config.Match accepts (all, by default) gets a decision
// (see Determinism): at most one of the exclusive faults (429 with
// Retry-After, 500, 503, 504, reset before forwarding, reset after
// forwarding), and independently added latency, which is waited before the
// request is forwarded or the fault is answered. Status faults are answered
// with a metav1.Status JSON body as the API server writes it. Resets close
// the client connection with TCP RST and no response.
//
// Requests are split into idempotent ones (Config.Idempotent rates) and the
// others (Config.NonIdempotent), see IsIdempotent. Upgrade requests (exec,
// attach, port-forward) are forwarded without faults. A watch only gets
// faults before its response starts; a stream in progress is never cut.
//
// A matched request is counted as a retry (Stats.Retries) when the previous
// matched request with the same method, URL path and object (see
// Determinism) got an injected fault (a status, a reset, or FaultDown);
// latency alone does not count.
//
// # Determinism
//
// The decision of a matched request is a pure function of Config.Seed, its
// method, URL path (not the query), verb, the object name a POST's JSON body
// names (metadata.name or metadata.generateName; creates of different objects
// share the collection's path), and n, the number of earlier matched requests
// with the same method, path and object (so the retry of a request is the
// next n). It does not depend on what other requests do or in which order
// concurrent requests arrive: a run is reproducible with its seed whatever
// the interleaving, as long as each client sends the same requests. Only
// requests with the same method, path and object racing each other (e.g. two
// LISTs of one collection) may swap decisions. Requests refused by an outage
// (FaultDown) consume no n. Note
// that Go's http.Transport transparently resends an idempotent request (GET,
// HEAD, ...) when a reused keep-alive connection breaks before any response
// byte, so a reset on such a request can be absorbed below the client and
// shows up here as one more request (the next n, with its own decision).
//
// # Classifying, counting and recording
//
// ClassifyRequest is the one classifier of Kubernetes request paths (verb,
// group, version, resource, subresource, namespace, name) that the proxy's
// statistics, the bench and the request-count tests share. With Config.Record
// the proxy keeps every request whole (Recorded) until ResetRecorded; with
// Config.Upstream it reaches the target through a given transport, such as
// rest.TransportFor, which adds the credentials for clients that send none.
// With zero Rates the proxy injects nothing: it is then a request-counting
// proxy.
//
// # Outages
//
// Down simulates the API server going away: the listener is closed (new
// connections are refused), idle keep-alive connections are closed, requests
// already being served complete normally, and a request that still arrives
// on an open connection is never forwarded: its connection is reset and it
// is counted as FaultDown. Up listens again on the same address, so URL and
// Kubeconfig stay valid.
package faultproxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	mrand "math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/loopbackcert"
)

// Fault is a kind of injected fault.
type Fault string

// Fault kinds.
const (
	FaultTooManyRequests    Fault = "429"          // 429 with Retry-After
	FaultInternalError      Fault = "500"          // 500 InternalError
	FaultServiceUnavailable Fault = "503"          // 503 ServiceUnavailable
	FaultGatewayTimeout     Fault = "504"          // 504 Timeout
	FaultResetBefore        Fault = "reset-before" // connection reset, upstream never sees the request
	FaultResetAfter         Fault = "reset-after"  // upstream handled it, the response is lost
	FaultLatency            Fault = "latency"      // added delay (combines with the others)
	FaultDown               Fault = "down"         // arrived during an outage (Down): reset, never forwarded
)

// Faults lists every kind, in the order Stats.String prints them.
var Faults = []Fault{
	FaultTooManyRequests, FaultInternalError, FaultServiceUnavailable, FaultGatewayTimeout,
	FaultResetBefore, FaultResetAfter, FaultLatency, FaultDown,
}

// Verbs requests are counted under (Kubernetes verbs, from method, path,
// query and content type). Non-resource requests (discovery, /version,
// /healthz, ...) count as VerbGet for GET and HEAD.
const (
	VerbGet              = "GET"
	VerbList             = "LIST"
	VerbWatch            = "WATCH"
	VerbCreate           = "CREATE"
	VerbApply            = "APPLY" // PATCH with application/apply-patch+yaml (or +cbor)
	VerbPatch            = "PATCH" // every other PATCH
	VerbUpdate           = "UPDATE"
	VerbDelete           = "DELETE"
	VerbDeleteCollection = "DELETECOLLECTION"
	VerbOther            = "OTHER"
)

// Rates are probabilities in [0, 1]. The exclusive faults (all but Latency)
// must not add up to more than 1; Latency is drawn independently.
type Rates struct {
	TooManyRequests    float64
	InternalError      float64
	ServiceUnavailable float64
	GatewayTimeout     float64
	ResetBefore        float64
	ResetAfter         float64
	Latency            float64
}

// Uniform returns Rates with every exclusive fault at total/6 (so their sum
// is total) and no latency.
func Uniform(total float64) Rates {
	r := total / 6
	return Rates{r, r, r, r, r, r, 0}
}

func (r Rates) exclusive() []struct {
	f    Fault
	rate float64
} {
	return []struct {
		f    Fault
		rate float64
	}{
		{FaultTooManyRequests, r.TooManyRequests},
		{FaultInternalError, r.InternalError},
		{FaultServiceUnavailable, r.ServiceUnavailable},
		{FaultGatewayTimeout, r.GatewayTimeout},
		{FaultResetBefore, r.ResetBefore},
		{FaultResetAfter, r.ResetAfter},
	}
}

func (r Rates) validate(name string) error {
	sum := 0.0
	for _, e := range r.exclusive() {
		if e.rate < 0 || e.rate > 1 {
			return fmt.Errorf("faultproxy: %s rate of %s is %v, want 0..1", name, e.f, e.rate)
		}
		sum += e.rate
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("faultproxy: %s exclusive fault rates add up to %v, want at most 1", name, sum)
	}
	if r.Latency < 0 || r.Latency > 1 {
		return fmt.Errorf("faultproxy: %s latency rate is %v, want 0..1", name, r.Latency)
	}
	return nil
}

// Config configures a Proxy. The zero value forwards everything unchanged.
type Config struct {
	// Seed seeds the decisions (see Determinism in the package
	// documentation).
	Seed int64

	// Idempotent applies to requests IsIdempotent accepts (GET, HEAD,
	// OPTIONS: get, list, watch; PUT; server-side apply PATCH);
	// NonIdempotent to the others (POST create, DELETE, other PATCHes).
	Idempotent    Rates
	NonIdempotent Rates

	// RetryAfterSeconds is the Retry-After header (and the Status body's
	// details.retryAfterSeconds) of injected 429s: 0 means 1, negative means
	// no header and no details.
	RetryAfterSeconds int

	// LatencyMin and LatencyMax bound the added latency: uniform in
	// [LatencyMin, LatencyMax], or exactly LatencyMin when LatencyMax <=
	// LatencyMin.
	LatencyMin, LatencyMax time.Duration

	// Match limits injection to the requests it accepts (nil: all). The
	// others are forwarded unchanged and get no decision (an outage still
	// resets them). See PathPrefix.
	Match func(*http.Request) bool

	// TLS makes the proxy serve HTTPS (HTTP/1.1) with a self-signed
	// certificate for 127.0.0.1; clients trust Proxy.CAData.
	TLS bool

	// Upstream, when set, carries requests to the target instead of a
	// transport built from New's tls.Config; rest.TransportFor(cfg) adds
	// cfg's credentials, bearer tokens included, so that clients can talk
	// plain HTTP to the proxy without any.
	Upstream http.RoundTripper

	// Record keeps every request whole (see Recorded), to count or replay
	// them.
	Record bool
}

// PathPrefix returns a Match function accepting requests whose URL path is
// one of prefixes or lies below one ("/apis/kueue.x-k8s.io" matches
// "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", not "/apis/kueue.x-k8s.io.evil").
func PathPrefix(prefixes ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		for _, p := range prefixes {
			p = strings.TrimSuffix(p, "/")
			if r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/") {
				return true
			}
		}
		return false
	}
}

// IsIdempotent reports whether repeating r leaves the server as one request
// would: GET, HEAD, OPTIONS (get, list, watch), PUT (a full replace; with a
// resourceVersion a repeat that raced its own success answers 409), and
// server-side apply PATCH (declarative). POST (create: a repeat answers 409
// AlreadyExists or, with generateName, makes a second object), DELETE (a
// repeat answers 404) and JSON/merge/strategic PATCHes (may append) are not.
func IsIdempotent(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut:
		return true
	case http.MethodPatch:
		return isApply(r.Header.Get("Content-Type"))
	default:
		return false
	}
}

func isApply(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/apply-patch+yaml" || mt == "application/apply-patch+cbor")
}

// Decision is what the proxy did with one matched request.
type Decision struct {
	Method  string
	Path    string
	Verb    string
	Object  string        // POST only: metadata.name (or generateName) of the JSON body
	N       int           // earlier matched requests with this Method, Path and Object (outages excluded)
	Retry   bool          // the previous one with this Method, Path and Object got a fault
	Fault   Fault         // "" when forwarded normally
	Latency time.Duration // 0 when none was added
}

// VerbStats counts the requests of one verb.
type VerbStats struct {
	Requests  int // received
	Forwarded int // reached upstream (reset-after included)
	Retries   int // matched requests whose previous try (same method, path, object) got a fault
	Injected  map[Fault]int
}

// Stats counts what the proxy did.
type Stats struct {
	Requests  int // received
	Forwarded int // reached upstream (reset-after included)
	Retries   int // matched requests whose previous try (same method, path, object) got a fault
	Injected  map[Fault]int
	ByVerb    map[string]VerbStats
}

// String is a table of requests, forwarded requests, retries and injected
// faults per verb, for t.Log.
func (s Stats) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprint(tw, "verb\trequests\tforwarded\tretries\t")
	for _, f := range Faults {
		fmt.Fprintf(tw, "%s\t", f)
	}
	fmt.Fprintln(tw)
	row := func(name string, req, fwd, retries int, inj map[Fault]int) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t", name, req, fwd, retries)
		for _, f := range Faults {
			fmt.Fprintf(tw, "%d\t", inj[f])
		}
		fmt.Fprintln(tw)
	}
	verbs := make([]string, 0, len(s.ByVerb))
	for v := range s.ByVerb {
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	for _, v := range verbs {
		vs := s.ByVerb[v]
		row(v, vs.Requests, vs.Forwarded, vs.Retries, vs.Injected)
	}
	row("total", s.Requests, s.Forwarded, s.Retries, s.Injected)
	_ = tw.Flush()
	return b.String()
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	cfg    Config
	url    string
	caPEM  []byte
	srv    *http.Server
	rp     *httputil.ReverseProxy
	client *http.Transport

	mu        sync.Mutex
	stats     Stats
	decisions []Decision
	paths     map[pathKey]*pathState
	down      bool                        // between Down and Up: requests are reset
	recorded  []Recorded                  // with Config.Record, since the last ResetRecorded
	window    int                         // bumped by ResetRecorded: late answers of an old window are dropped
	conns     map[net.Conn]http.ConnState // open client connections

	// lifecycle serializes Down, Up and Close.
	lifecycle sync.Mutex
	addr      string       // host:port, kept across outages
	serverTLS *tls.Config  // nil for plain HTTP
	ln        net.Listener // nil while down or closed
	closed    bool
}

// pathKey is what n (Decision.N) and retries are counted per.
type pathKey struct{ method, path, object string }

type pathState struct {
	n       int  // matched requests that got a decision
	faulted bool // the last matched request got a fault (FaultDown included)
}

type ctxKey struct{}

// errResetAfter makes ModifyResponse hand over to the ErrorHandler, which
// resets the client connection.
var errResetAfter = errors.New("faultproxy: reset after forwarding")

// New starts a proxy on 127.0.0.1 forwarding to target (scheme, host and an
// optional path prefix) with upstreamTLS (nil for plain http or the default
// TLS settings). Close it when done.
func New(target *url.URL, upstreamTLS *tls.Config, cfg Config) (*Proxy, error) {
	cfg, err := checkConfig(target, cfg)
	if err != nil {
		return nil, err
	}
	tr := upstreamTransport(upstreamTLS)
	scheme, caPEM, serverTLS, err := serving(cfg.TLS)
	if err != nil {
		return nil, err
	}
	var upstream http.RoundTripper = tr
	if cfg.Upstream != nil {
		upstream = cfg.Upstream
	}
	p := &Proxy{
		cfg:       cfg,
		caPEM:     caPEM,
		client:    tr,
		stats:     Stats{Injected: map[Fault]int{}, ByVerb: map[string]VerbStats{}},
		paths:     map[pathKey]*pathState{},
		conns:     map[net.Conn]http.ConnState{},
		addr:      "127.0.0.1:0",
		serverTLS: serverTLS,
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport:      upstream,
		FlushInterval:  -1, // watches stream
		ModifyResponse: resetAfterResponse,
		ErrorHandler:   upstreamError,
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 30 * time.Second, ConnState: p.connState}
	if err := p.listen(); err != nil {
		return nil, err
	}
	p.url = scheme + "://" + p.addr
	return p, nil
}

// checkConfig refuses a target or configuration New cannot serve, and returns cfg with
// its defaults filled in.
func checkConfig(target *url.URL, cfg Config) (Config, error) {
	if target == nil || target.Host == "" || (target.Scheme != "http" && target.Scheme != "https") {
		return cfg, fmt.Errorf("faultproxy: target %v must be an absolute http or https URL", target)
	}
	if err := cfg.Idempotent.validate("idempotent"); err != nil {
		return cfg, err
	}
	if err := cfg.NonIdempotent.validate("non-idempotent"); err != nil {
		return cfg, err
	}
	if cfg.LatencyMin < 0 || cfg.LatencyMax < 0 {
		return cfg, errors.New("faultproxy: negative latency")
	}
	if cfg.RetryAfterSeconds == 0 {
		cfg.RetryAfterSeconds = 1
	}
	return cfg, nil
}

// upstreamTransport is the proxy's own connection to the target, never through an
// environment proxy.
func upstreamTransport(upstreamTLS *tls.Config) *http.Transport {
	tr := &http.Transport{
		Proxy:                 nil, // never an environment proxy
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if upstreamTLS != nil {
		tr.TLSClientConfig = upstreamTLS.Clone()
	}
	return tr
}

// serving says how the proxy serves its clients: plain http, or, with withTLS, https
// with a fresh self-signed certificate whose PEM is returned as the CA.
func serving(withTLS bool) (scheme string, caPEM []byte, serverTLS *tls.Config, err error) {
	if !withTLS {
		return "http", nil, nil, nil
	}
	c, err := loopbackcert.New("faultproxy", 24*time.Hour)
	if err != nil {
		return "", nil, nil, fmt.Errorf("faultproxy: %w", err)
	}
	cert, err := c.TLS()
	if err != nil {
		return "", nil, nil, fmt.Errorf("faultproxy: %w", err)
	}
	// NextProtos without "h2": clients stay on HTTP/1.1, so connections
	// can be hijacked.
	serverTLS = &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}
	return "https", c.PEM, serverTLS, nil
}

// resetAfterResponse is the reverse proxy's ModifyResponse: a FaultResetAfter decision
// turns the upstream's answer into errResetAfter.
func resetAfterResponse(resp *http.Response) error {
	if d, _ := resp.Request.Context().Value(ctxKey{}).(*Decision); d != nil && d.Fault == FaultResetAfter {
		if d.Verb != VerbWatch {
			// Let the server finish: the request did happen.
			_, _ = io.Copy(io.Discard, resp.Body)
		}
		return errResetAfter // the proxy closes the body
	}
	return nil
}

// upstreamError is the reverse proxy's ErrorHandler: a reset for errResetAfter, else 502.
func upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errResetAfter) {
		reset(w)
		return
	}
	writeStatus(w, http.StatusBadGateway, "InternalError", "faultproxy: upstream: "+err.Error(), 0)
}

// listen opens p.addr (the port New got, after the first call) and serves it.
// The caller holds p.lifecycle (or is New).
func (p *Proxy) listen() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("faultproxy: %w", err)
	}
	p.addr = ln.Addr().String()
	if p.serverTLS != nil {
		ln = tls.NewListener(ln, p.serverTLS)
	}
	// Closed by Down and by srv.Close (which Close calls): only once.
	ln = &onceCloseListener{Listener: ln}
	p.ln = ln
	go func() { _ = p.srv.Serve(ln) }()
	return nil
}

type onceCloseListener struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *onceCloseListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// connState tracks client connections, and closes those that go idle during
// an outage.
func (p *Proxy) connState(c net.Conn, st http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch st {
	case http.StateHijacked, http.StateClosed:
		delete(p.conns, c)
		return
	}
	p.conns[c] = st
	if p.down && st == http.StateIdle {
		delete(p.conns, c)
		_ = c.Close()
	}
}

// Down starts an outage: new connections are refused, idle keep-alive
// connections are closed, requests being served complete normally, and a
// request that still arrives on an open connection is reset without being
// forwarded (FaultDown). Idempotent; safe while requests flow.
func (p *Proxy) Down() {
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()
	p.mu.Lock()
	p.down = true
	for c, st := range p.conns {
		if st == http.StateIdle || st == http.StateNew {
			delete(p.conns, c)
			_ = c.Close()
		}
	}
	p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
}

// Up ends an outage: the proxy listens again on the same address (URL and
// Kubeconfig stay valid) and forwards requests as before. Idempotent; safe
// while requests flow. It fails after Close, or when another process took
// the port in the meantime.
func (p *Proxy) Up() error {
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()
	if p.closed {
		return errors.New("faultproxy: Up after Close")
	}
	if p.ln != nil {
		return nil
	}
	// Forward before the first new connection can arrive.
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
	if err := p.listen(); err != nil {
		p.mu.Lock()
		p.down = true
		p.mu.Unlock()
		return err
	}
	return nil
}

// URL is the proxy's base URL, http://127.0.0.1:<port> (https with
// Config.TLS).
func (p *Proxy) URL() string { return p.url }

// CAData is the PEM certificate clients must trust with Config.TLS (rest.Config
// TLSClientConfig.CAData), nil without.
func (p *Proxy) CAData() []byte { return append([]byte(nil), p.caPEM...) }

// Kubeconfig returns a kubeconfig with one context "faultproxy" whose server
// is the proxy (with certificate-authority-data under Config.TLS), with
// bearerToken as the user's token (empty: no credentials, for an upstream
// tls.Config with a client certificate). clientcmd ignores the token unless
// Config.TLS is set (see the package documentation).
func (p *Proxy) Kubeconfig(bearerToken string) []byte {
	user := "{}"
	if bearerToken != "" {
		tok, _ := json.Marshal(bearerToken) // a JSON string is a YAML string
		user = "\n    token: " + string(tok)
	}
	ca := ""
	if p.caPEM != nil {
		ca = "\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(p.caPEM)
	}
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: faultproxy
  cluster:
    server: ` + p.url + ca + `
users:
- name: faultproxy
  user: ` + user + `
contexts:
- name: faultproxy
  context:
    cluster: faultproxy
    user: faultproxy
current-context: faultproxy
`)
}

// Stats returns a copy of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{
		Requests:  p.stats.Requests,
		Forwarded: p.stats.Forwarded,
		Retries:   p.stats.Retries,
		Injected:  cloneCounts(p.stats.Injected),
		ByVerb:    make(map[string]VerbStats, len(p.stats.ByVerb)),
	}
	for v, vs := range p.stats.ByVerb {
		vs.Injected = cloneCounts(vs.Injected)
		s.ByVerb[v] = vs
	}
	return s
}

// Decisions returns the decisions made so far, in the order the requests
// arrived (matched requests only, those refused by an outage included, with
// Fault FaultDown).
func (p *Proxy) Decisions() []Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Decision(nil), p.decisions...)
}

// Close stops the listener, cuts open connections (watches included) and
// drops idle upstream connections.
func (p *Proxy) Close() error {
	p.lifecycle.Lock()
	defer p.lifecycle.Unlock()
	p.closed = true
	p.ln = nil
	err := p.srv.Close()
	p.client.CloseIdleConnections()
	if u, ok := p.cfg.Upstream.(interface{ CloseIdleConnections() }); ok {
		u.CloseIdleConnections()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func cloneCounts(m map[Fault]int) map[Fault]int {
	c := make(map[Fault]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// decide makes the decision for r and counts the request. During an outage
// every request gets a decision with FaultDown (matched or not; only matched
// ones are recorded in Decisions and counted as retries).
func (p *Proxy) decide(r *http.Request, verb string) *Decision {
	upgrade := r.Header.Get("Upgrade") != ""
	matched := !upgrade && (p.cfg.Match == nil || p.cfg.Match(r))
	idempotent := IsIdempotent(r)
	var object string
	if matched && r.Method == http.MethodPost {
		object = postedObject(r)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Requests++
	vs := p.stats.ByVerb[verb]
	if vs.Injected == nil {
		vs.Injected = map[Fault]int{}
	}
	vs.Requests++
	defer func() { p.stats.ByVerb[verb] = vs }()
	inject := func(f Fault) {
		p.stats.Injected[f]++
		vs.Injected[f]++
	}
	if !matched {
		if p.down {
			inject(FaultDown)
			return &Decision{Method: r.Method, Path: r.URL.Path, Verb: verb, Fault: FaultDown}
		}
		return nil
	}

	key := pathKey{r.Method, r.URL.Path, object}
	ps := p.paths[key]
	if ps == nil {
		ps = &pathState{}
		p.paths[key] = ps
	}
	d := &Decision{Method: r.Method, Path: r.URL.Path, Verb: verb, Object: object, N: ps.n, Retry: ps.faulted}
	if d.Retry {
		p.stats.Retries++
		vs.Retries++
	}
	defer func() {
		ps.faulted = d.Fault != ""
		p.decisions = append(p.decisions, *d)
		if d.Fault != "" {
			inject(d.Fault)
		}
	}()
	if p.down {
		// No n consumed: the decisions stay independent of outage timing.
		d.Fault = FaultDown
		return d
	}
	ps.n++

	rates := p.cfg.NonIdempotent
	if idempotent {
		rates = p.cfg.Idempotent
	}
	rnd := p.source(d)
	uFault, uLatency, uDuration := rnd.Float64(), rnd.Float64(), rnd.Float64()
	acc := 0.0
	for _, e := range rates.exclusive() {
		acc += e.rate
		if e.rate > 0 && uFault < acc {
			d.Fault = e.f
			break
		}
	}
	if rates.Latency > 0 && uLatency < rates.Latency {
		d.Latency = p.cfg.LatencyMin
		if span := p.cfg.LatencyMax - p.cfg.LatencyMin; span > 0 {
			d.Latency += time.Duration(uDuration * float64(span))
		}
		inject(FaultLatency)
	}
	return d
}

// source is the random source of one decision: a function of the seed,
// method, path, verb and n only (see Determinism).
func (p *Proxy) source(d *Decision) *mrand.Rand {
	h := fnv.New64a()
	for _, s := range []string{d.Method, d.Path, d.Verb, d.Object, strconv.Itoa(d.N)} {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	return mrand.New(mrand.NewPCG(splitmix64(uint64(p.cfg.Seed)), splitmix64(h.Sum64())))
}

// maxPeek bounds how much of a POST body is read to find the object name.
const maxPeek = 1 << 20

// postedObject returns metadata.name (else metadata.generateName) of the JSON
// object r's body holds, "" when there is none, and leaves r.Body readable
// from the start.
func postedObject(r *http.Request) string {
	if r.Body == nil || r.Body == http.NoBody {
		return ""
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil {
		return ""
	}
	var obj struct {
		Metadata struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	if json.Unmarshal(head, &obj) != nil {
		return ""
	}
	if obj.Metadata.Name != "" {
		return obj.Metadata.Name
	}
	return obj.Metadata.GenerateName
}

// splitmix64 is SplitMix64's output function: it spreads nearby inputs (seeds
// 1, 2, 3) over the whole range.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (p *Proxy) countForwarded(verb string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Forwarded++
	vs := p.stats.ByVerb[verb]
	vs.Forwarded++
	p.stats.ByVerb[verb] = vs
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if p.cfg.Record {
		done, err := p.record(r, &w)
		if err != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "faultproxy: reading the request body: "+err.Error(), 0)
			return
		}
		defer done()
	}
	verb := Classify(r)
	d := p.decide(r, verb)
	if d != nil && d.Latency > 0 {
		t := time.NewTimer(d.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if d != nil {
		switch d.Fault {
		case FaultDown:
			reset(w)
			return
		case FaultTooManyRequests:
			msg := "Too many requests, please try again later."
			writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", msg, p.cfg.RetryAfterSeconds)
			return
		case FaultInternalError:
			writeStatus(w, http.StatusInternalServerError, "InternalError",
				"Internal error occurred: faultproxy: injected internal error", 0)
			return
		case FaultServiceUnavailable:
			writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable",
				"the server is currently unable to handle the request", 0)
			return
		case FaultGatewayTimeout:
			writeStatus(w, http.StatusGatewayTimeout, "Timeout",
				"Timeout: request did not complete within the allotted timeout", 0)
			return
		case FaultResetBefore:
			reset(w)
			return
		case FaultResetAfter:
			r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, d))
		}
	}
	p.countForwarded(verb)
	p.rp.ServeHTTP(w, r)
}

// reset hijacks the client connection and closes it with TCP RST, without
// a response.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (cannot happen on this HTTP/1.1 server): the
		// closest thing is aborting the handler.
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn() // no close_notify: an abrupt reset
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// status is metav1.Status as the API server encodes it.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   struct{}       `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason"`
	Details    *statusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

type statusDetails struct {
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
}

func writeStatus(w http.ResponseWriter, code int, reason, msg string, retryAfter int) {
	s := status{Kind: "Status", APIVersion: "v1", Status: "Failure", Message: msg, Reason: reason, Code: code}
	if retryAfter > 0 {
		s.Details = &statusDetails{RetryAfterSeconds: retryAfter}
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	body, _ := json.Marshal(s)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}
