package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// recordedRequest is one request the proxy forwarded, kept whole so that it can be replayed.
type recordedRequest struct {
	Method      string
	URI         string // path and query
	ContentType string
	Accept      string
	Body        []byte
	Status      int // 0 while the response is still streaming (a watch)
	Class       apiRequest
}

// countingProxy is a reverse proxy on 127.0.0.1 in front of the API server. It adds the
// admin credentials (clients talk plain HTTP to it, without credentials) and records every
// request of the current measurement window.
type countingProxy struct {
	URL string

	srv *http.Server

	mu         sync.Mutex
	generation int // bumped by reset, so late responses of an old window are dropped
	requests   []recordedRequest
}

// startCountingProxy forwards to cfg.Host with cfg's credentials (rest.TransportFor, as the
// acceptance tests' refresh-cost proxy does).
func startCountingProxy(cfg *rest.Config) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("API server URL %q: %w", cfg.Host, err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the API server transport: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("counting proxy: %w", err)
	}
	p := &countingProxy{URL: "http://" + ln.Addr().String()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "bench proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: p.record(rp), ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				http.Error(w, "bench proxy: reading the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rec := recordedRequest{
			Method:      r.Method,
			URI:         r.URL.RequestURI(),
			ContentType: r.Header.Get("Content-Type"),
			Accept:      r.Header.Get("Accept"),
			Body:        body,
			Class:       classify(r.Method, r.URL.Path, r.URL.Query(), r.Header.Get("Content-Type")),
		}
		p.mu.Lock()
		gen, idx := p.generation, len(p.requests)
		p.requests = append(p.requests, rec)
		p.mu.Unlock()

		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)

		p.mu.Lock()
		if p.generation == gen && idx < len(p.requests) {
			p.requests[idx].Status = sw.status()
		}
		p.mu.Unlock()
	})
}

// reset starts a new measurement window.
func (p *countingProxy) reset() {
	p.mu.Lock()
	p.generation++
	p.requests = nil
	p.mu.Unlock()
}

// snapshot returns the requests of the current window, in the order they arrived.
func (p *countingProxy) snapshot() []recordedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]recordedRequest(nil), p.requests...)
}

func (p *countingProxy) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return p.srv.Close()
	}
	return nil
}

// statusWriter remembers the status code; Unwrap lets the reverse proxy flush watch
// responses through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}

// requestCounts are the requests of one measured command, counted.
type requestCounts struct {
	Total          int            `json:"total"`
	ByVerb         map[string]int `json:"by_verb"`
	ByResource     map[string]int `json:"by_resource"`
	ByVerbResource map[string]int `json:"by_verb_resource"` // "list clusterqueues"
	Failed         int            `json:"failed"`           // status >= 400 other than 404 and 409
}

func countRequests(reqs []recordedRequest) requestCounts {
	c := requestCounts{ByVerb: map[string]int{}, ByResource: map[string]int{}, ByVerbResource: map[string]int{}}
	for _, r := range reqs {
		c.Total++
		c.ByVerb[r.Class.Verb]++
		c.ByResource[r.Class.ResourceLabel()]++
		c.ByVerbResource[r.Class.Verb+" "+r.Class.ResourceLabel()]++
		// 404 answers existence checks and 409 conflicts are handled by the provider:
		// neither is a failure of the run.
		if r.Status >= 400 && r.Status != http.StatusNotFound && r.Status != http.StatusConflict {
			c.Failed++
		}
	}
	return c
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
