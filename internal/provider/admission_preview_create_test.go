package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// A new quota is previewed like a change, and the prediction comes true on apply: the quota of
// a team whose namespace already holds a job starts that job, and as it lends to the cohort it
// joins, a borrower's waiting job starts too.
func TestAccAdmissionPreview_newQuota(t *testing.T) {
	acctest.RequireKueue(t)
	const lender, borrower, newcomer = "e2e-newq-lender", "e2e-newq-borrower", "e2e-newq-newcomer"
	e2eCleanup(t, lender, borrower, newcomer)
	newQuotaStory(t, previewPath{provider: "provider \"hyperpod\" {\n}\n", cohort: "e2e-newq", jobs: suiteJobs(),
		settled: func() error { return nil }}, lender, borrower, newcomer)
}

// The same through the SageMaker API: the add-on writes the new team's LocalQueue with its
// ClusterQueue, so the preview counts the job waiting in the team's namespace for a queue.
func TestAccTaskGovernance_admissionPreviewNewQuota(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	const lender, borrower, newcomer = "tg-newq-lender", "tg-newq-borrower", "tg-newq-newcomer"
	tgCleanup(t, tg, lender, borrower, newcomer)
	newQuotaStory(t, previewPath{provider: tg.ProviderHCL(), jobs: tgJobs(tg),
		settled: func() error { return tg.Emulator.Settle(context.Background()) }}, lender, borrower, newcomer)
}

func newQuotaStory(t *testing.T, p previewPath, lender, borrower, newcomer string) {
	cohort := lendingCohort{lender: lender, borrower: borrower, cohort: p.cohort}
	base := p.provider + cohort.quotas(1)
	// The newcomer's namespace exists before its quota does.
	newcomerNamespace := "\nresource \"hyperpod_team_namespace\" \"newcomer\" {\n  team          = \"" + newcomer +
		"\"\n  force_destroy = true\n}\n"
	withQuota := base + newcomerNamespace + `
resource "hyperpod_compute_quota" "newcomer" {
  name      = "` + newcomer + `-quota"
  team      = hyperpod_team_namespace.newcomer.team
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]` + cohort.cohortLine() + `
  resource_sharing = { strategy = "Lend" }
}
`
	cli := newTFCLI(t)
	cli.writeConfig(base + newcomerNamespace)
	cli.init()
	if r := cli.apply(3 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply: %s", r)
	}
	if err := p.settled(); err != nil {
		t.Fatal(err)
	}
	jobs := p.jobs
	// The cohort's GPUs are in use and the borrower's next job waits (lendingCohort.fill); the
	// newcomer's job waits for a queue.
	next := cohort.fill(t, jobs)
	jobs.submit(t, newcomer, "early", "ml.g5.12xlarge", "", gpus("2"))
	early, err := jobs.workloadOf(newcomer, "early", heldBecause("doesn't exist", "does not exist"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	cli.writeConfig(withQuota)
	r, diags := cli.planJSON(2 * time.Minute)
	if r.exitCode != 2 {
		t.Fatalf("plan of the new quota: want exit 2, got %s", r)
	}
	got, ok := previewsIn(diags)["Admission preview: team "+newcomer]
	if !ok {
		t.Fatalf("no admission preview for the new quota among %+v", diags)
	}
	for _, part := range []string{
		"creating this quota",
		"ClusterQueue " + quota.ClusterQueueName(borrower) + ":\n  admitted " + next.GetNamespace() + "/" + next.GetName() +
			" on ml.g5.12xlarge, borrowing",
		"ClusterQueue " + quota.ClusterQueueName(newcomer) + ":\n  admitted " + early.GetNamespace() + "/" + early.GetName() +
			" on ml.g5.12xlarge",
	} {
		if !strings.Contains(got.Detail, part) {
			t.Errorf("preview lacks %q:\n%s", part, got.Detail)
		}
	}

	// What the preview said is what Kueue does.
	if r := cli.apply(3 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply of the new quota: %s", r)
	}
	if err := p.settled(); err != nil {
		t.Fatal(err)
	}
	for team, job := range map[string]string{borrower: "next", newcomer: "early"} {
		if _, err := jobs.workloadOf(team, job, admitted, time.Minute); err != nil {
			t.Errorf("the preview said %s's job %s is admitted: %v", team, job, err)
		}
	}
	jobs.deleteAllWork(t, []string{lender, borrower, newcomer})
	if r := cli.destroy(3 * time.Minute); r.exitCode != 0 {
		t.Errorf("destroy: %s", r)
	}
}
