package sagemakerbackend

import (
	"math/big"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

func float32Of(r *big.Rat) *float32 {
	if r == nil {
		return nil
	}
	f, _ := r.Float32()
	return &f
}

// ratOfFloat32 reads a float32 amount back into the decimal sent (see quota.DecimalFromFloat32).
func ratOfFloat32(f *float32, grid int64) *big.Rat {
	if f == nil {
		return nil
	}
	return quota.DecimalFromFloat32(*f, grid)
}

func int32Of(p *int64) *int32 {
	if p == nil {
		return nil
	}
	return aws.Int32(int32(*p)) //nolint:gosec // quota.CheckRanges bounds every amount to 10,000,000
}

func int64Of(p *int32) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

// sdkConfig is the ComputeQuotaConfig of a document.
func sdkConfig(q quota.ComputeQuota) *types.ComputeQuotaConfig {
	c := &types.ComputeQuotaConfig{
		PreemptTeamTasks:      types.PreemptTeamTasks(q.PreemptTeamTasks),
		ResourceSharingConfig: &types.ResourceSharingConfig{Strategy: types.ResourceSharingStrategy(q.Strategy), BorrowLimit: int32Of(q.BorrowLimit)},
		ComputeQuotaResources: []types.ComputeQuotaResourceConfig{},
	}
	for _, l := range q.AbsoluteBorrowLimits {
		c.ResourceSharingConfig.AbsoluteBorrowLimits = append(c.ResourceSharingConfig.AbsoluteBorrowLimits, types.ComputeQuotaResourceConfig{
			InstanceType: types.ClusterInstanceType(l.InstanceType), Accelerators: int32Of(l.Accelerators),
			VCpu: float32Of(l.VCPU), MemoryInGiB: float32Of(l.MemoryGiB),
			Count: int32Of(l.Count), AcceleratorPartition: sdkPartition(l.Partition),
		})
	}
	for _, r := range q.Resources {
		res := types.ComputeQuotaResourceConfig{
			InstanceType: types.ClusterInstanceType(r.InstanceType), Count: int32Of(r.Count),
			Accelerators: int32Of(&r.Accelerators), VCpu: float32Of(r.VCPU), MemoryInGiB: float32Of(r.MemoryGiB),
		}
		if p := r.Partition; p != nil {
			res.AcceleratorPartition = &types.AcceleratorPartitionConfig{Type: types.MIGProfileType(p.Type), Count: int32Of(&p.Count)}
		}
		c.ComputeQuotaResources = append(c.ComputeQuotaResources, res)
	}
	return c
}

// sdkPartition and partitionOf convert an absolute borrow limit's accelerator partition.
func sdkPartition(p *quota.Partition) *types.AcceleratorPartitionConfig {
	if p == nil {
		return nil
	}
	return &types.AcceleratorPartitionConfig{Type: types.MIGProfileType(p.Type), Count: int32Of(&p.Count)}
}

func partitionOf(p *types.AcceleratorPartitionConfig) *quota.Partition {
	if p == nil {
		return nil
	}
	return &quota.Partition{Type: string(p.Type), Count: int64(aws.ToInt32(p.Count))}
}

func sdkTarget(q quota.ComputeQuota) *types.ComputeQuotaTarget {
	return &types.ComputeQuotaTarget{TeamName: aws.String(q.Team), FairShareWeight: int32Of(&q.FairShareWeight)}
}

// documentOf reads what the API holds into a document; description is "" when the read did not
// carry it (a list).
func documentOf(name, description string, activation types.ActivationState, target *types.ComputeQuotaTarget, c *types.ComputeQuotaConfig) quota.ComputeQuota {
	q := quota.ComputeQuota{Name: name, Description: description, ActivationState: string(activation)}
	if target != nil {
		q.Team = aws.ToString(target.TeamName)
		q.FairShareWeight = int64(aws.ToInt32(target.FairShareWeight))
	}
	if c == nil {
		return q
	}
	q.PreemptTeamTasks = string(c.PreemptTeamTasks)
	if s := c.ResourceSharingConfig; s != nil {
		q.Strategy = string(s.Strategy)
		q.BorrowLimit = int64Of(s.BorrowLimit)
		for _, l := range s.AbsoluteBorrowLimits {
			q.AbsoluteBorrowLimits = append(q.AbsoluteBorrowLimits, quota.AbsoluteBorrowLimit{
				InstanceType: string(l.InstanceType), Accelerators: int64Of(l.Accelerators),
				VCPU: ratOfFloat32(l.VCpu, quota.VCPUGrid), MemoryGiB: ratOfFloat32(l.MemoryInGiB, quota.MemoryGrid),
				Count: int64Of(l.Count), Partition: partitionOf(l.AcceleratorPartition),
			})
		}
	}
	for _, r := range c.ComputeQuotaResources {
		res := quota.ComputeQuotaResource{
			InstanceType: string(r.InstanceType), Count: int64Of(r.Count), Accelerators: int64(aws.ToInt32(r.Accelerators)),
			VCPU: ratOfFloat32(r.VCpu, quota.VCPUGrid), MemoryGiB: ratOfFloat32(r.MemoryInGiB, quota.MemoryGrid),
		}
		if p := r.AcceleratorPartition; p != nil {
			res.Partition = &quota.Partition{Type: string(p.Type), Count: int64(aws.ToInt32(p.Count))}
		}
		q.Resources = append(q.Resources, res)
	}
	return q
}
