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
// drawn from a math/rand source seeded with Config.Seed: at most one of the
// exclusive faults (429 with Retry-After, 500, 503, 504, reset before
// forwarding, reset after forwarding), and independently added latency, which
// is waited before the request is forwarded or the fault is answered. Status
// faults are answered with a metav1.Status JSON body as the API server writes
// it. Resets close the client connection with TCP RST and no response.
//
// Requests are split into idempotent ones (Config.Idempotent rates) and the
// others (Config.NonIdempotent), see IsIdempotent. Upgrade requests (exec,
// attach, port-forward) are forwarded without faults. A watch only gets
// faults before its response starts; a stream in progress is never cut.
//
// # Determinism
//
// The decisions form one sequence per proxy, drawn under a mutex as requests
// arrive (three draws per matched request, none for unmatched ones). The same
// seed over the same sequence of requests gives the same decisions. With
// concurrent clients the sequence is the same, but which request gets which
// decision depends on arrival order. Note that Go's http.Transport
// transparently resends an idempotent request (GET, HEAD, ...) when a reused
// keep-alive connection breaks before any response byte, so a reset on such a
// request can be absorbed below the client and shows up here as one more
// request (with its own decision).
package faultproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand"
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
)

// Faults lists every kind, in the order Stats.String prints them.
var Faults = []Fault{
	FaultTooManyRequests, FaultInternalError, FaultServiceUnavailable, FaultGatewayTimeout,
	FaultResetBefore, FaultResetAfter, FaultLatency,
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
	// Seed seeds the decision sequence.
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
	// others are forwarded unchanged and consume no decision. See PathPrefix.
	Match func(*http.Request) bool

	// TLS makes the proxy serve HTTPS (HTTP/1.1) with a self-signed
	// certificate for 127.0.0.1; clients trust Proxy.CAData.
	TLS bool
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
	Fault   Fault         // "" when forwarded normally
	Latency time.Duration // 0 when none was added
}

// VerbStats counts the requests of one verb.
type VerbStats struct {
	Requests  int // received
	Forwarded int // reached upstream (reset-after included)
	Injected  map[Fault]int
}

// Stats counts what the proxy did.
type Stats struct {
	Requests  int // received
	Forwarded int // reached upstream (reset-after included)
	Injected  map[Fault]int
	ByVerb    map[string]VerbStats
}

// String is a table of requests, forwarded requests and injected faults per
// verb, for t.Log.
func (s Stats) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprint(tw, "verb\trequests\tforwarded\t")
	for _, f := range Faults {
		fmt.Fprintf(tw, "%s\t", f)
	}
	fmt.Fprintln(tw)
	row := func(name string, req, fwd int, inj map[Fault]int) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t", name, req, fwd)
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
		row(v, vs.Requests, vs.Forwarded, vs.Injected)
	}
	row("total", s.Requests, s.Forwarded, s.Injected)
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
	rnd       *mrand.Rand
	stats     Stats
	decisions []Decision
}

type ctxKey struct{}

// errResetAfter makes ModifyResponse hand over to the ErrorHandler, which
// resets the client connection.
var errResetAfter = errors.New("faultproxy: reset after forwarding")

// New starts a proxy on 127.0.0.1 forwarding to target (scheme, host and an
// optional path prefix) with upstreamTLS (nil for plain http or the default
// TLS settings). Close it when done.
func New(target *url.URL, upstreamTLS *tls.Config, cfg Config) (*Proxy, error) {
	if target == nil || target.Host == "" || (target.Scheme != "http" && target.Scheme != "https") {
		return nil, fmt.Errorf("faultproxy: target %v must be an absolute http or https URL", target)
	}
	if err := cfg.Idempotent.validate("idempotent"); err != nil {
		return nil, err
	}
	if err := cfg.NonIdempotent.validate("non-idempotent"); err != nil {
		return nil, err
	}
	if cfg.LatencyMin < 0 || cfg.LatencyMax < 0 {
		return nil, errors.New("faultproxy: negative latency")
	}
	if cfg.RetryAfterSeconds == 0 {
		cfg.RetryAfterSeconds = 1
	}
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	scheme := "http"
	var caPEM []byte
	if cfg.TLS {
		cert, pemBytes, err := selfSigned()
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("faultproxy: %w", err)
		}
		caPEM = pemBytes
		// NextProtos without "h2": clients stay on HTTP/1.1, so connections
		// can be hijacked.
		ln = tls.NewListener(ln, &tls.Config{
			Certificates: []tls.Certificate{cert},
			NextProtos:   []string{"http/1.1"},
			MinVersion:   tls.VersionTLS12,
		})
		scheme = "https"
	}
	p := &Proxy{
		cfg:    cfg,
		url:    scheme + "://" + ln.Addr().String(),
		caPEM:  caPEM,
		client: tr,
		rnd:    mrand.New(mrand.NewSource(cfg.Seed)),
		stats:  Stats{Injected: map[Fault]int{}, ByVerb: map[string]VerbStats{}},
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport:     tr,
		FlushInterval: -1, // watches stream
		ModifyResponse: func(resp *http.Response) error {
			if d, _ := resp.Request.Context().Value(ctxKey{}).(*Decision); d != nil && d.Fault == FaultResetAfter {
				if d.Verb != VerbWatch {
					// Let the server finish: the request did happen.
					_, _ = io.Copy(io.Discard, resp.Body)
				}
				return errResetAfter // the proxy closes the body
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, errResetAfter) {
				reset(w)
				return
			}
			writeStatus(w, http.StatusBadGateway, "InternalError", "faultproxy: upstream: "+err.Error(), 0)
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
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
		Injected:  cloneCounts(p.stats.Injected),
		ByVerb:    make(map[string]VerbStats, len(p.stats.ByVerb)),
	}
	for v, vs := range p.stats.ByVerb {
		vs.Injected = cloneCounts(vs.Injected)
		s.ByVerb[v] = vs
	}
	return s
}

// Decisions returns the decisions made so far, in the order they were drawn
// (matched requests only).
func (p *Proxy) Decisions() []Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Decision(nil), p.decisions...)
}

// Close stops the listener, cuts open connections (watches included) and
// drops idle upstream connections.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.client.CloseIdleConnections()
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

// decide draws the decision for r and counts the request.
func (p *Proxy) decide(r *http.Request, verb string) *Decision {
	upgrade := r.Header.Get("Upgrade") != ""
	matched := !upgrade && (p.cfg.Match == nil || p.cfg.Match(r))

	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Requests++
	vs := p.stats.ByVerb[verb]
	if vs.Injected == nil {
		vs.Injected = map[Fault]int{}
	}
	vs.Requests++
	defer func() { p.stats.ByVerb[verb] = vs }()
	if !matched {
		return nil
	}

	rates := p.cfg.NonIdempotent
	if IsIdempotent(r) {
		rates = p.cfg.Idempotent
	}
	// Always three draws, so one request's outcome never shifts the others.
	uFault, uLatency, uDuration := p.rnd.Float64(), p.rnd.Float64(), p.rnd.Float64()

	d := &Decision{Method: r.Method, Path: r.URL.Path, Verb: verb}
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
		p.stats.Injected[FaultLatency]++
		vs.Injected[FaultLatency]++
	}
	if d.Fault != "" {
		p.stats.Injected[d.Fault]++
		vs.Injected[d.Fault]++
	}
	p.decisions = append(p.decisions, *d)
	return d
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

// Classify returns the Kubernetes verb of r (one of the Verb constants):
//
//	/api/v1/[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
//	/apis/<g>/<v>/[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
//
// /api/v1/namespaces/<name> is the Namespace object. A GET of a collection is
// a LIST, with watch=true (or the legacy /watch/ prefix) a WATCH.
func Classify(r *http.Request) string {
	name, watch, resource := parsePath(r.URL.Path)
	if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
		watch = true
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case !resource:
			return VerbGet
		case watch:
			return VerbWatch
		case name == "":
			return VerbList
		default:
			return VerbGet
		}
	case http.MethodPost:
		return VerbCreate
	case http.MethodPut:
		return VerbUpdate
	case http.MethodPatch:
		if isApply(r.Header.Get("Content-Type")) {
			return VerbApply
		}
		return VerbPatch
	case http.MethodDelete:
		if resource && name == "" {
			return VerbDeleteCollection
		}
		return VerbDelete
	default:
		return VerbOther
	}
}

// parsePath returns the object name ("" for a collection), whether the legacy
// /watch/ prefix is used, and whether the path addresses a resource at all.
func parsePath(p string) (name string, watch, resource bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var rest []string
	switch {
	case len(parts) > 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return "", false, false
	}
	if rest[0] == "watch" {
		watch, rest = true, rest[1:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" && (len(rest) != 3 || rest[2] != "status" && rest[2] != "finalize") {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return "", watch, false
	}
	if len(rest) >= 2 {
		name = rest[1]
	}
	return name, watch, true
}

// selfSigned makes a certificate for 127.0.0.1, valid for a day, that is its
// own CA.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "faultproxy"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
