package sagemakerbackend

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// KindSchedulerConfig names a cluster scheduler config in messages.
const KindSchedulerConfig = "SageMaker cluster scheduler config"

var _ backend.SchedulerConfigs = (*schedulerConfigs)(nil)

// schedulerConfigs stores the policy as the cluster's one cluster scheduler config.
type schedulerConfigs struct {
	api     sagemakerclient.API
	cluster string
	poll    sagemakerclient.Poll
}

// Get finds the cluster's config with a paged ListClusterSchedulerConfigs and reads it with one
// DescribeClusterSchedulerConfig (the list does not carry the policy). Every page is read: the
// live config may follow ones being deleted, and a second live one must not go unseen.
func (s *schedulerConfigs) Get(ctx context.Context) (*backend.SchedulerConfig, error) {
	var found []types.ClusterSchedulerConfigSummary
	in := &sagemaker.ListClusterSchedulerConfigsInput{ClusterArn: aws.String(s.cluster)}
	for {
		out, err := s.api.ListClusterSchedulerConfigs(ctx, in)
		if err != nil {
			return nil, schedulerError(backend.OpRead, "", err)
		}
		for _, c := range out.ClusterSchedulerConfigSummaries {
			if live(c.Status) {
				found = append(found, c)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
	default:
		ids := make([]string, len(found))
		for i, c := range found {
			ids[i] = aws.ToString(c.ClusterSchedulerConfigId)
		}
		return nil, backend.Problem{Summary: "Several cluster scheduler configs", Detail: fmt.Sprintf(
			"The cluster has %d cluster scheduler configs (%s); SageMaker allows one per cluster. Delete all but one, then refresh.",
			len(found), strings.Join(ids, ", "))}
	}
	id := aws.ToString(found[0].ClusterSchedulerConfigId)
	d, err := s.api.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: aws.String(id)})
	switch {
	case sagemakerclient.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, schedulerError(backend.OpRead, id, err)
	}
	c := &backend.SchedulerConfig{Record: schedulerRecord(aws.ToString(d.Name), id, aws.ToString(d.ClusterSchedulerConfigArn),
		d.ClusterSchedulerConfigVersion, d.Status, aws.ToString(d.FailureReason))}
	if sc := d.SchedulerConfig; sc != nil {
		c.Policy.FairShare, c.Policy.IdleResourceSharing = string(sc.FairShare), string(sc.IdleResourceSharing)
		for _, p := range sc.PriorityClasses {
			c.Policy.PriorityClasses = append(c.Policy.PriorityClasses, quota.PriorityClass{Name: aws.ToString(p.Name), Weight: int64(aws.ToInt32(p.Weight))})
		}
	}
	return c, nil
}

func schedulerRecord(name, id, arn string, version *int32, status types.SchedulerResourceStatus, failure string) backend.Record {
	return recordOf(KindSchedulerConfig, name, id, arn, version, status, failure)
}

func sdkPolicy(p quota.SchedulerPolicy) *types.SchedulerConfig {
	c := &types.SchedulerConfig{FairShare: types.FairShare(p.FairShare), IdleResourceSharing: types.IdleResourceSharing(p.IdleResourceSharing),
		PriorityClasses: []types.PriorityClass{}}
	for _, pc := range p.PriorityClasses {
		c.PriorityClasses = append(c.PriorityClasses, types.PriorityClass{Name: aws.String(pc.Name), Weight: int32Of(&pc.Weight)})
	}
	return c
}

func (s *schedulerConfigs) Put(ctx context.Context, p quota.SchedulerPolicy, over *backend.Record) (backend.Record, error) {
	var id, arn string
	if over == nil {
		out, err := s.api.CreateClusterSchedulerConfig(ctx, &sagemaker.CreateClusterSchedulerConfigInput{
			ClusterArn: aws.String(s.cluster), Name: aws.String(quota.SchedulerConfigName), SchedulerConfig: sdkPolicy(p),
		})
		if err != nil {
			return backend.Record{}, schedulerError(backend.OpCreate, quota.SchedulerConfigName, err)
		}
		id, arn = aws.ToString(out.ClusterSchedulerConfigId), aws.ToString(out.ClusterSchedulerConfigArn)
		tflog.Info(ctx, "created cluster scheduler config", map[string]any{"id": id})
	} else {
		id, arn = over.ID, over.ARN
		target, err := strconv.ParseInt(over.Version, 10, 32)
		if err != nil {
			return *over, fmt.Errorf("cluster scheduler config %s: the version %q in state is not a number: refresh, then apply again", id, over.Version)
		}
		if _, err := s.api.UpdateClusterSchedulerConfig(ctx, &sagemaker.UpdateClusterSchedulerConfigInput{
			ClusterSchedulerConfigId: aws.String(id), TargetVersion: aws.Int32(int32(target)), SchedulerConfig: sdkPolicy(p),
		}); err != nil {
			return *over, schedulerError(backend.OpApply, id, err)
		}
	}
	written := schedulerRecord(quota.SchedulerConfigName, id, arn, nil, "", "")
	out, err := sagemakerclient.WaitClusterSchedulerConfig(ctx, s.api, s.poll, id, sagemakerclient.Settled)
	if out != nil {
		written = schedulerRecord(aws.ToString(out.Name), id, aws.ToString(out.ClusterSchedulerConfigArn), out.ClusterSchedulerConfigVersion,
			out.Status, aws.ToString(out.FailureReason))
	}
	if err != nil {
		return written, named(schedulerError(writeOp(over), id, err), written.Name)
	}
	return written, nil
}

func (s *schedulerConfigs) Delete(ctx context.Context, c *backend.SchedulerConfig) error {
	if err := sagemakerclient.DeleteSent(s.api.DeleteClusterSchedulerConfig(ctx, &sagemaker.DeleteClusterSchedulerConfigInput{ClusterSchedulerConfigId: aws.String(c.ID)})); err != nil {
		return schedulerError(backend.OpDelete, c.ID, err)
	}
	if _, err := sagemakerclient.WaitClusterSchedulerConfig(ctx, s.api, s.poll, c.ID, sagemakerclient.Deleted); err != nil {
		return schedulerError(backend.OpDelete, c.ID, err)
	}
	return nil
}

func schedulerError(op backend.Op, name string, err error) error {
	e := requestError(op, name, err).(*backend.RequestError)
	e.Kind, e.Problem = KindSchedulerConfig, wordRequest(op, KindSchedulerConfig, subject(KindSchedulerConfig, name, ""), err)
	return e
}
