package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/hashicorp/terraform-plugin-testing/config"
	sdkacctest "github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

const tgQuota = "hyperpod_compute_quota.test"

// tgQuotaID is the id SageMaker gives a compute quota.
var tgQuotaID = regexp.MustCompile(`^[a-z0-9]{12}$`)

// emulatorQuota finds the emulator's compute quota of team.
func emulatorQuota(t *testing.T, tg *acctest.TaskGovernance, team string) sagemakeremulator.ComputeQuota {
	t.Helper()
	for _, q := range tg.Emulator.Quotas() {
		if q.Target.TeamName != nil && *q.Target.TeamName == team && q.Status != sagemakeremulator.StatusDeleting {
			return q
		}
	}
	t.Fatalf("the SageMaker API holds no compute quota for team %q", team)
	return sagemakeremulator.ComputeQuota{}
}

// The quota lifecycle through the SageMaker API: the plan shows the ratio defaults, apply sends
// every amount explicitly and waits for Created, the add-on turns it into a ClusterQueue, a
// change made in the API is drift that the next apply repairs over the current version,
// import by team and by quota id reads back what plans empty, and a delete the API fails is
// reported with its reason and keeps the quota in state.
func TestAccTaskGovernance_quotaLifecycle(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	team := "tg-life"
	cfg := func(accelerators int) string {
		return tg.ProviderHCL() + acctest.Quota(team).Resource("ml.g5.12xlarge").Accelerators(accelerators).HCL()
	}
	var failedDelete string // the id of the quota whose delete the API failed
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		// Destroy deletes the quota its state names by id and waits until the API no longer knows it.
		CheckDestroy: tgTeamHoldsNothing(tg, team),
		Steps: []resource.TestStep{
			{
				Config: cfg(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// The ratio defaults, before apply: 2 of 4 GPUs is half of 48 vCPU and 192 GiB.
					plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("vcpu"), knownvalue.Float64Exact(24)),
					plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("memory_in_gib"), knownvalue.Float64Exact(96)),
					plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("efa"), knownvalue.Null()),
					plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("cohort"), knownvalue.Null()),
					plancheck.ExpectUnknownValue(tgQuota, tfjsonpath.New("quota_id")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("quota_id"), knownvalue.StringRegexp(tgQuotaID)),
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("status"), knownvalue.StringExact("Created")),
				},
				Check: func(*terraform.State) error {
					q := emulatorQuota(t, tg, team)
					r := q.Config.ComputeQuotaResources[0]
					if r.Accelerators == nil || *r.Accelerators != 2 || r.VCpu == nil || *r.VCpu != 24 || r.MemoryInGiB == nil || *r.MemoryInGiB != 96 {
						return fmt.Errorf("the API holds %+v, want every amount explicit: 2 accelerators, 24 vCPU, 96 GiB", r)
					}
					return tgClusterQueueHolds(tg, team, "nvidia.com/gpu", "2")
				},
			},
			{
				// Changed in the API: drift, repaired over the current version.
				PreConfig: func() {
					q := emulatorQuota(t, tg, team)
					if err := tg.Emulator.UpdateQuota(q.ID, func(q *sagemakeremulator.ComputeQuota) {
						v := sagemakeremulator.Float32(30)
						q.Config.ComputeQuotaResources[0].VCpu = &v
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tgQuota, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("version"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("vcpu"), knownvalue.Float64Exact(24)),
				},
			},
			{Config: cfg(3), Check: func(*terraform.State) error { return tgClusterQueueHolds(tg, team, "nvidia.com/gpu", "3") }},
			{ResourceName: tgQuota, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts", "drift"}},
			{ResourceName: tgQuota, ImportState: true, ImportStateIdFunc: func(*terraform.State) (string, error) {
				return emulatorQuota(t, tg, team).ID, nil
			}, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts", "drift"}},
			{
				// A delete the API fails (DeleteFailed) is an error carrying its FailureReason, not
				// the Kubernetes path's finalizer story.
				PreConfig: func() {
					failedDelete = emulatorQuota(t, tg, team).ID
					tg.Emulator.FailDelete(team+"-quota", "tasks of the team are still running")
				},
				Config:  cfg(3),
				Destroy: true,
				ExpectError: regexp.MustCompile(`(?s)Cannot delete the SageMaker compute quota.*DeleteFailed:\s+tasks\s+of\s+the\s+team\s+are\s+still\s+running` +
					`.*It\s+stays\s+in\s+state`),
			},
			{
				// It stayed in state under its id: the next apply updates it (its status is drift)
				// instead of creating another, and the test's destroy then deletes it.
				Config: cfg(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tgQuota, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("quota_id"), knownvalue.StringFunc(func(id string) error {
						if id != failedDelete {
							return fmt.Errorf("quota_id %q after the failed destroy, want %q, the quota whose delete failed", id, failedDelete)
						}
						return nil
					})),
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("status"), knownvalue.StringExact("Updated")),
				},
			},
		},
	})
}

// tgClusterQueueHolds checks what the add-on wrote: the team's ClusterQueue gives the flavor's
// resource the nominal quota want.
func tgClusterQueueHolds(tg *acctest.TaskGovernance, team, res, want string) error {
	if err := tg.Emulator.Settle(context.Background()); err != nil {
		return err
	}
	c := kube.NewClient(kube.Settings{ConfigPath: tg.Kubeconfig})
	var cq kueue.ClusterQueue
	found, err := c.Get(context.Background(), kueue.ClusterQueues, "", quota.ClusterQueueName(team), &cq)
	if err != nil || !found {
		return fmt.Errorf("the add-on wrote no ClusterQueue for team %q (%v)", team, err)
	}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				if string(r.Name) == res && r.NominalQuota.String() == want {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("ClusterQueue %s does not give %s = %s: %+v", cq.Name, res, want, cq.Spec.ResourceGroups)
}

// What the SageMaker API cannot hold is refused at plan time, at its attribute.
func TestAccTaskGovernance_unsupportedAttributes(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      tg.ProviderHCL() + acctest.Quota("tg-cohort").Resource("ml.g5.12xlarge").Count(1).Body(`cohort = "research"`).HCL(),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)cohort is set, but the SageMaker API has no cohort field`),
			},
			{
				Config: tg.ProviderHCL() + `
resource "hyperpod_compute_quota" "test" {
  name      = "tg-efa-quota"
  team      = "tg-efa"
  resources = [{ instance_type = "ml.p5.48xlarge", accelerators = 8, efa = 32 }]
}`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)resources\[0\]\.efa.*the SageMaker API has no EFA field`),
			},
		},
	})
}

const tgSchedulerConfig = "hyperpod_cluster_scheduler_config.test"

// The cluster scheduler config through the SageMaker API: one per cluster, its priority classes
// become WorkloadPriorityClasses through the add-on, fair sharing defaults to Enabled, a
// change in the API is drift, and import reads it back.
func TestAccTaskGovernance_schedulerConfig(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	cfg := func(weight int64, extra string) string {
		return tg.ProviderHCL() + `
resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [{ name = "tg-high", weight = ` + fmt.Sprint(weight) + ` }, { name = "tg-low", weight = 10 }]
  ` + extra + `
}`
	}
	classValue := func(name string, want int32) error {
		if err := tg.Emulator.Settle(context.Background()); err != nil {
			return err
		}
		var wpc kueue.WorkloadPriorityClass
		found, err := kube.NewClient(kube.Settings{ConfigPath: tg.Kubeconfig}).Get(context.Background(), kueue.WorkloadPriorityClasses, "", quota.PriorityClassObjectName(name), &wpc)
		if err != nil || !found || wpc.Value != want {
			return fmt.Errorf("WorkloadPriorityClass of %s: found %v, value %d, want %d (%v)", name, found, wpc.Value, want, err)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg(100, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("fair_share"), knownvalue.StringExact("Enabled")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("config_id"), knownvalue.StringRegexp(tgQuotaID)),
					statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("version"), knownvalue.Int64Exact(1)),
				},
				Check: func(*terraform.State) error { return classValue("tg-high", 100) },
			},
			{
				Config: cfg(90, `fair_share = "Disabled"`),
				Check:  func(*terraform.State) error { return classValue("tg-high", 90) },
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("version"), knownvalue.Int64Exact(2)),
				},
			},
			{ResourceName: tgSchedulerConfig, ImportState: true, ImportStateId: "tg-high,tg-low", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"drift"}},
		},
	})
}

// On a cluster that runs its own Kueue, the policy switches of the SageMaker API are refused at
// plan time.
func TestAccClusterSchedulerConfig_fairShareNeedsTaskGovernance(t *testing.T) {
	acctest.RequireKueue(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [{ name = "fs-only", weight = 10 }]
  fair_share       = "Enabled"
}`,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)fair_share is set, but on a cluster that runs its own Kueue, fair sharing`),
		}},
	})
}

// tgExampleDir copies examples/<name> into a temporary directory with only its provider block
// replaced by the SageMaker path's: the same HCL on the other kind of cluster.
func tgExampleDir(t *testing.T, tg *acctest.TaskGovernance, name string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(examplesDir, name, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/%s has no .tf files (%v)", name, err)
	}
	replaced := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if strings.Contains(src, `provider "hyperpod" {}`) {
			src, replaced = strings.Replace(src, `provider "hyperpod" {}`, tg.ProviderHCL(), 1), true
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !replaced {
		t.Fatalf(`examples/%s has no provider "hyperpod" {} block to replace`, name)
	}
	return dir
}

// The complete example on a task-governance cluster, with only the provider block changed: it
// plans the numbers it plans on a cluster with its own Kueue (EFA aside, which the add-on
// decides), applies through the SageMaker API, the add-on writes every team's queues, the
// capacity check passes, a second plan is empty, and everything is destroyed.
func TestAccTaskGovernance_examplesComplete(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	complete := config.StaticDirectory(tgExampleDir(t, tg, "complete"))
	resource.Test(t, resource.TestCase{
		WorkingDir: examplesWorkingDir(t),
		Steps: withProvider([]resource.TestStep{
			{
				ConfigDirectory: complete,
				ConfigStateChecks: []statecheck.StateCheck{
					stateCheckFunc(func(s statecheck.CheckStateRequest) error {
						if err := checkCompleteOutputsOn(s, false); err != nil {
							return err
						}
						for team, types := range completeWant {
							for instanceType, want := range types {
								if instanceType != "ml.g5.12xlarge" {
									continue
								}
								if err := tgClusterQueueHolds(tg, team, "nvidia.com/gpu", want.accelerators); err != nil {
									return err
								}
							}
						}
						status, problems, err := checkBlockResult(s.State.Checks, completeCheck)
						if err == nil && status != "pass" {
							err = fmt.Errorf("check %s: %s %v, want pass", completeCheck, status, problems)
						}
						return err
					}),
				},
			},
			{ConfigDirectory: complete, PlanOnly: true},
			// Destroyed through the same provider block: without it the destroy would go to the
			// suite's own cluster and leave the API's objects behind.
			{Config: noResources + tg.ProviderHCL()},
		}),
	})
}

// The quickstart's story through the SageMaker path, with only the provider block changed: the
// quotas and priority classes go to the API, the add-on turns them into Kueue objects, and Kueue
// admits, keeps pending and lends exactly as on a cluster with its own Kueue (ml-research
// borrows the idle evaluation team's H100s); the usage data sources read it through Kubernetes.
func TestAccTaskGovernance_admission(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	jobs, err := localcluster.ReadJobs(filepath.Join(examplesDir, "quickstart", "jobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	quickstart := func(files ...string) string {
		return strings.Replace(quickstartConfig(t, files...), `provider "hyperpod" {}`, tg.ProviderHCL(), 1)
	}
	quotas, withUsage := quickstart("main.tf"), quickstart("main.tf", "usage.tf")
	var decisions []localcluster.JobDecision
	var submitErr error
	release := func() {
		if err := localcluster.DeleteJobs(context.Background(), tg.Clientset, tg.Dynamic, jobs); err != nil {
			t.Errorf("deleting the jobs: %v", err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: quotas, Check: func(*terraform.State) error { return tg.Emulator.Settle(context.Background()) }},
			{
				PreConfig: func() {
					decisions, submitErr = localcluster.SubmitJobs(context.Background(), tg.Clientset, tg.Dynamic, jobs, time.Minute)
				},
				Config: withUsage,
				Check: func(s *terraform.State) error {
					err := checkQuickstartStory(tg.Dynamic, s, decisions, submitErr)
					if err != nil {
						release()
					}
					return err
				},
			},
			{
				PreConfig: func() {
					release()
					if err := waitQueuesIdle(tg.Dynamic, quickstartTeams); err != nil {
						t.Error(err)
					}
				},
				Config: withUsage,
			},
		},
	})
}

// Every SageMaker action the provider calls, through every resource and data source, import and
// destroy, is in the least-privilege IAM policy of examples/iam.
func TestAccTaskGovernance_iamPolicyCoversCalls(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	raw, err := os.ReadFile(filepath.Join(examplesDir, "iam", "task-governance-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Statement []struct {
			Action []string
		}
	}
	if err := json.Unmarshal(raw, &policy); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, st := range policy.Statement {
		for _, a := range st.Action {
			allowed[a] = true
		}
	}
	cfg := tg.ProviderHCL() + acctest.Quota("tg-iam").Resource("ml.c5.4xlarge").VCPU(1).HCL() + `
resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [{ name = "tg-iam", weight = 5 }]
}
data "hyperpod_instance_type_capacity" "c5" {
  instance_type = "ml.c5.4xlarge"
  depends_on    = [hyperpod_compute_quota.test]
}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{ResourceName: tgQuota, ImportState: true, ImportStateId: "tg-iam", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts", "drift"}},
		},
		CheckDestroy: func(*terraform.State) error {
			called := tg.Emulator.IAMActions()
			for _, want := range []string{"sagemaker:CreateComputeQuota", "sagemaker:ListComputeQuotas", "sagemaker:DescribeCluster",
				"sagemaker:CreateClusterSchedulerConfig", "sagemaker:DeleteComputeQuota"} {
				if !slices.Contains(called, want) {
					return fmt.Errorf("the run never called %s: the check would prove nothing (called %v)", want, called)
				}
			}
			for _, a := range called {
				if !allowed[a] {
					return fmt.Errorf("the provider called %s, which examples/iam/task-governance-policy.json does not allow", a)
				}
			}
			return nil
		},
	})
}

// Against a real HyperPod cluster with the task-governance add-on, when HYPERPOD_CLUSTER_ARN and
// AWS credentials are set (setting them is consent: the test creates, imports and deletes one
// compute quota of its own, for team tfacc-<random>, of HYPERPOD_TEST_INSTANCE_TYPE or
// ml.c5.4xlarge).
func TestAccTaskGovernanceAWS_quota(t *testing.T) {
	acctest.RequireCluster(t)
	arn := os.Getenv("HYPERPOD_CLUSTER_ARN")
	if arn == "" {
		t.Skip("HYPERPOD_CLUSTER_ARN is not set: no real HyperPod cluster with the task-governance add-on to test against")
	}
	cluster, err := sagemakerclient.ParseClusterARN(arn)
	if err != nil {
		t.Fatalf("HYPERPOD_CLUSTER_ARN: %v", err)
	}
	// Credentials come from the whole default chain, as the provider's do (a default profile,
	// SSO, web identity, pod identity, IMDS), not only from the environment. The chain's last
	// link asks the instance metadata service, which off EC2 never answers: the timeout bounds it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	awsConfig, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(cluster.Region))
	if err == nil {
		_, err = awsConfig.Credentials.Retrieve(ctx)
	}
	if err != nil {
		t.Skipf("no AWS credentials resolve the way the provider resolves them: %v", err)
	}
	instanceType := os.Getenv("HYPERPOD_TEST_INSTANCE_TYPE")
	if instanceType == "" {
		instanceType = "ml.c5.4xlarge"
	}
	team := "tfacc-" + sdkacctest.RandStringFromCharSet(8, sdkacctest.CharSetAlphaNum)
	team = strings.ToLower(team)
	cfg := fmt.Sprintf("provider \"hyperpod\" {\n  task_governance {\n    cluster_arn = %q\n  }\n}\n", arn) +
		acctest.Quota(team).Resource(instanceType).VCPU(1).HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("quota_id"), knownvalue.StringRegexp(tgQuotaID)),
			}},
			{ResourceName: tgQuota, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts", "drift"}},
		},
	})
}

// One owner per team, and adoption through the SageMaker path: a quota that state forgot
// (removed with destroy = false, as a migration does) stays in the API; a create for its team is
// refused, naming the quota and the import command; terraform plan -generate-config-out
// imports it, and the generated configuration plans empty once applied.
func TestAccTaskGovernance_oneOwnerAndAdoption(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	work, adopted := t.TempDir(), t.TempDir()
	t.Setenv("TF_ACC_TEMP_DIR", work)
	seed := acctest.Quota("tg-adopt").Resource("ml.g5.12xlarge").Accelerators(2).HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: tg.ProviderHCL() + seed},
			{Config: tg.ProviderHCL() + "removed {\n  from = hyperpod_compute_quota.test\n  lifecycle {\n    destroy = false\n  }\n}\n"},
			{
				Config: tg.ProviderHCL() + `
resource "hyperpod_compute_quota" "dup" {
  name      = "tg-adopt-again"
  team      = "tg-adopt"
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
}`,
				ExpectError: regexp.MustCompile(`(?s)SageMaker compute quota "tg-adopt-quota" \(id [a-z0-9]{12}\)\s+already exists.*terraform import hyperpod_compute_quota.<name> tg-adopt`),
			},
			{
				Config:             tg.ProviderHCL(),
				ResourceName:       "hyperpod_compute_quota.adopted",
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ImportStateId:      "tg-adopt",
				GenerateConfig:     true,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					captureGenerated{from: work, to: filepath.Join(adopted, "generated.tf")},
				}},
			},
			{
				PreConfig: func() {
					files := map[string]string{
						// -generate-config-out names the resource "generated".
						"import.tf":   "import {\n  to = hyperpod_compute_quota.generated\n  id = \"tg-adopt\"\n}\n",
						"provider.tf": tg.ProviderHCL(),
					}
					for name, body := range files {
						if err := os.WriteFile(filepath.Join(adopted, name), []byte(body), 0o600); err != nil {
							t.Fatal(err)
						}
					}

				},
				ConfigDirectory: func(config.TestStepConfigRequest) string { return adopted },
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("hyperpod_compute_quota.generated", tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("accelerators"), knownvalue.Int64Exact(2)),
				},
			},
		},
	})
}

// On the SageMaker path the add-on creates a team's LocalQueue with the team's quota, under the
// name the provider plans: a namespace without a quota plans empty after apply, and the queue
// the add-on creates once the quota exists is the one the namespace names.
func TestAccTaskGovernance_namespaceBeforeItsQuota(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	team := "tg-ns-first"
	namespace := acctest.TeamNamespace(team).HCL()
	withQuota := namespace + acctest.Quota(team).Resource("ml.g5.12xlarge").Accelerators(1).HCL()
	names := []statecheck.StateCheck{
		statecheck.ExpectKnownValue("hyperpod_team_namespace.test", tfjsonpath.New("local_queue_name"), knownvalue.StringExact(quota.LocalQueueName(team))),
		statecheck.ExpectKnownValue("hyperpod_team_namespace.test", tfjsonpath.New("cluster_queue_name"), knownvalue.StringExact(quota.ClusterQueueName(team))),
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: tg.ProviderHCL() + namespace, ConfigStateChecks: names},
			{Config: tg.ProviderHCL() + namespace, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				Config:            tg.ProviderHCL() + withQuota,
				ConfigStateChecks: names,
				Check: func(*terraform.State) error {
					if err := tg.Emulator.Settle(context.Background()); err != nil {
						return err
					}
					var lq kueue.LocalQueue
					c := kube.NewClient(kube.Settings{ConfigPath: tg.Kubeconfig})
					found, err := c.Get(context.Background(), kueue.LocalQueues, quota.NamespaceName(team), quota.LocalQueueName(team), &lq)
					if err != nil || !found || lq.Spec.ClusterQueue != quota.ClusterQueueName(team) {
						return fmt.Errorf("the add-on wrote no LocalQueue %s feeding %s (found %v, %+v, %v)",
							quota.LocalQueueName(team), quota.ClusterQueueName(team), found, lq.Spec, err)
					}
					return nil
				},
			},
		},
	})
}
