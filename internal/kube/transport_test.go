package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy/retrypolicytest"
)

func clientsetFor(t *testing.T, api *fakeAPI, r RetrySettings) kubernetes.Interface {
	t.Helper()
	return clientsetOf(t, NewClient(api.settings(r)))
}

func clientsetOf(t *testing.T, c *Client) kubernetes.Interface {
	t.Helper()
	cs, err := c.Clientset(context.Background())
	if err != nil {
		t.Fatalf("Clientset: %v", err)
	}
	return cs
}

func TestGetRetriedOn503(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n <= 2 {
			writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
			return
		}
		writeObject(w, http.StatusOK, namespaceJSON("team-a"))
	})
	cs := clientsetFor(t, api, fastRetry)

	ns, err := cs.CoreV1().Namespaces().Get(context.Background(), "team-a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if ns.Name != "team-a" {
		t.Errorf("name = %q", ns.Name)
	}
	if got := api.count(); got != 3 {
		t.Errorf("server saw %d requests, want 3", got)
	}
	// client-go's bearer token wrapper sits outside our layer: every retry
	// still carries the credentials.
	for i, r := range api.seen() {
		if r.Authorization != "Bearer "+testToken {
			t.Errorf("request %d: Authorization header missing or wrong", i+1)
		}
	}
}

func TestGetRetriesExhaustedReturnsLastResponse(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
	})
	cs := clientsetFor(t, api, RetrySettings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})

	_, err := cs.CoreV1().Namespaces().Get(context.Background(), "x", metav1.GetOptions{})
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("want ServiceUnavailable, got %T %v", err, err)
	}
	if got := api.count(); got != 3 {
		t.Errorf("server saw %d requests, want 3 (max_attempts)", got)
	}
}

func TestCreateNotRetried(t *testing.T) {
	// No Retry-After on the 503, so client-go's own Retry-After retry stays
	// out of the picture: any extra request would be ours.
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
	})
	cs := clientsetFor(t, api, fastRetry)

	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{})
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("want ServiceUnavailable, got %T %v", err, err)
	}
	if got := api.count(); got != 1 {
		t.Errorf("server saw %d requests, want 1 (POST must not be retried)", got)
	}
	if m := api.seen()[0].Method; m != http.MethodPost {
		t.Errorf("method = %s, want POST", m)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "1")
			return
		}
		writeObject(w, http.StatusOK, namespaceJSON("team-a"))
	})
	// Exponential backoff alone would wait a few milliseconds.
	clock := retrypolicytest.NewClock()
	cs := clientsetOf(t, onClock(NewClient(api.settings(RetrySettings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Second})), clock))

	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "team-a", metav1.GetOptions{}); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if waits := clock.Waits(); !slices.Equal(waits, []time.Duration{time.Second}) {
		t.Errorf("waited %v before the retry, want the Retry-After of 1s", waits)
	}
	if got := api.count(); got != 2 {
		t.Errorf("server saw %d requests, want 2", got)
	}
}

func TestRetryAfterCappedAtMaxBackoff(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "3600")
			return
		}
		writeObject(w, http.StatusOK, namespaceJSON("team-a"))
	})
	clock := retrypolicytest.NewClock()
	cs := clientsetOf(t, onClock(NewClient(api.settings(RetrySettings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 50 * time.Millisecond})), clock))

	// Retry-After asks for an hour.
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "team-a", metav1.GetOptions{}); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if waits := clock.Waits(); !slices.Equal(waits, []time.Duration{50 * time.Millisecond}) {
		t.Errorf("waited %v before the retry, want the Retry-After capped at max_backoff, 50ms", waits)
	}
	if got := api.count(); got != 2 {
		t.Errorf("server saw %d requests, want 2", got)
	}
}

func TestNoDoubleRetryWithClientGo(t *testing.T) {
	// A 429 with an integer Retry-After is something client-go retries on
	// its own (10 times). Once our budget is spent, client-go must not start
	// another round: the server sees exactly max_attempts requests.
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "0")
	})
	cs := clientsetFor(t, api, RetrySettings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})

	_, err := cs.CoreV1().Namespaces().Get(context.Background(), "team-a", metav1.GetOptions{})
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("want TooManyRequests, got %T %v", err, err)
	}
	if got := api.count(); got != 3 {
		t.Errorf("server saw %d requests, want 3", got)
	}
	// The Status body reaches the caller unchanged.
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Message != "TooManyRequests from the fake API server" || status.Status().Details == nil {
		t.Errorf("status body not passed through: %v", err)
	}
}

func TestNotFoundReachesCaller(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "")
	})
	cs := clientsetFor(t, api, fastRetry)

	_, err := cs.CoreV1().Namespaces().Get(context.Background(), "gone", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("want NotFound, got %T %v", err, err)
	}
	if got := api.count(); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

func TestConflictReachesCallerAndIsNotRetried(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict, "")
	})
	cs := clientsetFor(t, api, fastRetry)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", ResourceVersion: "7"}}
	_, err := cs.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("want Conflict, got %T %v", err, err)
	}
	if got := api.count(); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
	if m := api.seen()[0].Method; m != http.MethodPut {
		t.Errorf("method = %s, want PUT", m)
	}
}

func TestNotImplementedNotRetried(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusNotImplemented, metav1.StatusReasonMethodNotAllowed, "")
	})
	cs := clientsetFor(t, api, fastRetry)

	_, err := cs.CoreV1().Namespaces().Get(context.Background(), "team-a", metav1.GetOptions{})
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusNotImplemented {
		t.Fatalf("want a 501 status error, got %T %v", err, err)
	}
	if got := api.count(); got != 1 {
		t.Errorf("server saw %d requests, want 1 (501 is not retried)", got)
	}
}

func TestServerSideApplyRetried(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
			return
		}
		writeObject(w, http.StatusOK, namespaceJSON("team-a"))
	})
	cs := clientsetFor(t, api, fastRetry)

	_, err := cs.CoreV1().Namespaces().Apply(context.Background(),
		applycorev1.Namespace("team-a").WithLabels(map[string]string{"a": "b"}),
		metav1.ApplyOptions{FieldManager: "terraform-provider-hyperpod", Force: true})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	seen := api.seen()
	if len(seen) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(seen))
	}
	for _, r := range seen {
		if r.Method != http.MethodPatch || !strings.HasPrefix(r.ContentType, "application/apply-patch+") {
			t.Errorf("request %s %q, want a server-side apply PATCH", r.Method, r.ContentType)
		}
	}
}

func TestMergePatchNotRetried(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
	})
	cs := clientsetFor(t, api, fastRetry)

	_, err := cs.CoreV1().Namespaces().Patch(context.Background(), "team-a", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{})
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("want ServiceUnavailable, got %T %v", err, err)
	}
	if got := api.count(); got != 1 {
		t.Errorf("server saw %d requests, want 1 (merge patch is not retried)", got)
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	// A PUT, because client-go itself only retries connection errors for GET.
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n <= 2 {
			dropConnection(t, w)
			return
		}
		writeObject(w, http.StatusOK, namespaceJSON("team-a"))
	})
	cs := clientsetFor(t, api, fastRetry)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	if _, err := cs.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got := api.count(); got != 3 {
		t.Errorf("server saw %d requests, want 3", got)
	}
}

func TestContextCancellationStopsRetries(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
	})
	cs := clientsetFor(t, api, RetrySettings{MaxAttempts: 5, MinBackoff: time.Hour, MaxBackoff: time.Hour})

	// The context ends during the hour's wait; a wait that ignored it would outlast the minute.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the backoff wait ignored the context")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("want context.DeadlineExceeded, got %T %v", err, err)
	}
	if got := api.count(); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		method, contentType string
		header              map[string]string
		want                bool
	}{
		{method: http.MethodGet, want: true},
		{method: http.MethodHead, want: true},
		{method: http.MethodOptions, want: true},
		{method: http.MethodPut, contentType: "application/json", want: true},
		{method: http.MethodDelete, want: true},
		{method: http.MethodPatch, contentType: "application/apply-patch+yaml", want: true},
		{method: http.MethodPatch, contentType: "application/apply-patch+yaml; charset=utf-8", want: true},
		{method: http.MethodPatch, contentType: "application/apply-patch+cbor", want: true},
		{method: http.MethodPatch, contentType: "application/merge-patch+json", want: false},
		{method: http.MethodPatch, contentType: "application/strategic-merge-patch+json", want: false},
		{method: http.MethodPatch, contentType: "application/json-patch+json", want: false},
		{method: http.MethodPatch, want: false},
		{method: http.MethodPost, contentType: "application/json", want: false},
		{method: "CONNECT", want: false},
		{method: http.MethodGet, header: map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}, want: false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %v", tt.method, tt.contentType, tt.header), func(t *testing.T) {
			req, err := http.NewRequest(tt.method, "https://example.com/api/v1/namespaces", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			if got := retryable(req); got != tt.want {
				t.Errorf("retryable = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestShouldRetry(t *testing.T) {
	ctx := context.Background()
	for code, want := range map[int]bool{
		200: false, 201: false, 400: false, 401: false, 403: false, 404: false, 409: false, 422: false,
		429: true, 500: true, 501: false, 502: true, 503: true, 504: true,
	} {
		if got := shouldRetry(ctx, &http.Response{StatusCode: code}, nil); got != want {
			t.Errorf("status %d: shouldRetry = %v, want %v", code, got, want)
		}
	}

	connRefused := &url.Error{Op: "Get", URL: "https://x", Err: errors.New("dial tcp 10.0.0.1:443: connect: connection refused")}
	if !shouldRetry(ctx, nil, connRefused) {
		t.Error("connection refused should be retried")
	}
	for _, err := range []error{
		&url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}},
		&url.Error{Op: "Get", URL: "https://x", Err: x509.HostnameError{Host: "x"}},
		&url.Error{Op: "Get", URL: "https://x", Err: errors.New("http: server gave HTTP response to HTTPS client")},
		context.Canceled,
		fmt.Errorf("wrapped: %w", context.DeadlineExceeded),
	} {
		if shouldRetry(ctx, nil, err) {
			t.Errorf("%v should not be retried", err)
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if shouldRetry(cancelled, &http.Response{StatusCode: 503}, nil) {
		t.Error("a done context must stop retries")
	}
}

func TestBackoff(t *testing.T) {
	minWait, maxWait := 100*time.Millisecond, 2*time.Second
	for attempt := 0; attempt < 10; attempt++ {
		// Without a header the wait is retrypolicy.Backoff's (tested there).
		if d, fromHeader := backoff(minWait, maxWait, attempt, nil); fromHeader || d < minWait || d > maxWait {
			t.Fatalf("attempt %d: wait %s (from header %v), want [%s, %s] not from a header", attempt, d, fromHeader, minWait, maxWait)
		}
	}

	resp := &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": []string{"1"}}}
	if d, ok := backoff(minWait, maxWait, 0, resp); !ok || d != time.Second {
		t.Errorf("Retry-After 1: got %s, %v", d, ok)
	}
	resp.Header.Set("Retry-After", "3600")
	if d, ok := backoff(minWait, maxWait, 0, resp); !ok || d != maxWait {
		t.Errorf("Retry-After 3600: got %s, %v; want capped at %s", d, ok, maxWait)
	}
	resp.Header.Set("Retry-After", "soon")
	if _, ok := backoff(minWait, maxWait, 0, resp); ok {
		t.Error("unparsable Retry-After must fall back to exponential backoff")
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"7", 7 * time.Second, true},
		{" 2 ", 2 * time.Second, true},
		{"-1", 0, false},
		{"Fri, 01 May 2026 12:00:03 GMT", 3 * time.Second, true},
		{"Friday, 01-May-26 12:00:05 GMT", 5 * time.Second, true}, // RFC 850
		{"Fri May  1 12:00:04 2026", 4 * time.Second, true},       // ANSI C
		{"Fri, 01 May 2026 11:00:00 GMT", 0, true},                // in the past
		{"later", 0, false},
		{"99999999999999999", time.Duration(1<<63 - 1), true},
	}
	for _, tt := range tests {
		resp := &http.Response{Header: http.Header{}}
		if tt.header != "" {
			resp.Header.Set("Retry-After", tt.header)
		}
		got, ok := retryAfter(resp, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Retry-After %q: got %s, %v; want %s, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRoundTripDoesNotModifyRequest(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
			return
		}
		writeObject(w, http.StatusOK, namespaceJSON("team-a"))
	})
	rt := newRetryTransport(api.Client().Transport, fastRetry, retrypolicy.Wall)
	body := strings.NewReader(`{"kind":"Namespace"}`)
	req, err := http.NewRequest(http.MethodPut, api.URL+"/api/v1/namespaces/team-a", body)
	if err != nil {
		t.Fatal(err)
	}
	origBody := req.Body
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
	if req.Body != origBody {
		t.Error("RoundTrip replaced the caller's request body")
	}
	if api.count() != 2 {
		t.Errorf("server saw %d requests, want 2", api.count())
	}
}
