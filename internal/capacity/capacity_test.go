package capacity

import (
	"math/big"
	"reflect"
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
			HealthKnown: true, NotReadyNodeCount: 2, UnhealthyNodeCounts: map[string]int64{},
			Total:       Amounts{Accelerators: 20, VCPU: 240, MemoryGiB: 960},
			Allocated:   Amounts{Accelerators: 3, VCPU: 25.5, MemoryGiB: 96.5},
			Unallocated: Amounts{Accelerators: 17, VCPU: 214.5, MemoryGiB: 863.5},
			// The two Ready, uncordoned Nodes, less what the quotas allocate.
			Schedulable:            Amounts{Accelerators: 8, VCPU: 96, MemoryGiB: 384},
			UnallocatedSchedulable: Amounts{Accelerators: 5, VCPU: 70.5, MemoryGiB: 287.5},
		}},
		{"cpu type ignores accelerators", c5, Summary{
			NodeCount: 1, SchedulableNodeCount: 1,
			HealthKnown: true, UnhealthyNodeCounts: map[string]int64{},
			Total:                  Amounts{VCPU: 16, MemoryGiB: 32},
			Allocated:              Amounts{VCPU: 3.5, MemoryGiB: 7},
			Unallocated:            Amounts{VCPU: 12.5, MemoryGiB: 25},
			Schedulable:            Amounts{VCPU: 16, MemoryGiB: 32},
			UnallocatedSchedulable: Amounts{VCPU: 12.5, MemoryGiB: 25},
		}},
		{"type absent from the cluster", catalog.InstanceType{Name: "ml.p5.48xlarge", Accelerators: 8, AcceleratorResource: "nvidia.com/gpu"}, Summary{
			HealthKnown: true, UnhealthyNodeCounts: map[string]int64{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarizeKube(tt.it, nodes, queues); !reflect.DeepEqual(got, tt.want) {
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
	if got.UnallocatedSchedulable != want {
		t.Errorf("UnallocatedSchedulable = %+v, want %+v", got.UnallocatedSchedulable, want)
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
		NodeCount: 2, SchedulableNodeCount: 1, HealthKnown: false,
		Total:       Amounts{Accelerators: 8, VCPU: 96, MemoryGiB: 384},
		Allocated:   Amounts{Accelerators: 3, VCPU: 25.45, MemoryGiB: 98.9},
		Unallocated: Amounts{Accelerators: 5, VCPU: 70.55, MemoryGiB: 285.1},
		// Only the instance in service.
		Schedulable:            Amounts{Accelerators: 4, VCPU: 48, MemoryGiB: 192},
		UnallocatedSchedulable: Amounts{Accelerators: 1, VCPU: 22.55, MemoryGiB: 93.1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summarize() =\n %+v\nwant\n %+v", got, want)
	}
}

// Only Ready, uncordoned Nodes that HyperPod marks Schedulable (or that carry no health label)
// are schedulable; the others are counted apart, NotReady and by health status independently.
func TestSummarizeHealth(t *testing.T) {
	it := catalog.InstanceType{Name: "ml.g5.12xlarge", Accelerators: 4, AcceleratorResource: "nvidia.com/gpu"}
	healthy := Node{Ready: true, Health: HealthSchedulable}
	with := func(n Node, edit func(*Node)) Node { edit(&n); return n }
	tests := []struct {
		name            string
		nodes           []Node
		schedulable     int64
		notReady        int64
		unhealthyCounts map[string]int64
	}{
		{"all healthy", []Node{healthy, healthy}, 2, 0, map[string]int64{}},
		{"no nodes", nil, 0, 0, map[string]int64{}},
		{"without the label counts as healthy", []Node{with(healthy, func(n *Node) { n.Health = "" })}, 1, 0, map[string]int64{}},
		{"pending reboot", []Node{healthy, with(healthy, func(n *Node) { n.Health = "UnschedulablePendingReboot" })},
			1, 0, map[string]int64{"UnschedulablePendingReboot": 1}},
		{"each status apart", []Node{
			with(healthy, func(n *Node) { n.Health = "UnschedulablePendingReplacement" }),
			with(healthy, func(n *Node) { n.Health = "UnschedulablePendingReplacement" }),
			with(healthy, func(n *Node) { n.Health = "Unschedulable" }),
			healthy,
		}, 1, 0, map[string]int64{"UnschedulablePendingReplacement": 2, "Unschedulable": 1}},
		{"a value AWS does not document is kept as it is", []Node{with(healthy, func(n *Node) { n.Health = "SomethingNew" })},
			0, 0, map[string]int64{"SomethingNew": 1}},
		{"not ready", []Node{healthy, with(healthy, func(n *Node) { n.Ready = false })}, 1, 1, map[string]int64{}},
		{"not ready and unhealthy counts in both", []Node{with(healthy, func(n *Node) {
			n.Ready, n.Health = false, "UnschedulablePendingReboot"
		})}, 0, 1, map[string]int64{"UnschedulablePendingReboot": 1}},
		{"cordoned is neither", []Node{with(healthy, func(n *Node) { n.Cordoned = true })}, 0, 0, map[string]int64{}},
		{"an instance that has not joined is not ready", []Node{healthy, {}}, 1, 1, map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(it, tt.nodes, nil)
			if got.NodeCount != int64(len(tt.nodes)) || got.SchedulableNodeCount != tt.schedulable || !got.HealthKnown ||
				got.NotReadyNodeCount != tt.notReady || !reflect.DeepEqual(got.UnhealthyNodeCounts, tt.unhealthyCounts) {
				t.Errorf("Summarize() = nodes %d, schedulable %d, health known %v, not ready %d, unhealthy %v; want %d, %d, true, %d, %v",
					got.NodeCount, got.SchedulableNodeCount, got.HealthKnown, got.NotReadyNodeCount, got.UnhealthyNodeCounts,
					len(tt.nodes), tt.schedulable, tt.notReady, tt.unhealthyCounts)
			}
		})
	}
}

// Nodes known only from an instance count leave readiness and health unknown, not zero.
func TestSummarizeHealthUnknownForCountedNodes(t *testing.T) {
	c5 := catalog.InstanceType{Name: "ml.c5.4xlarge", VCPU: 16, MemoryGiB: 32}
	got := Summarize(c5, []Node{NodeFromFigures(c5, true), NodeFromFigures(c5, false)}, nil)
	if got.HealthKnown || got.NotReadyNodeCount != 0 || got.UnhealthyNodeCounts != nil || got.SchedulableNodeCount != 1 {
		t.Errorf("Summarize() = health known %v, not ready %d, unhealthy %v, schedulable %d; want false, 0, nil, 1",
			got.HealthKnown, got.NotReadyNodeCount, got.UnhealthyNodeCounts, got.SchedulableNodeCount)
	}
}

func TestNodeOfReadsHealth(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		ready  corev1.ConditionStatus
		want   Node
	}{
		{"schedulable and ready", map[string]string{HealthLabel: "Schedulable"}, corev1.ConditionTrue, Node{Ready: true, Health: "Schedulable"}},
		{"pending replacement", map[string]string{HealthLabel: "UnschedulablePendingReplacement"}, corev1.ConditionTrue,
			Node{Ready: true, Health: "UnschedulablePendingReplacement"}},
		{"no label", nil, corev1.ConditionTrue, Node{Ready: true}},
		{"ready unknown", map[string]string{HealthLabel: "Schedulable"}, corev1.ConditionUnknown, Node{Health: "Schedulable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: tt.ready}}}}
			got := NodeOf(n)
			got.Allocatable = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NodeOf() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
