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
	NodeCount int64
	// SchedulableNodeCount counts the Nodes that are Ready, not cordoned and healthy.
	SchedulableNodeCount int64
	// HealthKnown is false when some nodes were only counted (see Node.CountedOnly): then
	// NotReadyNodeCount and UnhealthyNodeCounts say nothing.
	HealthKnown bool
	// NotReadyNodeCount counts the Nodes whose Ready condition is not True, whatever their health.
	NotReadyNodeCount int64
	// UnhealthyNodeCounts counts the Nodes by health status, for every status but Schedulable;
	// empty, not nil, when HealthKnown and no Node is unhealthy.
	UnhealthyNodeCounts map[string]int64
	Total               Amounts
	Allocated           Amounts
	// Unallocated is Total - Allocated; negative when the quotas promise more than the nodes have.
	Unallocated Amounts
	// Schedulable sums the Nodes that count in SchedulableNodeCount: what new pods can use now.
	Schedulable Amounts
	// UnallocatedSchedulable is Schedulable - Allocated; negative when the quotas promise more
	// than the schedulable nodes have, which Kueue cannot see: it admits against quotas alone.
	UnallocatedSchedulable Amounts
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

// minus is e - o.
func (e exact) minus(o exact) exact {
	out := exact{accelerators: e.accelerators.DeepCopy(), cpu: e.cpu.DeepCopy(), memory: e.memory.DeepCopy()}
	out.accelerators.Sub(o.accelerators)
	out.cpu.Sub(o.cpu)
	out.memory.Sub(o.memory)
	return out
}

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

// HealthLabel is the label HyperPod keeps on its Nodes with their health status.
const HealthLabel = "sagemaker.amazonaws.com/node-health-status"

// HealthStatusDoc is AWS's page on HealthLabel and its values.
const HealthStatusDoc = "https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-resiliency-node-labels.html"

// HealthSchedulable is the health status of a Node that passed HyperPod's health checks. The
// others AWS documents are Unschedulable (deep health checks running),
// UnschedulablePendingReplacement and UnschedulablePendingReboot; any value but this one keeps
// the Node out of the schedulable count.
const HealthSchedulable = "Schedulable"

// Node is one Node of an instance type as the sums see it, whichever backend read it. The zero
// Node is an instance that has not joined the cluster: not Ready, with nothing allocatable.
type Node struct {
	Cordoned bool
	// Ready: the NodeReady condition is True. For a CountedOnly node: its instance group is in service.
	Ready bool
	// Health is the value of HealthLabel, "" when the Node has none. A Node without it counts as
	// healthy: the label is HyperPod's, and a cluster without HyperPod's health agent has
	// nothing that would set it.
	Health string
	// CountedOnly marks a node known from an instance count, not read from Kubernetes: its
	// Ready condition and health status are unknown.
	CountedOnly bool
	// Allocatable is what the Node offers pods, by resource name.
	Allocatable map[string]resource.Quantity
}

func (n Node) healthy() bool { return n.Health == "" || n.Health == HealthSchedulable }

// schedulable: new pods may land on the Node.
func (n Node) schedulable() bool { return n.Ready && !n.Cordoned && n.healthy() }

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
func NodeFromFigures(it catalog.InstanceType, inService bool) Node {
	return Node{CountedOnly: true, Ready: inService, Allocatable: AllocationOf(it.AcceleratorResource, it.Accelerators,
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
	return Node{Cordoned: n.Spec.Unschedulable, Ready: ready(n), Health: n.Labels[HealthLabel], Allocatable: alloc}
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
	s := Summary{HealthKnown: true, UnhealthyNodeCounts: map[string]int64{}}
	var total, schedulable, allocated exact
	for _, n := range nodes {
		s.NodeCount++
		if n.schedulable() {
			s.SchedulableNodeCount++
			schedulable.add(n.Allocatable, it.AcceleratorResource)
		}
		if n.CountedOnly {
			s.HealthKnown = false
		}
		if !n.Ready {
			s.NotReadyNodeCount++
		}
		if !n.healthy() {
			s.UnhealthyNodeCounts[n.Health]++
		}
		total.add(n.Allocatable, it.AcceleratorResource)
	}
	if !s.HealthKnown {
		s.NotReadyNodeCount, s.UnhealthyNodeCounts = 0, nil
	}
	for _, a := range allocations {
		allocated.add(a, it.AcceleratorResource)
	}
	s.Total, s.Allocated, s.Unallocated = total.amounts(), allocated.amounts(), total.minus(allocated).amounts()
	s.Schedulable, s.UnallocatedSchedulable = schedulable.amounts(), schedulable.minus(allocated).amounts()
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
