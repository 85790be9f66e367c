package faultproxy_test

// Outages: Down refuses new connections and closes idle ones while a request in flight
// completes, and Up serves again.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

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
