package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// End-to-end tests: the real Kueue manager (started by TestMain with the local control plane)
// decides admission for the quotas the provider writes. They need HYPERPOD_KUEUE on (the
// default); with it off they fail rather than pass without Kueue.

// jobCluster is where an admission test submits jobs and reads Kueue's decisions: the suite's
// own cluster (suiteJobs) or the task-governance cluster, whose Kueue objects the add-on writes
// (tgJobs). The functions below without a cluster work on the suite's.
type jobCluster struct {
	clientset kubernetes.Interface
	dynamic   dynamic.Interface
}

// suiteJobs is the cluster of the Kubernetes-path tests.
func suiteJobs() jobCluster { return jobCluster{clientset: acc.clientset, dynamic: acc.dynamic} }

// submitJob creates a suspended batch/v1 Job in the team's namespace, labelled with its
// LocalQueue, on the instance type's nodes, requesting the given resources for one pod.
func submitJob(t *testing.T, team, name, instanceType string, requests corev1.ResourceList) {
	t.Helper()
	suiteJobs().submit(t, team, name, instanceType, "", requests)
}

// submitJobWithPriority is submitJob with the label that names a WorkloadPriorityClass (none
// when priorityClass is "").
func submitJobWithPriority(t *testing.T, team, name, instanceType, priorityClass string, requests corev1.ResourceList) {
	t.Helper()
	suiteJobs().submit(t, team, name, instanceType, priorityClass, requests)
}

// submit is submitJobWithPriority on c.
func (c jobCluster) submit(t *testing.T, team, name, instanceType, priorityClass string, requests corev1.ResourceList) {
	t.Helper()
	labels := map[string]string{"kueue.x-k8s.io/queue-name": quota.LocalQueueName(team)}
	if priorityClass != "" {
		labels[kueue.PriorityClassLabel] = priorityClass
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: quota.NamespaceName(team), Labels: labels,
		},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  map[string]string{quota.LabelInstanceType: instanceType},
				Containers: []corev1.Container{{
					Name: "main", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: requests, Limits: acceleratorLimits(requests)},
				}},
			}},
		},
	}
	if _, err := c.clientset.BatchV1().Jobs(job.Namespace).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Job %s: %v", name, err)
	}
}

// acceleratorLimits repeats extended resources as limits, which Kubernetes requires.
func acceleratorLimits(requests corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range requests {
		if strings.Contains(string(name), "/") {
			out[name] = q
		}
	}
	return out
}

// workloadOf waits for the Workload Kueue made for a Job until decided says it is decided.
func workloadOf(team, job string, decided func(*unstructured.Unstructured) bool, timeout time.Duration) (*unstructured.Unstructured, error) {
	return suiteJobs().workloadOf(team, job, decided, timeout)
}

// workloadOf is workloadOf on c.
func (c jobCluster) workloadOf(team, job string, decided func(*unstructured.Unstructured) bool, timeout time.Duration) (*unstructured.Unstructured, error) {
	var found *unstructured.Unstructured
	err := acctest.Eventually(context.Background(), timeout, "the Workload of Job "+job+" decided",
		func(ctx context.Context) (bool, string, error) {
			list, err := c.dynamic.Resource(kueue.Workloads).Namespace(quota.NamespaceName(team)).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, "", fmt.Errorf("listing Workloads: %w", err)
			}
			state := "kueue made no Workload for it"
			for i := range list.Items {
				w := &list.Items[i]
				for _, o := range w.GetOwnerReferences() {
					if o.Kind == "Job" && o.Name == job {
						if decided(w) {
							found = w
							return true, "", nil
						}
						state = fmt.Sprintf("conditions %v", conditions(w))
					}
				}
			}
			return false, state, nil
		})
	return found, err
}

// jobUnsuspended waits until Kueue has unsuspended an admitted Job.
func jobUnsuspended(team, name string, timeout time.Duration) error {
	return acctest.Eventually(context.Background(), timeout, "job "+name+" unsuspended by Kueue",
		func(ctx context.Context) (bool, string, error) {
			job, err := acc.clientset.BatchV1().Jobs(quota.NamespaceName(team)).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Sprintf("reading it: %v", err), nil
			}
			return job.Spec.Suspend != nil && !*job.Spec.Suspend, "suspended", nil
		})
}

// lenderAndBorrower is two teams with one ml.g5.12xlarge (4 GPUs) each in a cohort of their
// own: an idle lender (strategy Lend) and a borrower with the given resource_sharing. With
// cohort "" they set none: the SageMaker path has no cohort field and puts every team in one.
func lenderAndBorrower(cohort, lender, borrower, borrowerSharing string) string {
	one := `  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
`
	if cohort != "" {
		one += `  cohort    = "` + cohort + `"
`
	}
	return e2eTeam(lender, one+`  resource_sharing = { strategy = "Lend" }`) + e2eTeam(borrower, one+"  resource_sharing = "+borrowerSharing)
}

// e2eCleanup removes the teams' queues, namespaces, Jobs and Workloads when the test ends,
// whatever state a failure left them in.
func e2eCleanup(t *testing.T, teams ...string) {
	for _, team := range teams {
		cleanupQueue(t, team)
		tnsCleanupNamespace(t, quota.NamespaceName(team))
		t.Cleanup(func() { deleteWork(t, team) })
	}
}

func deleteAllWork(t *testing.T, teams []string) {
	suiteJobs().deleteAllWork(t, teams)
}

// deleteAllWork is deleteWork of every team on c.
func (c jobCluster) deleteAllWork(t *testing.T, teams []string) {
	for _, team := range teams {
		c.deleteWork(t, team)
	}
}

// deleteWork deletes the team's Jobs and then their Workloads (there is no garbage collector
// here), so that Kueue releases the quota and the queue can be destroyed.
func deleteWork(t *testing.T, team string) {
	t.Helper()
	suiteJobs().deleteWork(t, team)
}

// deleteWork is deleteWork on c.
func (c jobCluster) deleteWork(t *testing.T, team string) {
	t.Helper()
	ctx := context.Background()
	ns := quota.NamespaceName(team)
	policy := metav1.DeletePropagationBackground
	if err := c.clientset.BatchV1().Jobs(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &policy}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting Jobs: %v", err)
	}
	if err := c.dynamic.Resource(kueue.Workloads).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting Workloads: %v", err)
	}
	err := acctest.Eventually(ctx, time.Minute, "the Workloads of "+team+" gone after their deletion",
		func(ctx context.Context) (bool, string, error) {
			list, err := c.dynamic.Resource(kueue.Workloads).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, fmt.Sprintf("listing them: %v", err), nil
			}
			return len(list.Items) == 0, fmt.Sprintf("%d still there", len(list.Items)), nil
		})
	if err != nil {
		t.Error(err)
	}
}

func conditions(w *unstructured.Unstructured) []map[string]any {
	raw, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	var out []map[string]any
	for _, c := range raw {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func condition(w *unstructured.Unstructured, typ string) (status, reason, message string) {
	for _, c := range conditions(w) {
		if c["type"] == typ {
			return fmt.Sprint(c["status"]), fmt.Sprint(c["reason"]), fmt.Sprint(c["message"])
		}
	}
	return "", "", ""
}

func admitted(w *unstructured.Unstructured) bool {
	s, _, _ := condition(w, "Admitted")
	return s == "True"
}

// evicted: Kueue took the workload's admission back (its reason says why).
func evicted(w *unstructured.Unstructured) bool {
	s, _, _ := condition(w, "Evicted")
	return s == "True"
}

// pendingForQuota: Kueue tried and found no room (QuotaReserved False with its reason).
func pendingForQuota(w *unstructured.Unstructured) bool {
	s, reason, _ := condition(w, "QuotaReserved")
	return s == "False" && reason == "Pending"
}

// heldBecause returns a predicate: Kueue has decided not to admit the workload as it is now,
// for a reason whose message contains one of why (case-insensitive). Its QuotaReserved
// condition is False and was written for the workload's current generation; Kueue rewrites
// it whenever it decides again. A check of what Kueue did not do (admit, preempt) is made on
// a workload once this holds, never after a fixed wait: the decision is the proof.
func heldBecause(why ...string) func(*unstructured.Unstructured) bool {
	return func(w *unstructured.Unstructured) bool {
		for _, c := range conditions(w) {
			if c["type"] != "QuotaReserved" || c["status"] != "False" {
				continue
			}
			if g, ok := c["observedGeneration"].(int64); ok && g != w.GetGeneration() {
				return false
			}
			msg := strings.ToLower(fmt.Sprint(c["message"]))
			for _, y := range why {
				if strings.Contains(msg, strings.ToLower(y)) {
					return true
				}
			}
		}
		return false
	}
}

// pendingWithoutPreemption: the scheduler evaluated the workload and left it pending for
// lack of quota without preempting anyone. Kueue issues preemptions in the scheduling cycle
// that decides and then says so in the same message ("Pending the preemption of N
// workload(s)"), so a workload that has this decision proves no preemption was issued for it.
func pendingWithoutPreemption(w *unstructured.Unstructured) bool {
	_, _, msg := condition(w, "QuotaReserved")
	return pendingForQuota(w) && heldBecause("insufficient")(w) && !strings.Contains(msg, "preemption")
}

// checkQueueActive checks that Kueue reports the team's ClusterQueue Active.
func checkQueueActive(t *testing.T, team string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return waitCondition(func(ctx context.Context) (*unstructured.Unstructured, error) {
			return acc.dynamic.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName(team), metav1.GetOptions{})
		}, "the ClusterQueue of "+team, "Active", "True", "")
	}
}

// waitCondition waits up to 30 s until the object get reads has condition typ with status (and
// reason, unless ""), naming the object as what and its last conditions if it does not.
func waitCondition(get func(context.Context) (*unstructured.Unstructured, error), what, typ, status, reason string) error {
	want := typ + " " + status
	if reason != "" {
		want += " (" + reason + ")"
	}
	return acctest.Eventually(context.Background(), 30*time.Second, what+" "+want,
		func(ctx context.Context) (bool, string, error) {
			u, err := get(ctx)
			if err != nil {
				return false, fmt.Sprintf("reading it: %v", err), nil
			}
			s, r, _ := condition(u, typ)
			return s == status && (reason == "" || r == reason), fmt.Sprintf("conditions %v", conditions(u)), nil
		})
}

// A quota written by the provider governs real admission: Kueue accepts the queue (Active), a
// Job within the nominal quota is admitted on the quota's flavor, and one beyond it waits with
// Kueue's reason.
func TestAccAdmission_withinAndBeyondNominal(t *testing.T) {
	acctest.RequireKueue(t)
	const team = "e2e-nominal"
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	t.Cleanup(func() { deleteWork(t, team) })
	gpu := corev1.ResourceName("nvidia.com/gpu")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.TeamNamespace(team).ForceDestroy().HCL() + acctest.Quota(team).Body(`
  resources        = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  resource_sharing = { strategy = "DontLend" }
  depends_on       = [hyperpod_team_namespace.test]`).HCL(),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkQueueActive(t, team),
				func(*terraform.State) error {
					defer deleteWork(t, team)
					submitJob(t, team, "fits", "ml.g5.12xlarge", corev1.ResourceList{
						corev1.ResourceCPU: k8sresource.MustParse("8"), corev1.ResourceMemory: k8sresource.MustParse("32Gi"), gpu: k8sresource.MustParse("2"),
					})
					w, err := workloadOf(team, "fits", admitted, time.Minute)
					if err != nil {
						return err
					}
					assignments, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
					if len(assignments) != 1 || !strings.Contains(fmt.Sprint(assignments[0]), "ml.g5.12xlarge") {
						return fmt.Errorf("admitted on %v, want flavor ml.g5.12xlarge", assignments)
					}
					if err := jobUnsuspended(team, "fits", 30*time.Second); err != nil {
						return err
					}

					submitJob(t, team, "too-big", "ml.g5.12xlarge", corev1.ResourceList{
						corev1.ResourceCPU: k8sresource.MustParse("8"), corev1.ResourceMemory: k8sresource.MustParse("32Gi"), gpu: k8sresource.MustParse("4"),
					})
					w, err = workloadOf(team, "too-big", pendingForQuota, time.Minute)
					if err != nil {
						return err
					}
					if _, _, msg := condition(w, "QuotaReserved"); !strings.Contains(msg, "insufficient") {
						return fmt.Errorf("pending for %q, want Kueue's insufficient quota reason", msg)
					}
					return nil
				},
			),
		}},
	})
}

// e2eTeam is a team namespace and compute quota in one configuration, named after the team.
func e2eTeam(team, quotaBody string) string {
	return fmt.Sprintf(`
resource "hyperpod_team_namespace" %[1]q {
  team          = %[2]q
  force_destroy = true
}

resource "hyperpod_compute_quota" %[1]q {
  name = "%[2]s-quota"
  team = hyperpod_team_namespace.%[1]s.team
%[3]s
}
`, strings.ReplaceAll(team, "-", "_"), team, quotaBody)
}

func gpus(n string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("4"), corev1.ResourceMemory: k8sresource.MustParse("16Gi"),
		"nvidia.com/gpu": k8sresource.MustParse(n)}
}

// admitBorrowing submits a job of n GPUs on ml.g5.12xlarge and waits until Kueue admits it
// with the team borrowing exactly borrowed GPUs.
func admitBorrowing(t *testing.T, team, job, n, borrowed string) error {
	return suiteJobs().admitBorrowing(t, team, job, n, borrowed)
}

// admitBorrowing is admitBorrowing on c.
func (c jobCluster) admitBorrowing(t *testing.T, team, job, n, borrowed string) error {
	c.submit(t, team, job, "ml.g5.12xlarge", "", gpus(n))
	if _, err := c.workloadOf(team, job, admitted, time.Minute); err != nil {
		return err
	}
	return waitBorrowed(c.dynamic, team, "ml.g5.12xlarge", "nvidia.com/gpu", borrowed)
}

// waitBorrowed waits until the team's ClusterQueue reports want borrowed of a resource in a
// flavor (Kueue updates the status after admitting).
func waitBorrowed(dc dynamic.Interface, team, flavor, res, want string) error {
	return acctest.Eventually(context.Background(), 30*time.Second,
		fmt.Sprintf("%s borrowing %s of %s in %s", quota.ClusterQueueName(team), want, res, flavor),
		func(ctx context.Context) (bool, string, error) {
			u, err := dc.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName(team), metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			got := ""
			usage, _, _ := unstructured.NestedSlice(u.Object, "status", "flavorsReservation")
			for _, f := range usage {
				fm, _ := f.(map[string]any)
				rs, _ := fm["resources"].([]any)
				for _, r := range rs {
					if rm, _ := r.(map[string]any); fm["name"] == flavor && rm["name"] == res {
						got = fmt.Sprint(rm["borrowed"])
					}
				}
			}
			return got == want, fmt.Sprintf("borrows %q", got), nil
		})
}

// Sharing in a cohort of its own: a LendAndBorrow team borrows exactly up to borrow_limit
// percent from an idle lender; a job beyond that waits. A Lend team never borrows, and a
// DontLend team's idle quota is never borrowed.
func TestAccAdmission_lendingAndBorrowing(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"e2e-lender", "e2e-borrower", "e2e-lend-only", "e2e-keeper", "e2e-wants"}
	e2eCleanup(t, teams...)
	one := `  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]` // 4 GPUs
	config := e2eTeam("e2e-lender", one+`
  cohort           = "e2e-share"
  resource_sharing = { strategy = "Lend" }`) +
		e2eTeam("e2e-borrower", one+`
  cohort           = "e2e-share"
  resource_sharing = { strategy = "LendAndBorrow", borrow_limit = 50 }`) +
		e2eTeam("e2e-lend-only", one+`
  cohort           = "e2e-share"
  resource_sharing = { strategy = "Lend" }`) +
		// A DontLend team with idle quota next to a team that would borrow anything.
		e2eTeam("e2e-keeper", one+`
  cohort           = "e2e-keep"
  resource_sharing = { strategy = "DontLend" }`) +
		e2eTeam("e2e-wants", one+`
  cohort           = "e2e-keep"
  resource_sharing = { strategy = "LendAndBorrow", borrow_limit = 100 }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				// Destroying a queue waits while Kueue holds admitted workloads: end them, pass or fail.
				defer deleteAllWork(t, teams)
				for _, team := range teams {
					if err := checkQueueActive(t, team)(nil); err != nil {
						return err
					}
				}
				// 4 nominal + 50 % = 6 GPUs: a 6-GPU job is admitted by borrowing 2 ...
				if err := admitBorrowing(t, "e2e-borrower", "six", "6", "2"); err != nil {
					return err
				}
				// ... and one more GPU would exceed the borrowing limit, although lenders are idle.
				submitJob(t, "e2e-borrower", "one-more", "ml.g5.12xlarge", gpus("1"))
				if _, err := workloadOf("e2e-borrower", "one-more", pendingForQuota, time.Minute); err != nil {
					return err
				}
				// A Lend team never borrows: 5 GPUs on a 4-GPU quota wait while others are idle.
				submitJob(t, "e2e-lend-only", "five", "ml.g5.12xlarge", gpus("5"))
				if _, err := workloadOf("e2e-lend-only", "five", pendingForQuota, time.Minute); err != nil {
					return err
				}
				// A DontLend team's idle quota is never borrowed.
				submitJob(t, "e2e-wants", "five", "ml.g5.12xlarge", gpus("5"))
				if _, err := workloadOf("e2e-wants", "five", pendingForQuota, time.Minute); err != nil {
					return err
				}
				return nil
			},
		}},
	})
}

// activation_state = "Disabled" holds new workloads; enabling the quota again admits them.
func TestAccAdmission_disabledHolds(t *testing.T) {
	acctest.RequireKueue(t)
	const team = "e2e-disabled"
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	t.Cleanup(func() { deleteWork(t, team) })
	config := func(state string) string {
		return e2eTeam(team, fmt.Sprintf(`  resources        = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  cohort           = "e2e-disabled"
  activation_state = %q`, state))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("Disabled"),
				Check: func(*terraform.State) (err error) {
					defer func() {
						if err != nil {
							deleteWork(t, team) // the next step does not run
						}
					}()
					submitJob(t, team, "waits", "ml.g5.12xlarge", gpus("1"))
					// Held by Kueue's decision that the queue is stopped (Kueue v0.19; v0.15
					// calls a stopped queue inactive), which stands until the queue changes.
					cq := quota.ClusterQueueName(team)
					w, err := workloadOf(team, "waits", heldBecause("ClusterQueue "+cq+" is stopped", "ClusterQueue "+cq+" is inactive"), time.Minute)
					if err == nil && admitted(w) {
						return fmt.Errorf("a Disabled quota admitted a workload")
					}
					return err
				},
			},
			{
				Config: config("Enabled"),
				Check: func(*terraform.State) error {
					defer deleteWork(t, team)
					_, err := workloadOf(team, "waits", admitted, time.Minute)
					return err
				},
			},
		},
	})
}

// The namespace selector: a LocalQueue in another team's namespace that points at this team's
// ClusterQueue gets nothing admitted. A CPU-only quota admits a CPU job, and a quota sized by
// MIG partitions admits a job requesting that partition.
func TestAccAdmission_selectorCPUAndMIG(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"e2e-owner", "e2e-intruder", "e2e-cpu", "e2e-mig"}
	e2eCleanup(t, teams...)
	config := e2eTeam("e2e-owner", `  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  cohort    = "e2e-selector"`) +
		e2eTeam("e2e-intruder", `  resources = [{ instance_type = "ml.c5.4xlarge", vcpu = 1 }]
  cohort    = "e2e-selector-2"`) +
		e2eTeam("e2e-cpu", `  resources = [{ instance_type = "ml.c5.4xlarge", memory_in_gib = 16 }]
  cohort    = "e2e-cpu"`) +
		e2eTeam("e2e-mig", `  resources = [{ instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-1g.5gb", count = 2 } }]
  cohort    = "e2e-mig"`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				defer deleteAllWork(t, teams)
				for _, team := range teams {
					if err := checkQueueActive(t, team)(nil); err != nil {
						return err
					}
				}
				// A second LocalQueue, in the intruder's namespace, aimed at the owner's queue.
				lq := quota.RenderLocalQueue("e2e-owner", "")
				lq.Name, lq.Namespace = "borrowed-queue", quota.NamespaceName("e2e-intruder")
				tnsCreateLocalQueue(t, lq.Namespace, lq.Name, lq.Spec.ClusterQueue, nil)
				job := &batchv1.Job{
					ObjectMeta: metav1.ObjectMeta{Name: "sneaky", Namespace: lq.Namespace,
						Labels: map[string]string{"kueue.x-k8s.io/queue-name": lq.Name}},
					Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
							Requests: gpus("1"), Limits: acceleratorLimits(gpus("1"))}}},
					}}},
				}
				if _, err := acc.clientset.BatchV1().Jobs(lq.Namespace).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
					return err
				}
				// Kueue's scheduler decides on the namespace selector before any quota.
				if w, err := workloadOf("e2e-intruder", "sneaky", heldBecause("namespace doesn't match ClusterQueue selector"), time.Minute); err != nil || admitted(w) {
					return fmt.Errorf("a workload from another namespace was admitted by the team's queue (%v)", err)
				}

				submitJob(t, "e2e-cpu", "cpu", "ml.c5.4xlarge", corev1.ResourceList{
					corev1.ResourceCPU: k8sresource.MustParse("2"), corev1.ResourceMemory: k8sresource.MustParse("4Gi")})
				if _, err := workloadOf("e2e-cpu", "cpu", admitted, time.Minute); err != nil {
					return err
				}

				submitJob(t, "e2e-mig", "mig", "ml.p4d.24xlarge", corev1.ResourceList{
					corev1.ResourceCPU: k8sresource.MustParse("1"), corev1.ResourceMemory: k8sresource.MustParse("4Gi"),
					"nvidia.com/mig-1g.5gb": k8sresource.MustParse("1")})
				_, err := workloadOf("e2e-mig", "mig", admitted, time.Minute)
				return err
			},
		}},
	})
}

// stillAdmitted waits until Kueue has decided to leave the contender pending without
// preempting anyone, then checks that the job, admitted before the contender arrived, keeps
// its admission.
func stillAdmitted(team, job, contenderTeam, contender string) error {
	if _, err := workloadOf(contenderTeam, contender, pendingWithoutPreemption, time.Minute); err != nil {
		return err
	}
	w, err := workloadOf(team, job, func(*unstructured.Unstructured) bool { return true }, 10*time.Second)
	if err != nil {
		return err
	}
	if s, _, _ := condition(w, "Evicted"); !admitted(w) || s == "True" {
		return fmt.Errorf("job %s/%s lost its admission: %v", team, job, conditions(w))
	}
	return nil
}
