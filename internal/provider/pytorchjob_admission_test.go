package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The jobs HyperPod users submit: a PyTorchJob, as `hyperpod start-job` makes them, labelled with
// the LocalQueue and a priority class the provider created, is admitted by Kueue as one Workload
// with a pod set per replica type, within the team's quota. A second one beyond the quota waits
// suspended, and hyperpod_team_usage counts both.
func TestAccAdmission_pyTorchJob(t *testing.T) {
	acctest.RequireKueue(t)
	const team, class = "e2e-pytorch", "e2e-train"
	e2eCleanup(t, team)
	cleanupPriorityClasses(t, class)
	config := acctest.SchedulerConfig(quota.PriorityClass{Name: class, Weight: 60}).HCL() +
		e2eTeam(team, `  resources        = [{ instance_type = "ml.g5.12xlarge", count = 2 }]
  resource_sharing = { strategy = "DontLend" }
  depends_on       = [hyperpod_cluster_scheduler_config.test]`)
	// 1 master and 2 workers of 2 GPUs each: 6 of the quota's 8 GPUs.
	perPod := corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("4"), corev1.ResourceMemory: k8sresource.MustParse("16Gi"),
		"nvidia.com/gpu": k8sresource.MustParse("2")}
	job := func(name string) *acctest.PyTorchJobWrapper {
		return acctest.MakePyTorchJob(name, quota.NamespaceName(team)).
			Queue(quota.LocalQueueName(team)).
			PriorityClass(quota.PriorityClassObjectName(class)).
			Replicas("Master", 1, "ml.g5.12xlarge", perPod).
			Replicas("Worker", 2, "ml.g5.12xlarge", perPod)
	}
	fits, tooBig := job("fits"), job("too-big")
	deleteJobs := func() {
		for _, j := range []*acctest.PyTorchJobWrapper{fits, tooBig} {
			if err := j.Delete(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
	const usage = "data.hyperpod_team_usage.pytorch"
	gpu := tfjsonpath.New("resources").AtSliceIndex(2)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) (err error) {
					defer func() {
						if err != nil {
							deleteJobs() // the next step, which would, does not run
						}
					}()
					fits.Create(t)
					w, err := pyTorchJobWorkload(team, "fits", admitted)
					if err != nil {
						return err
					}
					if err := checkPyTorchJobAdmission(w, quota.PriorityClassObjectName(class), 60); err != nil {
						return err
					}
					if err := waitPyTorchJobSuspend(team, "fits", false); err != nil {
						return err
					}

					tooBig.Create(t)
					w, err = pyTorchJobWorkload(team, "too-big", pendingForQuota)
					if err != nil {
						return err
					}
					if _, _, msg := condition(w, "QuotaReserved"); !strings.Contains(msg, "insufficient") {
						return fmt.Errorf("too-big pending for %q, want Kueue's insufficient quota reason", msg)
					}
					if err := waitPyTorchJobSuspend(team, "too-big", true); err != nil {
						return err
					}
					// The usage data source of the next step reads the queue's status, which Kueue
					// writes a moment after its decisions.
					return waitQueueCounts(team, 1, 1)
				},
			},
			{
				Config: config + `
data "hyperpod_team_usage" "pytorch" {
  team = hyperpod_team_namespace.e2e_pytorch.team
}
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(usage, tfjsonpath.New("admitted_workloads"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(usage, tfjsonpath.New("pending_workloads"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("instance_type"), knownvalue.StringExact("ml.g5.12xlarge")),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("resource"), knownvalue.StringExact("nvidia.com/gpu")),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("nominal"), knownvalue.Float64Exact(8)),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("reserved"), knownvalue.Float64Exact(6)),
					statecheck.ExpectKnownValue(usage, gpu.AtMapKey("in_use"), knownvalue.Float64Exact(6)),
				},
				// Destroying the queue waits while Kueue holds an admitted workload: end both jobs.
				Check: func(*terraform.State) error { deleteJobs(); return nil },
			},
		},
	})
}

// pyTorchJobWorkload waits until Kueue has made exactly one Workload for the team's PyTorchJob and
// decided says it is decided.
func pyTorchJobWorkload(team, job string, decided func(*unstructured.Unstructured) bool) (*unstructured.Unstructured, error) {
	var found *unstructured.Unstructured
	err := acctest.Eventually(context.Background(), time.Minute, "the Workload of PyTorchJob "+job+" decided",
		func(ctx context.Context) (bool, string, error) {
			workloads, err := acctest.WorkloadsOwnedBy(ctx, quota.NamespaceName(team), acctest.PyTorchJobKind, job)
			switch {
			case err != nil:
				return false, "", err
			case len(workloads) > 1:
				return false, "", fmt.Errorf("kueue made %d Workloads for PyTorchJob %s, want one for the whole job", len(workloads), job)
			case len(workloads) == 0:
				return false, "kueue made no Workload for it: is the kubeflow.org/pytorchjob integration on?", nil
			case decided(&workloads[0]):
				found = &workloads[0]
				return true, "", nil
			}
			return false, fmt.Sprintf("conditions %v", conditions(&workloads[0])), nil
		})
	return found, err
}

// checkPyTorchJobAdmission checks an admitted PyTorchJob's Workload: a pod set per replica type
// with its count, admitted on the quota's flavor, with the priority of the job's class.
func checkPyTorchJobAdmission(w *unstructured.Unstructured, priorityClass string, priority int64) error {
	podSets, _, _ := unstructured.NestedSlice(w.Object, "spec", "podSets")
	var got []string
	for _, ps := range podSets {
		m, _ := ps.(map[string]any)
		got = append(got, fmt.Sprintf("%v:%v", m["name"], m["count"]))
	}
	if want := []string{"master:1", "worker:2"}; !slices.Equal(got, want) {
		return fmt.Errorf("workload pod sets %v, want %v", got, want)
	}
	d := localcluster.DecisionOf(w)
	if d.State != "Admitted" || !slices.Equal(d.Flavors, []string{"ml.g5.12xlarge"}) {
		return fmt.Errorf("workload %s on %v, want Admitted on ml.g5.12xlarge", d.State, d.Flavors)
	}
	if d.PriorityClass != priorityClass || d.Priority != priority {
		return fmt.Errorf("workload priority class %q (%d), want %q (%d)", d.PriorityClass, d.Priority, priorityClass, priority)
	}
	return nil
}

// waitPyTorchJobSuspend waits until the team's PyTorchJob has runPolicy.suspend = want: Kueue
// unsuspends an admitted job and leaves a pending one suspended. The caller checks a pending
// job once Kueue has decided its workload pending: Kueue unsuspends a job only on admission.
func waitPyTorchJobSuspend(team, job string, want bool) error {
	return acctest.Eventually(context.Background(), 30*time.Second, fmt.Sprintf("PyTorchJob %s with runPolicy.suspend = %v", job, want),
		func(ctx context.Context) (bool, string, error) {
			u, err := acc.dynamic.Resource(acctest.PyTorchJobs).Namespace(quota.NamespaceName(team)).Get(ctx, job, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			suspend, _, _ := unstructured.NestedBool(u.Object, "spec", "runPolicy", "suspend")
			return suspend == want, fmt.Sprintf("runPolicy.suspend = %v", suspend), nil
		})
}

// waitQueueCounts waits until Kueue reports the team's ClusterQueue with the given numbers of
// admitted and pending workloads.
func waitQueueCounts(team string, wantAdmitted, wantPending int64) error {
	return acctest.Eventually(context.Background(), 30*time.Second,
		fmt.Sprintf("%s reporting %d admitted and %d pending workloads", quota.ClusterQueueName(team), wantAdmitted, wantPending),
		func(ctx context.Context) (bool, string, error) {
			u, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName(team), metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			a, _, _ := unstructured.NestedInt64(u.Object, "status", "admittedWorkloads")
			p, _, _ := unstructured.NestedInt64(u.Object, "status", "pendingWorkloads")
			return a == wantAdmitted && p == wantPending, fmt.Sprintf("%d admitted and %d pending", a, p), nil
		})
}
