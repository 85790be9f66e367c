// Package capacity sums what a cluster has of an instance type (its Nodes) and what the
// ClusterQueues have already handed out as nominal quota. Pure: no Terraform or client-go.
package capacity

import (
	"math/big"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Amounts of the three resources a quota is expressed in.
type Amounts struct {
	Accelerators int64
	VCPU         float64
	MemoryGiB    float64
}

// Summary is the observed capacity of one instance type.
type Summary struct {
	NodeCount            int64
	SchedulableNodeCount int64
	Total                Amounts
	Allocated            Amounts
	// Unallocated is Total - Allocated; negative when the quotas promise more than the nodes have.
	Unallocated Amounts
}

// exact accumulates quantities without rounding until the end.
type exact struct {
	accelerators resource.Quantity
	cpu          resource.Quantity
	memory       resource.Quantity
}

func (e *exact) add(list func(corev1.ResourceName) (resource.Quantity, bool), acceleratorResource string) {
	if q, ok := list(corev1.ResourceCPU); ok {
		e.cpu.Add(q)
	}
	if q, ok := list(corev1.ResourceMemory); ok {
		e.memory.Add(q)
	}
	if acceleratorResource != "" {
		if q, ok := list(corev1.ResourceName(acceleratorResource)); ok {
			e.accelerators.Add(q)
		}
	}
}

var bytesPerGiB = big.NewRat(1<<30, 1)

func (e exact) amounts() Amounts {
	return Amounts{
		Accelerators: e.accelerators.Value(),
		VCPU:         ratFloat(e.cpu),
		MemoryGiB:    ratFloat(e.memory, bytesPerGiB),
	}
}

// ratFloat converts a quantity to float64 through an exact rational, optionally dividing by unit.
func ratFloat(q resource.Quantity, unit ...*big.Rat) float64 {
	r := new(big.Rat)
	if _, ok := r.SetString(q.AsDec().String()); !ok {
		return 0
	}
	for _, u := range unit {
		r.Quo(r, u)
	}
	f, _ := r.Float64()
	return f
}

// Summarize counts the nodes of the instance type and sums their allocatable resources and the
// nominal quotas that ClusterQueues give to the flavor of the same name. Nodes and queues of other
// types are ignored, so callers may pass unfiltered lists.
func Summarize(it catalog.InstanceType, nodes []corev1.Node, queues []kueue.ClusterQueue) Summary {
	var s Summary
	var total, allocated exact
	for _, n := range nodes {
		if n.Labels[InstanceTypeLabel] != it.Name {
			continue
		}
		s.NodeCount++
		if !n.Spec.Unschedulable && ready(n) {
			s.SchedulableNodeCount++
		}
		total.add(func(name corev1.ResourceName) (resource.Quantity, bool) {
			q, ok := n.Status.Allocatable[name]
			return q, ok
		}, it.AcceleratorResource)
	}
	for _, cq := range queues {
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				if f.Name != it.Name {
					continue
				}
				allocated.add(func(name corev1.ResourceName) (resource.Quantity, bool) {
					for _, r := range f.Resources {
						if r.Name == name {
							return r.NominalQuota, true
						}
					}
					return resource.Quantity{}, false
				}, it.AcceleratorResource)
			}
		}
	}
	unallocated := total
	unallocated.accelerators = total.accelerators.DeepCopy()
	unallocated.accelerators.Sub(allocated.accelerators)
	unallocated.cpu = total.cpu.DeepCopy()
	unallocated.cpu.Sub(allocated.cpu)
	unallocated.memory = total.memory.DeepCopy()
	unallocated.memory.Sub(allocated.memory)

	s.Total, s.Allocated, s.Unallocated = total.amounts(), allocated.amounts(), unallocated.amounts()
	return s
}

// InstanceTypeLabel is the well-known node label that names the instance type.
const InstanceTypeLabel = "node.kubernetes.io/instance-type"

func ready(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
