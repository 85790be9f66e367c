package sagemakerclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/aws/smithy-go"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy/retrypolicytest"
)

// operations calls one operation of each kind with a valid input.
var operations = map[string]func(context.Context, API) error{
	"CreateComputeQuota": func(ctx context.Context, api API) error {
		_, err := api.CreateComputeQuota(ctx, &sagemaker.CreateComputeQuotaInput{
			ClusterArn: aws.String(testClusterARN), Name: aws.String("ml"),
			ComputeQuotaTarget: &types.ComputeQuotaTarget{TeamName: aws.String("ml")},
			ComputeQuotaConfig: &types.ComputeQuotaConfig{ComputeQuotaResources: []types.ComputeQuotaResourceConfig{
				{InstanceType: types.ClusterInstanceTypeMlG512xlarge, Count: aws.Int32(2)},
			}},
		})
		return err
	},
	"DescribeComputeQuota": describeQuota,
	"UpdateComputeQuota": func(ctx context.Context, api API) error {
		_, err := api.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: aws.String("q00000000001"), TargetVersion: aws.Int32(1)})
		return err
	},
	"DeleteComputeQuota": func(ctx context.Context, api API) error {
		_, err := api.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: aws.String("q00000000001")})
		return err
	},
}

var (
	throttled     = apiError(400, "ThrottlingException", "Rate exceeded")
	internalError = apiError(500, "InternalFailure", "We encountered an internal error.")
	dropped       = reply{drop: true}
)

// sequence answers the n-th call of any operation with replies[n-1], and
// with the last reply after that.
func sequence(replies ...reply) func(string, int) reply {
	return func(_ string, n int) reply { return replies[min(n, len(replies))-1] }
}

func TestRetries(t *testing.T) {
	isolateEnv(t)
	for _, tc := range []struct {
		name      string
		operation string
		replies   []reply
		// wantCalls is how many requests the server gets; wantErr "" means success.
		wantCalls   int
		wantErr     string
		wantUnknown bool
	}{
		{name: "throttled, then success", operation: "DescribeComputeQuota",
			replies: []reply{throttled, throttled, ok(describeOK)}, wantCalls: 3},
		{name: "a throttled create is retried: SageMaker did nothing", operation: "CreateComputeQuota",
			replies: []reply{throttled, ok(`{"ComputeQuotaId":"q00000000001"}`)}, wantCalls: 2},
		{name: "a 429 without a modeled code is a throttle", operation: "CreateComputeQuota",
			replies: []reply{{status: http.StatusTooManyRequests, body: `{}`}, ok(`{"ComputeQuotaId":"q00000000001"}`)}, wantCalls: 2},
		{name: "throttled until the attempts are spent", operation: "DescribeComputeQuota",
			replies: []reply{throttled}, wantCalls: 3,
			wantErr: `^SageMaker DescribeComputeQuota failed after 3 attempts over [0-9.]+m?s: ThrottlingException: Rate exceeded$`},
		{name: "no retry on ValidationException", operation: "CreateComputeQuota",
			replies:   []reply{apiError(400, "ValidationException", "Name is invalid"), ok(`{}`)},
			wantCalls: 1, wantErr: `^SageMaker CreateComputeQuota failed: ValidationException: Name is invalid$`},
		{name: "no retry on ResourceNotFound", operation: "DescribeComputeQuota",
			replies:   []reply{apiError(400, "ResourceNotFound", "no such quota"), ok(describeOK)},
			wantCalls: 1, wantErr: `^SageMaker DescribeComputeQuota failed: ResourceNotFound: no such quota$`},
		{name: "a 5xx read is retried", operation: "DescribeComputeQuota",
			replies: []reply{internalError, ok(describeOK)}, wantCalls: 2},
		{name: "501 is not transient", operation: "DescribeComputeQuota",
			replies: []reply{apiError(501, "NotImplemented", "no"), ok(describeOK)}, wantCalls: 1,
			wantErr: `^SageMaker DescribeComputeQuota failed: NotImplemented: no$`},
		{name: "a 5xx create is not retried: it may have created the quota", operation: "CreateComputeQuota",
			replies: []reply{internalError, ok(`{}`)}, wantCalls: 1, wantUnknown: true,
			wantErr: `^SageMaker CreateComputeQuota failed: InternalFailure: We encountered an internal error.; an attempt ended without a clear answer, so the change may have been applied: read the object before retrying$`},
		{name: "a create whose connection dropped is not retried", operation: "CreateComputeQuota",
			replies: []reply{dropped, ok(`{}`)}, wantCalls: 1, wantUnknown: true,
			wantErr: `^SageMaker CreateComputeQuota failed: request not completed: .*EOF.*may have been applied`},
		{name: "a read whose connection dropped is retried", operation: "DescribeComputeQuota",
			replies: []reply{dropped, ok(describeOK)}, wantCalls: 2},
		{name: "an update that may have applied, then a version conflict", operation: "UpdateComputeQuota",
			replies:   []reply{internalError, apiError(400, "ConflictException", "TargetVersion 1 is not current")},
			wantCalls: 2, wantUnknown: true,
			wantErr: `^SageMaker UpdateComputeQuota failed after 2 attempts over [0-9.]+m?s: ConflictException: TargetVersion 1 is not current; an attempt ended without a clear answer`},
		{name: "a delete that may have applied, then not found", operation: "DeleteComputeQuota",
			replies:   []reply{apiError(503, "ServiceUnavailable", "busy"), apiError(400, "ResourceNotFound", "gone")},
			wantCalls: 2, wantUnknown: true, wantErr: `ResourceNotFound: gone`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeSageMaker(t, sequence(tc.replies...))
			ctx := context.Background()
			c := newTestClient(t, ctx, srv, nil)
			err := operations[tc.operation](ctx, c)
			if got := srv.count(tc.operation); got != tc.wantCalls {
				t.Errorf("server got %d %s requests, want %d", got, tc.operation, tc.wantCalls)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				return
			}
			if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) {
				t.Fatalf("err = %v, want it to match %s", err, tc.wantErr)
			}
			if IsOutcomeUnknown(err) != tc.wantUnknown {
				t.Errorf("IsOutcomeUnknown = %v, want %v", IsOutcomeUnknown(err), tc.wantUnknown)
			}
		})
	}
}

func TestRetryErrorUnwrapsToTheSDKError(t *testing.T) {
	isolateEnv(t)
	ctx := context.Background()
	srv := newFakeSageMaker(t, func(op string, _ int) reply {
		if op == "UpdateComputeQuota" {
			return apiError(400, "ConflictException", "version")
		}
		return apiError(400, "ResourceNotFound", "gone")
	})
	c := newTestClient(t, ctx, srv, nil)
	err := describeQuota(ctx, c)
	var apiErr smithy.APIError
	if !IsNotFound(err) || !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ResourceNotFound" {
		t.Errorf("err = %v, want it to unwrap to *types.ResourceNotFound", err)
	}
	if err := operations["UpdateComputeQuota"](ctx, c); !IsConflict(err) || IsNotFound(err) {
		t.Errorf("err = %v, want a ConflictException", err)
	}
}

func TestRetryConnectionRefused(t *testing.T) {
	isolateEnv(t)
	// A port that was just free: connecting is refused, so nothing was sent.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	_ = l.Close()

	ctx := context.Background()
	c, err := New(ctx, Settings{ClusterARN: testClusterARN, Endpoint: endpoint, AccessKey: testAccessKey, SecretKey: testSecretKey, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"CreateComputeQuota", "DescribeComputeQuota"} {
		err := operations[op](ctx, c)
		var opErr *OperationError
		if !errors.As(err, &opErr) || opErr.Attempts != fastRetry.MaxAttempts || opErr.OutcomeUnknown || opErr.Code != "" ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: err = %v, want %d attempts ending in connection refused, with a known outcome", op, err, fastRetry.MaxAttempts)
		}
	}
}

// The time budget, not MaxAttempts, ends the retries: no attempt starts after it, and no wait
// runs past it. The client's clock moves only by the waits, so the attempts are exactly those
// that the backoffs drawn fit in the budget, whatever the machine's timers do.
func TestRetryTimeBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget retrypolicy.Settings
	}{
		{"short waits", retrypolicy.Settings{MaxAttempts: 1000, MinBackoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond,
			MaxElapsed: 80 * time.Millisecond}},
		// A wait of an hour is cut to what is left of the budget: the second attempt is the last.
		{"waits past the budget", retrypolicy.Settings{MaxAttempts: 1000, MinBackoff: time.Hour, MaxBackoff: time.Hour,
			MaxElapsed: 50 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolateEnv(t)
			srv := newFakeSageMaker(t, sequence(throttled))
			c := newTestClient(t, context.Background(), srv, func(s *Settings) { s.Retry = tc.budget })
			clock := retrypolicytest.NewClock()
			c.API.(*retrying).clock = clock

			err := describeQuota(context.Background(), c)
			var opErr *OperationError
			if !errors.As(err, &opErr) {
				t.Fatalf("err = %v", err)
			}
			// Every wait but the last is a backoff; the last is what was left of the budget.
			waits := clock.Waits()
			var waited time.Duration
			for i, w := range waits {
				waited += w
				if i < len(waits)-1 && (w < tc.budget.MinBackoff || w > tc.budget.MaxBackoff) {
					t.Errorf("wait %d of %s is outside the backoff's [%s, %s]", i+1, w, tc.budget.MinBackoff, tc.budget.MaxBackoff)
				}
			}
			if waited != tc.budget.MaxElapsed || opErr.Elapsed != tc.budget.MaxElapsed || opErr.Interrupted != nil {
				t.Errorf("waited %v (%s in all) and stopped after %s (interrupted: %v), want the budget of %s spent exactly: %v",
					waits, waited, opErr.Elapsed, opErr.Interrupted, tc.budget.MaxElapsed, err)
			}
			if opErr.Attempts != len(waits)+1 || srv.count("DescribeComputeQuota") != opErr.Attempts {
				t.Errorf("%d attempts (server saw %d) around %d waits, want one before each wait and one after the last",
					opErr.Attempts, srv.count("DescribeComputeQuota"), len(waits))
			}
		})
	}
}

func TestRetryStopsWhenTheContextEnds(t *testing.T) {
	// In a bubble the clock moves only while everything waits: the context ends during the
	// minute's wait before the second attempt, whatever the machine's load.
	synctest.Test(t, func(t *testing.T) {
		f := &describeFake{err: &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}}
		api := WithRetries(f, retrypolicy.Settings{MaxAttempts: 10, MinBackoff: time.Minute, MaxBackoff: time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()

		err := describeQuota(ctx, api)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "(stopped: context deadline exceeded): ThrottlingException: Rate exceeded") {
			t.Errorf("err = %v, want the throttling error, stopped by the deadline", err)
		}
		if f.calls != 1 {
			t.Errorf("%d attempts, want 1: the deadline ends the wait before the second", f.calls)
		}
	})
}

func TestClassify(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want attemptOutcome
	}{
		{"throttle code", ctx, &smithy.GenericAPIError{Code: "ThrottlingException"}, notApplied},
		{"another SDK throttle code", ctx, &smithy.GenericAPIError{Code: "TooManyRequestsException"}, notApplied},
		{"dial error", ctx, &net.OpError{Op: "dial", Err: errors.New("connect: connection refused")}, notApplied},
		{"temporary DNS failure", ctx, &net.DNSError{Err: "server misbehaving", IsTemporary: true}, notApplied},
		{"unknown host", ctx, &net.DNSError{Err: "no such host", IsNotFound: true}, failedForGood},
		{"connection reset while reading", ctx, &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, mayHaveApplied},
		{"request timeout code", ctx, &smithy.GenericAPIError{Code: "RequestTimeout"}, mayHaveApplied},
		{"validation", ctx, &smithy.GenericAPIError{Code: "ValidationException"}, failedForGood},
		{"limit", ctx, &types.ResourceLimitExceeded{}, failedForGood},
		{"context done", cancelled, &smithy.GenericAPIError{Code: "ThrottlingException"}, failedForGood},
		{"cancelled request", ctx, context.Canceled, failedForGood},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.ctx, tc.err); got != tc.want {
				t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
