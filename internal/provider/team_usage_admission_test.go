package provider

// hyperpod_team_usage against Kueue's own accounting of a team's quota.

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
)

// hyperpod_team_usage reports what Kueue reports for a borrowing team: nominal quota, reserved
// and used amounts, the borrowed part, the workload counts and the Active condition.
func TestAccTeamUsage_borrowing(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"e2e-usage-a", "e2e-usage-b"}
	e2eCleanup(t, teams...)
	config := lenderAndBorrower("e2e-usage", "e2e-usage-a", "e2e-usage-b", `{ strategy = "LendAndBorrow", borrow_limit = 50 }`)
	const usage = "data.hyperpod_team_usage.b"
	gpu := tfjsonpath.New("resources").AtSliceIndex(2)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) (err error) {
					defer func() {
						if err != nil {
							deleteAllWork(t, teams)
						}
					}()
					if err := admitBorrowing(t, "e2e-usage-b", "six", "6", "2"); err != nil {
						return err
					}
					// Kueue counts admitted and pending workloads in the queue's status apart from its
					// usage, and may update them later: the next step reads them.
					return waitQueueCounts("e2e-usage-b", 1, 0)
				},
			},
			{
				Config: config + `
data "hyperpod_team_usage" "b" {
  team = hyperpod_team_namespace.e2e_usage_b.team
}
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(usage, tfjsonpath.New("active"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(usage, tfjsonpath.New("admitted_workloads"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(usage, tfjsonpath.New("pending_workloads"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("instance_type"), knownvalue.StringExact("ml.g5.12xlarge")),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("resource"), knownvalue.StringExact("nvidia.com/gpu")),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("nominal"), knownvalue.Float64Exact(4)),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("reserved"), knownvalue.Float64Exact(6)),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("in_use"), knownvalue.Float64Exact(6)),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("borrowed"), knownvalue.Float64Exact(2)),
					statecheck.ExpectKnownValue(usage, tfjsonpath.New("resources").AtSliceIndex(1).AtMapKey("reserved"), knownvalue.Float64Exact(16)),
				},
				Check: func(*terraform.State) error { deleteAllWork(t, teams); return nil },
			},
		},
	})
}

// A team without a ClusterQueue is a clear error.
func TestAccTeamUsage_missingQueue(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      `data "hyperpod_team_usage" "none" { team = "no-such-team" }`,
			ExpectError: regexp.MustCompile(`(?s)Team has no ClusterQueue.*` + tnsPhrase(`ClusterQueue "hyperpod-ns-no-such-team-clusterqueue" does not exist`)),
		}},
	})
}
