package provider

// Which path a provider configuration takes to a cluster with the task-governance add-on, and
// what each path refuses.

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
)

// On a cluster that shows the add-on, the Kubernetes path refuses every write, naming the add-on
// and showing the provider block of the SageMaker path; data sources keep reading.
func TestAccTaskGovernance_kubernetesPathRefusesWrites(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	refused := regexp.MustCompile(`(?s)Cluster runs the task-governance add-on.*task_governance \{`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: tg.KubernetesProviderHCL() + acctest.Quota("tg-refused").Resource("ml.g5.12xlarge").Count(1).HCL(), ExpectError: refused},
			{Config: tg.KubernetesProviderHCL() + acctest.TeamNamespace("tg-refused").HCL(), ExpectError: refused},
			{Config: tg.KubernetesProviderHCL() + acctest.SchedulerConfig().Class("tg-refused", 10).HCL(), ExpectError: refused},
			{
				Config: tg.KubernetesProviderHCL() + `
data "hyperpod_instance_type_capacity" "g5" {
  instance_type = "ml.g5.12xlarge"
}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.hyperpod_instance_type_capacity.g5", tfjsonpath.New("node_count"), knownvalue.Int64Exact(4)),
				},
			},
		},
	})
}

// Without a Kubernetes connection the SageMaker path still plans and applies quotas and reports
// capacity from DescribeCluster's instance groups (counted at the catalog's figures); the usage
// data source, which only Kueue's status can answer, says what it needs.
func TestAccTaskGovernance_withoutKubernetes(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	t.Setenv("KUBE_CONFIG_PATH", "") // the suite's own cluster would otherwise be the connection
	apiOnly := fmt.Sprintf("provider \"hyperpod\" {\n  task_governance {\n    cluster_arn = %q\n    endpoint    = %q\n"+
		"    access_key  = \"emulator\"\n    secret_key  = \"emulator\"\n  }\n}\n", tg.ClusterARN, tg.Emulator.URL())
	const capacity = "data.hyperpod_instance_type_capacity.g5"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: apiOnly + acctest.Quota("tg-apionly").Resource("ml.g5.12xlarge").Accelerators(1).HCL() + `
data "hyperpod_instance_type_capacity" "g5" {
  instance_type = "ml.g5.12xlarge"
  depends_on    = [hyperpod_compute_quota.test]
}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(capacity, tfjsonpath.New("node_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(capacity, tfjsonpath.New("total_accelerators"), knownvalue.Int64Exact(16)),
					statecheck.ExpectKnownValue(capacity, tfjsonpath.New("total_vcpu"), knownvalue.Float64Exact(192)),
				},
			},
			{
				Config: apiOnly + `
data "hyperpod_team_usage" "t" {
  team = "tg-apionly"
}`,
				ExpectError: regexp.MustCompile(`(?s)Kubernetes connection needed.*status of its ClusterQueue`),
			},
		},
	})
}

// A task_governance block whose values are known only after apply (the cluster's ARN from
// another resource) still plans the SageMaker path: the plan of a new quota needs no API call,
// and what it shows is what the API gets.
func TestAccTaskGovernance_unknownProviderConfig(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	cfg := fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

provider "hyperpod" {
  config_path = %q
  task_governance {
    cluster_arn = terraform_data.cluster.output
    endpoint    = %q
    access_key  = "emulator"
    secret_key  = "emulator"
  }
}
`, tg.ClusterARN, tg.Kubeconfig, tg.Emulator.URL()) + acctest.Quota("tg-unknown").Resource("ml.p5.48xlarge").Accelerators(4).HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("vcpu"), knownvalue.Float64Exact(96)),
				plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("efa"), knownvalue.Null()),
				plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("cohort"), knownvalue.Null()),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("quota_id"), knownvalue.StringRegexp(tgQuotaID)),
			},
		}},
	})
}

// A quota the SageMaker API holds is not refreshed or destroyed without the task_governance
// block: from Kubernetes the provider would lose track of it and leave it in the API.
func TestAccTaskGovernance_refusesThePathWithoutTheBlock(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	quotaHCL := acctest.Quota("tg-path").Resource("ml.c5.4xlarge").VCPU(1).HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: tg.ProviderHCL() + quotaHCL},
			{
				// Planned without the refresh, the other path's traits differ (efa, cohort); the
				// refresh is refused.
				Config:             `provider "hyperpod" {}` + "\n" + quotaHCL,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ExpectError:        regexp.MustCompile(`(?s)Object held by the SageMaker API.*Add the\s+task_governance block back`),
			},
			{Config: tg.ProviderHCL() + quotaHCL, PlanOnly: true},
		},
	})
}
