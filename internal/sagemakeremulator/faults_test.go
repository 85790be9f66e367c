package sagemakeremulator_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

func createQuota(t *testing.T, c *sagemaker.Client, in *sagemaker.CreateComputeQuotaInput) string {
	t.Helper()
	out, err := c.CreateComputeQuota(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.ComputeQuotaId)
}

func TestSettleRules(t *testing.T) {
	tests := []struct {
		name string
		rule *sagemakeremulator.SettleRule
		// steps: "d" describes and expects the status after it, "+" advances the clock a second.
		steps []string
	}{
		{name: "default: two observations", steps: []string{"Creating", "Creating", "Created"}},
		{name: "at once", rule: &sagemakeremulator.SettleRule{Observations: 0}, steps: []string{"Created"}},
		{name: "five observations", rule: &sagemakeremulator.SettleRule{Observations: 5},
			steps: []string{"Creating", "Creating", "Creating", "Creating", "Creating", "Created"}},
		{name: "by time only", rule: &sagemakeremulator.SettleRule{Observations: -1, After: 2 * time.Second},
			steps: []string{"Creating", "Creating", "+", "Creating", "+", "Created"}},
		{name: "time or count", rule: &sagemakeremulator.SettleRule{Observations: 3, After: time.Second},
			steps: []string{"Creating", "+", "Created"}},
		{name: "never", rule: &sagemakeremulator.SettleRule{Observations: -1},
			steps: []string{"Creating", "Creating", "+", "Creating", "Creating"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
			e := start(t, sagemakeremulator.Options{Settle: tt.rule, Now: clock.Now})
			c := client(e)
			id := createQuota(t, c, quotaInput(e, "ml-quota", "ml"))
			for i, step := range tt.steps {
				if step == "+" {
					clock.advance(time.Second)
					continue
				}
				if got := describeQuota(t, c, id).Status; string(got) != step {
					t.Fatalf("step %d: %s, want %s", i, got, step)
				}
			}
			// Settle completes whatever is left.
			if err := e.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := describeQuota(t, c, id).Status; got != types.SchedulerResourceStatusCreated {
				t.Fatalf("after Settle: %s", got)
			}
		})
	}
}

// recordingWriter records the ClusterWriter calls and fails those it is told to.
type recordingWriter struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]error // by "<method> <name>"
}

func (w *recordingWriter) call(method, name, status string, version int32) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, fmt.Sprintf("%s %s %s v%d", method, name, status, version))
	return w.fail[method+" "+name]
}

func (w *recordingWriter) QuotaChanged(_ context.Context, q sagemakeremulator.ComputeQuota) error {
	return w.call("QuotaChanged", q.Name, q.Status, q.Version)
}

func (w *recordingWriter) QuotaDeleted(_ context.Context, q sagemakeremulator.ComputeQuota) error {
	return w.call("QuotaDeleted", q.Name, q.Status, q.Version)
}

func (w *recordingWriter) SchedulerConfigChanged(_ context.Context, c sagemakeremulator.ClusterSchedulerConfig) error {
	return w.call("SchedulerConfigChanged", c.Name, c.Status, c.Version)
}

func (w *recordingWriter) SchedulerConfigDeleted(_ context.Context, c sagemakeremulator.ClusterSchedulerConfig) error {
	return w.call("SchedulerConfigDeleted", c.Name, c.Status, c.Version)
}

func (w *recordingWriter) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	calls := w.calls
	w.calls = nil
	return calls
}

func TestClusterWriter(t *testing.T) {
	ctx := context.Background()
	w := &recordingWriter{fail: map[string]error{
		"QuotaChanged broken":           errors.New("cannot write ClusterQueue hyperpod-ns-broken-clusterqueue"),
		"QuotaDeleted stuck":            errors.New("workloads still admitted"),
		"SchedulerConfigChanged policy": errors.New(strings.Repeat("x", 2000)),
	}}
	e := start(t, sagemakeremulator.Options{Writer: w, Settle: &sagemakeremulator.SettleRule{Observations: 0}})
	c := client(e)

	ok := createQuota(t, c, quotaInput(e, "ok", "ok"))
	if calls := w.take(); len(calls) != 0 {
		t.Fatalf("the writer ran before the transition completed: %v", calls)
	}
	if got := describeQuota(t, c, ok); got.Status != types.SchedulerResourceStatusCreated {
		t.Fatalf("status %s", got.Status)
	}
	if _, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: &ok, TargetVersion: aws.Int32(1), Description: aws.String("d")}); err != nil {
		t.Fatal(err)
	}
	if got := describeQuota(t, c, ok); got.Status != types.SchedulerResourceStatusUpdated {
		t.Fatalf("status %s", got.Status)
	}
	broken := createQuota(t, c, quotaInput(e, "broken", "broken"))
	got := describeQuota(t, c, broken)
	if got.Status != types.SchedulerResourceStatusCreateFailed || aws.ToString(got.FailureReason) != "cannot write ClusterQueue hyperpod-ns-broken-clusterqueue" {
		t.Errorf("a failed write: %s %q", got.Status, aws.ToString(got.FailureReason))
	}
	stuck := createQuota(t, c, quotaInput(e, "stuck", "stuck"))
	describeQuota(t, c, stuck)
	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: &stuck}); err != nil {
		t.Fatal(err)
	}
	if got := describeQuota(t, c, stuck); got.Status != types.SchedulerResourceStatusDeleteFailed || aws.ToString(got.FailureReason) != "workloads still admitted" {
		t.Errorf("a failed delete: %s %q", got.Status, aws.ToString(got.FailureReason))
	}
	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: &ok}); err != nil {
		t.Fatal(err)
	}
	var nf *types.ResourceNotFound
	if _, err := c.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: &ok}); !errors.As(err, &nf) {
		t.Errorf("after a delete the writer accepted: %v", err)
	}
	policy, err := c.CreateClusterSchedulerConfig(ctx, schedulerInput(e, "policy"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: policy.ClusterSchedulerConfigId})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != types.SchedulerResourceStatusCreateFailed || len(aws.ToString(p.FailureReason)) != 1024 {
		t.Errorf("policy %s with a failure reason of %d characters, want CreateFailed and 1024", p.Status, len(aws.ToString(p.FailureReason)))
	}
	want := []string{
		"QuotaChanged ok Creating v1",
		"QuotaChanged ok Updating v2",
		"QuotaChanged broken Creating v1",
		"QuotaChanged stuck Creating v1",
		"QuotaDeleted stuck Deleting v1",
		"QuotaDeleted ok Deleting v2",
		"SchedulerConfigChanged policy Creating v1",
	}
	if calls := w.take(); !reflect.DeepEqual(calls, want) {
		t.Errorf("writer calls\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

func TestFailTransitions(t *testing.T) {
	ctx := context.Background()
	w := &recordingWriter{}
	e := start(t, sagemakeremulator.Options{Writer: w, Settle: &sagemakeremulator.SettleRule{Observations: 0}})
	c := client(e)
	e.FailCreate("ml-quota", "InsufficientCapacity: the cluster has no ml.g5.12xlarge left")
	failed := createQuota(t, c, quotaInput(e, "ml-quota", "ml"))
	got := describeQuota(t, c, failed)
	if got.Status != types.SchedulerResourceStatusCreateFailed || aws.ToString(got.FailureReason) != "InsufficientCapacity: the cluster has no ml.g5.12xlarge left" {
		t.Fatalf("%s %q, want CreateFailed with the reason", got.Status, aws.ToString(got.FailureReason))
	}
	// The failed quota still holds its name; once deleted, the name is free and the fault spent.
	if _, err := c.CreateComputeQuota(ctx, quotaInput(e, "ml-quota", "ml")); errorCode(err) != "ConflictException" {
		t.Errorf("a second create of a failed quota's name: %v, want ConflictException", err)
	}
	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: &failed}); err != nil {
		t.Fatal(err)
	}
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	again := createQuota(t, c, quotaInput(e, "ml-quota", "ml"))
	if got := describeQuota(t, c, again); got.Status != types.SchedulerResourceStatusCreated {
		t.Fatalf("the second create: %s", got.Status)
	}
	e.FailUpdate("ml-quota", "update refused")
	if _, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: &again, TargetVersion: aws.Int32(1), Description: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	if got := describeQuota(t, c, again); got.Status != types.SchedulerResourceStatusUpdateFailed || aws.ToString(got.FailureReason) != "update refused" {
		t.Fatalf("%s %q, want UpdateFailed", got.Status, aws.ToString(got.FailureReason))
	}
	// A later successful update clears the FailureReason.
	if _, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: &again, TargetVersion: aws.Int32(2), Description: aws.String("y")}); err != nil {
		t.Fatal(err)
	}
	if got := describeQuota(t, c, again); got.Status != types.SchedulerResourceStatusUpdated || got.FailureReason != nil {
		t.Fatalf("%s %q, want Updated without a reason", got.Status, aws.ToString(got.FailureReason))
	}
	e.FailDelete("ml-quota", "delete refused")
	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: &again}); err != nil {
		t.Fatal(err)
	}
	if got := describeQuota(t, c, again); got.Status != types.SchedulerResourceStatusDeleteFailed || aws.ToString(got.FailureReason) != "delete refused" {
		t.Fatalf("%s %q, want DeleteFailed", got.Status, aws.ToString(got.FailureReason))
	}
	// Injected failures never reach the writer.
	want := []string{"QuotaDeleted ml-quota Deleting v1", "QuotaChanged ml-quota Creating v1", "QuotaChanged ml-quota Updating v3"}
	if calls := w.take(); !reflect.DeepEqual(calls, want) {
		t.Errorf("writer calls %v, want %v", calls, want)
	}
}

func TestThrottling(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	describe := &sagemaker.DescribeClusterInput{ClusterName: aws.String(testCluster.Name)}

	e.ThrottleNext(2, "DescribeCluster")
	if _, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{}); err != nil {
		t.Fatalf("an operation not named was throttled: %v", err)
	}
	for i := range 2 {
		_, err := c.DescribeCluster(ctx, describe)
		if errorCode(err) != "ThrottlingException" || httpStatus(err) != http.StatusBadRequest {
			t.Fatalf("request %d: %v (HTTP %d), want ThrottlingException with HTTP 400", i, err, httpStatus(err))
		}
		if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
			t.Errorf("the SDK does not take %v for throttling", err)
		}
	}
	if _, err := c.DescribeCluster(ctx, describe); err != nil {
		t.Fatalf("the third request: %v", err)
	}

	// The SDK's standard retryer rides over throttling: three requests, one answer.
	retrying := client(e, func(o *sagemaker.Options) {
		o.Retryer = retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = time.Millisecond })
	})
	e.ResetCalls()
	e.ThrottleNext(2)
	if _, err := retrying.DescribeCluster(ctx, describe); err != nil {
		t.Fatalf("with retries: %v", err)
	}
	var codes []string
	for _, call := range e.Calls() {
		codes = append(codes, call.ErrorCode)
	}
	if want := []string{"ThrottlingException", "ThrottlingException", ""}; !reflect.DeepEqual(codes, want) {
		t.Errorf("calls answered %q, want %q", codes, want)
	}
}

func TestThrottleRate(t *testing.T) {
	// The same seed throttles the same requests, whatever else happened before.
	outcomes := func(seed uint64, warmUp int) []bool {
		e := start(t, sagemakeremulator.Options{Seed: seed})
		c := client(e)
		e.ThrottleRate(0.5, "DescribeComputeQuota")
		for i := range warmUp {
			// Requests about other objects do not shift the decisions below.
			_, _ = c.DescribeComputeQuota(context.Background(), &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(fmt.Sprintf("zzz%09d", i))})
		}
		var throttled []bool
		for i := range 40 {
			_, err := c.DescribeComputeQuota(context.Background(), &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(fmt.Sprintf("%012d", i))})
			switch errorCode(err) {
			case "ThrottlingException":
				throttled = append(throttled, true)
			case "ResourceNotFound":
				throttled = append(throttled, false)
			default:
				t.Fatalf("request %d: %v", i, err)
			}
		}
		return throttled
	}
	a, b, other := outcomes(7, 0), outcomes(7, 5), outcomes(8, 0)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("seed 7 throttled differently:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, other) {
		t.Errorf("seeds 7 and 8 throttled the same 40 requests")
	}
	if n := countTrue(a); n < 10 || n > 30 {
		t.Errorf("%d of 40 throttled at rate 0.5", n)
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func TestServerErrors(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	e.ServerErrorNext(1)
	_, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{})
	if errorCode(err) != "InternalFailure" || httpStatus(err) != http.StatusInternalServerError {
		t.Fatalf("%v (HTTP %d), want InternalFailure with HTTP 500", err, httpStatus(err))
	}
	// A server error before the create took effect: nothing was stored.
	e.ServerErrorNext(1, "CreateComputeQuota")
	if _, err := c.CreateComputeQuota(ctx, quotaInput(e, "ml-quota", "ml")); httpStatus(err) != http.StatusInternalServerError {
		t.Fatalf("create: %v, want HTTP 500", err)
	}
	if qs := e.Quotas(); len(qs) != 0 {
		t.Fatalf("a create answered with 500 stored %d quotas", len(qs))
	}
	retrying := client(e, func(o *sagemaker.Options) {
		o.Retryer = retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = time.Millisecond })
	})
	e.ServerErrorNext(2)
	if _, err := retrying.CreateComputeQuota(ctx, quotaInput(e, "ml-quota", "ml")); err != nil {
		t.Fatalf("with retries: %v", err)
	}
	if qs := e.Quotas(); len(qs) != 1 {
		t.Fatalf("%d quotas after the retried create, want 1", len(qs))
	}
}

// The faults after acting: the operation takes effect, then its answer is a 500 or never comes.
func TestFaultsAfterActing(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)

	e.ServerErrorAfterNext(1, "CreateComputeQuota")
	if _, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{}); err != nil {
		t.Fatalf("an operation not named got the fault: %v", err)
	}
	_, err := c.CreateComputeQuota(ctx, quotaInput(e, "a-quota", "a"))
	if errorCode(err) != "InternalFailure" || httpStatus(err) != http.StatusInternalServerError {
		t.Fatalf("create: %v (HTTP %d), want InternalFailure with HTTP 500", err, httpStatus(err))
	}

	e.LoseAnswerNext(1, "CreateComputeQuota")
	_, err = c.CreateComputeQuota(ctx, quotaInput(e, "b-quota", "b"))
	if err == nil || errorCode(err) != "" || httpStatus(err) != 0 {
		t.Fatalf("create with its answer lost: %v (code %q, HTTP %d), want an error without an answer", err, errorCode(err), httpStatus(err))
	}
	var names []string
	for _, q := range e.Quotas() {
		names = append(names, q.Name)
	}
	if want := []string{"a-quota", "b-quota"}; !reflect.DeepEqual(names, want) {
		t.Errorf("stored %v, want both creates applied: %v", names, want)
	}
	if _, err := c.CreateComputeQuota(ctx, quotaInput(e, "c-quota", "c")); err != nil {
		t.Fatalf("the fault outlived its count: %v", err)
	}

	var faults []sagemakeremulator.FaultKind
	for _, call := range e.Calls() {
		if call.Fault != "" {
			faults = append(faults, call.Fault)
			if call.Fault == sagemakeremulator.FaultLostAnswer && call.Status != 0 {
				t.Errorf("a lost answer recorded with HTTP %d", call.Status)
			}
		}
	}
	want := []sagemakeremulator.FaultKind{sagemakeremulator.FaultServerErrorAfter, sagemakeremulator.FaultLostAnswer}
	if !reflect.DeepEqual(faults, want) {
		t.Errorf("calls record faults %v, want %v", faults, want)
	}
	injected := e.Injected()
	if len(injected) != 2 || injected[0] != (sagemakeremulator.InjectedFault{Operation: "CreateComputeQuota", Object: "a-quota", Kind: want[0]}) ||
		injected[1].Object != "b-quota" || injected[1].Kind != want[1] {
		t.Errorf("injected %+v, want the two creates' faults", injected)
	}
}

// InjectFaults mixes the four kinds by a seeded hash: every kind occurs, the same seed repeats
// the same faults, and the record matches the answers.
func TestInjectFaults(t *testing.T) {
	rates := sagemakeremulator.FaultRates{Throttle: 0.1, ServerErrorBefore: 0.1, ServerErrorAfter: 0.1, LostAnswer: 0.1}
	run := func(seed uint64) []sagemakeremulator.FaultKind {
		e := start(t, sagemakeremulator.Options{Seed: seed})
		c := client(e)
		e.InjectFaults(rates, "CreateComputeQuota")
		var kinds []sagemakeremulator.FaultKind
		for i := range 100 {
			name := fmt.Sprintf("q%d", i)
			_, err := c.CreateComputeQuota(context.Background(), quotaInput(e, name+"-quota", name))
			stored := slices.ContainsFunc(e.Quotas(), func(q sagemakeremulator.ComputeQuota) bool { return q.Name == name+"-quota" })
			var kind sagemakeremulator.FaultKind
			switch {
			case err == nil:
			case errorCode(err) == "ThrottlingException":
				kind = sagemakeremulator.FaultThrottle
			case httpStatus(err) == http.StatusInternalServerError && !stored:
				kind = sagemakeremulator.FaultServerErrorBefore
			case httpStatus(err) == http.StatusInternalServerError:
				kind = sagemakeremulator.FaultServerErrorAfter
			case errorCode(err) == "" && stored:
				kind = sagemakeremulator.FaultLostAnswer
			default:
				t.Fatalf("create %d: %v (stored %v)", i, err, stored)
			}
			if acted := kind == "" || kind == sagemakeremulator.FaultServerErrorAfter || kind == sagemakeremulator.FaultLostAnswer; acted != stored {
				t.Errorf("create %d (%q): stored %v", i, kind, stored)
			}
			kinds = append(kinds, kind)
		}
		var recorded []sagemakeremulator.FaultKind
		for _, f := range e.Injected() {
			recorded = append(recorded, f.Kind)
		}
		var seen []sagemakeremulator.FaultKind
		for _, k := range kinds {
			if k != "" {
				seen = append(seen, k)
			}
		}
		if !reflect.DeepEqual(recorded, seen) {
			t.Errorf("seed %d: recorded %v, answers showed %v", seed, recorded, seen)
		}
		return kinds
	}
	// The retries of one request draw anew: a request about the same object is not doomed.
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	e.InjectFaults(sagemakeremulator.FaultRates{ServerErrorBefore: 0.5})
	failed := 0
	for range 40 {
		if _, err := c.ListComputeQuotas(context.Background(), &sagemaker.ListComputeQuotasInput{}); err != nil {
			failed++
		}
	}
	if failed < 10 || failed > 30 {
		t.Errorf("%d of 40 repeats of one List failed at rate 0.5", failed)
	}

	a, b, other := run(3), run(3), run(4)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("seed 3 injected differently:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, other) {
		t.Error("seeds 3 and 4 injected the same faults")
	}
	counts := map[sagemakeremulator.FaultKind]int{}
	for _, k := range a {
		counts[k]++
	}
	for _, k := range []sagemakeremulator.FaultKind{sagemakeremulator.FaultThrottle, sagemakeremulator.FaultServerErrorBefore,
		sagemakeremulator.FaultServerErrorAfter, sagemakeremulator.FaultLostAnswer} {
		if counts[k] < 2 || counts[k] > 25 {
			t.Errorf("%d of 100 creates got %q at rate 0.1", counts[k], k)
		}
	}
}

// TestCallRecord counts requests per operation and checks them against an IAM policy.
func TestCallRecord(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{Settle: &sagemakeremulator.SettleRule{Observations: 0}})
	c := client(e)
	id := createQuota(t, c, quotaInput(e, "ml-quota", "ml"))
	describeQuota(t, c, id)
	describeQuota(t, c, id)
	if _, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: &id, TargetVersion: aws.Int32(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: &id, TargetVersion: aws.Int32(1)}); err == nil {
		t.Fatal("a stale update succeeded")
	}
	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: &id}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"CreateComputeQuota": 1, "DescribeComputeQuota": 2, "UpdateComputeQuota": 2, "ListComputeQuotas": 1, "DeleteComputeQuota": 1}
	if got := e.CallCounts(); !reflect.DeepEqual(got, want) {
		t.Errorf("call counts %v, want %v", got, want)
	}
	calls := e.Calls()
	if last := calls[len(calls)-1]; last.Operation != "DeleteComputeQuota" || last.Status != http.StatusOK || last.Time.IsZero() {
		t.Errorf("last call %+v", last)
	}
	if stale := calls[len(calls)-2]; stale.ErrorCode != "ConflictException" || stale.Status != http.StatusBadRequest {
		t.Errorf("the stale update recorded as %+v", stale)
	}
	policy := []string{"sagemaker:CreateComputeQuota", "sagemaker:DeleteComputeQuota", "sagemaker:DescribeComputeQuota",
		"sagemaker:ListComputeQuotas", "sagemaker:UpdateComputeQuota"}
	if got := e.IAMActions(); !reflect.DeepEqual(got, policy) {
		t.Errorf("IAM actions %v, want %v", got, policy)
	}
	for _, a := range e.IAMActions() {
		if !slices.Contains(policy, a) {
			t.Errorf("%s is called but not in the policy", a)
		}
	}
	e.ResetCalls()
	if n := len(e.Calls()); n != 0 {
		t.Errorf("%d calls after ResetCalls", n)
	}
}

// TestConcurrentClients runs writes, reads and settling together (meant for -race).
func TestConcurrentClients(t *testing.T) {
	ctx := context.Background()
	w := &recordingWriter{}
	e := start(t, sagemakeremulator.Options{Writer: w, Settle: &sagemakeremulator.SettleRule{Observations: 1}})
	c := client(e)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("team-%d", i)
			out, err := c.CreateComputeQuota(ctx, quotaInput(e, name, name))
			if err != nil {
				errs <- err
				return
			}
			for range 3 {
				if _, err := c.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: out.ComputeQuotaId}); err != nil {
					errs <- err
				}
				if _, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{MaxResults: aws.Int32(100)}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, q := range e.Quotas() {
		if q.Status == sagemakeremulator.StatusCreated {
			created++
		}
	}
	if calls := w.take(); created != 8 || len(calls) != 8 {
		t.Errorf("%d quotas created, writer called %d times; want 8 and 8 (each transition once)", created, len(calls))
	}
}
