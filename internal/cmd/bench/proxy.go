package main

import (
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

// recordedRequest is one request the proxy forwarded, kept whole so that it can be replayed.
type recordedRequest = faultproxy.Recorded

// countingProxy is a faultproxy on 127.0.0.1 in front of the API server that injects nothing.
// It adds the admin credentials (clients talk plain HTTP to it, without credentials) and
// records every request of the current measurement window.
type countingProxy struct {
	URL string
	p   *faultproxy.Proxy
}

// startCountingProxy forwards to cfg.Host with cfg's credentials (rest.TransportFor, as the
// acceptance tests' request-counting proxy does).
func startCountingProxy(cfg *rest.Config) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("API server URL %q: %w", cfg.Host, err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the API server transport: %w", err)
	}
	p, err := faultproxy.New(target, nil, faultproxy.Config{Upstream: rt, Record: true})
	if err != nil {
		return nil, fmt.Errorf("counting proxy: %w", err)
	}
	return &countingProxy{URL: p.URL(), p: p}, nil
}

// reset starts a new measurement window.
func (p *countingProxy) reset() { p.p.ResetRecorded() }

// snapshot returns the requests of the current window, in the order they arrived.
func (p *countingProxy) snapshot() []recordedRequest { return p.p.Recorded() }

// counts counts the requests of the current window.
func (p *countingProxy) counts() requestCounts { return countRequests(p.snapshot()) }

func (p *countingProxy) close() error { return p.p.Close() }

// requestCounts are the requests of one measured command, counted.
type requestCounts struct {
	Total          int            `json:"total"`
	ByVerb         map[string]int `json:"by_verb,omitempty"`
	ByResource     map[string]int `json:"by_resource,omitempty"`
	ByVerbResource map[string]int `json:"by_verb_resource,omitempty"` // "list clusterqueues"
	ByOperation    map[string]int `json:"by_operation,omitempty"`     // SageMaker: "ListComputeQuotas"
	Failed         int            `json:"failed"`                     // see countRequests and countCalls
}

func countRequests(reqs []recordedRequest) requestCounts {
	c := requestCounts{ByVerb: map[string]int{}, ByResource: map[string]int{}, ByVerbResource: map[string]int{}}
	for _, r := range reqs {
		c.Total++
		verb := benchVerb(r.Class)
		c.ByVerb[verb]++
		c.ByResource[r.Class.ResourceLabel()]++
		c.ByVerbResource[verb+" "+r.Class.ResourceLabel()]++
		// 404 answers existence checks and 409 conflicts are handled by the provider:
		// neither is a failure of the run.
		if r.Status >= 400 && r.Status != http.StatusNotFound && r.Status != http.StatusConflict {
			c.Failed++
		}
	}
	return c
}
