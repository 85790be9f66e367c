package quota

import (
	"math/big"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// ResourceUsage is one resource of one flavor (instance type) of a team's ClusterQueue, in the
// units the quota attributes use: vCPU for cpu, GiB for memory, devices otherwise.
type ResourceUsage struct {
	InstanceType string
	Resource     string
	Nominal      *big.Rat
	// Reserved is held by workloads with quota reserved (admitted or being admitted), InUse by
	// admitted ones; Borrowed is the part of Reserved above the nominal quota, from the cohort.
	Reserved, InUse, Borrowed *big.Rat
}

// Usage is a team's usage as its ClusterQueue status reports it.
type Usage struct {
	Resources                           []ResourceUsage
	AdmittedWorkloads, PendingWorkloads int64
	ReservingWorkloads                  int64
	Active                              bool
	ActiveReason, ActiveMessage         string
}

// UsageOf reads a ClusterQueue's nominal quotas and status into Usage, one entry per flavor
// and covered resource, in the queue's order. A queue Kueue has not reported on yet has zero
// usage and is not active.
func UsageOf(cq kueue.ClusterQueue) Usage {
	var u Usage
	st := cq.Status
	if st == nil {
		st = &kueue.ClusterQueueStatus{}
	}
	u.AdmittedWorkloads, u.PendingWorkloads, u.ReservingWorkloads = int64(st.AdmittedWorkloads), int64(st.PendingWorkloads), int64(st.ReservingWorkloads)
	for _, c := range st.Conditions {
		if c.Type == "Active" {
			u.Active = c.Status == metav1.ConditionTrue
			u.ActiveReason, u.ActiveMessage = c.Reason, c.Message
		}
	}
	find := func(list []kueue.FlavorUsage, flavor string, res corev1.ResourceName) (total, borrowed resource.Quantity) {
		for _, f := range list {
			if f.Name != flavor {
				continue
			}
			for _, r := range f.Resources {
				if r.Name == res {
					return r.Total, r.Borrowed
				}
			}
		}
		return resource.Quantity{}, resource.Quantity{}
	}
	for _, g := range cq.Spec.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				reserved, borrowed := find(st.FlavorsReservation, f.Name, r.Name)
				inUse, _ := find(st.FlavorsUsage, f.Name, r.Name)
				res := string(r.Name)
				u.Resources = append(u.Resources, ResourceUsage{
					InstanceType: f.Name, Resource: res,
					Nominal:  inUnits(res, r.NominalQuota),
					Reserved: inUnits(res, reserved), InUse: inUnits(res, inUse), Borrowed: inUnits(res, borrowed),
				})
			}
		}
	}
	return u
}

// Impact is a resource whose planned limit is below what the team holds now.
type Impact struct {
	InstanceType, Resource string
	// Reserved is what the team's workloads hold now; Limit is the planned nominal quota plus
	// borrowing limit, in the same units (see ResourceUsage).
	Reserved, Limit *big.Rat
	// Workloads is the number of admitted workloads, any of which Kueue may preempt.
	Workloads int64
}

// ImpactOf compares what a team holds now with a planned ClusterQueue spec and lists each
// resource whose planned limit (nominal + borrowing limit) is lower. A resource without a
// borrowing limit can borrow without bound and is never listed; a flavor the plan drops is
// listed with limit 0.
func ImpactOf(now Usage, planned kueue.ClusterQueueSpec) []Impact {
	type key struct{ flavor, res string }
	limits := map[key]*big.Rat{}
	unbounded := map[key]bool{}
	for _, g := range planned.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				k := key{f.Name, string(r.Name)}
				if r.BorrowingLimit == nil {
					unbounded[k] = true
					continue
				}
				limits[k] = new(big.Rat).Add(inUnits(k.res, r.NominalQuota), inUnits(k.res, *r.BorrowingLimit))
			}
		}
	}
	var out []Impact
	for _, r := range now.Resources {
		k := key{r.InstanceType, r.Resource}
		if unbounded[k] || r.Reserved == nil || r.Reserved.Sign() == 0 {
			continue
		}
		limit, ok := limits[k]
		if !ok {
			limit = new(big.Rat)
		}
		if r.Reserved.Cmp(limit) > 0 {
			out = append(out, Impact{InstanceType: r.InstanceType, Resource: r.Resource, Reserved: r.Reserved, Limit: limit, Workloads: now.AdmittedWorkloads})
		}
	}
	return out
}
