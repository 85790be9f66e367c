package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Resource identity (Terraform 1.12+, and OpenTofu where it supports identity; older versions
// skip): both team resources are identified by their team, and an import block can name the
// identity instead of an ID. The import takes the objects over, so its plan is an update.
func TestAccIdentity_teamResources(t *testing.T) {
	const team = "ident-team"
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	identity := map[string]knownvalue.Check{"team": knownvalue.StringExact(team)}
	config := acctest.TeamNamespace(team).HCL() + acctest.Quota(team).Body(`
  resources  = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  depends_on = [hyperpod_team_namespace.test]`).HCL()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity(quotaAddr, identity),
					statecheck.ExpectIdentity(tnsAddr, identity),
				},
			},
			{
				ResourceName:       quotaAddr,
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithResourceIdentity,
				ExpectNonEmptyPlan: true,
			},
			{
				ResourceName:       tnsAddr,
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithResourceIdentity,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// The cluster scheduler config is identified by its id, the class names, which an import block
// can name instead of an ID; the identity follows the classes when they change.
func TestAccIdentity_schedulerConfig(t *testing.T) {
	acctest.RequireCluster(t)
	cleanupPriorityClasses(t, "ident-a", "ident-b")
	a, b := quota.PriorityClass{Name: "ident-a", Weight: 10}, quota.PriorityClass{Name: "ident-b", Weight: 20}
	identity := func(id string) statecheck.StateCheck {
		return statecheck.ExpectIdentity(schedAddr, map[string]knownvalue.Check{"id": knownvalue.StringExact(id)})
	}
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.SchedulerConfig(a).HCL(), ConfigStateChecks: []statecheck.StateCheck{identity("ident-a")}},
			{Config: acctest.SchedulerConfig(a, b).HCL(), ConfigStateChecks: []statecheck.StateCheck{identity("ident-a,ident-b")}},
			{
				ResourceName:       schedAddr,
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithResourceIdentity,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}
