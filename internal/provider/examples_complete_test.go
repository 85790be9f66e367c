package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Tests of examples/complete and of the module it uses, examples/modules/hyperpod-team.
//
// How the examples run under terraform-plugin-testing (v1.16.0), and why the test is built this way:
//
//   - The module source. ConfigDirectory copies only the regular files of the directory, flat,
//     into the test's working directory <TestCase.WorkingDir>/work<random>/, and Terraform resolves
//     the example's `source = "../modules/hyperpod-team"` from there. So the test sets
//     TestCase.WorkingDir to a temporary directory and copies the module's files into
//     <that directory>/modules/hyperpod-team: the relative path then resolves exactly as it does in
//     the repository, and examples/complete stays byte for byte the example users copy (no
//     rewritten source, no absolute path). The alternative, copying both directories into a temp
//     tree and pointing ConfigDirectory at its complete/, does not help by itself: the files are
//     copied out of that tree again. If a later plugin-testing changes the work<random> layout,
//     init fails with "Unreadable module directory", not silently.
//   - The provider address. The examples declare `source = "quotaworks/hyperpod"`, while
//     plugin-testing reattaches the in-process provider as hashicorp/hyperpod unless
//     TF_ACC_PROVIDER_NAMESPACE names the namespace; with it set to quotaworks the examples' own
//     terraform blocks resolve to the provider under test and nothing is downloaded. (Stripping
//     the blocks, as quickstartConfig does, would not be enough here: the module declares the
//     provider too.)
//   - The state shim. plugin-testing converts the state to its legacy form (shimStateFromJson)
//     for every TestStep.Check, for Destroy steps and once more after the last step, and that
//     conversion fails on child modules ("Modules are not supported") and on for_each keys. So
//     the steps check with ConfigStateChecks (terraform-json, no shim), and the last step applies
//     a configuration without resources, which destroys everything and leaves an empty state for
//     the final conversion. If a step fails, the final conversion fails too and destroys nothing:
//     the cleanups registered below remove the teams' queues, namespaces, work and priority
//     classes instead.
//   - Temporary files. With WorkingDir set, plugin-testing's Helper.Close removes that directory
//     instead of its own plugintest* directory, which would stay behind in $TMPDIR;
//     TF_ACC_TEMP_DIR puts the latter into a t.TempDir().
//   - Providers per step, not per TestCase: see withProvider.

const (
	examplesDir      = "../../examples"
	teamModuleSource = "modules/hyperpod-team" // relative to examplesDir, as the examples use it
)

// examplesWorkingDir prepares a TestCase.WorkingDir in which configurations copied from
// examples/<name>/ resolve "../modules/hyperpod-team", and serves the provider under test as
// quotaworks/hyperpod, the source the examples declare.
func examplesWorkingDir(t *testing.T) string {
	t.Helper()
	t.Setenv("TF_ACC_PROVIDER_NAMESPACE", "quotaworks")
	t.Setenv("TF_ACC_TEMP_DIR", t.TempDir())
	base := t.TempDir()
	src, dst := filepath.Join(examplesDir, teamModuleSource), filepath.Join(base, teamModuleSource)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue // e.g. a .terraform directory from someone's local init
		}
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// withProvider serves the provider under test to every step. Not through the TestCase: a
// ConfigDirectory or ConfigFile with a provider block (the examples have `provider "hyperpod" {}`)
// counts as the step declaring providers, which plugin-testing refuses next to TestCase-level
// ones. Step-level providers also make it run `terraform init` for each step's own files, which
// installs the module; a TestCase-level init sees only a generated provider block.
func withProvider(steps []resource.TestStep) []resource.TestStep {
	for i := range steps {
		steps[i].ProtoV6ProviderFactories = testAccProtoV6ProviderFactories
	}
	return steps
}

// noResources destroys whatever the state holds: the examples' terraform block without
// anything else.
const noResources = `
terraform {
  required_providers {
    hyperpod = {
      source = "quotaworks/hyperpod"
    }
  }
}
`

// planCheckFunc is a plancheck.PlanCheck from a function (see stateCheckFunc).
type planCheckFunc func(plancheck.CheckPlanRequest) error

func (f planCheckFunc) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = f(req)
}

// completeCheck is the check block of examples/complete.
const completeCheck = "check.accelerators_fit_the_nodes"

// checkBlockResult finds a check block in the checks of a terraform-json plan or state and
// returns its status ("pass", "fail", "error", "unknown") and its problems' messages. The
// checks are decoded from their JSON form, which avoids naming terraform-json's types.
func checkBlockResult(checks any, address string) (string, []string, error) {
	raw, err := json.Marshal(checks)
	if err != nil {
		return "", nil, err
	}
	var results []struct {
		Address struct {
			ToDisplay string `json:"to_display"`
		} `json:"address"`
		Status    string `json:"status"`
		Instances []struct {
			Problems []struct {
				Message string `json:"message"`
			} `json:"problems"`
		} `json:"instances"`
	}
	if err := json.Unmarshal(raw, &results); err != nil {
		return "", nil, err
	}
	for _, r := range results {
		if r.Address.ToDisplay != address {
			continue
		}
		var problems []string
		for _, i := range r.Instances {
			for _, p := range i.Problems {
				problems = append(problems, p.Message)
			}
		}
		return r.Status, problems, nil
	}
	return "", nil, fmt.Errorf("no result for %s among the checks %s", address, raw)
}

// stateCheckFunc is a statecheck.StateCheck from a function. The request holds the state as
// terraform-json reads it (go.mod has that module only as plugin-testing's dependency, hence no
// named type here).
type stateCheckFunc func(statecheck.CheckStateRequest) error

func (f stateCheckFunc) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = f(req)
}

var (
	completeTeams   = []string{"complete-research", "complete-evaluation", "complete-inference", "complete-data-prep"}
	completeClasses = map[string]int64{"complete-high": 100, "complete-normal": 50, "complete-low": 10}
	completeFlavors = []string{"ml.p5.48xlarge", "ml.trn1.32xlarge", "ml.g5.12xlarge", "ml.c5.4xlarge"}
)

// plannedAmounts is one instance type of a team in the output "teams" of examples/complete.
type plannedAmounts struct {
	count                                string // "" when not configured
	accelerators, vcpu, memoryInGiB, efa string
}

// completeWant is what examples/complete plans, worked out from the catalog by hand: it shows
// that every unset input reached the provider as null (a 0 or "" would have been taken as
// configured).
var completeWant = map[string]map[string]plannedAmounts{
	"complete-research": {
		"ml.p5.48xlarge":   {accelerators: "8", vcpu: "192", memoryInGiB: "2048", efa: "32"},
		"ml.trn1.32xlarge": {accelerators: "16", vcpu: "128", memoryInGiB: "512", efa: "8"},
	},
	"complete-evaluation": {"ml.p5.48xlarge": {count: "1", accelerators: "8", vcpu: "192", memoryInGiB: "2048", efa: "32"}},
	"complete-inference":  {"ml.g5.12xlarge": {count: "2", accelerators: "8", vcpu: "96", memoryInGiB: "384", efa: "2"}},
	"complete-data-prep":  {"ml.c5.4xlarge": {accelerators: "0", vcpu: "24", memoryInGiB: "48", efa: "0"}},
}

// The complete example, applied as users apply it: four teams through the hyperpod-team module
// with for_each, the capacity data sources and their check, and the priority classes. Kueue's
// webhooks accept everything, every team's Namespace, LocalQueue and ClusterQueue exists with
// the quotas the plan showed, Kueue reports the queues Active, and a second plan is empty. The
// check block passes, and warns about teams that want more accelerators than the nodes have.
func TestAccExamples_complete(t *testing.T) {
	acctest.RequireKueue(t)
	e2eCleanup(t, completeTeams...)
	classes := make([]string, 0, len(completeClasses))
	wantClasses := map[string]int64{}
	for name, value := range completeClasses {
		classes = append(classes, name)
		wantClasses[quota.PriorityClassObjectName(name)] = value
	}
	cleanupPriorityClasses(t, classes...)

	complete := config.StaticDirectory(filepath.Join(examplesDir, "complete"))
	resource.Test(t, resource.TestCase{
		WorkingDir: examplesWorkingDir(t),
		Steps: withProvider([]resource.TestStep{
			{
				ConfigDirectory: complete,
				ConfigStateChecks: []statecheck.StateCheck{
					stateCheckFunc(func(s statecheck.CheckStateRequest) error {
						if err := checkCompleteOutputs(s); err != nil {
							return err
						}
						for _, team := range completeTeams {
							if err := checkCompleteTeam(t, team, completeWant[team]); err != nil {
								return err
							}
						}
						if err := checkAllActive(t, completeTeams, completeFlavors)(nil); err != nil {
							return err
						}
						if err := checkWorkloadPriorityClasses(wantClasses)(nil); err != nil {
							return err
						}
						// The quotas fit into the fleet, so the check block passes.
						status, problems, err := checkBlockResult(s.State.Checks, completeCheck)
						if err == nil && status != "pass" {
							err = fmt.Errorf("check %s: %s %v, want pass", completeCheck, status, problems)
						}
						return err
					}),
				},
			},
			{
				// The same directory again plans nothing (PlanOnly fails on any change, before and
				// after a refresh).
				ConfigDirectory: complete,
				PlanOnly:        true,
			},
			{
				// Teams that want more H100s than the two ml.p5.48xlarge nodes have: the check
				// block warns, during plan, with the numbers. Only planned.
				ConfigDirectory: complete,
				ConfigVariables: config.Variables{"teams": config.MapVariable(map[string]config.Variable{
					"complete-research": config.ObjectVariable(map[string]config.Variable{
						"allocations": config.MapVariable(map[string]config.Variable{
							"ml.p5.48xlarge": config.ObjectVariable(map[string]config.Variable{"accelerators": config.IntegerVariable(24)}),
						}),
					}),
				})},
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					planCheckFunc(func(p plancheck.CheckPlanRequest) error {
						status, problems, err := checkBlockResult(p.Plan.Checks, completeCheck)
						const want = "ml.p5.48xlarge: the quotas claim 24 accelerators, the 2 schedulable nodes have 16"
						if err == nil && (status != "fail" || len(problems) != 1 || !strings.Contains(problems[0], want)) {
							err = fmt.Errorf("check %s: %s %q, want fail with %q", completeCheck, status, problems, want)
						}
						return err
					}),
				}},
			},
			{
				// Destroy by applying no resources (see the comment at the top), and check that
				// everything is gone.
				Config: noResources,
				ConfigStateChecks: []statecheck.StateCheck{
					stateCheckFunc(func(statecheck.CheckStateRequest) error {
						for _, team := range completeTeams {
							if err := checkQueueGone(t, team)(nil); err != nil {
								return err
							}
						}
						if err := tnsCheckGone(completeTeams...)(nil); err != nil {
							return err
						}
						for name := range wantClasses {
							_, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Get(context.Background(), name, metav1.GetOptions{})
							if !apierrors.IsNotFound(err) {
								return fmt.Errorf("WorkloadPriorityClass %s after destroy: %v", name, err)
							}
						}
						return nil
					}),
				},
			},
		}),
	})
}

// checkCompleteOutputs checks the output "teams" against completeWant, and the capacity
// output against the local fleet.
func checkCompleteOutputs(s statecheck.CheckStateRequest) error {
	return checkCompleteOutputsOn(s, true)
}

// checkCompleteOutputsOn is checkCompleteOutputs on a store that holds EFA quotas or not (the
// SageMaker API does not: efa is then null).
func checkCompleteOutputsOn(s statecheck.CheckStateRequest, efaHeld bool) error {
	if s.State == nil || s.State.Values == nil {
		return fmt.Errorf("empty state")
	}
	teams, ok := outputValue(s, "teams").(map[string]any)
	if !ok || len(teams) != len(completeWant) {
		return fmt.Errorf("output teams = %v, want the %d teams %v", outputValue(s, "teams"), len(completeWant), completeTeams)
	}
	for team, types := range completeWant {
		got, _ := teams[team].(map[string]any)
		for attr, want := range map[string]string{
			"namespace":          quota.NamespaceName(team),
			"local_queue_name":   quota.LocalQueueName(team),
			"cluster_queue_name": quota.ClusterQueueName(team),
		} {
			if got[attr] != want {
				return fmt.Errorf("output teams[%q].%s = %v, want %q", team, attr, got[attr], want)
			}
		}
		amounts, _ := got["amounts"].(map[string]any)
		if len(amounts) != len(types) {
			return fmt.Errorf("output teams[%q].amounts = %v, want the instance types of %v", team, got["amounts"], types)
		}
		for instanceType, want := range types {
			a, _ := amounts[instanceType].(map[string]any)
			if !efaHeld {
				want.efa = ""
			}
			for attr, w := range map[string]string{
				"count": want.count, "accelerators": want.accelerators, "vcpu": want.vcpu,
				"memory_in_gib": want.memoryInGiB, "efa": want.efa,
			} {
				if g := decimal(a[attr]); g != w {
					return fmt.Errorf("output teams[%q].amounts[%q].%s = %q, want %q", team, instanceType, attr, g, w)
				}
			}
			if a["accelerator_partition"] != nil {
				return fmt.Errorf("output teams[%q].amounts[%q].accelerator_partition = %v, want null", team, instanceType, a["accelerator_partition"])
			}
		}
	}
	// The fleet has 16 H100s, 16 A10Gs and 32 Trainium chips, all on schedulable nodes; the
	// teams claim 16, 8 and 16.
	for instanceType, want := range map[string][2]string{
		"ml.p5.48xlarge": {"16", "16"}, "ml.g5.12xlarge": {"16", "8"}, "ml.trn1.32xlarge": {"32", "16"}, "ml.c5.4xlarge": {"0", "0"},
	} {
		capacity, _ := outputValue(s, "accelerators").(map[string]any)
		c, _ := capacity[instanceType].(map[string]any)
		if decimal(c["total"]) != want[0] || decimal(c["schedulable"]) != want[0] || decimal(c["claimed"]) != want[1] {
			return fmt.Errorf("output accelerators[%q] = %v, want total and schedulable %s, claimed %s", instanceType, c, want[0], want[1])
		}
	}
	return nil
}

// checkCompleteTeam checks the team's Namespace, LocalQueue and ClusterQueue, its nominal
// quotas against the planned amounts, and what the module's inputs (or their absence) became.
func checkCompleteTeam(t *testing.T, team string, types map[string]plannedAmounts) error {
	ns, err := tnsGetNamespace(quota.NamespaceName(team))
	if err != nil || ns == nil {
		return fmt.Errorf("namespace of %s: %v (exists: %t)", team, err, ns != nil)
	}
	if ns.Labels[quota.LabelQuotaAllocationID] != team {
		return fmt.Errorf("namespace %s labels %v lack %s=%s", ns.Name, ns.Labels, quota.LabelQuotaAllocationID, team)
	}
	lq, err := tnsGetLocalQueue(ns.Name, quota.LocalQueueName(team))
	if err != nil || lq == nil {
		return fmt.Errorf("LocalQueue of %s: %v (exists: %t)", team, err, lq != nil)
	}
	if lq.Spec.ClusterQueue != quota.ClusterQueueName(team) {
		return fmt.Errorf("LocalQueue %s/%s feeds %q, want %q", ns.Name, lq.Name, lq.Spec.ClusterQueue, quota.ClusterQueueName(team))
	}
	cq, ok := getClusterQueue(t, team)
	if !ok {
		return fmt.Errorf("ClusterQueue of %s not found", team)
	}
	var flavors []string
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			flavors = append(flavors, f.Name)
		}
	}
	if len(flavors) != len(types) {
		return fmt.Errorf("ClusterQueue %s has flavors %v, want the instance types %v", cq.Name, flavors, sortedKeys(types))
	}
	for instanceType, want := range types {
		it, ok := catalog.Builtin().Lookup(instanceType)
		if !ok {
			return fmt.Errorf("%s not in the catalog", instanceType)
		}
		cells := map[string]string{quota.ResourceCPU: want.vcpu, quota.ResourceMemory: want.memoryInGiB + "Gi", quota.ResourceEFA: want.efa}
		if it.AcceleratorResource != "" {
			cells[it.AcceleratorResource] = want.accelerators
		}
		for res, w := range cells {
			cell, ok := quotaCell(cq, instanceType, res)
			wantQ := k8sresource.MustParse(w)
			if !ok && wantQ.IsZero() {
				continue
			}
			if !ok || cell.NominalQuota.Cmp(wantQ) != 0 {
				return fmt.Errorf("ClusterQueue %s flavor %s %s nominal = %s (present: %t), want %s", cq.Name, instanceType, res, cell.NominalQuota.String(), ok, w)
			}
		}
	}

	// The inputs: what each team sets, and the defaults of what it leaves unset.
	weight, preempt, strategy := "1", quota.PreemptLowerPriority, quota.StrategyLendAndBorrow
	var description string
	switch team {
	case "complete-research":
		weight, description = "10", "Pre-training on H100s and Trainium; borrows idle H100s from the cohort."
	case "complete-evaluation":
		strategy, description = quota.StrategyLend, "Model evaluation: one H100 node, lent out while idle."
	case "complete-inference":
		strategy, preempt, description = quota.StrategyDontLend, quota.PreemptNever, "Model serving on two A10G instances."
		if ns.Labels["example.com/cost-center"] != "serving" || ns.Annotations["example.com/contact"] != "inference-oncall@example.com" {
			return fmt.Errorf("namespace %s: labels %v, annotations %v lack the example's", ns.Name, ns.Labels, ns.Annotations)
		}
	}
	if cq.Spec.FairSharing == nil || cq.Spec.FairSharing.Weight == nil || cq.Spec.FairSharing.Weight.Cmp(k8sresource.MustParse(weight)) != 0 {
		return fmt.Errorf("ClusterQueue %s fairSharing = %+v, want weight %s", cq.Name, cq.Spec.FairSharing, weight)
	}
	if cq.Spec.Preemption == nil || cq.Spec.Preemption.WithinClusterQueue != preempt {
		return fmt.Errorf("ClusterQueue %s preemption = %+v, want withinClusterQueue %s", cq.Name, cq.Spec.Preemption, preempt)
	}
	if cq.Spec.CohortName != quota.DefaultCohort {
		return fmt.Errorf("ClusterQueue %s cohort %q, want the default %q", cq.Name, cq.Spec.CohortName, quota.DefaultCohort)
	}
	if cq.Spec.StopPolicy != nil && *cq.Spec.StopPolicy != "None" {
		return fmt.Errorf("ClusterQueue %s stopPolicy %s, want None", cq.Name, *cq.Spec.StopPolicy)
	}
	if got := cq.Annotations[quota.AnnotationDescription]; got != description {
		return fmt.Errorf("ClusterQueue %s description %q, want %q", cq.Name, got, description)
	}
	// The strategy, on the first flavor's cpu: LendAndBorrow borrows a percentage (100 for
	// research, the default 50 for data-prep), Lend borrows nothing, DontLend lends nothing too.
	first := sortedKeys(types)[0]
	cpu, _ := quotaCell(cq, first, quota.ResourceCPU)
	borrowing, lending := "", ""
	if cpu.BorrowingLimit != nil {
		borrowing = cpu.BorrowingLimit.String()
	}
	if cpu.LendingLimit != nil {
		lending = cpu.LendingLimit.String()
	}
	wantBorrowing, wantLending := "", ""
	switch strategy {
	case quota.StrategyLend:
		wantBorrowing = "0"
	case quota.StrategyDontLend:
		wantBorrowing, wantLending = "0", "0"
	default:
		v, _ := strconv.ParseFloat(types[first].vcpu, 64)
		percent := 50.0
		if team == "complete-research" {
			percent = 100
		}
		wantBorrowing = k8sresource.NewMilliQuantity(int64(v*percent*10), k8sresource.DecimalSI).String()
	}
	if !sameQuantity(borrowing, wantBorrowing) || !sameQuantity(lending, wantLending) {
		return fmt.Errorf("ClusterQueue %s (%s) flavor %s cpu: borrowingLimit %q, lendingLimit %q; want %q and %q",
			cq.Name, strategy, first, borrowing, lending, wantBorrowing, wantLending)
	}
	return nil
}

// sameQuantity compares two quantities in text form, "" meaning absent.
func sameQuantity(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	qa := k8sresource.MustParse(a)
	return qa.Cmp(k8sresource.MustParse(b)) == 0
}

// outputValue is a root output's value in the terraform-json state (numbers are json.Number).
func outputValue(s statecheck.CheckStateRequest, name string) any {
	if s.State == nil || s.State.Values == nil || s.State.Values.Outputs[name] == nil {
		return nil
	}
	return s.State.Values.Outputs[name].Value
}

// decimal is a JSON number as text, "" for null.
func decimal(v any) string {
	switch n := v.(type) {
	case nil:
		return ""
	case json.Number:
		return n.String()
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// The hyperpod-team module alone, planned without a cluster (new quotas and namespaces plan
// offline): unset optional inputs, and inputs explicitly set to null, reach the provider as
// null, so the plan shows the provider's defaults and its computed amounts, except for
// fair_share_weight, whose module default is 1. The module's validations name what is wrong.
// Runs in the unit tests (no TF_ACC), but needs the terraform CLI.
func TestExamples_hyperpodTeamModulePlan(t *testing.T) {
	if _, err := exec.LookPath("terraform"); err != nil && os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Skip("needs terraform on PATH or TF_ACC_TERRAFORM_PATH")
	}
	module := func(name, body string) string {
		return fmt.Sprintf("module %q {\n  source = \"../modules/hyperpod-team\"\n%s\n}\n", name, body)
	}
	cfg := noResources + unreachableProvider +
		module("unset", `
  team        = "unit-unset"
  allocations = { "ml.c5.4xlarge" = { vcpu = 24 } }
`) + module("nulls", `
  team                  = "unit-nulls"
  allocations           = { "ml.g5.12xlarge" = { count = 1, accelerators = null, vcpu = null, memory_in_gib = null, efa = null, accelerator_partition = null } }
  description           = null
  fair_share_weight     = null
  sharing               = null
  preempt_team_tasks    = null
  activation_state      = null
  cohort                = null
  namespace_labels      = null
  namespace_annotations = null
  force_destroy         = null
`) + module("set", `
  team              = "unit-set"
  allocations       = { "ml.p4d.24xlarge" = { accelerator_partition = { type = "mig-1g.5gb", count = 14 } } }
  fair_share_weight = 0
  sharing           = { borrow_limit = 100 }
`) + `
output "unset_amounts" {
  value = module.unset.amounts
}
`
	quotaAt := func(m string) string { return "module." + m + ".hyperpod_compute_quota.this" }
	nsAt := func(m string) string { return "module." + m + ".hyperpod_team_namespace.this" }
	res := func(attr string) tfjsonpath.Path { return tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey(attr) }
	sharing := func(attr string) tfjsonpath.Path { return tfjsonpath.New("resource_sharing").AtMapKey(attr) }
	var checks []plancheck.PlanCheck
	for _, m := range []string{"unset", "nulls"} {
		checks = append(checks,
			plancheck.ExpectKnownValue(quotaAt(m), tfjsonpath.New("description"), knownvalue.Null()),
			plancheck.ExpectKnownValue(quotaAt(m), tfjsonpath.New("fair_share_weight"), knownvalue.Int64Exact(1)),
			plancheck.ExpectKnownValue(quotaAt(m), tfjsonpath.New("preempt_team_tasks"), knownvalue.StringExact(quota.PreemptLowerPriority)),
			plancheck.ExpectKnownValue(quotaAt(m), tfjsonpath.New("activation_state"), knownvalue.StringExact(quota.ActivationEnabled)),
			plancheck.ExpectKnownValue(quotaAt(m), tfjsonpath.New("cohort"), knownvalue.StringExact(quota.DefaultCohort)),
			plancheck.ExpectKnownValue(quotaAt(m), sharing("strategy"), knownvalue.StringExact(quota.StrategyLendAndBorrow)),
			plancheck.ExpectKnownValue(quotaAt(m), sharing("borrow_limit"), knownvalue.Int64Exact(50)),
			plancheck.ExpectKnownValue(quotaAt(m), sharing("absolute_borrow_limits"), knownvalue.Null()),
			plancheck.ExpectKnownValue(quotaAt(m), tfjsonpath.New("name"), knownvalue.StringExact("unit-"+m)),
			plancheck.ExpectKnownValue(nsAt(m), tfjsonpath.New("labels"), knownvalue.Null()),
			plancheck.ExpectKnownValue(nsAt(m), tfjsonpath.New("annotations"), knownvalue.Null()),
			plancheck.ExpectKnownValue(nsAt(m), tfjsonpath.New("force_destroy"), knownvalue.Bool(false)),
		)
	}
	checks = append(checks,
		// 24 vCPU of a 16-vCPU, 32-GiB type: ratio 1.5.
		plancheck.ExpectKnownValue(quotaAt("unset"), res("count"), knownvalue.Null()),
		plancheck.ExpectKnownValue(quotaAt("unset"), res("accelerators"), knownvalue.Int64Exact(0)),
		plancheck.ExpectKnownValue(quotaAt("unset"), res("memory_in_gib"), knownvalue.Float64Exact(48)),
		plancheck.ExpectKnownValue(quotaAt("unset"), res("accelerator_partition"), knownvalue.Null()),
		plancheck.ExpectKnownOutputValueAtPath("unset_amounts", tfjsonpath.New("ml.c5.4xlarge").AtMapKey("memory_in_gib"), knownvalue.Float64Exact(48)),
		// One whole ml.g5.12xlarge.
		plancheck.ExpectKnownValue(quotaAt("nulls"), res("accelerators"), knownvalue.Int64Exact(4)),
		plancheck.ExpectKnownValue(quotaAt("nulls"), res("vcpu"), knownvalue.Float64Exact(48)),
		plancheck.ExpectKnownValue(quotaAt("nulls"), res("memory_in_gib"), knownvalue.Float64Exact(192)),
		plancheck.ExpectKnownValue(quotaAt("nulls"), res("efa"), knownvalue.Int64Exact(1)),
		// 14 x mig-1g.5gb of ml.p4d.24xlarge is a quarter of the instance; a weight of 0 stays 0;
		// a sharing object without strategy keeps the default strategy.
		plancheck.ExpectKnownValue(quotaAt("set"), res("vcpu"), knownvalue.Float64Exact(24)),
		plancheck.ExpectKnownValue(quotaAt("set"), res("memory_in_gib"), knownvalue.Float64Exact(288)),
		plancheck.ExpectKnownValue(quotaAt("set"), res("efa"), knownvalue.Int64Exact(4)),
		plancheck.ExpectKnownValue(quotaAt("set"), tfjsonpath.New("fair_share_weight"), knownvalue.Int64Exact(0)),
		plancheck.ExpectKnownValue(quotaAt("set"), sharing("strategy"), knownvalue.StringExact(quota.StrategyLendAndBorrow)),
		plancheck.ExpectKnownValue(quotaAt("set"), sharing("borrow_limit"), knownvalue.Int64Exact(100)),
	)

	// ConfigFile, not Config: plugin-testing runs `terraform init` for a step only when the step's
	// file or directory has a provider block (Config is not looked at), and init is what installs
	// the modules.
	files := t.TempDir()
	file := func(name, content string) func(config.TestStepConfigRequest) string {
		path := filepath.Join(files, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return config.StaticFile(path)
	}
	invalid := func(name, body string) func(config.TestStepConfigRequest) string {
		return file(name, noResources+unreachableProvider+module("bad", body))
	}
	resource.UnitTest(t, resource.TestCase{
		WorkingDir: examplesWorkingDir(t),
		Steps: withProvider([]resource.TestStep{
			{
				ConfigFile:         file("plan.tf", cfg),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks:   resource.ConfigPlanChecks{PostApplyPreRefresh: checks},
			},
			{
				ConfigFile:  invalid("team.tf", `team = "ML_Research"`+"\n"+`allocations = { "ml.c5.4xlarge" = { count = 1 } }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`team must be 1-40 lower-case letters`),
			},
			{
				ConfigFile:  invalid("unsized.tf", `team = "unit-bad"`+"\n"+`allocations = { "ml.c5.4xlarge" = { count = 1 }, "ml.g5.12xlarge" = { efa = 1 } }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Size every allocation by.*these set none:\s+ml\.g5\.12xlarge\.`),
			},
			{
				ConfigFile:  invalid("empty.tf", `team = "unit-bad"`+"\n"+`allocations = {}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`allocations needs 1-15 instance types`),
			},
		}),
	})
}
