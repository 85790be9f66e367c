package localcluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// SetNodeHealth changes one node's health; the keep-alive reconcile keeps it, CreateFleet brings
// the node back to the fleet exactly.
func TestSetNodeHealth(t *testing.T) {
	fleet := []NodeSpec{{InstanceType: "ml.c5.4xlarge", Count: 2, Cordoned: 1}}
	tests := []struct {
		name   string
		node   string
		health NodeHealth
	}{
		{"pending reboot", NodeName("ml.c5.4xlarge", 1), NodeHealth{Status: "UnschedulablePendingReboot", Ready: true}},
		{"not ready", NodeName("ml.c5.4xlarge", 1), NodeHealth{Status: NodeHealthSchedulable}},
		{"pending replacement and not ready", NodeName("ml.c5.4xlarge", 1), NodeHealth{Status: "UnschedulablePendingReplacement"}},
		{"no label", NodeName("ml.c5.4xlarge", 1), NodeHealth{Ready: true}},
		{"cordoned node", NodeName("ml.c5.4xlarge", 2), NodeHealth{Status: "Unschedulable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cs := fake.NewClientset()
			if err := CreateFleet(ctx, cs, fleet, catalog.Builtin()); err != nil {
				t.Fatal(err)
			}
			fleetNodes, err := Nodes(fleet, catalog.Builtin())
			if err != nil {
				t.Fatal(err)
			}
			var want *corev1.Node
			for _, n := range fleetNodes {
				if n.Name == tt.node {
					want = n
				}
			}
			get := func() *corev1.Node {
				n, err := cs.CoreV1().Nodes().Get(ctx, tt.node, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			checkSet := func(when string) {
				t.Helper()
				n := get()
				if got := healthOf(n); got != tt.health {
					t.Errorf("%s: health %+v, want %+v", when, got, tt.health)
				}
				if _, labelled := n.Labels[LabelNodeHealth]; labelled != (tt.health.Status != "") {
					t.Errorf("%s: labels %v, want the health label only with a status", when, n.Labels)
				}
				if n.Annotations[AnnotationHealthSet] == "" {
					t.Errorf("%s: no %s annotation", when, AnnotationHealthSet)
				}
				if hasTaint(n, TaintNotReady) == tt.health.Ready {
					t.Errorf("%s: taints %v, want the not-ready taint only when not Ready", when, n.Spec.Taints)
				}
				if hasTaint(n, TaintUnschedulable) != want.Spec.Unschedulable || n.Spec.Unschedulable != want.Spec.Unschedulable {
					t.Errorf("%s: cordon state changed: unschedulable %v, taints %v", when, n.Spec.Unschedulable, n.Spec.Taints)
				}
			}

			if err := SetNodeHealth(ctx, cs, tt.node, tt.health); err != nil {
				t.Fatal(err)
			}
			checkSet("after SetNodeHealth")
			if err := reconcileFleet(ctx, cs, fleet, catalog.Builtin(), true); err != nil {
				t.Fatal(err)
			}
			checkSet("after the keep-alive reconcile")

			if err := CreateFleet(ctx, cs, fleet, catalog.Builtin()); err != nil {
				t.Fatal(err)
			}
			n := get()
			if got := healthOf(n); got != Healthy {
				t.Errorf("after CreateFleet: health %+v, want %+v", got, Healthy)
			}
			if _, marked := n.Annotations[AnnotationHealthSet]; marked {
				t.Errorf("after CreateFleet: annotations %v still mark the node", n.Annotations)
			}
			if !equality.Semantic.DeepEqual(n.Labels, want.Labels) || !equality.Semantic.DeepEqual(n.Spec.Taints, want.Spec.Taints) ||
				!sameConditions(n.Status.Conditions, want.Status.Conditions) {
				t.Errorf("after CreateFleet: labels %v, taints %v, conditions %v; want the fleet's %v, %v, %v",
					n.Labels, n.Spec.Taints, n.Status.Conditions, want.Labels, want.Spec.Taints, want.Status.Conditions)
			}
		})
	}
}

func TestSetNodeHealthUnknownNode(t *testing.T) {
	if err := SetNodeHealth(context.Background(), fake.NewClientset(), "hyperpod-i-none-1", Healthy); err == nil {
		t.Error("SetNodeHealth of a node that does not exist succeeded")
	}
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
