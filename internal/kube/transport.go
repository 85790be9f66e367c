package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

// LogSubsystem is the terraform-plugin-log subsystem the transport logs to
// (its entries show @module=<provider>.kube).
const LogSubsystem = "kube"

// WrapRetries installs the retrying layer on cfg with rest.Config.Wrap, so
// client-go keeps building the real transport (TLS, proxy, bearer token,
// client certificates, exec credential plugin) and our layer sits directly
// above it. Call it once per config: every call adds another layer. Zero
// fields of r mean DefaultRetry.
//
// What is retried: only requests that are safe to repeat, i.e. GET, HEAD,
// OPTIONS, PUT, DELETE, and PATCH with Content-Type
// application/apply-patch+yaml (or +cbor): server-side apply is declarative,
// so sending it again yields the same object. POST (create) and every other
// PATCH type go straight to the next transport exactly once. A PUT carrying a
// resourceVersion that did succeed before the connection broke comes back as
// 409 Conflict on the retry; a repeated DELETE as 404: callers handle those.
//
// When: on connection errors (not TLS verification failures or other
// configuration errors), 429, and 5xx except 501, for at most MaxAttempts
// attempts and MaxElapsed after the first one, whichever ends first. The wait honours
// Retry-After (seconds or HTTP date, capped at MaxBackoff), otherwise it is
// exponential from MinBackoff to MaxBackoff with jitter. A done request
// context stops the waiting at once.
//
// The last response is handed back unchanged (status, headers, body;
// retryablehttp.PassthroughErrorHandler), so client-go turns it into the
// right apierrors type, with one exception that prevents double retrying:
//
// client-go's rest.Request retries on its own (up to 10 times) every response
// with status 429 or 5xx that carries an integer Retry-After header, whatever
// the method, and GET requests that failed with a connection reset or EOF.
// Left alone, each of those rounds would run our whole retry budget again
// (5 x 11 attempts). So when this layer gives up on a response it wanted to
// retry (its attempts are spent), it removes the Retry-After header from that
// final response; status and body are untouched, and a metav1.Status body
// still carries details.retryAfterSeconds for apierrors.SuggestsClientDelay.
// max_attempts is therefore the real budget for idempotent requests
// answered with an HTTP status. We leave client-go's own behaviour in place
// for what this layer does not retry: a POST or non-apply PATCH answered
// with Retry-After (typically API priority and fairness rejecting the request
// before it ran) is retried by client-go as usual, and a GET whose final
// attempt ended in a connection reset/EOF may be retried by client-go, which
// is bounded (10 rounds, 1s apart) and safe for a GET.
//
// Every attempt, response, retry decision and give-up is logged through
// terraform-plugin-log with the request's own context (which carries the
// Terraform logger and request fields), in the LogSubsystem subsystem, with
// method, URL path, attempt, status or error, and wait. Headers and bodies
// are never logged, so tokens, keys and certificates cannot leak.
func WrapRetries(cfg *rest.Config, r RetrySettings) {
	wrapRetries(cfg, r, retrypolicy.Wall)
}

// wrapRetries is WrapRetries with the clock the retries count their budget in and wait on.
func wrapRetries(cfg *rest.Config, r RetrySettings, clock retrypolicy.Clock) {
	r = r.WithDefaults()
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return newRetryTransport(next, r, clock)
	})
}

// retryTransport is the http.RoundTripper installed by WrapRetries.
type retryTransport struct {
	next     http.RoundTripper
	client   *http.Client // next, for retryablehttp; redirects are returned, not followed
	settings RetrySettings
	clock    retrypolicy.Clock
}

func newRetryTransport(next http.RoundTripper, r RetrySettings, clock retrypolicy.Clock) *retryTransport {
	return &retryTransport{
		clock: clock,
		next:  next,
		client: &http.Client{
			Transport: next,
			// client-go's own http.Client decides about redirects.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		settings: r.WithDefaults(),
	}
}

// WrappedRoundTripper lets client-go's utilities (CloseIdleConnectionsFor and
// friends) see through this layer.
func (t *retryTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// retryable reports whether repeating req is safe.
func retryable(req *http.Request) bool {
	if req.Context().Value(noRetriesKey{}) != nil {
		return false
	}
	if isUpgrade(req) {
		// exec/attach/port-forward streams: leave them to the next transport.
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPatch:
		mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
		if err != nil {
			return false
		}
		return mt == string(types.ApplyYAMLPatchType) || mt == string(types.ApplyCBORPatchType)
	default:
		return false
	}
}

func isUpgrade(req *http.Request) bool {
	if req.Header.Get("Upgrade") != "" {
		return true
	}
	for _, v := range req.Header.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// attemptState follows one logical request through its attempts, for the
// hooks and the give-up decision.
type attemptState struct {
	ctx         context.Context // request context with the log subsystem
	fields      map[string]interface{}
	attempt     int  // 1-based number of the attempt in flight or just finished
	wantedRetry bool // CheckRetry's verdict on the latest attempt
}

func (a *attemptState) with(extra map[string]interface{}) map[string]interface{} {
	m := make(map[string]interface{}, len(a.fields)+len(extra)+1)
	for k, v := range a.fields {
		m[k] = v
	}
	m["kube_attempt"] = a.attempt
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := tflog.NewSubsystem(req.Context(), LogSubsystem, tflog.WithRootFields())
	// Only the method and the path: no query, no headers, no body.
	fields := map[string]interface{}{
		"kube_method":       req.Method,
		"kube_path":         req.URL.Path,
		"kube_max_attempts": t.settings.MaxAttempts,
	}

	if !retryable(req) {
		return t.sendOnce(req, &attemptState{ctx: ctx, fields: fields, attempt: 1})
	}

	// retryablehttp replaces the Body of the request it is given on every
	// attempt: give it a shallow copy so the caller's request is not modified.
	outreq := *req
	rreq, err := retryablehttp.FromRequest(&outreq)
	if req.Body != nil {
		// FromRequest has read it into memory (or failed to); a RoundTripper
		// must close the body in every case.
		_ = req.Body.Close()
	}
	if err != nil {
		return nil, err
	}

	run := &retryRun{
		settings: t.settings,
		req:      req,
		st:       &attemptState{ctx: ctx, fields: fields},
		clock:    t.clock,
		start:    t.clock.Now(),
	}
	resp, err := run.client(t.client).Do(rreq)
	return run.outcome(resp, err)
}

// sendOnce sends a request this layer does not retry, logging it like an attempt.
func (t *retryTransport) sendOnce(req *http.Request, st *attemptState) (*http.Response, error) {
	st.fields["kube_max_attempts"] = 1
	tflog.SubsystemTrace(st.ctx, LogSubsystem, "sending Kubernetes API request (not retried by the provider)", st.with(nil))
	countAttempt(req.Context())
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		tflog.SubsystemDebug(st.ctx, LogSubsystem, "Kubernetes API request failed", st.with(map[string]interface{}{"kube_error": errText(err)}))
	} else {
		logResponse(st, resp)
	}
	return resp, err
}

// retryRun is one retried request: what its retryablehttp hooks share, and the
// time budget counted from start on clock.
type retryRun struct {
	settings RetrySettings
	req      *http.Request // the caller's request; its context counts the attempts
	st       *attemptState
	clock    retrypolicy.Clock
	start    time.Time
}

// client is a retryablehttp client over httpClient that retries by this run's
// policy and logs every step through the hooks.
func (r *retryRun) client(httpClient *http.Client) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:      httpClient,
		Logger:          nil, // everything is logged through the hooks below
		RetryWaitMin:    r.settings.MinBackoff,
		RetryWaitMax:    r.settings.MaxBackoff,
		RetryMax:        r.settings.MaxAttempts - 1,
		RequestLogHook:  r.logAttempt,
		ResponseLogHook: r.logResponse,
		CheckRetry:      r.checkRetry,
		Backoff:         r.wait,
		ErrorHandler:    retryablehttp.PassthroughErrorHandler,
	}
}

func (r *retryRun) logAttempt(_ retryablehttp.Logger, _ *http.Request, i int) {
	r.st.attempt = i + 1
	countAttempt(r.req.Context())
	tflog.SubsystemTrace(r.st.ctx, LogSubsystem, "sending Kubernetes API request", r.st.with(nil))
}

func (r *retryRun) logResponse(_ retryablehttp.Logger, resp *http.Response) {
	logResponse(r.st, resp)
}

// checkRetry applies shouldRetry until the time budget is spent.
func (r *retryRun) checkRetry(rctx context.Context, resp *http.Response, err error) (bool, error) {
	st, budget := r.st, r.settings.MaxElapsed
	if err != nil {
		tflog.SubsystemDebug(st.ctx, LogSubsystem, "Kubernetes API request failed", st.with(map[string]interface{}{"kube_error": errText(err)}))
	}
	st.wantedRetry = shouldRetry(rctx, resp, err)
	if st.wantedRetry && r.clock.Now().Sub(r.start) >= budget {
		tflog.SubsystemDebug(st.ctx, LogSubsystem, "retry time budget spent", st.with(map[string]interface{}{"kube_max_elapsed": budget.String()}))
		return false, nil
	}
	// Never return an error: together with PassthroughErrorHandler
	// the caller gets exactly what the last attempt produced.
	return st.wantedRetry, nil
}

// wait makes the pause before the next attempt: backoff, cut to what is left of the budget. It
// waits on the run's clock itself and leaves retryablehttp nothing to wait; when the request's
// context ends first, it asks retryablehttp for a wait without end, which then sees the done
// context and stops, as it would have in a wait of its own.
func (r *retryRun) wait(minWait, maxWait time.Duration, i int, resp *http.Response) time.Duration {
	st, budget := r.st, r.settings.MaxElapsed
	wait, fromHeader := backoff(minWait, maxWait, i, resp)
	// Never wait past the time budget: the last attempt starts when it ends.
	wait = max(min(wait, budget-r.clock.Now().Sub(r.start)), 0)
	extra := map[string]interface{}{
		"kube_wait":               wait.String(),
		"kube_attempts_remaining": r.settings.MaxAttempts - st.attempt,
		"kube_retry_after_header": fromHeader,
	}
	if resp != nil {
		extra["kube_status"] = resp.StatusCode
	}
	tflog.SubsystemDebug(st.ctx, LogSubsystem, "retrying Kubernetes API request", st.with(extra))
	if r.clock.Sleep(r.req.Context(), wait) != nil {
		return math.MaxInt64
	}
	return 0
}

// outcome hands back what the last attempt produced, logging a give-up.
func (r *retryRun) outcome(resp *http.Response, err error) (*http.Response, error) {
	st := r.st
	if err != nil {
		// http.Client wraps transport errors in *url.Error; client-go's own
		// http.Client wraps again, so hand back the inner error.
		if uerr, ok := err.(*url.Error); ok && uerr.Err != nil {
			err = uerr.Err
		}
		if ctxErr := r.req.Context().Err(); ctxErr != nil {
			tflog.SubsystemDebug(st.ctx, LogSubsystem, "stopped retrying Kubernetes API request: request context is done", st.with(map[string]interface{}{"kube_error": err.Error()}))
		} else if st.wantedRetry {
			tflog.SubsystemWarn(st.ctx, LogSubsystem, "giving up on Kubernetes API request", st.with(map[string]interface{}{"kube_error": err.Error()}))
		}
		return nil, err
	}
	if st.wantedRetry && resp != nil {
		// Our budget is spent on a response we would have retried: keep
		// client-go from starting another round (see WrapRetries).
		if resp.Header.Get("Retry-After") != "" {
			resp.Header = resp.Header.Clone()
			resp.Header.Del("Retry-After")
		}
		tflog.SubsystemWarn(st.ctx, LogSubsystem, "giving up on Kubernetes API request", st.with(map[string]interface{}{"kube_status": resp.StatusCode}))
	}
	return resp, nil
}

// errText is the error without the URL that net/http wraps around it (the
// path is logged as its own field).
func errText(err error) string {
	if uerr, ok := err.(*url.Error); ok && uerr.Err != nil {
		return uerr.Err.Error()
	}
	return err.Error()
}

func logResponse(st *attemptState, resp *http.Response) {
	extra := map[string]interface{}{"kube_status": resp.StatusCode}
	if resp.StatusCode >= 400 {
		tflog.SubsystemDebug(st.ctx, LogSubsystem, "Kubernetes API response", st.with(extra))
		return
	}
	tflog.SubsystemTrace(st.ctx, LogSubsystem, "Kubernetes API response", st.with(extra))
}

// shouldRetry is the retry policy for idempotent requests: connection errors,
// 429 and 5xx except 501, never once the request context is done.
func shouldRetry(ctx context.Context, resp *http.Response, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		return retryableError(err)
	}
	return resp != nil && retryableStatus(resp.StatusCode)
}

// retryableStatus reports whether a response status is transient: 429, and 5xx except 501.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || (code >= 500 && code <= 599 && code != http.StatusNotImplemented)
}

// retryableError separates transient transport failures (refused, reset,
// EOF, timeouts, DNS) from configuration errors that no retry can fix.
func retryableError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalidCert      x509.CertificateInvalidError
		systemRoots      x509.SystemRootsError
		verification     *tls.CertificateVerificationError
		recordHeader     tls.RecordHeaderError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalidCert) ||
		errors.As(err, &systemRoots) || errors.As(err, &verification) || errors.As(err, &recordHeader) {
		return false
	}
	msg := err.Error()
	for _, permanent := range []string{
		"unsupported protocol scheme",
		"server gave HTTP response to HTTPS client",
		"invalid header",
		"certificate is not trusted",
	} {
		if strings.Contains(msg, permanent) {
			return false
		}
	}
	return true
}

// backoff returns the wait before retry number attempt+1 (attempt is
// 0-based) and whether it came from a Retry-After header. Retry-After wins
// (capped at maxWait); otherwise it is retrypolicy.Backoff: exponential
// growth with jitter between minWait and maxWait.
func backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) (time.Duration, bool) {
	if d, ok := retryAfter(resp, time.Now()); ok {
		return min(d, maxWait), true
	}
	return retrypolicy.Backoff(minWait, maxWait, attempt), false
}

// retryAfter parses a Retry-After header given in seconds or as an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(math.MaxInt64/time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
