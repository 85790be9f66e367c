package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

// TransientError is a request that failed only for reasons a later attempt can fix: 429, a
// 5xx other than 501, or a dropped connection, on every attempt the retry settings allowed.
// It says how often the provider tried, so a diagnostic can tell the user that the failure was
// the cluster's, that it was retried, and that running apply again is safe. Unwrap gives the
// last attempt's error, so apierrors' checks still see its status.
type TransientError struct {
	Err      error
	Attempts int
	Elapsed  time.Duration
}

func (e *TransientError) Error() string {
	return fmt.Sprintf("%v (tried %d %s over %s; the API server or the network failed every time)",
		e.Err, e.Attempts, plural(e.Attempts, "time", "times"), e.Elapsed.Round(100*time.Millisecond))
}

func (e *TransientError) Unwrap() error { return e.Err }

// IsTransient reports whether err is a failure that applying again can fix: a TransientError,
// or an error of that kind that reached the caller by another path.
func IsTransient(err error) bool {
	var t *TransientError
	return errors.As(err, &t) || transientKind(err)
}

// transientKind reports whether err is a throttled, unavailable or dropped request.
func transientKind(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if code := int(status.Status().Code); code != 0 {
			return retryableStatus(code)
		}
		// client-go turns a reset or EOF into a StatusError without a code.
	}
	return retryableError(err)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tally counts the HTTP attempts made for one operation of the Client: the transport adds one
// for every request it sends with a context carrying the tally.
type tally struct {
	attempts atomic.Int64
	clock    retrypolicy.Clock
	start    time.Time
}

type tallyKey struct{}

// withTally returns ctx carrying a new tally on clock, unless it carries one already (an
// operation made of others, such as Create reading back, counts as one).
func withTally(ctx context.Context, clock retrypolicy.Clock) (context.Context, *tally) {
	if t, ok := ctx.Value(tallyKey{}).(*tally); ok {
		return ctx, t
	}
	t := &tally{clock: clock, start: clock.Now()}
	return context.WithValue(ctx, tallyKey{}, t), t
}

func countAttempt(ctx context.Context) {
	if t, ok := ctx.Value(tallyKey{}).(*tally); ok {
		t.attempts.Add(1)
	}
}

// explain wraps a transient err in a TransientError with the attempts counted so far.
func (t *tally) explain(err error) error {
	if err == nil || !transientKind(err) {
		return err
	}
	var already *TransientError
	if errors.As(err, &already) {
		return err
	}
	return &TransientError{Err: err, Attempts: max(int(t.attempts.Load()), 1), Elapsed: t.elapsed()}
}

// elapsed is the time since the operation started.
func (t *tally) elapsed() time.Duration {
	return t.clock.Now().Sub(t.start)
}

// rawOf is res.Raw() with the API server's own error: the JSON client's decoder cannot turn a
// Status body into an error, so client-go reports "unknown" with the right code; the Status
// body it keeps carries the message, reason and details, which the user should see.
func rawOf(res rest.Result) ([]byte, error) {
	raw, err := res.Raw()
	if err == nil || len(raw) == 0 {
		return raw, err
	}
	var st metav1.Status
	if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" && st.Status == metav1.StatusFailure && st.Code != 0 {
		return raw, &apierrors.StatusError{ErrStatus: st}
	}
	return raw, err
}
