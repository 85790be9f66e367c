package provider

// Whose queue it is: import, a queue another tool made, and the owner identity the queue records.

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Import by `terraform import` and by an import block reproduces the state.
func TestAccComputeQuota_import(t *testing.T) {
	const team = "qacc-import"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Body(`
  description = "imported"
  resources = [
    { instance_type = "ml.g5.12xlarge", count = 1 },
    { instance_type = "ml.c5.9xlarge", memory_in_gib = 2.9 },
    { instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-3g.20gb", count = 1 } },
  ]
  resource_sharing = {
    borrow_limit           = 20
    absolute_borrow_limits = [{ instance_type = "ml.g5.12xlarge", vcpu = 1.5 }]
  }
`).HCL()
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				Config:                               cfg,
				ResourceName:                         quotaAddr,
				ImportState:                          true,
				ImportStateId:                        team,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
				// An import takes the queue over: owner_id is recorded anew by the next apply, and
				// drift says so until then (TestAccComputeQuota_ownership checks both).
				ImportStateVerifyIgnore: []string{"timeouts", "owner_id", "drift"},
			},
			{
				// The import takes the queue over: its plan updates, and says why.
				Config:             cfg,
				ResourceName:       quotaAddr,
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ImportStateId:      team,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(quotaAddr, tfjsonpath.New("owner_id")),
				}},
			},
		},
	})
}

// Create refuses a ClusterQueue someone else made and shows how to import it.
func TestAccComputeQuota_refusesForeignQueue(t *testing.T) {
	const team = "qacc-foreign"
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				acctest.MakeClusterQueue(quota.ClusterQueueName(team)).Flavor("ml.g5.12xlarge", acctest.Nominal{CPU: "1", Memory: "1Gi", Accelerators: "0"}).Create(t)
			},
			Config:      acctest.Quota(team).Resource("ml.g5.12xlarge").Count(1).HCL(),
			ExpectError: regexp.MustCompile(`(?s)ClusterQueue already exists.*hyperpod-ns-qacc-foreign-clusterqueue.*terraform import.*qacc-foreign`),
		}},
	})
}

// One owner per team. A second state that declares the same team is refused, naming the owner,
// and the first state's queue is untouched. When the queue records another owner (as after an
// import elsewhere), the first state's plan is refused rather than taking it back, and destroying
// the first state leaves the queue alone.
func TestAccComputeQuota_ownership(t *testing.T) {
	const team = "qacc-owner"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Resource("ml.g5.12xlarge").Count(1).HCL()
	// Not parallel: a step runs a second, independent test case (another state) inside it.
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			cq, found := getClusterQueue(t, team)
			if !found || cq.Annotations[quota.AnnotationOwner] != "someone-else" {
				return fmt.Errorf("destroying a resource that no longer owns the queue must leave it: found %v, annotations %v", found, cq.Annotations)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigPlanChecks: preApply(
					plancheck.ExpectUnknownValue(quotaAddr, tfjsonpath.New("owner_id")),
					planned(tfjsonpath.New("drift"), knownvalue.ListExact([]knownvalue.Check{})),
				),
				Check: checkOwnerRecorded(t, team),
			},
			{
				PreConfig: func() {
					resource.Test(t, resource.TestCase{
						ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
						Steps: []resource.TestStep{{
							Config: acctest.Quota(team).Resource("ml.g5.12xlarge").Count(2).HCL(),
							ExpectError: regexp.MustCompile(`(?s)ClusterQueue already exists.*` +
								tnsPhrase(`managed by another Terraform resource (owner_id "`) + `[0-9a-f-]+` +
								tnsPhrase(`" for compute quota "qacc-owner-quota")`) + `.*` +
								tnsPhrase(`terraform import hyperpod_compute_quota.<name> qacc-owner`)),
						}},
					})
				},
				// The refused state changed nothing: this one plans no change.
				Config:   cfg,
				PlanOnly: true,
				Check:    checkOwnerRecorded(t, team),
			},
			{
				PreConfig: func() {
					patchQueue(t, team, `{"metadata":{"annotations":{"`+quota.AnnotationOwner+`":"someone-else"}}}`)
				},
				Config:      cfg,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Team owned by another resource.*` + tnsPhrase(`owner_id "someone-else"`)),
			},
		},
	})
}

// Import takes a queue over explicitly: the plan shows why it updates, the apply records this
// resource's owner identity, and the next plan is empty.
func TestAccComputeQuota_importTakesOver(t *testing.T) {
	const team = "qacc-takeover"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Resource("ml.g5.12xlarge").Count(1).HCL()
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					acctest.MakeClusterQueue(quota.ClusterQueueName(team)).Flavor("ml.g5.12xlarge", acctest.Nominal{CPU: "48", Memory: "192Gi", Accelerators: "4"}).Create(t)
					patchQueue(t, team, `{"metadata":{"labels":{"`+quota.LabelManagedBy+`":"`+quota.ManagedByValue+`"},"annotations":{"`+quota.AnnotationOwner+`":"previous-owner"}}}`)
				},
				Config: cfg + fmt.Sprintf("\nimport {\n  to = %s\n  id = %q\n}\n", quotaAddr, team),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(quotaAddr, tfjsonpath.New("owner_id")),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOwnerRecorded(t, team),
					resource.TestCheckResourceAttr(quotaAddr, "drift.#", "0"),
				),
			},
		},
	})
}
