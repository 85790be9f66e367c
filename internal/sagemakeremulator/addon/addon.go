// Package addon stands in for HyperPod's task-governance add-on on a local control plane: a
// sagemakeremulator.ClusterWriter that turns the emulator's compute quotas and cluster scheduler
// config into Kueue objects, the add-on's mark on the cluster (a KueueManagerConfig kind), and
// Start, which puts both beside a running control plane. The tests (internal/acctest) and
// `localcluster up --task-governance` (make demo-task-governance) use it.
//
// AWS does not publish how the add-on maps quotas onto Kueue: the mapping here is this project's
// own, the Kubernetes path's rendering through its backend.
package addon

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/kueuebackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// deletePoll is how often the add-on's stand-in looks again while it waits for a deletion.
const deletePoll = 200 * time.Millisecond

// Owner is the owner identity the add-on's stand-in records on the Kueue objects it writes.
const Owner = "sagemaker-hyperpod-task-governance"

// writer does on a local control plane what HyperPod's task-governance add-on does with the
// SageMaker API's compute quotas and cluster scheduler config: it writes the team's
// Namespace (when missing) and LocalQueue, the ClusterQueue with its ResourceFlavors, and a
// WorkloadPriorityClass per priority class.
type writer struct {
	kube    *kube.Client
	catalog *catalog.Catalog
	store   kueuebackend.AddonStore

	mu      sync.Mutex
	classes map[string]bool // the priority classes it wrote
}

// New returns the add-on's stand-in for the cluster client reaches, resolving instance types with
// cat. It writes as the add-on does: the Kubernetes path's refusal of clusters with the add-on
// does not apply to it.
func New(client *kube.Client, cat *catalog.Catalog) sagemakeremulator.ClusterWriter {
	return &writer{kube: client, catalog: cat, store: kueuebackend.AsAddon(client, cat), classes: map[string]bool{}}
}

// documentOf is the emulator's quota in the provider's terms.
func documentOf(q sagemakeremulator.ComputeQuota) quota.ComputeQuota {
	dec := func(f *sagemakeremulator.Float32, grid int64) *big.Rat {
		if f == nil {
			return nil
		}
		return quota.DecimalFromFloat32(float32(*f), grid)
	}
	i64 := func(p *int32) *int64 {
		if p == nil {
			return nil
		}
		v := int64(*p)
		return &v
	}
	partition := func(p *sagemakeremulator.AcceleratorPartitionConfig) *quota.Partition {
		if p == nil || p.Count == nil {
			return nil
		}
		return &quota.Partition{Type: p.Type, Count: int64(*p.Count)}
	}
	doc := quota.ComputeQuota{Name: q.Name, Description: q.Description, ActivationState: q.ActivationState,
		PreemptTeamTasks: q.Config.PreemptTeamTasks}
	if t := q.Target.TeamName; t != nil {
		doc.Team = *t
	}
	if w := q.Target.FairShareWeight; w != nil {
		doc.FairShareWeight = int64(*w)
	}
	if s := q.Config.ResourceSharingConfig; s != nil {
		doc.Strategy, doc.BorrowLimit = s.Strategy, i64(s.BorrowLimit)
		for _, l := range s.AbsoluteBorrowLimits {
			doc.AbsoluteBorrowLimits = append(doc.AbsoluteBorrowLimits, quota.AbsoluteBorrowLimit{InstanceType: l.InstanceType,
				Count: i64(l.Count), Accelerators: i64(l.Accelerators), VCPU: dec(l.VCpu, quota.VCPUGrid), MemoryGiB: dec(l.MemoryInGiB, quota.MemoryGrid),
				Partition: partition(l.AcceleratorPartition)})
		}
	}
	for _, r := range q.Config.ComputeQuotaResources {
		res := quota.ComputeQuotaResource{InstanceType: r.InstanceType, Count: i64(r.Count),
			VCPU: dec(r.VCpu, quota.VCPUGrid), MemoryGiB: dec(r.MemoryInGiB, quota.MemoryGrid)}
		if r.Accelerators != nil {
			res.Accelerators = int64(*r.Accelerators)
		}
		res.Partition = partition(r.AcceleratorPartition)
		doc.Resources = append(doc.Resources, res)
	}
	return doc
}

func (a *writer) QuotaChanged(ctx context.Context, q sagemakeremulator.ComputeQuota) error {
	_, rc, err := quota.ConfigFromComputeQuota(a.catalog, documentOf(q))
	if err != nil {
		return err
	}
	team := rc.Config.Team
	if err := a.store.Namespaces.Claim(ctx, team, Owner); err != nil && !errors.Is(err, backend.ErrExists) {
		return err
	}
	lq := quota.RenderLocalQueue(team, Owner)
	if err := a.kube.Apply(ctx, kueue.LocalQueues, Owner, &lq, nil); err != nil {
		return fmt.Errorf("writing LocalQueue %s/%s: %w", lq.Namespace, lq.Name, err)
	}
	_, _, err = a.store.Quotas.Put(ctx, rc, Owner, nil)
	return err
}

func (a *writer) QuotaDeleted(ctx context.Context, q sagemakeremulator.ComputeQuota) error {
	if q.Target.TeamName == nil {
		return nil
	}
	team := *q.Target.TeamName
	stored, err := a.store.Quotas.Get(ctx, team, nil)
	if err != nil || stored == nil {
		return err
	}
	if err := a.store.Quotas.Delete(ctx, stored); err != nil {
		return err
	}
	return a.kube.DeleteAndWait(ctx, kueue.LocalQueues, quota.NamespaceName(team), quota.LocalQueueName(team), deletePoll)
}

func (a *writer) SchedulerConfigChanged(ctx context.Context, c sagemakeremulator.ClusterSchedulerConfig) error {
	want := map[string]bool{}
	for _, pc := range c.Config.PriorityClasses {
		if pc.Name == nil || pc.Weight == nil {
			continue
		}
		want[*pc.Name] = true
		if err := a.store.PriorityClasses.Put(ctx, quota.PriorityClass{Name: *pc.Name, Weight: int64(*pc.Weight)}, nil, Owner); err != nil {
			return err
		}
	}
	return a.removeClasses(ctx, want)
}

func (a *writer) SchedulerConfigDeleted(ctx context.Context, _ sagemakeremulator.ClusterSchedulerConfig) error {
	return a.removeClasses(ctx, nil)
}

// removeClasses deletes the classes it wrote that keep is without, and remembers keep.
func (a *writer) removeClasses(ctx context.Context, keep map[string]bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range a.classes {
		if keep[name] {
			continue
		}
		stored, err := a.store.PriorityClasses.Get(ctx, name)
		if err != nil {
			return err
		}
		if stored != nil {
			if err := a.store.PriorityClasses.Delete(ctx, stored); err != nil {
				return err
			}
		}
	}
	a.classes = map[string]bool{}
	for name := range keep {
		a.classes[name] = true
	}
	return nil
}
