package capacity

import (
	"math/big"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func node(instanceType, cpu, memory, gpu string, unschedulable bool, readyStatus corev1.ConditionStatus) corev1.Node {
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
	}
	if gpu != "" {
		alloc["nvidia.com/gpu"] = resource.MustParse(gpu)
	}
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{InstanceTypeLabel: instanceType}},
		Spec:       corev1.NodeSpec{Unschedulable: unschedulable},
		Status:     corev1.NodeStatus{Allocatable: alloc},
	}
	if readyStatus != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: readyStatus}}
	}
	return n
}

func queue(flavors ...kueue.FlavorQuotas) kueue.ClusterQueue {
	return kueue.ClusterQueue{Spec: kueue.ClusterQueueSpec{ResourceGroups: []kueue.ResourceGroup{{Flavors: flavors}}}}
}

func flavor(name, cpu, memory, gpu string) kueue.FlavorQuotas {
	return kueue.FlavorQuotas{Name: name, Resources: []kueue.ResourceQuota{
		{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(cpu)},
		{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse(memory)},
		{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse(gpu)},
		{Name: "aws.amazon.com/neurondevice", NominalQuota: resource.MustParse("0")},
	}}
}

// summarizeKube summarizes Kubernetes Nodes and ClusterQueues of any type as the Kubernetes
// backends do: the Nodes labelled with the type, through NodeOf, and the queues through
// AllocationsOf.
func summarizeKube(it catalog.InstanceType, nodes []corev1.Node, queues []kueue.ClusterQueue) Summary {
	var ofType []Node
	for _, n := range nodes {
		if n.Labels[InstanceTypeLabel] == it.Name {
			ofType = append(ofType, NodeOf(n))
		}
	}
	return Summarize(it, ofType, AllocationsOf(queues, it.Name))
}

func TestSummarize(t *testing.T) {
	g5 := catalog.InstanceType{Name: "ml.g5.12xlarge", Accelerators: 4, AcceleratorResource: "nvidia.com/gpu"}
	c5 := catalog.InstanceType{Name: "ml.c5.4xlarge"}
	nodes := []corev1.Node{
		node("ml.g5.12xlarge", "48", "192Gi", "4", false, corev1.ConditionTrue),
		node("ml.g5.12xlarge", "48000m", "196608Mi", "4", false, corev1.ConditionTrue),
		node("ml.g5.12xlarge", "48", "192Gi", "4", true, corev1.ConditionTrue),   // cordoned
		node("ml.g5.12xlarge", "48", "192Gi", "4", false, corev1.ConditionFalse), // not ready
		node("ml.g5.12xlarge", "48", "192Gi", "4", false, ""),                    // no condition yet
		node("ml.c5.4xlarge", "16", "32Gi", "", false, corev1.ConditionTrue),
	}
	queues := []kueue.ClusterQueue{
		queue(flavor("ml.g5.12xlarge", "24", "96Gi", "2"), flavor("ml.c5.4xlarge", "3.5", "7Gi", "0")),
		queue(flavor("ml.g5.12xlarge", "1500m", "512Mi", "1")),
		queue(),
	}
	tests := []struct {
		name string
		it   catalog.InstanceType
		want Summary
	}{
		{"gpu type", g5, Summary{
			NodeCount: 5, SchedulableNodeCount: 2,
			Total:       Amounts{Accelerators: 20, VCPU: 240, MemoryGiB: 960},
			Allocated:   Amounts{Accelerators: 3, VCPU: 25.5, MemoryGiB: 96.5},
			Unallocated: Amounts{Accelerators: 17, VCPU: 214.5, MemoryGiB: 863.5},
		}},
		{"cpu type ignores accelerators", c5, Summary{
			NodeCount: 1, SchedulableNodeCount: 1,
			Total:       Amounts{VCPU: 16, MemoryGiB: 32},
			Allocated:   Amounts{VCPU: 3.5, MemoryGiB: 7},
			Unallocated: Amounts{VCPU: 12.5, MemoryGiB: 25},
		}},
		{"type absent from the cluster", catalog.InstanceType{Name: "ml.p5.48xlarge", Accelerators: 8, AcceleratorResource: "nvidia.com/gpu"}, Summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarizeKube(tt.it, nodes, queues); got != tt.want {
				t.Errorf("Summarize() =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestSummarizeOvercommitted(t *testing.T) {
	it := catalog.InstanceType{Name: "ml.g5.12xlarge", Accelerators: 4, AcceleratorResource: "nvidia.com/gpu"}
	nodes := []corev1.Node{node("ml.g5.12xlarge", "48", "192Gi", "4", false, corev1.ConditionTrue)}
	queues := []kueue.ClusterQueue{queue(flavor("ml.g5.12xlarge", "96", "384Gi", "8"))}
	got := summarizeKube(it, nodes, queues)
	want := Amounts{Accelerators: -4, VCPU: -48, MemoryGiB: -192}
	if got.Unallocated != want {
		t.Errorf("Unallocated = %+v, want %+v", got.Unallocated, want)
	}
}

func TestSummarizeFractionalMemory(t *testing.T) {
	it := catalog.InstanceType{Name: "ml.c5.9xlarge"}
	queues := []kueue.ClusterQueue{queue(flavor("ml.c5.9xlarge", "1450m", "2969Mi", "0"))}
	got := summarizeKube(it, nil, queues)
	if got.Allocated.VCPU != 1.45 || got.Allocated.MemoryGiB != 2969.0/1024 {
		t.Errorf("Allocated = %+v, want vcpu 1.45 and memory %v", got.Allocated, 2969.0/1024)
	}
}

// A store that counts instances (the SageMaker API) sums the catalog's figures and the quotas'
// amounts as the Kubernetes path sums Nodes and ClusterQueues.
func TestSummarizeFromFigures(t *testing.T) {
	g5 := catalog.InstanceType{Name: "ml.g5.12xlarge", Accelerators: 4, AcceleratorResource: "nvidia.com/gpu", VCPU: 48, MemoryGiB: 192}
	nodes := []Node{NodeFromFigures(g5, true), NodeFromFigures(g5, false)}
	allocations := []Allocation{
		AllocationOf("nvidia.com/gpu", 2, big.NewRat(24, 1), big.NewRat(96, 1)),
		AllocationOf("nvidia.com/gpu", 1, big.NewRat(145, 100), big.NewRat(29, 10)),
	}
	got := Summarize(g5, nodes, allocations)
	want := Summary{
		NodeCount: 2, SchedulableNodeCount: 1,
		Total:       Amounts{Accelerators: 8, VCPU: 96, MemoryGiB: 384},
		Allocated:   Amounts{Accelerators: 3, VCPU: 25.45, MemoryGiB: 98.9},
		Unallocated: Amounts{Accelerators: 5, VCPU: 70.55, MemoryGiB: 285.1},
	}
	if got != want {
		t.Errorf("Summarize() =\n %+v\nwant\n %+v", got, want)
	}
}
