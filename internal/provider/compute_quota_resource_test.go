package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// getClusterQueue reads a ClusterQueue with client-go, as the tests' independent view of the cluster.
func getClusterQueue(t *testing.T, team string) (kueue.ClusterQueue, bool) {
	t.Helper()
	u, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(context.Background(), quota.ClusterQueueName(team), metav1.GetOptions{})
	if err != nil {
		return kueue.ClusterQueue{}, false
	}
	var cq kueue.ClusterQueue
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
		t.Fatalf("decoding ClusterQueue: %v", err)
	}
	return cq, true
}

// nominal returns the nominal quota (and limits) of resource res in flavor of the team's queue.
func quotaCell(cq kueue.ClusterQueue, flavor, res string) (kueue.ResourceQuota, bool) {
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			if f.Name != flavor {
				continue
			}
			for _, r := range f.Resources {
				if string(r.Name) == res {
					return r, true
				}
			}
		}
	}
	return kueue.ResourceQuota{}, false
}

func checkQuantity(t *testing.T, team, flavor, res, field, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cq, ok := getClusterQueue(t, team)
		if !ok {
			return fmt.Errorf("ClusterQueue of team %s not found", team)
		}
		cell, ok := quotaCell(cq, flavor, res)
		if !ok {
			return fmt.Errorf("flavor %s resource %s not in ClusterQueue %s", flavor, res, cq.Name)
		}
		var got string
		switch field {
		case "nominal":
			got = cell.NominalQuota.String()
		case "borrowing":
			if cell.BorrowingLimit != nil {
				got = cell.BorrowingLimit.String()
			}
		case "lending":
			if cell.LendingLimit != nil {
				got = cell.LendingLimit.String()
			}
		}
		if got != want {
			return fmt.Errorf("ClusterQueue %s flavor %s %s %s = %q, want %q", cq.Name, flavor, res, field, got, want)
		}
		return nil
	}
}

func TestAccComputeQuota_acceleratorsOnly(t *testing.T) {
	const team = "qacc-accel"
	addr := "hyperpod_compute_quota.test"
	res0 := tfjsonpath.New("resources").AtSliceIndex(0)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "hyperpod_compute_quota" "test" {
  name = "research-quota"
  team = %q
  resources = [{
    instance_type = "ml.p5.48xlarge"
    accelerators  = 4
  }]
}
`, team),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				plancheck.ExpectKnownValue(addr, res0.AtMapKey("vcpu"), knownvalue.Float64Exact(96)),
				plancheck.ExpectKnownValue(addr, res0.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(1024)),
				plancheck.ExpectKnownValue(addr, res0.AtMapKey("efa"), knownvalue.Int64Exact(32)),
				plancheck.ExpectKnownValue(addr, tfjsonpath.New("cluster_queue_name"), knownvalue.StringExact(quota.ClusterQueueName(team))),
				plancheck.ExpectKnownValue(addr, tfjsonpath.New("resource_sharing").AtMapKey("borrow_limit"), knownvalue.Int64Exact(50)),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(team)),
				statecheck.ExpectKnownValue(addr, res0.AtMapKey("accelerators"), knownvalue.Int64Exact(4)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkQuantity(t, team, "ml.p5.48xlarge", "nvidia.com/gpu", "nominal", "4"),
				checkQuantity(t, team, "ml.p5.48xlarge", "cpu", "nominal", "96"),
				checkQuantity(t, team, "ml.p5.48xlarge", "memory", "nominal", "1Ti"),
				checkQuantity(t, team, "ml.p5.48xlarge", "nvidia.com/gpu", "borrowing", "2"),
			),
		}},
	})
}
