package faultproxy_test

// The proxy's decisions follow from its seed: the same requests get the same faults, one after
// another, from concurrent clients, and for creates keyed by their object.

import (
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

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
					for range (uint64(c) + order) % 3 {
						runtime.Gosched()
					}
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
