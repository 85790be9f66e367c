package provider

// Quota taken back or held back from a borrower: a lender's reclaim, an absolute borrowing
// limit, and a fair-share weight of zero.

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
)

// A lender reclaims its lent quota: when its own job arrives, Kueue preempts the borrower's
// workload that uses the borrowed quota, and admits the lender's.
func TestAccAdmission_lenderReclaims(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"e2e-reclaim-lender", "e2e-reclaim-borrower"}
	e2eCleanup(t, teams...)
	config := lenderAndBorrower("e2e-reclaim", "e2e-reclaim-lender", "e2e-reclaim-borrower", reclaimBorrowerSharing)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				defer deleteAllWork(t, teams)
				return suiteJobs().lenderReclaims(t, "e2e-reclaim-lender", "e2e-reclaim-borrower")
			},
		}},
	})
}

// reclaimBorrowerSharing lets the borrower of the reclaim story borrow all the lender's GPUs.
const reclaimBorrowerSharing = `{ strategy = "LendAndBorrow", borrow_limit = 100 }`

// lenderReclaims is the reclaim story on c, after lenderAndBorrower's quotas with
// reclaimBorrowerSharing (and nothing else of ml.g5.12xlarge in their cohort): the borrower's
// job takes the cohort's 8 GPUs, 4 of them borrowed; the lender's job of 2 then has Kueue
// preempt the borrower's workload and admit the lender's.
func (c jobCluster) lenderReclaims(t *testing.T, lender, borrower string) error {
	if err := c.admitBorrowing(t, borrower, "all", "8", "4"); err != nil {
		return err
	}
	c.submit(t, lender, "mine", "ml.g5.12xlarge", "", gpus("2"))
	w, err := c.workloadOf(borrower, "all", evicted, time.Minute)
	if err != nil {
		return err
	}
	if _, reason, _ := condition(w, "Evicted"); reason != "Preempted" {
		return fmt.Errorf("borrower evicted for %q, want Preempted", reason)
	}
	_, err = c.workloadOf(lender, "mine", admitted, time.Minute)
	return err
}

// Absolute borrow limits cap borrowing per resource, whatever the percentage allows: with
// borrow_limit = 100 but at most 1 borrowed GPU, a 5-GPU job on a 4-GPU quota is admitted by
// borrowing 1, and one more GPU waits although the lender is idle.
func TestAccAdmission_absoluteBorrowLimit(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"e2e-abs-lender", "e2e-abs-borrower"}
	e2eCleanup(t, teams...)
	config := lenderAndBorrower("e2e-abs", "e2e-abs-lender", "e2e-abs-borrower", `{
    borrow_limit           = 100
    absolute_borrow_limits = [{ instance_type = "ml.g5.12xlarge", accelerators = 1 }]
  }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				defer deleteAllWork(t, teams)
				if err := admitBorrowing(t, "e2e-abs-borrower", "five", "5", "1"); err != nil {
					return err
				}
				submitJob(t, "e2e-abs-borrower", "one-more", "ml.g5.12xlarge", gpus("1"))
				_, err := workloadOf("e2e-abs-borrower", "one-more", pendingForQuota, time.Minute)
				return err
			},
		}},
	})
}

// The fair_share_weight default, settled with Kueue's fair sharing (on, as HyperPod's
// FairShare=Enabled default): an unset weight is 0, as in the AWS API, and Kueue counts a
// weight-0 team's share as infinite. So a weight-0 team that borrows 1 GPU is preempted for a
// weight-1 team that wants 4, while with weight 1 on both the larger borrower waits.
func TestAccAdmission_fairShareWeightZero(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"e2e-fs0-lender", "e2e-fs0-small", "e2e-fs0-big", "e2e-fs1-lender", "e2e-fs1-small", "e2e-fs1-big"}
	e2eCleanup(t, teams...)
	team := func(name, cohort, sharing, weight string) string {
		body := `  resources        = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  cohort           = "` + cohort + `"
  resource_sharing = ` + sharing + "\n"
		if weight != "" {
			body += "  fair_share_weight = " + weight + "\n"
		}
		return e2eTeam(name, body)
	}
	borrow := `{ strategy = "LendAndBorrow", borrow_limit = 100 }`
	config := team("e2e-fs0-lender", "e2e-fs0", `{ strategy = "Lend" }`, "") +
		team("e2e-fs0-small", "e2e-fs0", borrow, "") + // unset: 0
		team("e2e-fs0-big", "e2e-fs0", borrow, "1") +
		team("e2e-fs1-lender", "e2e-fs1", `{ strategy = "Lend" }`, "") +
		team("e2e-fs1-small", "e2e-fs1", borrow, "1") +
		team("e2e-fs1-big", "e2e-fs1", borrow, "1")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("hyperpod_compute_quota.e2e_fs0_small", tfjsonpath.New("fair_share_weight"), knownvalue.Int64Exact(0)),
			},
			Check: func(*terraform.State) error {
				defer deleteAllWork(t, teams)
				for _, cohort := range []string{"e2e-fs0", "e2e-fs1"} {
					// The small borrower takes 1 of the lender's 4 GPUs; the big one wants all 4.
					if err := admitBorrowing(t, cohort+"-small", "small", "5", "1"); err != nil {
						return err
					}
					submitJob(t, cohort+"-big", "big", "ml.g5.12xlarge", gpus("8"))
				}
				w, err := workloadOf("e2e-fs0-small", "small", evicted, time.Minute)
				if err != nil {
					return fmt.Errorf("weight 0: %w", err)
				}
				if _, reason, msg := condition(w, "Evicted"); reason != "Preempted" {
					return fmt.Errorf("weight 0: small borrower evicted for %q (%s), want Preempted", reason, msg)
				}
				if _, err := workloadOf("e2e-fs0-big", "big", admitted, time.Minute); err != nil {
					return fmt.Errorf("weight 0: %w", err)
				}
				if _, err := workloadOf("e2e-fs1-big", "big", pendingForQuota, time.Minute); err != nil {
					return fmt.Errorf("weight 1: %w", err)
				}
				if err := stillAdmitted("e2e-fs1-small", "small", "e2e-fs1-big", "big"); err != nil {
					return fmt.Errorf("weight 1: %w", err)
				}
				return nil
			},
		}},
	})
}
