package localcluster

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

func TestKeepFleetAliveRenewsLeases(t *testing.T) {
	cs := fake.NewClientset()
	fleet := []NodeSpec{{InstanceType: "ml.g5.12xlarge", Count: 2}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- KeepFleetAlive(ctx, cs, fleet, catalog.Builtin(), 20*time.Millisecond) }()

	name := NodeName("ml.g5.12xlarge", 2)
	renewTime := func() time.Time {
		l, err := cs.CoordinationV1().Leases(NodeLeaseNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return time.Time{}
		}
		return l.Spec.RenewTime.Time
	}
	deadline := time.Now().Add(time.Minute) // a bound for a hang only
	var first time.Time
	for first.IsZero() && time.Now().Before(deadline) {
		first = renewTime()
		time.Sleep(5 * time.Millisecond)
	}
	if first.IsZero() {
		t.Fatalf("no lease for node %s", name)
	}
	for !renewTime().After(first) {
		if time.Now().After(deadline) {
			t.Fatalf("lease of node %s was not renewed", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		t.Fatalf("node %s not created: %v", name, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("KeepFleetAlive: %v", err)
	}
}
