package sagemakerbackend

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// Listing for `terraform query`.

var _ backend.QuotaList = (*teamQuotas)(nil)

const (
	// listPageSize is ListComputeQuotas' MaxResults, the most the API allows.
	listPageSize = 100
	// describeWorkers bounds the DescribeComputeQuota requests of a list in flight at once, as
	// Terraform's -parallelism bounds a refresh's.
	describeWorkers = 10
)

// List reads the cluster's quotas with a paged ListComputeQuotas (by name), then describes each
// one f selects (the list carries no description), a page at a time, as an import reads it. A
// team with more than one quota cannot be one resource: its quotas carry that, undescribed.
func (s *teamQuotas) List(ctx context.Context, f quota.ListFilter, page func([]*backend.Quota) error) error {
	selected, perTeam, err := s.listSelected(ctx, f)
	if err != nil {
		return err
	}
	for start := 0; start < len(selected); start += listPageSize {
		chunk := selected[start:min(start+listPageSize, len(selected))]
		quotas := make([]*backend.Quota, len(chunk))
		errs := make([]error, len(chunk))
		forEach(len(chunk), describeWorkers, func(i int) {
			quotas[i], errs[i] = s.describeListed(ctx, chunk[i], perTeam)
		})
		var out []*backend.Quota
		for i, q := range quotas {
			if errs[i] != nil {
				return errs[i]
			}
			if q != nil {
				out = append(out, q)
			}
		}
		if len(out) > 0 {
			if err := page(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// listSelected pages through ListComputeQuotas of the cluster and keeps the quotas f selects,
// by the team and the instance types of their summaries; perTeam counts every team's live quotas.
func (s *teamQuotas) listSelected(ctx context.Context, f quota.ListFilter) (selected []types.ComputeQuotaSummary, perTeam map[string][]types.ComputeQuotaSummary, err error) {
	perTeam = map[string][]types.ComputeQuotaSummary{}
	in := &sagemaker.ListComputeQuotasInput{ClusterArn: aws.String(s.cluster), MaxResults: aws.Int32(listPageSize),
		SortBy: types.SortQuotaByName, SortOrder: types.SortOrderAscending}
	for {
		out, err := s.api.ListComputeQuotas(ctx, in)
		if err != nil {
			return nil, nil, requestError(backend.OpRead, "", err)
		}
		for _, q := range out.ComputeQuotaSummaries {
			if q.ComputeQuotaTarget == nil || q.Status == types.SchedulerResourceStatusDeleted {
				continue
			}
			team := aws.ToString(q.ComputeQuotaTarget.TeamName)
			if live(q.Status) {
				perTeam[team] = append(perTeam[team], q)
			}
			if f.SelectsQuota(team, "", summaryInstanceTypes(q)) {
				selected = append(selected, q)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return selected, perTeam, nil
		}
		in.NextToken = out.NextToken
	}
}

// summaryInstanceTypes are the instance types of a listed quota's resources.
func summaryInstanceTypes(q types.ComputeQuotaSummary) []string {
	var out []string
	if q.ComputeQuotaConfig != nil {
		for _, r := range q.ComputeQuotaConfig.ComputeQuotaResources {
			out = append(out, string(r.InstanceType))
		}
	}
	return out
}

// describeListed is the quota sum lists, described; nil when it is gone since the list.
func (s *teamQuotas) describeListed(ctx context.Context, sum types.ComputeQuotaSummary, perTeam map[string][]types.ComputeQuotaSummary) (*backend.Quota, error) {
	team := aws.ToString(sum.ComputeQuotaTarget.TeamName)
	q := &backend.Quota{Record: s.record(aws.ToString(sum.Name), aws.ToString(sum.ComputeQuotaId), aws.ToString(sum.ComputeQuotaArn),
		sum.ComputeQuotaVersion, sum.Status, ""), Named: true}
	q.Config.Config.Team = team
	if others := perTeam[team]; len(others) > 1 && live(sum.Status) {
		q.NotRepresented = []string{sharedTeam(team, others)}
		return q, nil
	}
	if q.Terminating {
		return q, nil
	}
	out, err := s.api.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: sum.ComputeQuotaId})
	switch {
	case sagemakerclient.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, requestError(backend.OpRead, q.ID, err)
	}
	q.Record = s.record(aws.ToString(out.Name), q.ID, aws.ToString(out.ComputeQuotaArn), out.ComputeQuotaVersion, out.Status, aws.ToString(out.FailureReason))
	held := heldDocument(out)
	_, q.Config, q.ConfigErr = quota.ConfigFromComputeQuota(s.catalog, held)
	q.Config.Config.Team = team
	if q.ConfigErr == nil {
		q.NotRepresented = documentDiff(held, quota.ComputeQuotaOf(q.Config))
	}
	return q, nil
}

// sharedTeam says why a team's quotas cannot be one resource.
func sharedTeam(team string, quotas []types.ComputeQuotaSummary) string {
	names := make([]string, len(quotas))
	for i, q := range quotas {
		names[i] = fmt.Sprintf("%q (%s)", aws.ToString(q.Name), aws.ToString(q.ComputeQuotaId))
	}
	return fmt.Sprintf("team %q has %d compute quotas (%s), and hyperpod_compute_quota manages one per team: an import "+
		"of the team is refused until all but one are deleted", team, len(quotas), strings.Join(names, ", "))
}

// documentDiff lists the fields of held, a quota as the API holds it, that sent, what an update
// from the configuration read from it would send, holds otherwise, in the API's names.
func documentDiff(held, sent quota.ComputeQuota) []string {
	sent = documentOf(sent.Name, sent.Description, types.ActivationState(sent.ActivationState), sdkTarget(sent), sdkConfig(sent))
	fields := []struct{ name, held, going string }{
		{"Name", fmt.Sprintf("%q", held.Name), fmt.Sprintf("%q", sent.Name)},
		{"Description", fmt.Sprintf("%q", held.Description), fmt.Sprintf("%q", sent.Description)},
		{"ActivationState", held.ActivationState, sent.ActivationState},
		{"ComputeQuotaTarget.TeamName", held.Team, sent.Team},
		{"ComputeQuotaTarget.FairShareWeight", fmt.Sprint(held.FairShareWeight), fmt.Sprint(sent.FairShareWeight)},
		{"ComputeQuotaConfig.PreemptTeamTasks", held.PreemptTeamTasks, sent.PreemptTeamTasks},
		{"ComputeQuotaConfig.ResourceSharingConfig.Strategy", held.Strategy, sent.Strategy},
		{"ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", optionalText(held.BorrowLimit), optionalText(sent.BorrowLimit)},
	}
	limits := func(ls []quota.AbsoluteBorrowLimit) string {
		var out []string
		for _, l := range ls {
			out = append(out, amountsText(l.InstanceType, l.Count, l.Accelerators, l.VCPU, l.MemoryGiB, l.Partition))
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	fields = append(fields, struct{ name, held, going string }{"ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits",
		limits(held.AbsoluteBorrowLimits), limits(sent.AbsoluteBorrowLimits)})
	resources := func(rs []quota.ComputeQuotaResource) string {
		var out []string
		for _, r := range rs {
			out = append(out, amountsText(r.InstanceType, r.Count, &r.Accelerators, r.VCPU, r.MemoryGiB, r.Partition))
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	fields = append(fields, struct{ name, held, going string }{"ComputeQuotaConfig.ComputeQuotaResources",
		resources(held.Resources), resources(sent.Resources)})
	var out []string
	for _, f := range fields {
		if f.held != f.going {
			out = append(out, fmt.Sprintf("%s is %s; an update would send %s", f.name, f.held, f.going))
		}
	}
	return out
}

// optionalText is n, or "none".
func optionalText(n *int64) string {
	if n == nil {
		return "none"
	}
	return fmt.Sprint(*n)
}

// amountsText is one ComputeQuotaResourceConfig as the API names its members, those it holds.
func amountsText(instanceType string, count, accelerators *int64, vcpu, memory *big.Rat, p *quota.Partition) string {
	var parts []string
	if count != nil {
		parts = append(parts, fmt.Sprintf("Count %d", *count))
	}
	if accelerators != nil {
		parts = append(parts, fmt.Sprintf("Accelerators %d", *accelerators))
	}
	if vcpu != nil {
		parts = append(parts, "VCpu "+quota.RatString(vcpu))
	}
	if memory != nil {
		parts = append(parts, "MemoryInGiB "+quota.RatString(memory))
	}
	if p != nil {
		parts = append(parts, fmt.Sprintf("AcceleratorPartition %s x %d", p.Type, p.Count))
	}
	return instanceType + " {" + strings.Join(parts, ", ") + "}"
}

// forEach calls do(i) for i in [0, n), at most workers at once, and returns when all are done.
func forEach(n, workers int, do func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				do(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
