package provider

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// The SageMaker path's fault run: twenty quotas applied, updated and destroyed while the API
// answers 30 % of the requests with a fault, a quarter each of throttling, a 5xx before the
// operation acts, a 5xx after it acted and an answer lost after it acted. Creates carry no
// client token, so a create whose answer did not come must be resolved by looking the quota up,
// never by failing or by creating a second quota for the team.

const (
	tgfrTeams = 20
	// tgfrPrefix names the teams and quotas. A create's fault is decided by the emulator's seed and
	// the quota's name, so this prefix was chosen to make the first creates meet all four kinds.
	tgfrPrefix = "tgfr"
)

// tgfrTypes are three instance types of the task-governance cluster's groups: GPU, Trainium and
// CPU only.
var tgfrTypes = []string{"ml.g5.12xlarge", "ml.trn1.32xlarge", "ml.c5.4xlarge"}

// tgfrRates are the faults: 30 % of every operation's requests.
var tgfrRates = sagemakeremulator.FaultRates{Throttle: 0.075, ServerErrorBefore: 0.075, ServerErrorAfter: 0.075, LostAnswer: 0.075}

// tgfrConfig is step 1 (update false) or step 2 (update true): the update changes every quota's
// amounts and description.
func tgfrConfig(tg *acctest.TaskGovernance, update bool) string {
	step, g5, trn, mem := 1, "count = 1", "accelerators = 2 + count.index % 3", "memory_in_gib = 8 + count.index"
	if update {
		step, g5, trn, mem = 2, "count = 2", "accelerators = 8 + count.index % 3", "memory_in_gib = 12.5 + count.index"
	}
	return tg.ProviderHCL() + fmt.Sprintf(`
resource "hyperpod_compute_quota" "team" {
  count       = %[1]d
  name        = "%[2]s-${count.index}"
  description = "Fault run, step %[3]d."
  team        = "%[2]s-${count.index}"
  resources = [
    { instance_type = %[4]q, %[5]s },
    { instance_type = %[6]q, %[7]s },
    { instance_type = %[8]q, %[9]s },
  ]
}
`, tgfrTeams, tgfrPrefix, step, tgfrTypes[0], g5, tgfrTypes[1], trn, tgfrTypes[2], mem)
}

// tgfrQuotas are the API's live quotas of the run's teams, by team.
func tgfrQuotas(tg *acctest.TaskGovernance) map[string][]sagemakeremulator.ComputeQuota {
	out := map[string][]sagemakeremulator.ComputeQuota{}
	for _, q := range tg.Emulator.Quotas() {
		team := ""
		if q.Target.TeamName != nil {
			team = *q.Target.TeamName
		}
		if q.Status != sagemakeremulator.StatusDeleting && (strings.HasPrefix(team, tgfrPrefix+"-") || strings.HasPrefix(q.Name, tgfrPrefix+"-")) {
			out[team] = append(out[team], q)
		}
	}
	return out
}

// tgfrCheck: every team has exactly one quota in the API, the one the state names, holding the
// state's name, description and amounts; nothing else of the run's teams exists.
func tgfrCheck(tg *acctest.TaskGovernance) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		byTeam := tgfrQuotas(tg)
		var errs []string
		for i := range tgfrTeams {
			team := fmt.Sprintf("%s-%d", tgfrPrefix, i)
			rs, ok := s.RootModule().Resources[fmt.Sprintf("hyperpod_compute_quota.team.%d", i)]
			if !ok {
				errs = append(errs, fmt.Sprintf("quota %d not in state", i))
				continue
			}
			a := rs.Primary.Attributes
			qs := byTeam[team]
			delete(byTeam, team)
			if len(qs) != 1 {
				errs = append(errs, fmt.Sprintf("team %s has %d quotas in the API, want 1", team, len(qs)))
				continue
			}
			q := qs[0]
			if q.ID != a["quota_id"] || q.Name != a["name"] || q.Description != a["description"] || q.Status != a["status"] ||
				strconv.Itoa(int(q.Version)) != a["version"] {
				errs = append(errs, fmt.Sprintf("team %s: the API holds %s %q %q %s version %d, the state says %s %q %q %s version %s", team,
					q.ID, q.Name, q.Description, q.Status, q.Version, a["quota_id"], a["name"], a["description"], a["status"], a["version"]))
				continue
			}
			if n, _ := strconv.Atoi(a["resources.#"]); n != len(q.Config.ComputeQuotaResources) {
				errs = append(errs, fmt.Sprintf("team %s: %d resources in the API, %d in state", team, len(q.Config.ComputeQuotaResources), n))
				continue
			}
			for j, r := range q.Config.ComputeQuotaResources {
				at := func(attr string) string { return a[fmt.Sprintf("resources.%d.%s", j, attr)] }
				if r.InstanceType != at("instance_type") || !tgfrSame(r.Accelerators, at("accelerators")) ||
					!tgfrSameFloat(r.VCpu, at("vcpu")) || !tgfrSameFloat(r.MemoryInGiB, at("memory_in_gib")) {
					errs = append(errs, fmt.Sprintf("team %s resource %d: the API holds %s %v accelerators %v vCPU %v GiB, the state %s %s %s %s", team, j,
						r.InstanceType, deref(r.Accelerators), deref(r.VCpu), deref(r.MemoryInGiB), at("instance_type"), at("accelerators"), at("vcpu"), at("memory_in_gib")))
				}
			}
		}
		for team, qs := range byTeam {
			errs = append(errs, fmt.Sprintf("%d quotas of %q that no resource manages", len(qs), team))
		}
		if len(errs) > 0 {
			return fmt.Errorf("the API differs from the state:\n  %s", strings.Join(errs, "\n  "))
		}
		return nil
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// tgfrSame compares an integer amount of the API with the state's ("" and 0 for none).
func tgfrSame(got *int32, want string) bool {
	w, _ := strconv.Atoi(want)
	return int(deref0(got)) == w
}

// tgfrSameFloat compares an amount the API holds (a float32) with the state's decimal, at the
// API's precision.
func tgfrSameFloat(got *sagemakeremulator.Float32, want string) bool {
	w, err := strconv.ParseFloat(want, 64)
	var g float32
	if got != nil {
		g = float32(*got)
	}
	return err == nil && g == float32(w)
}

func deref0[T int32 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// TestAccTaskGovernance_faultRun applies, updates and destroys twenty quotas through the API's
// injected faults with the provider's default settings: each step succeeds on the first try,
// the API holds exactly one quota per team, the one in state with the planned content, and none
// after destroy. The tally of injected faults proves each kind was met, creates included.
func TestAccTaskGovernance_faultRun(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	start := len(tg.Emulator.Injected())
	t.Cleanup(func() { tg.Emulator.InjectFaults(sagemakeremulator.FaultRates{}) })
	inject := func() { tg.Emulator.InjectFaults(tgfrRates) }
	expectAll := func(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
		var checks []plancheck.PlanCheck
		for i := range tgfrTeams {
			checks = append(checks, plancheck.ExpectResourceAction(fmt.Sprintf("hyperpod_compute_quota.team[%d]", i), action))
		}
		return preApply(checks...)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if left := tgfrQuotas(tg); len(left) > 0 {
				return fmt.Errorf("after destroy the API still holds quotas of %d teams: %v", len(left), left)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{PreConfig: inject, Config: tgfrConfig(tg, false), ConfigPlanChecks: expectAll(plancheck.ResourceActionCreate), Check: tgfrCheck(tg)},
			// In place: a replaced quota would hide a lost update.
			{Config: tgfrConfig(tg, true), ConfigPlanChecks: expectAll(plancheck.ResourceActionUpdate), Check: tgfrCheck(tg)},
			{Config: tgfrConfig(tg, true), Destroy: true},
		},
	})

	injected := tg.Emulator.Injected()[start:]
	tally := map[sagemakeremulator.FaultKind]map[string]int{}
	for _, f := range injected {
		if tally[f.Kind] == nil {
			tally[f.Kind] = map[string]int{}
		}
		tally[f.Kind][f.Operation]++
	}
	t.Logf("%d faults injected: %v", len(injected), tally)
	for _, k := range []sagemakeremulator.FaultKind{sagemakeremulator.FaultThrottle, sagemakeremulator.FaultServerErrorBefore,
		sagemakeremulator.FaultServerErrorAfter, sagemakeremulator.FaultLostAnswer} {
		if tally[k]["CreateComputeQuota"] == 0 {
			t.Errorf("no create met %q: the run proves nothing about it (choose another prefix)", k)
		}
		if tally[k]["DescribeComputeQuota"]+tally[k]["ListComputeQuotas"] == 0 {
			t.Errorf("no read met %q", k)
		}
	}
	for _, op := range []string{"UpdateComputeQuota", "DeleteComputeQuota"} {
		if tally[sagemakeremulator.FaultServerErrorAfter][op]+tally[sagemakeremulator.FaultLostAnswer][op] == 0 {
			t.Errorf("no %s failed to answer after acting: the run proves nothing about it", op)
		}
	}
}
