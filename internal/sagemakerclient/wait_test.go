package sagemakerclient

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
)

func TestSettledAndDeleted(t *testing.T) {
	obs := func(s types.SchedulerResourceStatus, reason string) Observation {
		return Observation{Kind: KindComputeQuota, ID: "q00000000001", Status: s, FailureReason: reason}
	}
	gone := Observation{Kind: KindComputeQuota, ID: "q00000000001", Gone: true}
	for _, tc := range []struct {
		name        string
		until       Until
		o           Observation
		wantDone    bool
		wantErr     string
		wantFailure bool // the error is a *StatusError
	}{
		{"creating", Settled, obs(types.SchedulerResourceStatusCreating, ""), false, "", false},
		{"updating", Settled, obs(types.SchedulerResourceStatusUpdating, ""), false, "", false},
		{"created", Settled, obs(types.SchedulerResourceStatusCreated, ""), true, "", false},
		{"updated", Settled, obs(types.SchedulerResourceStatusUpdated, ""), true, "", false},
		{"create failed", Settled, obs(types.SchedulerResourceStatusCreateFailed, "instance type ml.p5.48xlarge is not in the cluster"), true,
			"compute quota q00000000001 is CreateFailed: instance type ml.p5.48xlarge is not in the cluster", true},
		{"update rollback failed, no reason", Settled, obs(types.SchedulerResourceStatusUpdateRollbackFailed, ""), true,
			"compute quota q00000000001 is UpdateRollbackFailed: SageMaker gave no FailureReason", true},
		{"gone while settling", Settled, gone, true, "compute quota q00000000001 was deleted while waiting for it to settle", false},

		{"deleting", Deleted, obs(types.SchedulerResourceStatusDeleting, ""), false, "", false},
		{"deleted", Deleted, obs(types.SchedulerResourceStatusDeleted, ""), true, "", false},
		{"gone", Deleted, gone, true, "", false},
		{"delete failed", Deleted, obs(types.SchedulerResourceStatusDeleteFailed, "tasks still running"), true,
			"compute quota q00000000001 is DeleteFailed: tasks still running", true},
		{"still created", Deleted, obs(types.SchedulerResourceStatusCreated, ""), false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, err := tc.until(tc.o)
			if done != tc.wantDone {
				t.Errorf("done = %v, want %v", done, tc.wantDone)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			var se *StatusError
			if errors.As(err, &se) != tc.wantFailure {
				t.Errorf("err %v: *StatusError = %v, want %v", err, !tc.wantFailure, tc.wantFailure)
			}
			if tc.wantFailure && (se.Status != tc.o.Status || se.FailureReason != tc.o.FailureReason) {
				t.Errorf("StatusError = %+v, want the observed status and reason", se)
			}
		})
	}
}

// describeFake answers Describe calls from a list of statuses, then
// ResourceNotFound once the list is used up when goneAfter is set. Only the
// two Describe operations are implemented: the waiters call nothing else.
type describeFake struct {
	API
	mu        sync.Mutex
	statuses  []types.SchedulerResourceStatus
	reason    string
	goneAfter bool
	calls     int
	err       error
}

func (f *describeFake) next() (types.SchedulerResourceStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return "", f.err
	}
	if f.calls > len(f.statuses) {
		if f.goneAfter {
			return "", &types.ResourceNotFound{Message: aws.String("gone")}
		}
		return f.statuses[len(f.statuses)-1], nil
	}
	return f.statuses[f.calls-1], nil
}

func (f *describeFake) DescribeComputeQuota(_ context.Context, in *sagemaker.DescribeComputeQuotaInput, _ ...func(*sagemaker.Options)) (*sagemaker.DescribeComputeQuotaOutput, error) {
	s, err := f.next()
	if err != nil {
		return nil, err
	}
	return &sagemaker.DescribeComputeQuotaOutput{ComputeQuotaId: in.ComputeQuotaId, Status: s, FailureReason: aws.String(f.reason)}, nil
}

func (f *describeFake) DescribeClusterSchedulerConfig(_ context.Context, in *sagemaker.DescribeClusterSchedulerConfigInput, _ ...func(*sagemaker.Options)) (*sagemaker.DescribeClusterSchedulerConfigOutput, error) {
	s, err := f.next()
	if err != nil {
		return nil, err
	}
	return &sagemaker.DescribeClusterSchedulerConfigOutput{ClusterSchedulerConfigId: in.ClusterSchedulerConfigId, Status: s, FailureReason: aws.String(f.reason)}, nil
}

var fastPoll = Poll{Min: time.Millisecond, Max: 2 * time.Millisecond}

func TestWaitComputeQuota(t *testing.T) {
	ctx := context.Background()
	c := types.SchedulerResourceStatusCreating

	f := &describeFake{statuses: []types.SchedulerResourceStatus{c, c, types.SchedulerResourceStatusCreated}}
	out, err := WaitComputeQuota(ctx, f, fastPoll, "q00000000001", Settled)
	if err != nil || out == nil || out.Status != types.SchedulerResourceStatusCreated || f.calls != 3 {
		t.Errorf("created after two polls: out = %+v, err = %v, calls = %d", out, err, f.calls)
	}

	f = &describeFake{statuses: []types.SchedulerResourceStatus{c, types.SchedulerResourceStatusCreateFailed}, reason: "team ml already has a quota"}
	_, err = WaitComputeQuota(ctx, f, fastPoll, "q00000000001", Settled)
	var se *StatusError
	if !errors.As(err, &se) || se.FailureReason != "team ml already has a quota" || se.Kind != KindComputeQuota {
		t.Errorf("create failed: err = %v, want a *StatusError with the failure reason", err)
	}

	f = &describeFake{statuses: []types.SchedulerResourceStatus{types.SchedulerResourceStatusDeleting}, goneAfter: true}
	out, err = WaitComputeQuota(ctx, f, fastPoll, "q00000000001", Deleted)
	if err != nil || out != nil || f.calls != 2 {
		t.Errorf("deleted: out = %+v, err = %v, calls = %d", out, err, f.calls)
	}

	f = &describeFake{err: errors.New("AccessDeniedException: not authorized")}
	if _, err = WaitComputeQuota(ctx, f, fastPoll, "q00000000001", Settled); err == nil ||
		err.Error() != "waiting for compute quota q00000000001: AccessDeniedException: not authorized" || f.calls != 1 {
		t.Errorf("describe failure: err = %v after %d calls", err, f.calls)
	}

	// In a bubble the clock moves only while everything waits: the timeout comes after the polls
	// it allows, whatever the machine's load.
	synctest.Test(t, func(t *testing.T) {
		f := &describeFake{statuses: []types.SchedulerResourceStatus{c}}
		tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		out, err := WaitComputeQuota(tctx, f, fastPoll, "q00000000001", Settled)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "compute quota q00000000001 is still Creating after ") ||
			out == nil || f.calls < 2 {
			t.Errorf("timeout: out = %+v, err = %v, calls = %d", out, err, f.calls)
		}
	})
}

func TestWaitClusterSchedulerConfig(t *testing.T) {
	f := &describeFake{statuses: []types.SchedulerResourceStatus{types.SchedulerResourceStatusUpdating, types.SchedulerResourceStatusUpdateFailed}, reason: "priority class weights"}
	_, err := WaitClusterSchedulerConfig(context.Background(), f, fastPoll, "s00000000001", Settled)
	if err == nil || err.Error() != "cluster scheduler config s00000000001 is UpdateFailed: priority class weights" {
		t.Errorf("err = %v", err)
	}
}

func TestPollDefaults(t *testing.T) {
	if got := (Poll{}).withDefaults(); got != DefaultPoll {
		t.Errorf("zero Poll = %+v, want DefaultPoll", got)
	}
	if got := (Poll{Min: time.Minute}).withDefaults(); got.Max != time.Minute {
		t.Errorf("Max below Min: %+v", got)
	}
}
