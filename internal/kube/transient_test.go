package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy/retrypolicytest"
)

// An outage fails in bounded time: the time budget ends the retries long before the attempts
// would, and the error says how often the provider tried. The client's clock moves only by the
// waits, so the attempts are exactly those that the backoffs drawn fit in the budget.
func TestRetryTimeBudgetEndsAnOutage(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "")
	})
	retry := RetrySettings{MaxAttempts: 1000, MinBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, MaxElapsed: 300 * time.Millisecond}
	clock := retrypolicytest.NewClock()
	c := onClock(NewClient(api.settings(retry)), clock)
	var ns corev1.Namespace
	_, err := c.Get(context.Background(), Namespaces, "", "team-a", &ns)
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("the last status is lost: %T %v", err, err)
	}
	var te *TransientError
	if !errors.As(err, &te) {
		t.Fatalf("want a TransientError, got %T %v", err, err)
	}
	// Every wait but the last is a backoff; the last is what was left of the budget.
	waits := clock.Waits()
	var waited time.Duration
	for i, w := range waits {
		waited += w
		if i < len(waits)-1 && (w < retry.MinBackoff || w > retry.MaxBackoff) {
			t.Errorf("wait %d of %s is outside the backoff's [%s, %s]", i+1, w, retry.MinBackoff, retry.MaxBackoff)
		}
	}
	if waited != retry.MaxElapsed || te.Elapsed != retry.MaxElapsed {
		t.Errorf("waited %v (%s in all), and the error says %s, want the budget of %s spent exactly", waits, waited, te.Elapsed, retry.MaxElapsed)
	}
	if te.Attempts != len(waits)+1 || api.count() != te.Attempts {
		t.Errorf("TransientError counts %d attempts around %d waits, the server saw %d; want one before each wait and one after the last",
			te.Attempts, len(waits), api.count())
	}
	if !strings.Contains(err.Error(), "tried ") || !IsTransient(err) {
		t.Errorf("message does not say how often it was tried: %v", err)
	}
}

// Attempts end the retries before the time budget when they are spent first.
func TestRetryAttemptsEndBeforeTimeBudget(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "")
	})
	c := NewClient(api.settings(RetrySettings{MaxAttempts: 4, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, MaxElapsed: time.Hour}))
	var ns corev1.Namespace
	_, err := c.Get(context.Background(), Namespaces, "", "team-a", &ns)
	var te *TransientError
	if !errors.As(err, &te) || te.Attempts != 4 || api.count() != 4 {
		t.Fatalf("want 4 attempts, got %v (server saw %d)", err, api.count())
	}
	if !strings.Contains(err.Error(), "tried 4 times") {
		t.Errorf("message: %v", err)
	}
}

// A refusal is not transient and carries no retry count: the permission hint belongs to it.
func TestForbiddenIsNotTransient(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, "")
	})
	c := NewClient(api.settings(fastRetry))
	var ns corev1.Namespace
	_, err := c.Get(context.Background(), Namespaces, "", "team-a", &ns)
	if !apierrors.IsForbidden(err) || IsTransient(err) || strings.Contains(err.Error(), "tried") {
		t.Errorf("forbidden: %v (transient %v)", err, IsTransient(err))
	}
	if api.count() != 1 {
		t.Errorf("a refusal was retried: %d requests", api.count())
	}
	// The API server's own message reaches the user, not client-go's "unknown".
	if !strings.Contains(err.Error(), "Forbidden from the fake API server") {
		t.Errorf("the server's message is lost: %v", err)
	}
	ns2 := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	if err := c.Apply(context.Background(), Namespaces, "test", &ns2, nil); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Forbidden from the fake API server") {
		t.Errorf("apply: the server's message is lost: %v", err)
	}
	if err := c.Create(context.Background(), Namespaces, "test", &ns2); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Forbidden from the fake API server") {
		t.Errorf("create: the server's message is lost: %v", err)
	}
}

// A server-side apply answered 409 Conflict is sent again: it is declarative.
func TestApplyRetriesConflict(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict, "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}`))
	})
	c := NewClient(api.settings(fastRetry))
	ns := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	if err := c.Apply(context.Background(), Namespaces, "test", &ns, nil); err != nil {
		t.Fatalf("apply after one conflict: %v", err)
	}
	if api.count() != 2 {
		t.Errorf("server saw %d requests, want 2", api.count())
	}
}

// A conflict that does not go away is reported with what to do, not retried forever.
func TestApplyReportsLastingConflict(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict, "")
	})
	c := NewClient(api.settings(fastRetry))
	ns := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	err := c.Apply(context.Background(), Namespaces, "test", &ns, nil)
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "another writer") || !strings.Contains(err.Error(), "apply again is safe") {
		t.Fatalf("lasting conflict: %v", err)
	}
	if api.count() != maxApplyConflicts+1 {
		t.Errorf("server saw %d requests, want %d", api.count(), maxApplyConflicts+1)
	}
}

// A create that could not connect at all created nothing: it says so, without a read-back.
func TestCreateNeverSentSaysNotCreated(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {})
	s := api.settings(RetrySettings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	api.Close() // nothing listens: every dial is refused
	c := NewClient(s)
	ns := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Annotations: map[string]string{"owner": "me"}}}
	err := c.Create(context.Background(), Namespaces, "test", &ns)
	if err == nil || errors.Is(err, ErrCreateOutcomeUnknown) || !strings.Contains(err.Error(), "The object was not created") ||
		!strings.Contains(err.Error(), "tried 3 times") || !IsTransient(err) {
		t.Fatalf("create against a closed port: %v", err)
	}
}
