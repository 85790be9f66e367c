package sagemakerbackend

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

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

// schedulerConfigs stores the policy as the cluster's one cluster scheduler config.
type schedulerConfigs struct {
	api     sagemakerclient.API
	cluster string
	poll    sagemakerclient.Poll

	// seen is the config as this run's Get last read it: an update that changes only its tags
	// leaves its definition (and version) alone.
	mu   sync.Mutex
	seen *storedConfig
}

// storedConfig is the cluster's scheduler config as stored.
type storedConfig struct {
	backend.Record
	Policy quota.SchedulerPolicy
}

// get finds the cluster's config with a paged ListClusterSchedulerConfigs and reads it with one
// DescribeClusterSchedulerConfig (the list does not carry the policy). Every page is read: the
// live config may follow ones being deleted, and a second live one must not go unseen.
func (s *schedulerConfigs) get(ctx context.Context) (*storedConfig, error) {
	var found []types.ClusterSchedulerConfigSummary
	in := &sagemaker.ListClusterSchedulerConfigsInput{ClusterArn: aws.String(s.cluster)}
	for {
		out, err := s.api.ListClusterSchedulerConfigs(ctx, in)
		if err != nil {
			// No config is known yet: the message names the cluster whose config was looked for.
			return nil, schedulerErrorOf(backend.OpRead, "", fmt.Sprintf("%s of cluster %s", KindSchedulerConfig, s.cluster), err)
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
	return s.describe(ctx, aws.ToString(found[0].ClusterSchedulerConfigId))
}

// describe reads the config id with one DescribeClusterSchedulerConfig; nil when it is gone.
func (s *schedulerConfigs) describe(ctx context.Context, id string) (*storedConfig, error) {
	d, err := s.api.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: aws.String(id)})
	switch {
	case sagemakerclient.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, schedulerError(backend.OpRead, id, err)
	}
	c := &storedConfig{Record: schedulerRecord(aws.ToString(d.Name), id, aws.ToString(d.ClusterSchedulerConfigArn),
		d.ClusterSchedulerConfigVersion, d.Status, aws.ToString(d.FailureReason)), Policy: policyOf(d.SchedulerConfig)}
	s.mu.Lock()
	s.seen = c
	s.mu.Unlock()
	return c, nil
}

// policyOf is the policy a scheduler config holds.
func policyOf(sc *types.SchedulerConfig) quota.SchedulerPolicy {
	var p quota.SchedulerPolicy
	if sc != nil {
		p.FairShare, p.IdleResourceSharing = string(sc.FairShare), string(sc.IdleResourceSharing)
		for _, pc := range sc.PriorityClasses {
			p.PriorityClasses = append(p.PriorityClasses, quota.PriorityClass{Name: aws.ToString(pc.Name), Weight: int64(aws.ToInt32(pc.Weight))})
		}
	}
	return p
}

// unchanged is the config's record when it holds policy p at version over.Version: an update
// would change nothing but the version. A write that changes the tags and finds no read of this
// run (an apply refreshes in another process) describes the config once to know.
func (s *schedulerConfigs) unchanged(ctx context.Context, over *backend.Record, p quota.SchedulerPolicy) (backend.Record, bool) {
	s.mu.Lock()
	seen := s.seen
	s.mu.Unlock()
	if set, remove := quota.TagChanges(over.Tags, p.Tags); (seen == nil || seen.ID != over.ID) && len(set)+len(remove) > 0 {
		if c, err := s.describe(ctx, over.ID); err == nil {
			seen = c
		}
	}
	if seen == nil || seen.ID != over.ID || seen.Version != over.Version || seen.ChangeFailed {
		return backend.Record{}, false
	}
	if !reflect.DeepEqual(sdkPolicy(seen.Policy), sdkPolicy(p)) {
		return backend.Record{}, false
	}
	return seen.Record, true
}

// tags reads the config's tags with ListTags (get leaves c.Policy.Tags nil).
func (s *schedulerConfigs) tags(ctx context.Context, c *storedConfig) (map[string]string, error) {
	return tagsOf(ctx, s.api, c.ARN, c.ID, schedulerError)
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

// put creates the config (over == nil) or updates it over the version last seen (ErrChanged
// when someone changed it since), and waits until the API has applied it; p.Tags replace
// over.Tags. The record is returned once the config exists, even when put fails.
func (s *schedulerConfigs) put(ctx context.Context, p quota.SchedulerPolicy, over *backend.Record) (backend.Record, error) {
	var id, arn string
	if over == nil {
		in := &sagemaker.CreateClusterSchedulerConfigInput{
			ClusterArn: aws.String(s.cluster), Name: aws.String(quota.SchedulerConfigName), SchedulerConfig: sdkPolicy(p),
			Tags: sdkTags(p.Tags),
		}
		c, err := createOnce(ctx, KindSchedulerConfig, s.api.CreateClusterSchedulerConfig, in, createdConfig,
			func(ctx context.Context) (lookup, error) { return s.findCreated(ctx, p) },
			func(err error) error { return schedulerError(backend.OpCreate, quota.SchedulerConfigName, err) })
		if err != nil {
			return backend.Record{}, err
		}
		id, arn = c.id, c.arn
		tflog.Info(ctx, "created cluster scheduler config", map[string]any{"id": id})
	} else if seen, ok := s.unchanged(ctx, over, p); ok {
		// Only the tags change: the definition is left alone, so its version does not move.
		written, err := retag(ctx, s.api, seen, over, p.Tags)
		if err != nil {
			return written, schedulerError(backend.OpApply, over.ID, err)
		}
		return written, nil
	} else {
		id, arn = over.ID, over.ARN
		target, err := targetVersion("cluster scheduler config", over)
		if err != nil {
			return *over, err
		}
		_, err = s.api.UpdateClusterSchedulerConfig(ctx, &sagemaker.UpdateClusterSchedulerConfigInput{
			ClusterSchedulerConfigId: aws.String(id), TargetVersion: aws.Int32(int32(target)), SchedulerConfig: sdkPolicy(p),
		})
		// A retry of an update that landed is refused (the version moved): read what it left.
		if sagemakerclient.IsOutcomeUnknown(err) {
			d, derr := s.api.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: aws.String(id)})
			if derr == nil && updateLanded(d.ClusterSchedulerConfigVersion, target, samePolicy(policyOf(d.SchedulerConfig), p)) {
				err = nil
			}
		}
		if err != nil {
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
	if written, err = tagUpdated(ctx, s.api, written, over, p.Tags); err != nil {
		return written, schedulerError(backend.OpApply, id, err)
	}
	return written, nil
}

// findCreated looks, after a create of unknown outcome, for the cluster's one scheduler config:
// ours when it has our name and the policy sent; any other refuses a second create.
func (s *schedulerConfigs) findCreated(ctx context.Context, p quota.SchedulerPolicy) (lookup, error) {
	c, err := s.get(ctx)
	switch {
	case err != nil:
		return lookup{}, err
	case c == nil:
		return lookup{}, nil
	case c.Name != quota.SchedulerConfigName || !samePolicy(c.Policy, p):
		return lookup{refused: refusedCreate(KindSchedulerConfig, quota.SchedulerConfigName, fmt.Sprintf(
			"the cluster's scheduler config %q (%s) holding something else than this create sent (SageMaker allows one per cluster)", c.Name, c.ID))}, nil
	}
	return lookup{ours: &created{c.ID, c.ARN}}, nil
}

// deleteConfig deletes the config c names and waits until it is gone.
func (s *schedulerConfigs) deleteConfig(ctx context.Context, c backend.Record) error {
	err := deleteAndWait(func() error {
		return sagemakerclient.DeleteSent(s.api.DeleteClusterSchedulerConfig(ctx,
			&sagemaker.DeleteClusterSchedulerConfigInput{ClusterSchedulerConfigId: aws.String(c.ID)}))
	}, func(until sagemakerclient.Until) error {
		_, err := sagemakerclient.WaitClusterSchedulerConfig(ctx, s.api, s.poll, c.ID, until)
		return err
	})
	if err != nil {
		return schedulerError(backend.OpDelete, c.ID, err)
	}
	return nil
}

func schedulerError(op backend.Op, name string, err error) error {
	return schedulerErrorOf(op, name, subject(KindSchedulerConfig, name, ""), err)
}

// schedulerErrorOf is a failed request on the config that messages call what.
func schedulerErrorOf(op backend.Op, name, what string, err error) error {
	e := requestError(op, name, err).(*backend.RequestError)
	e.Kind, e.Problem = KindSchedulerConfig, wordRequest(op, KindSchedulerConfig, what, err)
	return e
}

// createdConfig is the new config CreateClusterSchedulerConfig answered with.
func createdConfig(out *sagemaker.CreateClusterSchedulerConfigOutput) created {
	return created{aws.ToString(out.ClusterSchedulerConfigId), aws.ToString(out.ClusterSchedulerConfigArn)}
}
