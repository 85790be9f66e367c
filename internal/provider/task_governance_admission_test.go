package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// Admission through the SageMaker path: the quotas go to the API, the add-on's stand-in turns
// them into Kueue objects on the task-governance cluster, and the real Kueue there decides.

// tgJobs is the task-governance cluster, for the admission helpers of the Kubernetes path.
func tgJobs(tg *acctest.TaskGovernance) jobCluster {
	return jobCluster{clientset: tg.Clientset, dynamic: tg.Dynamic}
}

// tgCleanup removes the teams' Jobs, Workloads and Namespaces from the task-governance cluster
// when the test ends, whatever state a failure left them in; the add-on deletes a team's queues
// with its quota, which the test's destroy deletes.
func tgCleanup(t *testing.T, tg *acctest.TaskGovernance, teams ...string) {
	jobs := tgJobs(tg)
	for _, team := range teams {
		t.Cleanup(func() {
			err := tg.Clientset.CoreV1().Namespaces().Delete(context.Background(), quota.NamespaceName(team), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting namespace %s: %v", quota.NamespaceName(team), err)
			}
		})
		t.Cleanup(func() { jobs.deleteWork(t, team) })
	}
}

// tgQuotasOf lists the compute quotas the API holds for team, but those being deleted.
func tgQuotasOf(tg *acctest.TaskGovernance, team string) []sagemakeremulator.ComputeQuota {
	var out []sagemakeremulator.ComputeQuota
	for _, q := range tg.Emulator.Quotas() {
		if q.Target.TeamName != nil && *q.Target.TeamName == team && q.Status != sagemakeremulator.StatusDeleting {
			out = append(out, q)
		}
	}
	return out
}

// tgTeamsGone is a CheckDestroy: the API holds no quota of the teams.
func tgTeamsGone(tg *acctest.TaskGovernance, teams ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, team := range teams {
			if left := tgQuotasOf(tg, team); len(left) > 0 {
				return fmt.Errorf("after destroy the SageMaker API still holds quota %s (%s) for team %q", left[0].Name, left[0].ID, team)
			}
		}
		return nil
	}
}

// tgTeamHoldsNothing is a CheckDestroy: the API holds no quota of team, not even one being
// deleted (destroy waits until the API no longer knows it).
func tgTeamHoldsNothing(tg *acctest.TaskGovernance, team string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, q := range tg.Emulator.Quotas() {
			if q.Target.TeamName != nil && *q.Target.TeamName == team {
				return fmt.Errorf("after destroy the SageMaker API still holds quota %s for team %q (status %s)", q.ID, team, q.Status)
			}
		}
		return nil
	}
}

// A lender reclaims its lent quota through the SageMaker path, as on a cluster with its own
// Kueue (TestAccAdmission_lenderReclaims, the same story and checks): the quotas lend and
// borrow through the API's ResourceSharingConfig, the borrower's job is admitted on borrowed
// GPUs, and when the lender's own job arrives Kueue preempts the borrower's workload and
// admits the lender's.
func TestAccTaskGovernance_lenderReclaims(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	const lender, borrower = "tg-reclaim-lender", "tg-reclaim-borrower"
	teams := []string{lender, borrower}
	tgCleanup(t, tg, teams...)
	jobs := tgJobs(tg)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tgTeamsGone(tg, teams...),
		Steps: []resource.TestStep{{
			Config: tg.ProviderHCL() + lenderAndBorrower("", lender, borrower, reclaimBorrowerSharing),
			Check: func(*terraform.State) error {
				defer jobs.deleteAllWork(t, teams)
				// The API has no cohort: the add-on puts every team in one, so the story holds
				// only if no other quota of the cluster could lend ml.g5.12xlarge GPUs.
				for _, q := range tg.Emulator.Quotas() {
					team := ""
					if q.Target.TeamName != nil {
						team = *q.Target.TeamName
					}
					for _, r := range q.Config.ComputeQuotaResources {
						if r.InstanceType == "ml.g5.12xlarge" && team != lender && team != borrower {
							return fmt.Errorf("quota %s of team %q also holds ml.g5.12xlarge, in the same cohort: a test before this one left it", q.Name, team)
						}
					}
				}
				// The add-on's queues exist before the jobs are submitted.
				if err := tg.Emulator.Settle(context.Background()); err != nil {
					return err
				}
				return jobs.lenderReclaims(t, lender, borrower)
			},
		}},
	})
}

// One owner per team within one apply: two resources of the same team, under different names,
// are created at the same time; both find no quota in the run's list, but only one is created,
// and the other is refused as an existing quota, naming the first's.
func TestAccTaskGovernance_oneOwnerInOneApply(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	const team = "tg-twice"
	twice := tg.ProviderHCL()
	for _, name := range []string{"first", "second"} {
		twice += fmt.Sprintf(`
resource "hyperpod_compute_quota" %[1]q {
  name      = "%[2]s-%[1]s"
  team      = %[2]q
  resources = [{ instance_type = "ml.c5.4xlarge", vcpu = 1 }]
}
`, name, team)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tgTeamsGone(tg, team),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					// The first create request is held until the other resource's create is
					// provably waiting for the team's claim: without the claim, both would pass
					// the check and create, and the second request would reach the API while
					// the first is held.
					held := newGate(t)
					tg.Emulator.BeforeNext("CreateComputeQuota", held.Hold)
					claimWaited := waitBegins(t, backend.WaitQuotaClaim, team)
					go func() {
						defer held.Open()
						select {
						case <-held.Arrived():
						case <-time.After(5 * time.Minute):
							t.Error("no create request reached the API")
							return
						}
						select {
						case <-claimWaited:
						case <-time.After(2 * time.Minute):
							t.Error("while the first create request was held, the other create of the team did not wait for its claim")
						}
					}()
				},
				Config:      twice,
				ExpectError: regexp.MustCompile(`(?s)SageMaker compute quota "tg-twice-(first|second)" \(id [a-z0-9]{12}\)\s+already\s+exists`),
			},
			{
				PreConfig: func() {
					var names []string
					for _, q := range tgQuotasOf(tg, team) {
						names = append(names, q.Name)
					}
					if len(names) != 1 {
						t.Errorf("the API holds quotas %s for team %q, want one", strings.Join(names, ", "), team)
					}
				},
				// Without the resources: destroys the one created.
				Config: tg.ProviderHCL(),
			},
		},
	})
}
