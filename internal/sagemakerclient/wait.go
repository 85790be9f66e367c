package sagemakerclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

// Poll is how a waiter spaces its Describe calls: Min first, growing to Max
// with jitter (retrypolicy.Backoff). Zero fields mean DefaultPoll's.
type Poll struct {
	Min, Max time.Duration
}

// DefaultPoll suits SageMaker's task-governance objects, which settle in
// seconds to a few minutes.
var DefaultPoll = Poll{Min: 2 * time.Second, Max: 20 * time.Second}

func (p Poll) withDefaults() Poll {
	if p.Min <= 0 {
		p.Min = DefaultPoll.Min
	}
	if p.Max <= 0 {
		p.Max = DefaultPoll.Max
	}
	p.Max = max(p.Max, p.Min)
	return p
}

// The kinds of object a waiter watches, as messages name them.
const (
	KindComputeQuota           = "compute quota"
	KindClusterSchedulerConfig = "cluster scheduler config"
)

// Observation is what one Describe call of a waiter saw.
type Observation struct {
	Kind string // KindComputeQuota or KindClusterSchedulerConfig
	ID   string
	// Status and FailureReason as SageMaker reports them; empty when Gone.
	Status        types.SchedulerResourceStatus
	FailureReason string
	// Gone is set when Describe answered ResourceNotFound.
	Gone bool
}

// Until decides, from one observation, whether waiting is over and whether
// what was seen is an error.
type Until func(Observation) (done bool, err error)

// StatusError is an object that reached a *Failed status, with SageMaker's
// FailureReason.
type StatusError struct {
	Kind          string
	ID            string
	Status        types.SchedulerResourceStatus
	FailureReason string
}

func (e *StatusError) Error() string {
	reason := e.FailureReason
	if reason == "" {
		reason = "SageMaker gave no FailureReason"
	}
	return fmt.Sprintf("%s %s is %s: %s", e.Kind, e.ID, e.Status, reason)
}

// inProgress reports whether SageMaker is still working on the object.
func inProgress(s types.SchedulerResourceStatus) bool {
	switch s {
	case types.SchedulerResourceStatusCreating, types.SchedulerResourceStatusUpdating, types.SchedulerResourceStatusDeleting:
		return true
	}
	return false
}

// Failed reports whether s is one of the *Failed statuses (CreateFailed,
// UpdateRollbackFailed, ...): the object's last change could not be applied.
func Failed(s types.SchedulerResourceStatus) bool {
	return strings.HasSuffix(string(s), "Failed")
}

func statusError(o Observation) error {
	return &StatusError{Kind: o.Kind, ID: o.ID, Status: o.Status, FailureReason: o.FailureReason}
}

// Settled waits for a create or an update: done once the status is no longer
// Creating, Updating or Deleting. A *Failed status is a *StatusError, and an
// object that disappeared is an error too.
func Settled(o Observation) (bool, error) {
	switch {
	case o.Gone:
		return true, fmt.Errorf("%s %s was deleted while waiting for it to settle", o.Kind, o.ID)
	case inProgress(o.Status):
		return false, nil
	case Failed(o.Status):
		return true, statusError(o)
	}
	return true, nil
}

// Deleted waits for a delete: done once Describe answers ResourceNotFound or
// the status is Deleted. A *Failed status is a *StatusError.
func Deleted(o Observation) (bool, error) {
	switch {
	case o.Gone || o.Status == types.SchedulerResourceStatusDeleted:
		return true, nil
	case Failed(o.Status):
		return true, statusError(o)
	}
	return false, nil
}

// WaitComputeQuota polls DescribeComputeQuota until until says done, and
// returns the last output (nil when the quota is gone). It stops with an
// error when ctx (the resource's timeout) ends first, or when Describe fails
// with anything but ResourceNotFound (api is usually the retrying Client, so
// transient failures are already retried).
func WaitComputeQuota(ctx context.Context, api API, poll Poll, id string, until Until) (*sagemaker.DescribeComputeQuotaOutput, error) {
	return wait(ctx, poll, KindComputeQuota, id, until, func(ctx context.Context) (*sagemaker.DescribeComputeQuotaOutput, error) {
		return api.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id)})
	})
}

// WaitClusterSchedulerConfig is WaitComputeQuota for a cluster scheduler
// config.
func WaitClusterSchedulerConfig(ctx context.Context, api API, poll Poll, id string, until Until) (*sagemaker.DescribeClusterSchedulerConfigOutput, error) {
	return wait(ctx, poll, KindClusterSchedulerConfig, id, until, func(ctx context.Context) (*sagemaker.DescribeClusterSchedulerConfigOutput, error) {
		return api.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: aws.String(id)})
	})
}

// statusOf is the status and failure reason of a Describe output; the SDK's output types share
// the fields but no method to read them by.
func statusOf(out any) (types.SchedulerResourceStatus, *string) {
	switch o := out.(type) {
	case *sagemaker.DescribeComputeQuotaOutput:
		return o.Status, o.FailureReason
	case *sagemaker.DescribeClusterSchedulerConfigOutput:
		return o.Status, o.FailureReason
	}
	panic(fmt.Sprintf("sagemakerclient: no status in a %T", out))
}

func wait[Out any](ctx context.Context, poll Poll, kind, id string, until Until, describe func(context.Context) (*Out, error)) (*Out, error) {
	poll = poll.withDefaults()
	start := time.Now()
	for i := 0; ; i++ {
		obs := Observation{Kind: kind, ID: id}
		out, err := describe(ctx)
		switch {
		case IsNotFound(err):
			obs.Gone, out = true, nil
		case err != nil:
			return nil, fmt.Errorf("waiting for %s %s: %w", kind, id, err)
		default:
			var reason *string
			obs.Status, reason = statusOf(out)
			obs.FailureReason = aws.ToString(reason)
		}
		if done, err := until(obs); done || err != nil {
			return out, err
		}
		if err := retrypolicy.Sleep(ctx, retrypolicy.Backoff(poll.Min, poll.Max, i)); err != nil {
			return out, fmt.Errorf("%s %s is still %s after %s: %w", kind, id, obs.Status, roundElapsed(time.Since(start)), err)
		}
	}
}

// DeleteSent is the error of a Delete call, nil when the object is gone already
// (ResourceNotFound).
func DeleteSent[Out any](_ Out, err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// IsNotFound reports whether err says the object does not exist
// (ResourceNotFound).
func IsNotFound(err error) bool {
	var nf *types.ResourceNotFound
	return errors.As(err, &nf)
}

// IsConflict reports whether err is a ConflictException: SageMaker refused a
// change that conflicts with the object's current state, for example an
// update whose TargetVersion is no longer current.
func IsConflict(err error) bool {
	var c *types.ConflictException
	return errors.As(err, &c)
}
