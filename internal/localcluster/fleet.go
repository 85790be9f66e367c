package localcluster

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// Labels and resources the fake nodes carry, as on a HyperPod EKS cluster.
const (
	LabelInstanceType = "node.kubernetes.io/instance-type"
	LabelNodeHealth   = "sagemaker.amazonaws.com/node-health-status"
	LabelZone         = "topology.kubernetes.io/zone"
	LabelRegion       = "topology.kubernetes.io/region"
	LabelHostname     = "kubernetes.io/hostname"
	LabelOS           = "kubernetes.io/os"
	LabelArch         = "kubernetes.io/arch"

	NodeHealthSchedulable = "Schedulable"
	ResourceEFA           = "vpc.amazonaws.com/efa"

	// Region and Zone of every fake node (a HyperPod instance group lives in one subnet).
	Region = "us-west-2"
	Zone   = "us-west-2a"

	// PodsPerNode is the pods capacity of every fake node (the kubelet default).
	PodsPerNode = 110

	// The taints the node lifecycle controller keeps on cordoned and NotReady nodes.
	TaintUnschedulable = "node.kubernetes.io/unschedulable"
	TaintNotReady      = "node.kubernetes.io/not-ready"
)

// AnnotationHealthSet marks a node whose health a test set with SetNodeHealth: KeepFleetAlive
// leaves its health label and Ready condition as they are, and CreateFleet brings it back.
const AnnotationHealthSet = "hyperpod.quotaworks.io/test-health"

// NodeHealth is what a node shows of its health: HyperPod's health status label (Status, ""
// for no label) and its Ready condition.
type NodeHealth struct {
	Status string
	Ready  bool
}

// Healthy is the health of every fleet node.
var Healthy = NodeHealth{Status: NodeHealthSchedulable, Ready: true}

// NodeSpec is a group of identical nodes of one instance type.
//
// Of the Count nodes, the last Cordoned ones are cordoned (spec.unschedulable) and the
// NotReady ones before those report Ready=False; the rest are Ready and schedulable.
type NodeSpec struct {
	InstanceType string
	Count        int
	Cordoned     int
	NotReady     int
}

// Fleet is the default fleet: a small HyperPod cluster with NVIDIA, Trainium and CPU-only
// instance groups. One c5 node is cordoned so schedulable counts differ from node counts.
var Fleet = []NodeSpec{
	{InstanceType: "ml.g5.12xlarge", Count: 4},
	{InstanceType: "ml.p5.48xlarge", Count: 2},
	{InstanceType: "ml.trn1.32xlarge", Count: 2},
	{InstanceType: "ml.c5.4xlarge", Count: 4, Cordoned: 1},
}

// NodeName is the name of the n-th (from 1) node of an instance type:
// hyperpod-i-<type without "ml.", dots as dashes>-<n>, e.g. hyperpod-i-g5-12xlarge-1.
func NodeName(instanceType string, n int) string {
	t := strings.TrimPrefix(instanceType, "ml.")
	t = strings.NewReplacer(".", "-", "_", "-").Replace(strings.ToLower(t))
	return "hyperpod-i-" + t + "-" + strconv.Itoa(n)
}

// Totals are the figures a fleet should show in the cluster for one instance type.
// Allocatable equals capacity on every fake node, so the sums hold for both.
type Totals struct {
	InstanceType        string
	Nodes               int // nodes labelled with the type
	SchedulableNodes    int // Ready and not cordoned
	CordonedNodes       int
	NotReadyNodes       int
	AcceleratorResource string  // empty for CPU-only types
	Accelerators        int64   // sum over all nodes
	VCPU                float64 // sum over all nodes
	MemoryGiB           float64 // sum over all nodes
	EFA                 int64   // sum over all nodes
	Pods                int64   // sum over all nodes
}

// ExpectedTotals sums a fleet per instance type, from the catalog's per-instance figures.
func ExpectedTotals(fleet []NodeSpec, cat *catalog.Catalog) (map[string]Totals, error) {
	out := map[string]Totals{}
	for _, s := range fleet {
		it, err := lookup(s, cat)
		if err != nil {
			return nil, err
		}
		t := out[s.InstanceType]
		t.InstanceType = s.InstanceType
		t.Nodes += s.Count
		t.SchedulableNodes += s.Count - s.Cordoned - s.NotReady
		t.CordonedNodes += s.Cordoned
		t.NotReadyNodes += s.NotReady
		t.AcceleratorResource = it.AcceleratorResource
		t.Accelerators += int64(s.Count) * it.Accelerators
		t.VCPU += float64(s.Count) * it.VCPU
		t.MemoryGiB += float64(s.Count) * it.MemoryGiB
		t.EFA += int64(s.Count) * it.EFA
		t.Pods += int64(s.Count) * PodsPerNode
		out[s.InstanceType] = t
	}
	return out, nil
}

func lookup(s NodeSpec, cat *catalog.Catalog) (catalog.InstanceType, error) {
	if s.Count < 1 || s.Cordoned < 0 || s.NotReady < 0 || s.Cordoned+s.NotReady > s.Count {
		return catalog.InstanceType{}, fmt.Errorf("node spec %+v: need Count >= 1 and 0 <= Cordoned+NotReady <= Count", s)
	}
	if cat == nil {
		cat = catalog.Builtin()
	}
	it, ok := cat.Lookup(s.InstanceType)
	if !ok {
		return catalog.InstanceType{}, fmt.Errorf("node spec %+v: instance type %q is not in the catalog", s, s.InstanceType)
	}
	return it, nil
}

// Nodes builds the Node objects of a fleet, status included, without a cluster.
// Names are numbered per instance type across the whole fleet, so a type may appear in
// several specs. The result is sorted by name.
func Nodes(fleet []NodeSpec, cat *catalog.Catalog) ([]*corev1.Node, error) {
	var nodes []*corev1.Node
	seen := map[string]int{}
	for _, s := range fleet {
		it, err := lookup(s, cat)
		if err != nil {
			return nil, err
		}
		capacity, err := nodeCapacity(it)
		if err != nil {
			return nil, err
		}
		for i := 0; i < s.Count; i++ {
			seen[s.InstanceType]++
			cordoned := i >= s.Count-s.Cordoned
			notReady := !cordoned && i >= s.Count-s.Cordoned-s.NotReady
			nodes = append(nodes, newNode(NodeName(s.InstanceType, seen[s.InstanceType]), s.InstanceType, capacity, cordoned, notReady, len(nodes)))
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes, nil
}

func nodeCapacity(it catalog.InstanceType) (corev1.ResourceList, error) {
	mem, err := resource.ParseQuantity(strconv.FormatFloat(it.MemoryGiB, 'f', -1, 64) + "Gi")
	if err != nil {
		return nil, fmt.Errorf("instance type %s: memory %v GiB: %w", it.Name, it.MemoryGiB, err)
	}
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(it.VCPU*1000), resource.DecimalSI),
		corev1.ResourceMemory: mem,
		corev1.ResourcePods:   *resource.NewQuantity(PodsPerNode, resource.DecimalSI),
	}
	if it.Accelerators > 0 && it.AcceleratorResource != "" {
		rl[corev1.ResourceName(it.AcceleratorResource)] = *resource.NewQuantity(it.Accelerators, resource.DecimalSI)
	}
	if it.EFA > 0 {
		rl[ResourceEFA] = *resource.NewQuantity(it.EFA, resource.DecimalSI)
	}
	return rl, nil
}

// readyCondition is the Ready condition a kubelet reports, without its times.
func readyCondition(ready bool) corev1.NodeCondition {
	if !ready {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: "KubeletNotReady", Message: "container runtime network not ready"}
	}
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: "KubeletReady", Message: "kubelet is posting ready status"}
}

func newNode(name, instanceType string, capacity corev1.ResourceList, cordoned, notReady bool, index int) *corev1.Node {
	var taints []corev1.Taint
	if notReady {
		taints = append(taints, corev1.Taint{Key: TaintNotReady, Effect: corev1.TaintEffectNoSchedule})
	}
	if cordoned {
		taints = append(taints, corev1.Taint{Key: TaintUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				LabelInstanceType: instanceType,
				LabelNodeHealth:   NodeHealthSchedulable,
				LabelOS:           "linux",
				LabelArch:         "amd64",
				LabelZone:         Zone,
				LabelRegion:       Region,
				LabelHostname:     name,
			},
		},
		Spec: corev1.NodeSpec{
			Unschedulable: cordoned,
			Taints:        taints,
			ProviderID:    "aws:///" + Zone + "/" + name,
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity.DeepCopy(),
			Allocatable: capacity.DeepCopy(),
			Conditions:  []corev1.NodeCondition{readyCondition(!notReady)},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.1.%d.%d", index/250, index%250+4)},
				{Type: corev1.NodeHostName, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          KubernetesVersion,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				OSImage:                 "Amazon Linux 2023 (fake node: no kubelet)",
				ContainerRuntimeVersion: "containerd://2.1.0",
			},
		},
	}
}

// CreateFleet creates the fleet's nodes as plain API objects (there is no kubelet) and
// sets their status. It is idempotent: an existing node is brought back to the fleet's
// labels, cordon state, taints and status, a health SetNodeHealth set included.
func CreateFleet(ctx context.Context, cs kubernetes.Interface, fleet []NodeSpec, cat *catalog.Catalog) error {
	return reconcileFleet(ctx, cs, fleet, cat, false)
}

// reconcileFleet is CreateFleet; with keepSetHealth, a node that SetNodeHealth marked keeps the
// health it was given.
func reconcileFleet(ctx context.Context, cs kubernetes.Interface, fleet []NodeSpec, cat *catalog.Catalog, keepSetHealth bool) error {
	nodes, err := Nodes(fleet, cat)
	if err != nil {
		return err
	}
	for _, want := range nodes {
		if err := applyNode(ctx, cs, want, keepSetHealth); err != nil {
			return fmt.Errorf("node %s: %w", want.Name, err)
		}
	}
	return nil
}

// SetNodeHealth gives the node named name the health status label h.Status (none when "")
// and a Ready condition of h.Ready, and marks it (AnnotationHealthSet) so that KeepFleetAlive
// keeps them. CreateFleet brings the node back to the fleet's health.
func SetNodeHealth(ctx context.Context, cs kubernetes.Interface, name string, h NodeHealth) error {
	got, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	base := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: got.Name, Labels: got.Labels, Annotations: got.Annotations},
		Spec:       got.Spec,
		Status:     got.Status,
	}
	if err := applyNode(ctx, cs, withHealth(base, h), false); err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	return nil
}

// withHealth is a copy of n with health h, marked as set by SetNodeHealth.
func withHealth(n *corev1.Node, h NodeHealth) *corev1.Node {
	n = n.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if h.Status == "" {
		delete(n.Labels, LabelNodeHealth)
	} else {
		n.Labels[LabelNodeHealth] = h.Status
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[AnnotationHealthSet] = "true"
	conditions := []corev1.NodeCondition{readyCondition(h.Ready)}
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			conditions = append(conditions, c)
		}
	}
	n.Status.Conditions = conditions
	var taints []corev1.Taint
	if !h.Ready {
		taints = append(taints, corev1.Taint{Key: TaintNotReady, Effect: corev1.TaintEffectNoSchedule})
	}
	for _, t := range n.Spec.Taints {
		if t.Key != TaintNotReady {
			taints = append(taints, t)
		}
	}
	n.Spec.Taints = taints
	return n
}

// healthOf reads a node's health label and Ready condition.
func healthOf(n *corev1.Node) NodeHealth {
	h := NodeHealth{Status: n.Labels[LabelNodeHealth]}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			h.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return h
}

// applyNode brings the node to want, metadata and spec first, then status: a node that
// SetNodeHealth marks is marked before its status changes, so a concurrent KeepFleetAlive
// never undoes the change.
func applyNode(ctx context.Context, cs kubernetes.Interface, want *corev1.Node, keepSetHealth bool) error {
	nodes := cs.CoreV1().Nodes()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	want = want.DeepCopy()
	for i := range want.Status.Conditions {
		want.Status.Conditions[i].LastHeartbeatTime = now
		want.Status.Conditions[i].LastTransitionTime = now
	}
	if _, err := nodes.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// The TaintNodesByCondition admission plugin adds the not-ready taint on create, which
	// the node lifecycle controller (not running here) would remove once the node is Ready;
	// and status may have been left different by an earlier run. Reconcile both by hand.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := nodes.Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		target := want
		if keepSetHealth && got.Annotations[AnnotationHealthSet] != "" {
			target = withHealth(want, healthOf(got))
		}
		if got, err = updateNodeMeta(ctx, nodes, got, target); err != nil {
			return err
		}
		return updateNodeStatus(ctx, nodes, got, target, now)
	})
}

// updateNodeMeta brings got's labels, health mark, cordon state and taints to want's.
func updateNodeMeta(ctx context.Context, nodes typedcorev1.NodeInterface, got, want *corev1.Node) (*corev1.Node, error) {
	_, wantHealth := want.Labels[LabelNodeHealth]
	_, gotHealth := got.Labels[LabelNodeHealth]
	if got.Spec.Unschedulable == want.Spec.Unschedulable &&
		equality.Semantic.DeepEqual(got.Spec.Taints, want.Spec.Taints) &&
		hasLabels(got.Labels, want.Labels) && wantHealth == gotHealth &&
		got.Annotations[AnnotationHealthSet] == want.Annotations[AnnotationHealthSet] {
		return got, nil
	}
	got.Spec.Unschedulable = want.Spec.Unschedulable
	got.Spec.Taints = want.Spec.Taints
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		got.Labels[k] = v
	}
	if !wantHealth {
		delete(got.Labels, LabelNodeHealth)
	}
	if mark, ok := want.Annotations[AnnotationHealthSet]; ok {
		if got.Annotations == nil {
			got.Annotations = map[string]string{}
		}
		got.Annotations[AnnotationHealthSet] = mark
	} else {
		delete(got.Annotations, AnnotationHealthSet)
	}
	return nodes.Update(ctx, got, metav1.UpdateOptions{})
}

// updateNodeStatus brings got's status to want's, keeping the transition times of conditions
// that did not change.
func updateNodeStatus(ctx context.Context, nodes typedcorev1.NodeInterface, got, want *corev1.Node, now metav1.Time) error {
	status := want.Status.DeepCopy()
	for i := range status.Conditions {
		status.Conditions[i].LastHeartbeatTime = now
		status.Conditions[i].LastTransitionTime = now
		for _, c := range got.Status.Conditions {
			if c.Type == status.Conditions[i].Type && c.Status == status.Conditions[i].Status {
				status.Conditions[i].LastTransitionTime = c.LastTransitionTime
			}
		}
	}
	if equality.Semantic.DeepEqual(got.Status.Capacity, status.Capacity) &&
		equality.Semantic.DeepEqual(got.Status.Allocatable, status.Allocatable) &&
		sameConditions(got.Status.Conditions, status.Conditions) &&
		equality.Semantic.DeepEqual(got.Status.NodeInfo, status.NodeInfo) &&
		equality.Semantic.DeepEqual(got.Status.Addresses, status.Addresses) {
		return nil
	}
	got.Status = *status
	_, err := nodes.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	return err
}

func sameConditions(a, b []corev1.NodeCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason ||
			a[i].LastHeartbeatTime.IsZero() || a[i].LastTransitionTime.IsZero() {
			return false
		}
	}
	return true
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// SumNodes sums observed Nodes per instance-type label (nodes without the label are
// skipped) into the same shape as ExpectedTotals, from allocatable, spec.unschedulable
// and the Ready condition, so a test can compare the two with ==.
func SumNodes(nodes []corev1.Node) map[string]Totals {
	out := map[string]Totals{}
	for i := range nodes {
		n := &nodes[i]
		it := n.Labels[LabelInstanceType]
		if it == "" {
			continue
		}
		t := out[it]
		t.InstanceType = it
		t.Nodes++
		switch {
		case n.Spec.Unschedulable:
			t.CordonedNodes++
		case !healthOf(n).Ready:
			t.NotReadyNodes++
		default:
			t.SchedulableNodes++
		}
		a := n.Status.Allocatable
		for _, r := range []string{catalog.ResourceNvidiaGPU, catalog.ResourceNeuronDevice} {
			if q, ok := a[corev1.ResourceName(r)]; ok {
				t.AcceleratorResource = r
				t.Accelerators += q.Value()
			}
		}
		if q, ok := a[corev1.ResourceCPU]; ok {
			t.VCPU += float64(q.MilliValue()) / 1000
		}
		if q, ok := a[corev1.ResourceMemory]; ok {
			t.MemoryGiB += float64(q.Value()) / (1 << 30)
		}
		if q, ok := a[ResourceEFA]; ok {
			t.EFA += q.Value()
		}
		if q, ok := a[corev1.ResourcePods]; ok {
			t.Pods += q.Value()
		}
		out[it] = t
	}
	return out
}
