package provider

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lendingCohort is the cohort the admission preview stories start from: a lender (Lend) and a
// borrower (LendAndBorrow), each with one ml.g5.12xlarge (4 GPUs) at first.
type lendingCohort struct {
	lender, borrower string
	// cohort is the quotas' cohort attribute ("" sets none: the SageMaker path has one cohort).
	cohort string
}

// quotas is the two teams' configuration, the lender with lenderCount instances.
func (c lendingCohort) quotas(lenderCount int) string {
	cohort := c.cohortLine()
	return e2eTeam(c.lender, fmt.Sprintf(`  resources = [{ instance_type = "ml.g5.12xlarge", count = %d }]`, lenderCount)+cohort+`
  resource_sharing = { strategy = "Lend" }`) +
		e2eTeam(c.borrower, `  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]`+cohort+`
  resource_sharing = { strategy = "LendAndBorrow", borrow_limit = 100 }`)
}

func (c lendingCohort) cohortLine() string {
	if c.cohort == "" {
		return ""
	}
	return "\n  cohort = \"" + c.cohort + "\""
}

// fill uses the cohort's 8 GPUs, each decision Kueue's: the borrower runs 6 (2 borrowed), the
// lender 2, and the borrower's next 2-GPU job, which it returns, waits for room.
func (c lendingCohort) fill(t *testing.T, jobs jobCluster) (next *unstructured.Unstructured) {
	t.Helper()
	jobs.submit(t, c.borrower, "big", "ml.g5.12xlarge", "", gpus("6"))
	if _, err := jobs.workloadOf(c.borrower, "big", admitted, time.Minute); err != nil {
		t.Fatal(err)
	}
	jobs.submit(t, c.lender, "own", "ml.g5.12xlarge", "", gpus("2"))
	if _, err := jobs.workloadOf(c.lender, "own", admitted, time.Minute); err != nil {
		t.Fatal(err)
	}
	jobs.submit(t, c.borrower, "next", "ml.g5.12xlarge", "", gpus("2"))
	next, err := jobs.workloadOf(c.borrower, "next", pendingForQuota, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return next
}
