package provider

// The quickstart and the documentation's examples, applied: Kueue accepts everything they write,
// and their jobs get the decisions the examples promise.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// quickstartConfig is examples/quickstart without its terraform block (the tests serve the
// provider under its test address): the given files. capacity.tf and outputs.tf only read,
// through a for_each data source, which the test framework's state shim cannot hold.
func quickstartConfig(t *testing.T, files ...string) string {
	t.Helper()
	var b strings.Builder
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(terraformBlock.ReplaceAll(raw, nil))
		b.WriteString("\n")
	}
	return b.String()
}

var terraformBlock = regexp.MustCompile(`(?s)terraform \{.*?\n\}\n`)

var quickstartTeams = []string{"ml-research", "evaluation", "inference", "data-prep"}

// waitActive waits until Kueue reports an object Active.
func waitActive(get func(context.Context) (*unstructured.Unstructured, error), what string) error {
	return waitCondition(get, what, "Active", "True", "")
}

// checkAllActive checks that Kueue accepted and activated every team's ClusterQueue and
// LocalQueue and every flavor.
func checkAllActive(t *testing.T, teams, flavors []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		for _, team := range teams {
			if err := checkQueueActive(t, team)(nil); err != nil {
				return err
			}
			ns, lq := quota.NamespaceName(team), quota.LocalQueueName(team)
			if err := waitActive(func(ctx context.Context) (*unstructured.Unstructured, error) {
				return acc.dynamic.Resource(kueue.LocalQueues).Namespace(ns).Get(ctx, lq, metav1.GetOptions{})
			}, "LocalQueue "+lq); err != nil {
				return err
			}
		}
		for _, flavor := range flavors {
			rf, err := acc.dynamic.Resource(kueue.ResourceFlavors).Get(ctx, flavor, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("ResourceFlavor %s: %w", flavor, err)
			}
			// Kueue's mutating webhook marks the flavors it accepted.
			if !slices.Contains(rf.GetFinalizers(), "kueue.x-k8s.io/resource-in-use") {
				return fmt.Errorf("ResourceFlavor %s has no Kueue finalizer: %v", flavor, rf.GetFinalizers())
			}
		}
		return nil
	}
}

// The quickstart's story, as `make demo` tells it: everything it writes is accepted by Kueue's
// webhooks and Active; the jobs of examples/quickstart/jobs.yaml get the decisions its header
// promises (ml-research borrows the idle evaluation team's H100s); and the quickstart's usage
// data sources report the borrowing.
func TestAccAdmission_quickstart(t *testing.T) {
	acctest.RequireKueue(t)
	e2eCleanup(t, quickstartTeams...)
	cleanupPriorityClasses(t, "inference", "training", "experimentation")
	jobs, err := localcluster.ReadJobs(filepath.Join("..", "..", "examples", "quickstart", "jobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var decisions []localcluster.JobDecision
	var submitErr error
	quotas, config := quickstartConfig(t, "main.tf"), quickstartConfig(t, "main.tf", "usage.tf")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The quotas first: the usage data sources would read the queues before Kueue
				// activated them, and the next plan would show them active.
				Config: quotas,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkAllActive(t, quickstartTeams, []string{"ml.p5.48xlarge", "ml.trn1.32xlarge", "ml.g5.12xlarge", "ml.c5.4xlarge"}),
					checkWorkloadPriorityClasses(map[string]int64{"inference-priority": 100, "training-priority": 75, "experimentation-priority": 25}),
				),
			},
			{
				// Submit the jobs; the usage data sources read in this step's plan.
				PreConfig: func() {
					decisions, submitErr = localcluster.SubmitJobs(context.Background(), acc.clientset, acc.dynamic, jobs, time.Minute)
				},
				Config: config,
				Check: func(s *terraform.State) error {
					err := checkQuickstartStory(acc.dynamic, s, decisions, submitErr)
					if err != nil {
						// Release the quota now, or destroying the queues would wait for it.
						if derr := localcluster.DeleteJobs(context.Background(), acc.clientset, acc.dynamic, jobs); derr != nil {
							t.Errorf("deleting the jobs: %v", derr)
						}
					}
					return err
				},
			},
			{
				// Finish the work so the queues can be destroyed.
				PreConfig: func() {
					if err := localcluster.DeleteJobs(context.Background(), acc.clientset, acc.dynamic, jobs); err != nil {
						t.Errorf("deleting the jobs: %v", err)
					}
					// Kueue updates the queues' status a moment later; the usage data sources of
					// this step and of the plan after it must read the same.
					if err := waitQueuesIdle(acc.dynamic, quickstartTeams); err != nil {
						t.Error(err)
					}
				},
				Config: config,
			},
		},
	})
}

// checkQuickstartStory checks the decisions jobs.yaml promises and what the quickstart's usage
// output reports of them.
func checkQuickstartStory(dc dynamic.Interface, s *terraform.State, decisions []localcluster.JobDecision, submitErr error) error {
	if submitErr != nil {
		return submitErr
	}
	want := map[string]string{
		"pretrain": "Admitted ml.p5.48xlarge", "ablation": "Pending", "llm-serve": "Admitted ml.g5.12xlarge",
		"batch-eval": "Pending", "features": "Admitted ml.c5.4xlarge",
	}
	if len(decisions) != len(want) {
		return fmt.Errorf("%d decisions, want %d", len(decisions), len(want))
	}
	for _, d := range decisions {
		got := strings.TrimSpace(d.State + " " + strings.Join(d.Flavors, ","))
		if got != want[d.Job] {
			return fmt.Errorf("job %s/%s: Kueue decided %q (%s), want %q", d.Namespace, d.Job, got, d.Message, want[d.Job])
		}
		if d.State == "Pending" && !strings.Contains(d.Message, "insufficient unused quota") {
			return fmt.Errorf("job %s pending for %q, want Kueue's insufficient quota reason", d.Job, d.Message)
		}
	}
	if err := waitBorrowed(dc, "ml-research", "ml.p5.48xlarge", "nvidia.com/gpu", "8"); err != nil {
		return err
	}
	const gpuP5, gpuG5 = "ml.p5.48xlarge nvidia.com/gpu", "ml.g5.12xlarge nvidia.com/gpu"
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"ml-research", "active"}, "true"},
		{[]string{"ml-research", "admitted"}, "1"},
		{[]string{"ml-research", "pending"}, "1"},
		{[]string{"ml-research", "resources", gpuP5, "nominal"}, "8"},
		{[]string{"ml-research", "resources", gpuP5, "in_use"}, "16"},
		{[]string{"ml-research", "resources", gpuP5, "borrowed"}, "8"},
		{[]string{"evaluation", "resources", gpuP5, "in_use"}, "0"},
		{[]string{"inference", "resources", gpuG5, "in_use"}, "8"},
		{[]string{"inference", "pending"}, "1"},
		{[]string{"data-prep", "admitted"}, "1"},
	} {
		if got := outputAt(s, "usage", c.path...); got != c.want {
			return fmt.Errorf("output usage %s = %q, want %q", strings.Join(c.path, " / "), got, c.want)
		}
	}
	return nil
}

// outputAt is the value at a path of map keys in a map output, as text ("" when absent).
func outputAt(s *terraform.State, output string, keys ...string) string {
	o, ok := s.RootModule().Outputs[output]
	if !ok {
		return ""
	}
	v := o.Value
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if v, ok = m[k]; !ok {
			return ""
		}
	}
	return fmt.Sprint(v)
}

// waitQueuesIdle waits until Kueue reports no workloads and no usage on the teams' queues.
func waitQueuesIdle(dc dynamic.Interface, teams []string) error {
	return acctest.Eventually(context.Background(), time.Minute, "kueue releasing the quickstart's quotas",
		func(ctx context.Context) (bool, string, error) {
			busy := ""
			for _, team := range teams {
				u, err := dc.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName(team), metav1.GetOptions{})
				if err != nil {
					return false, "", err
				}
				var cq kueue.ClusterQueue
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
					return false, "", err
				}
				if st := cq.Status; st != nil {
					if st.AdmittedWorkloads+st.PendingWorkloads+st.ReservingWorkloads > 0 {
						busy = fmt.Sprintf("%s counts %d admitted, %d pending, %d reserving workloads", team, st.AdmittedWorkloads, st.PendingWorkloads, st.ReservingWorkloads)
					}
					for _, f := range append(st.FlavorsUsage, st.FlavorsReservation...) {
						for _, r := range f.Resources {
							if !r.Total.IsZero() {
								busy = fmt.Sprintf("%s still uses %s of %s in %s", team, r.Total.String(), r.Name, f.Name)
							}
						}
					}
				}
			}
			return busy == "", busy, nil
		})
}

// checkWorkloadPriorityClasses checks that each WorkloadPriorityClass exists with its value.
func checkWorkloadPriorityClasses(want map[string]int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for name, value := range want {
			u, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("WorkloadPriorityClass %s: %w", name, err)
			}
			if v, _, _ := unstructured.NestedInt64(u.Object, "value"); v != value {
				return fmt.Errorf("WorkloadPriorityClass %s has value %d, want %d", name, v, value)
			}
		}
		return nil
	}
}

// exampleConfig joins example files, relative to examples/.
func exampleConfig(t *testing.T, files ...string) string {
	t.Helper()
	var b strings.Builder
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", "..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteString("\n")
	}
	return b.String()
}

// The resource examples of the documentation, applied together, are accepted by Kueue's
// webhooks: every queue and flavor they write is Active, except the quota the example disables
// on purpose, which Kueue reports stopped. The data source examples then read them.
func TestAccAdmission_docExamplesActive(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"ml-research", "inference", "notebooks", "data-prep", "evaluation", "sandbox"}
	e2eCleanup(t, teams...)
	cleanupPriorityClasses(t, "inference", "training", "experimentation")
	resources := exampleConfig(t,
		"resources/hyperpod_compute_quota/resource.tf",
		"resources/hyperpod_team_namespace/resource.tf",
		"resources/hyperpod_cluster_scheduler_config/resource.tf")
	dataSources := exampleConfig(t,
		"data-sources/hyperpod_instance_type_capacity/data-source.tf",
		"data-sources/hyperpod_team_usage/data-source.tf")
	stopped := func(*terraform.State) error {
		return waitCondition(func(ctx context.Context) (*unstructured.Unstructured, error) {
			return acc.dynamic.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName("data-prep"), metav1.GetOptions{})
		}, "the disabled data-prep quota", "Active", "False", "Stopped")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: resources,
				Check: resource.ComposeAggregateTestCheckFunc(
					// ml-research also has the example namespace, so its LocalQueue is checked too.
					checkAllActive(t, []string{"ml-research"}, []string{"ml.p5.48xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.c5.4xlarge", "ml.trn1.32xlarge"}),
					checkQueueActive(t, "inference"), checkQueueActive(t, "notebooks"), checkQueueActive(t, "evaluation"),
					stopped,
					checkWorkloadPriorityClasses(map[string]int64{"inference-priority": 100, "training-priority": 75, "experimentation-priority": 25}),
				),
			},
			{
				Config: resources + dataSources,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckOutput("p5_free_gpus", "8"), // 2 nodes of 8, ml-research claims 8
					resource.TestCheckResourceAttr("data.hyperpod_team_usage.ml_research", "active", "true"),
				),
			},
		},
	})
}
