package quota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func TestUsageOf(t *testing.T) {
	q := resource.MustParse
	cq := renderedQueue(t) // ml.g5.12xlarge, count 1: 48 cpu, 192Gi, 4 GPUs
	cq.Status = &kueue.ClusterQueueStatus{
		FlavorsReservation: []kueue.FlavorUsage{{Name: "ml.g5.12xlarge", Resources: []kueue.ResourceUsage{
			{Name: "nvidia.com/gpu", Total: q("6"), Borrowed: q("2")}, {Name: corev1.ResourceMemory, Total: q("96Gi")}}}},
		FlavorsUsage: []kueue.FlavorUsage{{Name: "ml.g5.12xlarge", Resources: []kueue.ResourceUsage{
			{Name: "nvidia.com/gpu", Total: q("4")}}}},
		AdmittedWorkloads: 1, PendingWorkloads: 2, ReservingWorkloads: 2,
		Conditions: []metav1.Condition{{Type: "Active", Status: metav1.ConditionTrue, Reason: "Ready", Message: "Can admit new workloads"}},
	}
	u := UsageOf(cq)
	if !u.Active || u.ActiveReason != "Ready" || u.AdmittedWorkloads != 1 || u.PendingWorkloads != 2 || u.ReservingWorkloads != 2 {
		t.Errorf("usage %+v", u)
	}
	got := map[string][4]string{}
	for _, r := range u.Resources {
		if r.InstanceType != "ml.g5.12xlarge" {
			t.Errorf("flavor %q", r.InstanceType)
		}
		got[r.Resource] = [4]string{RatString(r.Nominal), RatString(r.Reserved), RatString(r.InUse), RatString(r.Borrowed)}
	}
	for res, want := range map[string][4]string{
		"cpu": {"48", "0", "0", "0"}, "memory": {"192", "96", "0", "0"}, "nvidia.com/gpu": {"4", "6", "4", "2"},
	} {
		if got[res] != want {
			t.Errorf("%s: nominal, reserved, in use, borrowed = %v, want %v", res, got[res], want)
		}
	}
	if u := UsageOf(renderedQueue(t)); u.Active || u.AdmittedWorkloads != 0 || len(u.Resources) == 0 {
		t.Errorf("a queue without status: %+v", u)
	}
}

func TestImpactOf(t *testing.T) {
	q := resource.MustParse
	now := Usage{AdmittedWorkloads: 3, Resources: []ResourceUsage{
		{InstanceType: "ml.g5.12xlarge", Resource: "nvidia.com/gpu", Reserved: ratInt(6)},
		{InstanceType: "ml.g5.12xlarge", Resource: "cpu", Reserved: ratInt(8)},
		{InstanceType: "ml.p5.48xlarge", Resource: "nvidia.com/gpu", Reserved: ratInt(1)},
		{InstanceType: "ml.c5.4xlarge", Resource: "cpu", Reserved: ratInt(0)},
	}}
	four, two := q("4"), q("2")
	planned := kueue.ClusterQueueSpec{ResourceGroups: []kueue.ResourceGroup{{Flavors: []kueue.FlavorQuotas{{
		Name: "ml.g5.12xlarge", Resources: []kueue.ResourceQuota{
			{Name: "nvidia.com/gpu", NominalQuota: four, BorrowingLimit: &two}, // limit 6: holds
			{Name: "cpu", NominalQuota: q("4"), BorrowingLimit: &two},          // limit 6 < 8
		}}}}}}
	got := ImpactOf(now, planned)
	// cpu of ml.g5.12xlarge is over; the dropped ml.p5.48xlarge flavor has limit 0.
	if len(got) != 2 || got[0].Resource != "cpu" || RatString(got[0].Limit) != "6" || RatString(got[0].Reserved) != "8" ||
		got[0].Workloads != 3 || got[1].InstanceType != "ml.p5.48xlarge" || RatString(got[1].Limit) != "0" {
		t.Errorf("impact %+v", got)
	}
	planned.ResourceGroups[0].Flavors[0].Resources[1].BorrowingLimit = nil
	if got := ImpactOf(now, planned); len(got) != 1 || got[0].InstanceType != "ml.p5.48xlarge" {
		t.Errorf("a resource that may borrow without bound is never over: %+v", got)
	}
}
