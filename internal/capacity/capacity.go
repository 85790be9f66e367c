// Package capacity sums what a cluster has of an instance type (its Nodes) and what the teams'
// quotas have already handed out. Pure: no Terraform or client-go. Backends hand it neutral
// Nodes and Allocations; NodeOf and AllocationsOf make them from Kubernetes objects.
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

func (e *exact) add(amounts map[string]resource.Quantity, acceleratorResource string) {
	if q, ok := amounts[string(corev1.ResourceCPU)]; ok {
		e.cpu.Add(q)
	}
	if q, ok := amounts[string(corev1.ResourceMemory)]; ok {
		e.memory.Add(q)
	}
	if acceleratorResource != "" {
		if q, ok := amounts[acceleratorResource]; ok {
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

// Node is one Node of an instance type as the sums see it, whichever backend read it.
type Node struct {
	// Schedulable: not cordoned and Ready.
	Schedulable bool
	// Allocatable is what the Node offers pods, by resource name.
	Allocatable map[string]resource.Quantity
}

// Allocation is the nominal quota one team's quota gives an instance type, by resource name.
type Allocation map[string]resource.Quantity

// AllocationOf is the allocation of amounts in the units quotas are written in: vCPU, GiB of
// memory and accelerators counted in acceleratorResource ("" for a type without).
func AllocationOf(acceleratorResource string, accelerators int64, vcpu, memoryGiB *big.Rat) Allocation {
	a := Allocation{}
	if vcpu != nil {
		a[string(corev1.ResourceCPU)] = exactQuantity(vcpu)
	}
	if memoryGiB != nil {
		a[string(corev1.ResourceMemory)] = exactQuantity(new(big.Rat).Mul(memoryGiB, bytesPerGiB))
	}
	if acceleratorResource != "" {
		a[acceleratorResource] = *resource.NewQuantity(accelerators, resource.DecimalSI)
	}
	return a
}

// NodeFromFigures is a Node known only from the catalog's figures for its instance type: what a
// store that counts instances, not Nodes, reports.
func NodeFromFigures(it catalog.InstanceType, schedulable bool) Node {
	return Node{Schedulable: schedulable, Allocatable: AllocationOf(it.AcceleratorResource, it.Accelerators,
		new(big.Rat).SetFloat64(it.VCPU), new(big.Rat).SetFloat64(it.MemoryGiB))}
}

// exactQuantity is r as a Quantity; r has a finite decimal expansion (a decimal times 2^30 does).
func exactQuantity(r *big.Rat) resource.Quantity {
	s := r.FloatString(12)
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

// NodeOf is what the sums need of a Kubernetes Node.
func NodeOf(n corev1.Node) Node {
	alloc := make(map[string]resource.Quantity, len(n.Status.Allocatable))
	for name, q := range n.Status.Allocatable {
		alloc[string(name)] = q
	}
	return Node{Schedulable: !n.Spec.Unschedulable && ready(n), Allocatable: alloc}
}

// AllocationsOf lists the nominal quotas that ClusterQueues give the flavor named after the
// instance type; queues without it give nothing.
func AllocationsOf(queues []kueue.ClusterQueue, instanceType string) []Allocation {
	var out []Allocation
	for _, cq := range queues {
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				if f.Name != instanceType {
					continue
				}
				a := make(Allocation, len(f.Resources))
				for _, r := range f.Resources {
					a[string(r.Name)] = r.NominalQuota
				}
				out = append(out, a)
			}
		}
	}
	return out
}

// Summarize counts the instance type's Nodes and sums their allocatable resources and the
// quotas' allocations. Callers pass the Nodes and allocations of that one type.
func Summarize(it catalog.InstanceType, nodes []Node, allocations []Allocation) Summary {
	var s Summary
	var total, allocated exact
	for _, n := range nodes {
		s.NodeCount++
		if n.Schedulable {
			s.SchedulableNodeCount++
		}
		total.add(n.Allocatable, it.AcceleratorResource)
	}
	for _, a := range allocations {
		allocated.add(a, it.AcceleratorResource)
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
