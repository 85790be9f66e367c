package sagemakerclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

// WithRetries returns next with each operation retried by the policy r (zero
// fields mean retrypolicy.Default): at most MaxAttempts attempts, none
// starting later than MaxElapsed after the first, with retrypolicy.Backoff
// between them, and never past the context's deadline.
//
// What is retried depends on what the failure says about the attempt:
//
//   - Throttling (ThrottlingException and the SDK's other throttle codes, an
//     unmodeled 429) and connection failures before the request was sent
//     (dial errors, a refused connection, temporary DNS failures): SageMaker
//     did nothing, so every operation is retried, creates included.
//   - 5xx responses other than 501, RequestTimeout codes, timeouts and
//     connections lost after sending: the request may have taken effect.
//     Reads, updates and deletes are retried. An update carries TargetVersion,
//     so one that did apply fails its retry with ConflictException; a delete
//     that did apply fails its retry with ResourceNotFound. Both errors then
//     say that an earlier attempt's outcome is unknown (OperationError's
//     OutcomeUnknown), so the caller reads the object before deciding.
//   - Everything else (ValidationException, ConflictException,
//     ResourceNotFound, ResourceLimitExceeded, access denied, a done context)
//     is returned at once.
//
// Creates are the exception to the second rule. CreateComputeQuota and
// CreateClusterSchedulerConfig take no client token, so SageMaker cannot tell
// a retry from a second request. Their names must be unique within the
// cluster, so a retry of a create that did succeed cannot make a duplicate:
// it fails with ConflictException. But that answer cannot be told apart from
// a real conflict with someone else's quota of the same name, and it hides
// the id of the quota we did create. So a create whose outcome is unknown is
// not retried: it fails at once with OutcomeUnknown set, and the caller looks
// the object up by name (List* with the cluster's ARN) before creating again,
// as the Kubernetes path never re-sends a create either.
func WithRetries(next API, r retrypolicy.Settings) API {
	return &retrying{next: next, policy: r.WithDefaults(), clock: retrypolicy.Wall}
}

// retrying is the API returned by WithRetries.
type retrying struct {
	next   API
	policy retrypolicy.Settings
	// clock counts the time budget and waits between attempts: the wall clock, but in tests.
	clock retrypolicy.Clock
}

var _ API = (*retrying)(nil)

// attemptOutcome is what a failed attempt says about whether it took effect.
type attemptOutcome int

const (
	// failedForGood: SageMaker answered and retrying cannot change the
	// answer, or the context is done.
	failedForGood attemptOutcome = iota
	// notApplied: throttled, or the request never left; safe to repeat.
	notApplied
	// mayHaveApplied: the request may have taken effect.
	mayHaveApplied
)

var (
	sdkThrottles  = retry.IsErrorThrottles(retry.DefaultThrottles)
	sdkRetryables = retry.IsErrorRetryables(retry.DefaultRetryables)
)

// classify tells what a failed attempt says about the request.
func classify(ctx context.Context, err error) attemptOutcome {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return failedForGood
	}
	if sdkThrottles.IsErrorThrottle(err) == aws.TrueTernary {
		return notApplied
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return failedForGood // the endpoint's name does not exist
		}
		return notApplied
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return notApplied
	}
	if status := httpStatus(err); status >= 500 && status != http.StatusNotImplemented {
		return mayHaveApplied
	}
	if sdkRetryables.IsErrorRetryable(err) == aws.TrueTernary {
		return mayHaveApplied
	}
	return failedForGood
}

// httpStatus is the status of the response that failed, 0 without one.
func httpStatus(err error) int {
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) && respErr.Response != nil {
		return respErr.HTTPStatusCode()
	}
	return 0
}

// requestID is the AWS request id of the response that failed, "" without one.
func requestID(err error) string {
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		return respErr.ServiceRequestID()
	}
	return ""
}

// errorCodeAndMessage is the API's error code and message, or for a failure
// without an API answer (connection, local validation) an empty code and the
// cause without the SDK's "operation error SageMaker: X, https response
// error ..." wrapping.
func errorCodeAndMessage(err error) (code, message string) {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode(), apiErr.ErrorMessage()
	}
	var sendErr *smithyhttp.RequestSendError
	if errors.As(err, &sendErr) && sendErr.Err != nil {
		return "", "request not completed: " + sendErr.Err.Error()
	}
	var opErr *smithy.OperationError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return "", opErr.Err.Error()
	}
	return "", err.Error()
}

// readOnly reports whether an operation only reads: repeating it never
// changes anything, so an unknown outcome means nothing.
func readOnly(operation string) bool {
	return strings.HasPrefix(operation, "Describe") || strings.HasPrefix(operation, "List")
}

// creates reports whether an operation makes a new object (see WithRetries).
func creates(operation string) bool { return strings.HasPrefix(operation, "Create") }

// OperationError is a SageMaker operation that failed, after its retries.
// It unwraps to the SDK's error (errors.As finds *types.ResourceNotFound,
// smithy.APIError, ...) and, when the context ended the retries, to the
// context's error.
type OperationError struct {
	Operation string
	Attempts  int
	Elapsed   time.Duration
	// Code and Message are the API's error code and message; Code is empty
	// when SageMaker did not answer (Message then says what happened).
	Code    string
	Message string
	// OutcomeUnknown is set on a write when an attempt failed in a way that
	// leaves open whether it took effect (see WithRetries): read the object
	// before acting on the error.
	OutcomeUnknown bool
	// Interrupted is the context's error when the context ended the retries.
	Interrupted error
	Err         error
}

func (e *OperationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "SageMaker %s failed", e.Operation)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts over %s", e.Attempts, roundElapsed(e.Elapsed))
	}
	if e.Interrupted != nil {
		fmt.Fprintf(&b, " (stopped: %v)", e.Interrupted)
	}
	b.WriteString(": ")
	switch {
	case e.Code != "" && e.Message != "":
		b.WriteString(e.Code + ": " + e.Message)
	case e.Code != "":
		b.WriteString(e.Code)
	default:
		b.WriteString(e.Message)
	}
	if e.OutcomeUnknown {
		b.WriteString("; an attempt ended without a clear answer, so the change may have been applied: read the object before retrying")
	}
	return b.String()
}

func (e *OperationError) Unwrap() []error {
	if e.Interrupted != nil {
		return []error{e.Err, e.Interrupted}
	}
	return []error{e.Err}
}

// IsOutcomeUnknown reports whether err is an OperationError whose change may
// have been applied (see WithRetries).
func IsOutcomeUnknown(err error) bool {
	var opErr *OperationError
	return errors.As(err, &opErr) && opErr.OutcomeUnknown
}

// roundElapsed keeps a duration readable: milliseconds under a second,
// tenths of a second under ten seconds, whole seconds above.
func roundElapsed(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Second)
	}
}

// retried runs one operation of next under the retry policy.
func retried[In, Out any](ctx context.Context, r *retrying, operation string,
	call func(context.Context, *In, ...func(*sagemaker.Options)) (*Out, error), in *In, optFns []func(*sagemaker.Options),
) (*Out, error) {
	var out *Out
	err := r.run(ctx, operation, func(ctx context.Context) error {
		var err error
		out, err = call(ctx, in, optFns...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// run calls attempt until it succeeds or the policy says stop.
func (r *retrying) run(ctx context.Context, operation string, attempt func(context.Context) error) error {
	logCtx := tflog.NewSubsystem(ctx, LogSubsystem, tflog.WithRootFields())
	start := r.clock.Now()
	unknown := false
	for n := 1; ; n++ {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		outcome := classify(ctx, err)
		// A request cut off by the context may have been sent and applied.
		unknown = unknown || outcome == mayHaveApplied || ctx.Err() != nil
		code, message := errorCodeAndMessage(err)
		fields := map[string]any{
			"sagemaker_operation":    operation,
			"sagemaker_attempt":      n,
			"sagemaker_max_attempts": r.policy.MaxAttempts,
			"sagemaker_error_code":   code,
			"sagemaker_http_status":  httpStatus(err),
			"sagemaker_request_id":   requestID(err),
		}
		if code == "" {
			fields["sagemaker_error"] = message
		}
		fail := func(interrupted error) error {
			return &OperationError{
				Operation: operation, Attempts: n, Elapsed: r.clock.Now().Sub(start),
				Code: code, Message: message,
				OutcomeUnknown: unknown && !readOnly(operation),
				Interrupted:    interrupted, Err: err,
			}
		}

		elapsed := r.clock.Now().Sub(start)
		switch {
		case outcome == failedForGood:
			tflog.SubsystemDebug(logCtx, LogSubsystem, "SageMaker API request failed", fields)
			return fail(ctx.Err())
		case outcome == mayHaveApplied && creates(operation):
			tflog.SubsystemWarn(logCtx, LogSubsystem, "not retrying SageMaker create: its outcome is unknown", fields)
			return fail(nil)
		case n >= r.policy.MaxAttempts || elapsed >= r.policy.MaxElapsed:
			fields["sagemaker_elapsed"] = elapsed.String()
			tflog.SubsystemWarn(logCtx, LogSubsystem, "giving up on SageMaker API request", fields)
			return fail(nil)
		}

		// Never wait past the time budget: the last attempt starts when it ends.
		wait := min(retrypolicy.Backoff(r.policy.MinBackoff, r.policy.MaxBackoff, n-1), r.policy.MaxElapsed-elapsed)
		fields["sagemaker_wait"] = wait.String()
		tflog.SubsystemDebug(logCtx, LogSubsystem, "retrying SageMaker API request", fields)
		if err := r.clock.Sleep(ctx, wait); err != nil {
			tflog.SubsystemDebug(logCtx, LogSubsystem, "stopped retrying SageMaker API request: context done", fields)
			return fail(err)
		}
	}
}

func (r *retrying) CreateComputeQuota(ctx context.Context, in *sagemaker.CreateComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.CreateComputeQuotaOutput, error) {
	return retried(ctx, r, "CreateComputeQuota", r.next.CreateComputeQuota, in, optFns)
}

func (r *retrying) DescribeComputeQuota(ctx context.Context, in *sagemaker.DescribeComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DescribeComputeQuotaOutput, error) {
	return retried(ctx, r, "DescribeComputeQuota", r.next.DescribeComputeQuota, in, optFns)
}

func (r *retrying) UpdateComputeQuota(ctx context.Context, in *sagemaker.UpdateComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.UpdateComputeQuotaOutput, error) {
	return retried(ctx, r, "UpdateComputeQuota", r.next.UpdateComputeQuota, in, optFns)
}

func (r *retrying) DeleteComputeQuota(ctx context.Context, in *sagemaker.DeleteComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteComputeQuotaOutput, error) {
	return retried(ctx, r, "DeleteComputeQuota", r.next.DeleteComputeQuota, in, optFns)
}

func (r *retrying) ListComputeQuotas(ctx context.Context, in *sagemaker.ListComputeQuotasInput, optFns ...func(*sagemaker.Options)) (*sagemaker.ListComputeQuotasOutput, error) {
	return retried(ctx, r, "ListComputeQuotas", r.next.ListComputeQuotas, in, optFns)
}

func (r *retrying) CreateClusterSchedulerConfig(ctx context.Context, in *sagemaker.CreateClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.CreateClusterSchedulerConfigOutput, error) {
	return retried(ctx, r, "CreateClusterSchedulerConfig", r.next.CreateClusterSchedulerConfig, in, optFns)
}

func (r *retrying) DescribeClusterSchedulerConfig(ctx context.Context, in *sagemaker.DescribeClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DescribeClusterSchedulerConfigOutput, error) {
	return retried(ctx, r, "DescribeClusterSchedulerConfig", r.next.DescribeClusterSchedulerConfig, in, optFns)
}

func (r *retrying) UpdateClusterSchedulerConfig(ctx context.Context, in *sagemaker.UpdateClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.UpdateClusterSchedulerConfigOutput, error) {
	return retried(ctx, r, "UpdateClusterSchedulerConfig", r.next.UpdateClusterSchedulerConfig, in, optFns)
}

func (r *retrying) DeleteClusterSchedulerConfig(ctx context.Context, in *sagemaker.DeleteClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteClusterSchedulerConfigOutput, error) {
	return retried(ctx, r, "DeleteClusterSchedulerConfig", r.next.DeleteClusterSchedulerConfig, in, optFns)
}

func (r *retrying) ListClusterSchedulerConfigs(ctx context.Context, in *sagemaker.ListClusterSchedulerConfigsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.ListClusterSchedulerConfigsOutput, error) {
	return retried(ctx, r, "ListClusterSchedulerConfigs", r.next.ListClusterSchedulerConfigs, in, optFns)
}

func (r *retrying) DescribeCluster(ctx context.Context, in *sagemaker.DescribeClusterInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DescribeClusterOutput, error) {
	return retried(ctx, r, "DescribeCluster", r.next.DescribeCluster, in, optFns)
}

// AddTags and DeleteTags set and remove whole keys: repeating one changes nothing more, so they
// are retried as updates are.

func (r *retrying) AddTags(ctx context.Context, in *sagemaker.AddTagsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.AddTagsOutput, error) {
	return retried(ctx, r, "AddTags", r.next.AddTags, in, optFns)
}

func (r *retrying) DeleteTags(ctx context.Context, in *sagemaker.DeleteTagsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteTagsOutput, error) {
	return retried(ctx, r, "DeleteTags", r.next.DeleteTags, in, optFns)
}

func (r *retrying) ListTags(ctx context.Context, in *sagemaker.ListTagsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.ListTagsOutput, error) {
	return retried(ctx, r, "ListTags", r.next.ListTags, in, optFns)
}
