package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// The cluster scheduler config on the SageMaker path when something goes wrong: a change made
// in the API, a change racing an update, a create the API fails, a timeout that runs out. The
// cluster holds one config, so these tests run one after another and each leaves none.

// tgSchedulerHCL is a config of two classes, the first of weight high, plus extra lines.
func tgSchedulerHCL(tg *acctest.TaskGovernance, high int64, extra string) string {
	return tg.ProviderHCL() + fmt.Sprintf(`
resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [{ name = "tg-high", weight = %d }, { name = "tg-low", weight = 10 }]
  %s
}`, high, extra)
}

// emulatorSchedulerConfig is the SageMaker API's one cluster scheduler config not being deleted.
func emulatorSchedulerConfig(t *testing.T, tg *acctest.TaskGovernance) sagemakeremulator.ClusterSchedulerConfig {
	t.Helper()
	for _, c := range tg.Emulator.SchedulerConfigs() {
		if c.Status != sagemakeremulator.StatusDeleting {
			return c
		}
	}
	t.Fatal("the SageMaker API holds no cluster scheduler config")
	return sagemakeremulator.ClusterSchedulerConfig{}
}

// changeSchedulerConfig changes the config in the API, as the console or the CLI would.
func changeSchedulerConfig(t *testing.T, tg *acctest.TaskGovernance, change func(*sagemakeremulator.ClusterSchedulerConfig)) {
	t.Helper()
	if err := tg.Emulator.UpdateSchedulerConfig(emulatorSchedulerConfig(t, tg).ID, change); err != nil {
		t.Error(err)
	}
}

// tgNoSchedulerConfig checks that a destroy left no cluster scheduler config in the API.
func tgNoSchedulerConfig(tg *acctest.TaskGovernance) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if cs := tg.Emulator.SchedulerConfigs(); len(cs) > 0 {
			return fmt.Errorf("after destroy the SageMaker API still holds cluster scheduler config %s (status %s)", cs[0].ID, cs[0].Status)
		}
		return nil
	}
}

func tgHighWeight(want int64) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("priority_classes").AtSliceIndex(0).AtMapKey("weight"), knownvalue.Int64Exact(want))
}

// A change made in the API is found by the refresh, planned as an update, and repaired by the
// apply over the version the refresh read.
func TestAccTaskGovernance_schedulerConfigDrift(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	resource.Test(t, tgSchedulerCase(tg, []resource.TestStep{
		{Config: tgSchedulerHCL(tg, 100, "")},
		{
			PreConfig: func() {
				changeSchedulerConfig(t, tg, func(c *sagemakeremulator.ClusterSchedulerConfig) {
					w := int32(40)
					c.Config.PriorityClasses[0].Weight = &w
					c.Config.FairShare = quota.ActivationDisabled
				})
			},
			Config: tgSchedulerHCL(tg, 100, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(tgSchedulerConfig, plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				tgHighWeight(100),
				statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("fair_share"), knownvalue.StringExact(quota.ActivationEnabled)),
				// 1 created, 2 changed in the API, 3 repaired.
				statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("version"), knownvalue.Int64Exact(3)),
			},
			Check: func(*terraform.State) error {
				c := emulatorSchedulerConfig(t, tg)
				if w := c.Config.PriorityClasses[0].Weight; w == nil || *w != 100 || c.Config.FairShare != quota.ActivationEnabled {
					return fmt.Errorf("the API holds %+v after the repair, want tg-high at 100 and FairShare Enabled", c.Config)
				}
				return nil
			},
		},
	}))
}

// A change made in the API between the refresh and the update is refused, naming the config and
// the version, never overwritten; the next plan starts from it.
func TestAccTaskGovernance_schedulerConfigVersionConflict(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	resource.Test(t, tgSchedulerCase(tg, []resource.TestStep{
		{Config: tgSchedulerHCL(tg, 100, "")},
		{
			PreConfig: func() {
				tg.Emulator.BeforeNext("UpdateClusterSchedulerConfig", func() {
					changeSchedulerConfig(t, tg, func(c *sagemakeremulator.ClusterSchedulerConfig) { c.Description = "edited in the console" })
				})
			},
			Config: tgSchedulerHCL(tg, 90, ""),
			ExpectError: regexp.MustCompile(`(?s)SageMaker\s+cluster\s+scheduler\s+config\s+[a-z0-9]{12}\s+was\s+changed\s+outside\s+Terraform\s+since\s+the\s+last\s+refresh` +
				`.*no\s+longer\s+at\s+version\s+1\b.*Run\s+terraform\s+plan\s+again`),
		},
		{
			Config: tgSchedulerHCL(tg, 90, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(tgSchedulerConfig, plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				tgHighWeight(90),
				statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("version"), knownvalue.Int64Exact(3)),
			},
		},
	}))
}

// A create that the API fails (CreateFailed) is an error carrying its FailureReason, and the
// config is saved tainted, so the next apply replaces it instead of leaving it untracked.
func TestAccTaskGovernance_schedulerConfigCreateFailed(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	resource.Test(t, tgSchedulerCase(tg, []resource.TestStep{
		{
			PreConfig: func() {
				tg.Emulator.FailCreate(quota.SchedulerConfigName, "the add-on could not write the priority classes")
			},
			Config:      tgSchedulerHCL(tg, 100, ""),
			ExpectError: regexp.MustCompile(`(?s)Cannot\s+create\s+the\s+SageMaker\s+cluster\s+scheduler\s+config.*CreateFailed:\s+the\s+add-on\s+could\s+not\s+write\s+the\s+priority\s+classes`),
		},
		tgSchedulerReplaced(tg, tgSchedulerHCL(tg, 100, "")),
	}))
}

// timeouts.create bounds the create, including the wait until SageMaker has applied the config:
// with the API slow to answer it runs out (the default would have waited), and the config,
// which exists, is saved tainted and replaced by the next apply.
func TestAccTaskGovernance_schedulerConfigTimeouts(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	// The API does not answer the create's first Describe until the step has failed, however
	// long the 2 s take on a busy machine.
	unanswered := newGate(t)
	resource.Test(t, tgSchedulerCase(tg, []resource.TestStep{
		{
			PreConfig: func() {
				tg.Emulator.BeforeNext("DescribeClusterSchedulerConfig", unanswered.Hold)
			},
			Config:      tgSchedulerHCL(tg, 100, `timeouts { create = "2s" }`),
			ExpectError: regexp.MustCompile(`(?s)SageMaker\s+cluster\s+scheduler\s+config.*deadline\s+exceeded`),
		},
		// Time enough for the emulator's polls (a create takes a few seconds).
		tgStepAfter(unanswered.Open, tgSchedulerReplaced(tg, tgSchedulerHCL(tg, 100, `timeouts { create = "5m" }`),
			statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("timeouts").AtMapKey("create"), knownvalue.StringExact("5m")))),
	}))
}

// tgStepAfter is step with first run before its PreConfig.
func tgStepAfter(first func(), step resource.TestStep) resource.TestStep {
	pre := step.PreConfig
	step.PreConfig = func() {
		first()
		if pre != nil {
			pre()
		}
	}
	return step
}

// tgSchedulerReplaced is the step after a create that was saved tainted: config replaces the
// config, which ends Created, and the API holds only the replacement.
func tgSchedulerReplaced(tg *acctest.TaskGovernance, config string, checks ...statecheck.StateCheck) resource.TestStep {
	return resource.TestStep{
		Config: config,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(tgSchedulerConfig, plancheck.ResourceActionReplace),
		}},
		ConfigStateChecks: append([]statecheck.StateCheck{
			statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("status"), knownvalue.StringExact("Created")),
		}, checks...),
		Check: func(*terraform.State) error {
			if n := len(tg.Emulator.SchedulerConfigs()); n != 1 {
				return fmt.Errorf("the API holds %d cluster scheduler configs after the replacement, want 1", n)
			}
			return nil
		},
	}
}

// tgSchedulerCase is a test of the cluster scheduler config on the task-governance cluster:
// steps, then a destroy that must leave no config in the API.
func tgSchedulerCase(tg *acctest.TaskGovernance, steps []resource.TestStep) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tgNoSchedulerConfig(tg),
		Steps:                    steps,
	}
}
