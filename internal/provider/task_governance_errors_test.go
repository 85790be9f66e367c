package provider

// The SageMaker API's refusals and failures on the task-governance path, and what the user is told.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// A change made in the API between the refresh and the write is refused with the version named,
// never overwritten; the next plan shows it.
func TestAccTaskGovernance_versionConflict(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	team := "tg-conflict"
	cfg := func(n int) string {
		return tg.ProviderHCL() + acctest.Quota(team).Resource("ml.g5.12xlarge").Count(n).HCL()
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg(1)},
			{
				PreConfig: func() {
					tg.Emulator.BeforeNext("UpdateComputeQuota", func() {
						q := emulatorQuota(t, tg, team)
						if err := tg.Emulator.UpdateQuota(q.ID, func(q *sagemakeremulator.ComputeQuota) { q.Description = "edited in the console" }); err != nil {
							t.Error(err)
						}
					})
				},
				Config: cfg(2),
				// Terraform wraps the detail wherever its words fall: any space may be a line break.
				ExpectError: regexp.MustCompile(`SageMaker\s+compute\s+quota\s+[a-z0-9]{12}\s+was\s+changed\s+outside\s+Terraform\s+since\s+the\s+last\s+refresh`),
			},
			{
				Config: cfg(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tgQuota, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}

// A create that the API fails (CreateFailed) is an error carrying its FailureReason, and the
// quota is saved tainted, so the next apply replaces it instead of leaving it untracked.
func TestAccTaskGovernance_createFailed(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	team := "tg-failed"
	cfg := tg.ProviderHCL() + acctest.Quota(team).Resource("ml.c5.4xlarge").VCPU(4).HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() { tg.Emulator.FailCreate(team+"-quota", "the cluster's task-governance add-on is not ready") },
				Config:    cfg,
				// The quota by its name and id, then SageMaker's status and FailureReason (Terraform wraps the text).
				ExpectError: regexp.MustCompile(`(?s)Cannot\s+create\s+the\s+SageMaker\s+compute\s+quota.*SageMaker\s+compute\s+quota\s+"` + team +
					`-quota"\s+\(id\s+[a-z0-9]{12}\):.*CreateFailed:\s+the\s+cluster's\s+task-governance\s+add-on\s+is\s+not\s+ready`),
			},
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tgQuota, plancheck.ResourceActionReplace),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("status"), knownvalue.StringExact("Created")),
				},
			},
		},
	})
}

// A create that SageMaker answers with a server error every time is looked up after each answer
// and sent again while nothing is found; the error then says so in SageMaker's terms: the quota's
// name, the operation, the API's error code and that SageMaker did not create it. Nothing in it
// speaks of Kubernetes or of a read-back. Nothing is saved, and the next apply creates the quota.
func TestAccTaskGovernance_createServerError(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	team := "tg-5xx"
	cfg := tg.ProviderHCL() + acctest.Quota(team).Resource("ml.c5.4xlarge").VCPU(2).HCL()
	var failed string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		// The first apply's error, checked word by word (Terraform wraps the text).
		ErrorCheck: func(err error) error {
			if failed != "" {
				return err
			}
			failed = strings.Join(strings.Fields(err.Error()), " ")
			for _, want := range []string{
				"Cannot create the SageMaker compute quota",
				`SageMaker compute quota "` + team + `-quota": SageMaker CreateComputeQuota failed`,
				"InternalFailure: The request processing has failed because of an unknown error, exception or failure.",
				"The create was sent 5 times without an answer, and each look-up afterwards found no compute quota: " +
					"SageMaker did not create it.",
			} {
				if !strings.Contains(failed, want) {
					return fmt.Errorf("the error does not say %q: %s", want, failed)
				}
			}
			for _, absent := range []string{"API server", "ClusterQueue", "finalizer", "Kueue", "reading it back", "read back", "may have been created"} {
				if strings.Contains(failed, absent) {
					return fmt.Errorf("the error says %q: %s", absent, failed)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				// Every create is answered with a server error: each look-up after one finds nothing.
				PreConfig: func() { tg.Emulator.ServerErrorNext(1000, "CreateComputeQuota") },
				Config:    cfg,
			},
			{
				PreConfig: func() {
					tg.Emulator.ServerErrorNext(0)
					if failed == "" {
						t.Fatal("the create SageMaker answered with a server error did not fail")
					}
					t.Logf("the create's error: %s", failed)
				},
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("status"), knownvalue.StringExact("Created")),
				},
			},
		},
	})
}

// Throttling is retried within the retry budget: a burst of ThrottlingException on every
// operation only slows the apply down.
func TestAccTaskGovernance_throttling(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	team := "tg-throttle"
	cfg := tg.ProviderHCL() + acctest.Quota(team).Resource("ml.c5.4xlarge").VCPU(2).HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() { tg.Emulator.ThrottleNext(3) },
			Config:    cfg,
			Check: func(*terraform.State) error {
				throttled := 0
				for _, c := range tg.Emulator.Calls() {
					if c.ErrorCode == "ThrottlingException" {
						throttled++
					}
				}
				if throttled < 3 {
					return fmt.Errorf("%d throttled requests, want the 3 injected", throttled)
				}
				return nil
			},
		}},
	})
}
