package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const quotaAddr = "hyperpod_compute_quota.test"

var res0 = tfjsonpath.New("resources").AtSliceIndex(0)

func planned(attr tfjsonpath.Path, v knownvalue.Check) plancheck.PlanCheck {
	return plancheck.ExpectKnownValue(quotaAddr, attr, v)
}

func preApply(checks ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: checks}
}

func TestAccComputeQuota_acceleratorsOnly(t *testing.T) {
	const team = "qacc-accel"
	addr := quotaAddr
	cleanupQueue(t, team)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
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

// Terraform's count meta-argument, and whole instances: count = 1 of ml.g5.12xlarge is the raw
// instance (4 GPUs, 48 vCPU, 192 GiB, 1 EFA), as HyperPod reports it.
func TestAccComputeQuota_countMetaArgumentAndInstances(t *testing.T) {
	teams := []string{"qacc-count-0", "qacc-count-1"}
	for _, team := range teams {
		cleanupQueue(t, team)
	}
	addr := "hyperpod_compute_quota.team"
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(checkQueueGone(t, teams[0]), checkQueueGone(t, teams[1])),
		Steps: []resource.TestStep{{
			Config: `
resource "hyperpod_compute_quota" "team" {
  count = 2
  name  = "count-${count.index}"
  team  = "qacc-count-${count.index}"
  resources = [{
    instance_type = "ml.g5.12xlarge"
    count         = count.index + 1
  }]
  resource_sharing = { strategy = "DontLend" }
}
`,
			ConfigPlanChecks: preApply(
				plancheck.ExpectKnownValue(addr+"[0]", res0.AtMapKey("accelerators"), knownvalue.Int64Exact(4)),
				plancheck.ExpectKnownValue(addr+"[0]", res0.AtMapKey("vcpu"), knownvalue.Float64Exact(48)),
				plancheck.ExpectKnownValue(addr+"[0]", res0.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(192)),
				plancheck.ExpectKnownValue(addr+"[0]", res0.AtMapKey("efa"), knownvalue.Int64Exact(1)),
				plancheck.ExpectKnownValue(addr+"[1]", res0.AtMapKey("accelerators"), knownvalue.Int64Exact(8)),
				plancheck.ExpectKnownValue(addr+"[1]", res0.AtMapKey("efa"), knownvalue.Int64Exact(2)),
				plancheck.ExpectKnownValue(addr+"[1]", tfjsonpath.New("resource_sharing").AtMapKey("borrow_limit"), knownvalue.Null()),
			),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkQuantity(t, teams[0], "ml.g5.12xlarge", "cpu", "nominal", "48"),
				checkQuantity(t, teams[0], "ml.g5.12xlarge", "memory", "nominal", "192Gi"),
				checkQuantity(t, teams[0], "ml.g5.12xlarge", "nvidia.com/gpu", "nominal", "4"),
				checkQuantity(t, teams[0], "ml.g5.12xlarge", "vpc.amazonaws.com/efa", "nominal", "1"),
				checkQuantity(t, teams[0], "ml.g5.12xlarge", "aws.amazon.com/neurondevice", "nominal", "0"),
				checkQuantity(t, teams[1], "ml.g5.12xlarge", "nvidia.com/gpu", "nominal", "8"),
				checkQuantity(t, teams[1], "ml.g5.12xlarge", "nvidia.com/gpu", "borrowing", "0"),
				checkQuantity(t, teams[1], "ml.g5.12xlarge", "nvidia.com/gpu", "lending", "0"),
			),
		}},
	})
}

// Explicit values win over the ratio; MIG partitions, vCPU-only and memory-only entries on CPU
// types, and several accelerator kinds in one quota.
func TestAccComputeQuota_mixedEntries(t *testing.T) {
	const team = "qacc-mixed"
	cleanupQueue(t, team)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{{
			Config: acctest.Quota(team).Body(`
  resources = [
    { instance_type = "ml.g5.24xlarge", accelerators = 16, vcpu = 200, memory_in_gib = 2 },
    { instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-1g.5gb", count = 2 } },
    { instance_type = "ml.c5.4xlarge", vcpu = 4 },
    { instance_type = "ml.c5.9xlarge", memory_in_gib = 2.9 },
    { instance_type = "ml.trn1.32xlarge", accelerators = 8 },
  ]
`).HCL(),
			ConfigPlanChecks: preApply(
				planned(res0.AtMapKey("vcpu"), knownvalue.Float64Exact(200)),
				planned(res0.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(2)),
				planned(res0.AtMapKey("efa"), knownvalue.Int64Exact(4)),
				planned(tfjsonpath.New("resources").AtSliceIndex(1).AtMapKey("vcpu"), knownvalue.Float64Exact(3.428)),
				planned(tfjsonpath.New("resources").AtSliceIndex(1).AtMapKey("memory_in_gib"), knownvalue.Float64Exact(41.142578125)),
				planned(tfjsonpath.New("resources").AtSliceIndex(1).AtMapKey("accelerators"), knownvalue.Int64Exact(0)),
				planned(tfjsonpath.New("resources").AtSliceIndex(2).AtMapKey("memory_in_gib"), knownvalue.Float64Exact(8)),
				planned(tfjsonpath.New("resources").AtSliceIndex(2).AtMapKey("accelerators"), knownvalue.Int64Exact(0)),
				planned(tfjsonpath.New("resources").AtSliceIndex(3).AtMapKey("vcpu"), knownvalue.Float64Exact(1.45)),
				planned(tfjsonpath.New("resources").AtSliceIndex(4).AtMapKey("vcpu"), knownvalue.Float64Exact(64)),
				planned(tfjsonpath.New("resources").AtSliceIndex(4).AtMapKey("memory_in_gib"), knownvalue.Float64Exact(256)),
			),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkQuantity(t, team, "ml.g5.24xlarge", "cpu", "nominal", "200"),
				checkQuantity(t, team, "ml.g5.24xlarge", "memory", "nominal", "2Gi"),
				checkQuantity(t, team, "ml.g5.24xlarge", "nvidia.com/gpu", "nominal", "16"),
				checkQuantity(t, team, "ml.p4d.24xlarge", "nvidia.com/mig-1g.5gb", "nominal", "2"),
				checkQuantity(t, team, "ml.p4d.24xlarge", "nvidia.com/gpu", "nominal", "0"),
				checkQuantity(t, team, "ml.p4d.24xlarge", "cpu", "nominal", "3428m"),
				checkQuantity(t, team, "ml.p4d.24xlarge", "memory", "nominal", "42130Mi"),
				checkQuantity(t, team, "ml.c5.4xlarge", "memory", "nominal", "8Gi"),
				checkQuantity(t, team, "ml.c5.9xlarge", "cpu", "nominal", "1450m"),
				checkQuantity(t, team, "ml.trn1.32xlarge", "aws.amazon.com/neurondevice", "nominal", "8"),
				checkQuantity(t, team, "ml.trn1.32xlarge", "vpc.amazonaws.com/efa", "nominal", "8"),
			),
		}},
	})
}

// Every strategy, checked field by field in the ClusterQueue.
func TestAccComputeQuota_strategies(t *testing.T) {
	const team = "qacc-strategy"
	cleanupQueue(t, team)
	entry := `
  resources = [{ instance_type = "ml.g5.12xlarge", count = 2 }]
`
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{
				Config: acctest.Quota(team).Body(entry + `
  resource_sharing = {
    strategy     = "LendAndBorrow"
    borrow_limit = 75
    absolute_borrow_limits = [{ instance_type = "ml.g5.12xlarge", accelerators = 1, memory_in_gib = 10.5 }]
  }
  fair_share_weight  = 40
  preempt_team_tasks = "Never"
  cohort             = "research-cohort"
`).HCL(),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuantity(t, team, "ml.g5.12xlarge", "nvidia.com/gpu", "borrowing", "1"),
					checkQuantity(t, team, "ml.g5.12xlarge", "memory", "borrowing", "10752Mi"),
					checkQuantity(t, team, "ml.g5.12xlarge", "cpu", "borrowing", "72"),
					checkQuantity(t, team, "ml.g5.12xlarge", "vpc.amazonaws.com/efa", "borrowing", "1"),
					checkQuantity(t, team, "ml.g5.12xlarge", "cpu", "lending", ""),
					checkQueue(t, team, func(cq kueue.ClusterQueue) error {
						switch {
						case cq.Spec.CohortName != "research-cohort":
							return fmt.Errorf("cohortName = %q", cq.Spec.CohortName)
						case cq.Spec.Preemption == nil || cq.Spec.Preemption.WithinClusterQueue != "Never" ||
							cq.Spec.Preemption.ReclaimWithinCohort != "Any" || cq.Spec.Preemption.BorrowWithinCohort == nil ||
							cq.Spec.Preemption.BorrowWithinCohort.Policy != "Never":
							return fmt.Errorf("preemption = %+v", cq.Spec.Preemption)
						case cq.Spec.FairSharing == nil || cq.Spec.FairSharing.Weight.String() != "40":
							return fmt.Errorf("fairSharing = %+v", cq.Spec.FairSharing)
						case cq.Spec.StopPolicy == nil || *cq.Spec.StopPolicy != "None":
							return fmt.Errorf("stopPolicy = %v", cq.Spec.StopPolicy)
						case cq.Spec.NamespaceSelector == nil || cq.Spec.NamespaceSelector.MatchLabels[quota.LabelQuotaAllocationID] != team:
							return fmt.Errorf("namespaceSelector = %+v", cq.Spec.NamespaceSelector)
						case cq.Labels[quota.LabelManagedBy] != quota.ManagedByValue:
							return fmt.Errorf("labels = %v", cq.Labels)
						}
						want := []string{"cpu", "memory", "nvidia.com/gpu", "aws.amazon.com/neurondevice", "vpc.amazonaws.com/efa"}
						if got := fmt.Sprint(cq.Spec.ResourceGroups[0].CoveredResources); got != fmt.Sprint(want) {
							return fmt.Errorf("coveredResources = %s, want %v", got, want)
						}
						return nil
					}),
				),
			},
			{
				Config: acctest.Quota(team).Body(entry + `
  resource_sharing = { strategy = "Lend" }
  activation_state = "Disabled"
`).HCL(),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					planned(tfjsonpath.New("resource_sharing").AtMapKey("borrow_limit"), knownvalue.Null()),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuantity(t, team, "ml.g5.12xlarge", "nvidia.com/gpu", "borrowing", "0"),
					checkQuantity(t, team, "ml.g5.12xlarge", "nvidia.com/gpu", "lending", ""),
					checkQueue(t, team, func(cq kueue.ClusterQueue) error {
						if cq.Spec.StopPolicy == nil || *cq.Spec.StopPolicy != "Hold" {
							return fmt.Errorf("stopPolicy = %v, want Hold", cq.Spec.StopPolicy)
						}
						if cq.Spec.CohortName != quota.DefaultCohort {
							return fmt.Errorf("cohortName = %q, want the default", cq.Spec.CohortName)
						}
						return nil
					}),
				),
			},
			{
				Config: acctest.Quota(team).Body(entry + `
  resource_sharing = { strategy = "DontLend" }
`).HCL(),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuantity(t, team, "ml.g5.12xlarge", "cpu", "borrowing", "0"),
					checkQuantity(t, team, "ml.g5.12xlarge", "cpu", "lending", "0"),
					checkQuantity(t, team, "ml.g5.12xlarge", "memory", "lending", "0"),
				),
			},
		},
	})
}

// Changing accelerators re-derives vcpu and memory in the plan and updates in place; changing
// the team replaces the quota.
func TestAccComputeQuota_updateAndReplace(t *testing.T) {
	const team, team2 = "qacc-update", "qacc-update-2"
	cleanupQueue(t, team)
	cleanupQueue(t, team2)
	cfg := func(team string, accelerators int) string {
		return acctest.Quota(team).Body(fmt.Sprintf(`
  resources = [{ instance_type = "ml.p5.48xlarge", accelerators = %d }]
`, accelerators)).HCL()
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(checkQueueGone(t, team), checkQueueGone(t, team2)),
		Steps: []resource.TestStep{
			{Config: cfg(team, 4)},
			{
				Config: cfg(team, 2),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					planned(res0.AtMapKey("vcpu"), knownvalue.Float64Exact(48)),
					planned(res0.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(512)),
					planned(res0.AtMapKey("efa"), knownvalue.Int64Exact(32)),
				),
				Check: checkQuantity(t, team, "ml.p5.48xlarge", "cpu", "nominal", "48"),
			},
			{
				Config: cfg(team2, 2),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionReplace),
				),
				Check: resource.ComposeTestCheckFunc(
					checkQueueGone(t, team),
					checkQuantity(t, team2, "ml.p5.48xlarge", "nvidia.com/gpu", "nominal", "2"),
				),
			},
		},
	})
}

// Every plan-time error of a quota configuration, raised without calling the API: the provider points at
// an unreachable host.
func TestAccComputeQuota_planTimeErrors(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"unknown type", `resources = [{ instance_type = "ml.g5.13xlarge", count = 1 }]`, `(?s)Unknown instance type.*resources\[0\]\.instance_type:.*ml\.g5\.12xlarge`},
		{"no size", `resources = [{ instance_type = "ml.g5.12xlarge" }]`, `(?s)No quota size.*count.*accelerators.*vcpu`},
		{"count with accelerators", `resources = [{ instance_type = "ml.g5.12xlarge", count = 1, accelerators = 2 }]`, `(?s)Conflicting attributes.*count`},
		{"count with partition", `resources = [{ instance_type = "ml.p4d.24xlarge", count = 1, accelerator_partition = { type = "mig-1g.5gb", count = 1 } }]`, `(?s)Conflicting attributes.*count.*accelerator_partition`},
		{"accelerators with partition", `resources = [{ instance_type = "ml.p4d.24xlarge", accelerators = 1, accelerator_partition = { type = "mig-1g.5gb", count = 1 } }]`, `(?s)Conflicting attributes.*accelerator_partition`},
		{"accelerators on cpu type", `resources = [{ instance_type = "ml.c5.4xlarge", accelerators = 1 }]`, `(?s)Instance type has no accelerators.*ml\.c5\.4xlarge`},
		{"partition on cpu type", `resources = [{ instance_type = "ml.c5.4xlarge", accelerator_partition = { type = "mig-1g.5gb", count = 1 } }]`, `(?s)Instance type has no accelerators.*ml\.c5\.4xlarge has no accelerators\s+to\s+partition`},
		{"mig profile not offered", `resources = [{ instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-1g.18gb", count = 1 } }]`, `(?s)MIG profile not offered.*resources\[0\]\.accelerator_partition\.type:.*does not offer MIG\s+profile "mig-1g\.18gb".*"mig-1g\.5gb"`},
		{"negative", `resources = [{ instance_type = "ml.c5.4xlarge", vcpu = -1 }]`, `(?s)Negative value.*vcpu`},
		{"duplicate types", `resources = [{ instance_type = "ml.c5.4xlarge", vcpu = 1 }, { instance_type = "ml.c5.4xlarge", vcpu = 2 }]`, `(?s)Duplicate instance type.*resources\[1\]\.instance_type:.*ml\.c5\.4xlarge`},
		{"computed value out of the API's range", `resources = [{ instance_type = "ml.p5.48xlarge", count = 10000000 }]`, `(?s)Computed value too large.*resources\[0\]\.accelerators:.*accelerators would be 80000000`},
		{"more than 15", `resources = [for i in range(16) : { instance_type = "ml.c5.4xlarge", vcpu = i + 1 }]`, `(?s)(Too many resources|at least 1 elements and at\s+most 15)`},
		{"borrow_limit with Lend", `
  resources        = [{ instance_type = "ml.c5.4xlarge", vcpu = 1 }]
  resource_sharing = { strategy = "Lend", borrow_limit = 10 }`, `(?s)borrow_limit needs a strategy that borrows.*resource_sharing\.borrow_limit:`},
		{"absolute limits with DontLend", `
  resources        = [{ instance_type = "ml.c5.4xlarge", vcpu = 1 }]
  resource_sharing = { strategy = "DontLend", absolute_borrow_limits = [{ instance_type = "ml.c5.4xlarge", vcpu = 1 }] }`, `(?s)absolute_borrow_limits needs a strategy that borrows`},
		// An absolute borrow limit follows the rules of a resources entry, at its own path.
		{"absolute limit count with accelerators", `
  resources        = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  resource_sharing = { absolute_borrow_limits = [{ instance_type = "ml.g5.12xlarge", count = 1, accelerators = 2 }] }`,
			`(?s)Conflicting attributes.*resource_sharing\.absolute_borrow_limits\[0\]\.accelerators:.*count\s+and\s+accelerators\s+are\s+both\s+set`},
		{"absolute limit mig profile not offered", `
  resources        = [{ instance_type = "ml.p4d.24xlarge", count = 1 }]
  resource_sharing = { absolute_borrow_limits = [{ instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-1g.18gb", count = 1 } }] }`,
			`(?s)MIG profile not offered.*resource_sharing\.absolute_borrow_limits\[0\]\.accelerator_partition\.type:.*does\s+not\s+offer\s+MIG\s+profile\s+"mig-1g\.18gb"`},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{
			Config:      unreachableProvider + acctest.Quota("qacc-errors").Body(c.body).HCL(),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(c.want),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    steps,
	})
}

// A new quota plans with concrete defaults while the cluster is unreachable.
func TestAccComputeQuota_plansWithoutCluster(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             unreachableProvider + acctest.Quota("qacc-offline").Resource("ml.g6e.48xlarge").Accelerators(4).HCL(),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				planned(res0.AtMapKey("vcpu"), knownvalue.Float64Exact(96)),
				planned(res0.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(768)),
				planned(res0.AtMapKey("efa"), knownvalue.Int64Exact(4)),
			}},
		}},
	})
}

// Terraform's error text does not print nested attribute paths, so the mapping of quota problems
// onto attribute paths is checked here.
func TestAddProblemsPaths(t *testing.T) {
	problems := []quota.Problem{
		{Entry: 2, Path: []string{"accelerator_partition", "type"}, Summary: "s", Detail: "d"},
		{Entry: -1, Path: []string{"resource_sharing", "absolute_borrow_limits", "1", "vcpu"}, Summary: "s", Detail: "d"},
		{Entry: 0, Summary: "s", Detail: "d"},
		{Entry: -1, Summary: "whole", Detail: "d"},
	}
	want := []string{
		"resources[2].accelerator_partition.type",
		"resource_sharing.absolute_borrow_limits[1].vcpu",
		"resources[0]",
		"",
	}
	var diags diag.Diagnostics
	addProblems(&diags, problems)
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d", len(diags), len(want))
	}
	for i, d := range diags {
		got := ""
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			got = wp.Path().String()
		}
		if got != want[i] {
			t.Errorf("diagnostic %d path = %q, want %q", i, got, want[i])
		}
	}
}

// The provider creates missing ResourceFlavors and deletes them with the last quota using them,
// but never deletes a flavor someone else created.
func TestAccComputeQuota_resourceFlavors(t *testing.T) {
	const team = "qacc-flavors"
	const ours, theirs = "ml.g6.xlarge", "ml.g6.2xlarge"
	cleanupQueue(t, team)
	// Someone else's flavor, made before the quota: the provider must leave it alone.
	createForeignFlavor := func() {
		foreign := acctest.MakeResourceFlavor(theirs).Unstructured()
		if _, err := acc.dynamic.Resource(kueue.ResourceFlavors).Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = acc.dynamic.Resource(kueue.ResourceFlavors).Delete(context.Background(), theirs, metav1.DeleteOptions{})
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if _, ok := flavorLabels(ours); ok {
				return fmt.Errorf("ResourceFlavor %s created by the provider survived the last quota using it", ours)
			}
			if _, ok := flavorLabels(theirs); !ok {
				return fmt.Errorf("ResourceFlavor %s that the provider did not create was deleted", theirs)
			}
			return checkQueueGone(t, team)(s)
		},
		Steps: []resource.TestStep{
			{
				PreConfig: createForeignFlavor,
				Config:    acctest.Quota(team).Body(fmt.Sprintf(`  resources = [{ instance_type = %q, count = 1 }, { instance_type = %q, count = 1 }]`, ours, theirs)).HCL(),
				Check: func(*terraform.State) error {
					labels, ok := flavorLabels(ours)
					if !ok || labels[quota.LabelManagedBy] != quota.ManagedByValue {
						return fmt.Errorf("ResourceFlavor %s missing or not labelled as ours: %v", ours, labels)
					}
					if labels, _ := flavorLabels(theirs); labels[quota.LabelManagedBy] != "" {
						return fmt.Errorf("the provider took over ResourceFlavor %s: %v", theirs, labels)
					}
					return nil
				},
			},
		},
	})
}

// Delete waits for the ClusterQueue to disappear and, when Kueue's finalizer holds it past
// timeouts.delete, fails with an error that says why.
func TestAccComputeQuota_deleteHeldByFinalizer(t *testing.T) {
	const team = "qacc-finalizer"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Body(`
  resources = [{ instance_type = "ml.c5.4xlarge", vcpu = 2 }]
  timeouts { delete = "3s" }
`).HCL()
	setFinalizers := func(finalizers string) func() {
		return func() {
			patchQueue(t, team, fmt.Sprintf(`{"metadata":{"finalizers":%s}}`, finalizers))
		}
	}
	t.Cleanup(func() {
		if acc.dynamic == nil {
			return
		}
		if _, ok := getClusterQueue(t, team); ok {
			setFinalizers(`null`)()
		}
	})
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				// Kueue's own finalizer goes as soon as no workload uses the queue (TestAccAdmission
				// tests a queue held by one); another one holds it here.
				PreConfig:   setFinalizers(`["test.quotaworks.io/hold"]`),
				Config:      cfg,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)ClusterQueue not deleted.*held by finalizers\s+\[[^\]]*test\.quotaworks\.io/hold\].*No workload is\s+admitted.*run destroy\s+again`),
			},
			{
				// Once the workloads are gone Kueue lets the queue go; the next plan recreates it.
				PreConfig:        setFinalizers(`null`),
				Config:           cfg,
				ConfigPlanChecks: preApply(plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionCreate)),
			},
		},
	})
}

// Values known only after apply (here the count and the team come from another resource) leave
// the dependent defaults unknown in the plan; apply resolves them and the next plan is empty.
func TestAccComputeQuota_unknownInputs(t *testing.T) {
	const team = "qacc-unknown"
	cleanupQueue(t, team)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "terraform_data" "size" {
  input = { count = 2, team = %q, strategy = "Lend" }
}

resource "hyperpod_compute_quota" "test" {
  name = "unknown-inputs"
  team = terraform_data.size.output.team
  resources = [
    { instance_type = "ml.g5.12xlarge", count = terraform_data.size.output.count },
    { instance_type = "ml.c5.4xlarge", vcpu = 4 },
  ]
  resource_sharing = { strategy = terraform_data.size.output.strategy }
}
`, team),
			ConfigPlanChecks: preApply(
				plancheck.ExpectUnknownValue(quotaAddr, res0.AtMapKey("vcpu")),
				plancheck.ExpectUnknownValue(quotaAddr, res0.AtMapKey("accelerators")),
				plancheck.ExpectUnknownValue(quotaAddr, tfjsonpath.New("cluster_queue_name")),
				plancheck.ExpectUnknownValue(quotaAddr, tfjsonpath.New("resource_sharing").AtMapKey("borrow_limit")),
				// The entry whose inputs are known is still computed during plan.
				planned(tfjsonpath.New("resources").AtSliceIndex(1).AtMapKey("memory_in_gib"), knownvalue.Float64Exact(8)),
			),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(quotaAddr, res0.AtMapKey("accelerators"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue(quotaAddr, res0.AtMapKey("vcpu"), knownvalue.Float64Exact(96)),
				statecheck.ExpectKnownValue(quotaAddr, tfjsonpath.New("id"), knownvalue.StringExact(team)),
				statecheck.ExpectKnownValue(quotaAddr, tfjsonpath.New("resource_sharing").AtMapKey("borrow_limit"), knownvalue.Null()),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkQuantity(t, team, "ml.g5.12xlarge", "nvidia.com/gpu", "nominal", "8"),
				checkQuantity(t, team, "ml.g5.12xlarge", "nvidia.com/gpu", "borrowing", "0"),
			),
		}},
	})
}

// A queue that is being deleted is waited for, and the create explains when it stays.
func TestAccComputeQuota_createWaitsForDeletion(t *testing.T) {
	const team = "qacc-terminating"
	const finalizer = "test.quotaworks.io/hold"
	cleanupQueue(t, team)
	release := func() {
		patchQueue(t, team, `{"metadata":{"finalizers":null}}`)
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					acctest.MakeClusterQueue(quota.ClusterQueueName(team)).Flavor("ml.g5.12xlarge", acctest.Nominal{CPU: "1", Memory: "1Gi", Accelerators: "0"}).Create(t)
					patchQueue(t, team, `{"metadata":{"finalizers":["`+finalizer+`"]}}`)
					if err := acc.dynamic.Resource(kueue.ClusterQueues).Delete(context.Background(), quota.ClusterQueueName(team), metav1.DeleteOptions{}); err != nil {
						t.Fatalf("deleting: %v", err)
					}
				},
				Config: acctest.Quota(team).Body(`
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  timeouts {
    create = "2s"
  }`).HCL(),
				ExpectError: regexp.MustCompile(`(?s)ClusterQueue is being deleted.*` + tnsPhrase(`finalizers [`+finalizer+`]`)),
			},
			{
				PreConfig: func() {
					// Released once the create provably waits: it goes on as soon as the queue
					// is gone.
					waiting := waitBegins(t, backend.WaitQuotaGone, team)
					go func() {
						select {
						case <-waiting:
						case <-time.After(2 * time.Minute):
							t.Error("the create did not wait for the queue being deleted")
						}
						release()
					}()
				},
				Config: acctest.Quota(team).Body(`
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  timeouts {
    create = "1m"
  }`).HCL(),
				Check: checkOwnerRecorded(t, team),
			},
		},
	})
}

// An empty list is kept as written: absolute_borrow_limits = [] round-trips with an empty plan.
func TestAccComputeQuota_emptyListKept(t *testing.T) {
	const team = "qacc-empty-list"
	cleanupQueue(t, team)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{{
			Config: acctest.Quota(team).Body(`
  resources        = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  resource_sharing = { absolute_borrow_limits = [] }`).HCL(),
			ConfigPlanChecks: preApply(planned(tfjsonpath.New("resource_sharing").AtMapKey("absolute_borrow_limits"), knownvalue.ListExact([]knownvalue.Check{}))),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(quotaAddr, tfjsonpath.New("resource_sharing").AtMapKey("absolute_borrow_limits"), knownvalue.ListExact([]knownvalue.Check{})),
			},
		}},
	})
}
