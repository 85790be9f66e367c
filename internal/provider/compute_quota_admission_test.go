package provider

import (
	"context"
	"fmt"
	"os"
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
	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// End-to-end tests: the real Kueue manager (started by TestMain with the local control plane)
// decides admission for the quotas the provider writes. They need HYPERPOD_KUEUE on (the
// default); with it off they fail rather than pass without Kueue.

func requireKueue(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: runs with TF_ACC=1 (make test-acc), like every TestAcc test")
	}
	testAccPreCheck(t)
	if !localcluster.KueueFromEnv() {
		t.Fatalf("this test asserts decisions of the Kueue controller, which %s=off turned off", localcluster.EnvKueue)
	}
}

// submitJob creates a suspended batch/v1 Job in the team's namespace, labelled with its
// LocalQueue, on the instance type's nodes, requesting the given resources for one pod.
func submitJob(t *testing.T, team, name, instanceType string, requests corev1.ResourceList) {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: quota.NamespaceName(team),
			Labels: map[string]string{"kueue.x-k8s.io/queue-name": quota.LocalQueueName(team)},
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
	if _, err := acc.clientset.BatchV1().Jobs(job.Namespace).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
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
	deadline := time.Now().Add(timeout)
	var last *unstructured.Unstructured
	for time.Now().Before(deadline) {
		list, err := acc.dynamic.Resource(kueue.Workloads).Namespace(quota.NamespaceName(team)).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing Workloads: %w", err)
		}
		for i := range list.Items {
			w := &list.Items[i]
			for _, o := range w.GetOwnerReferences() {
				if o.Kind == "Job" && o.Name == job {
					last = w
					if decided(w) {
						return w, nil
					}
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if last == nil {
		return nil, fmt.Errorf("kueue made no Workload for Job %s within %s", job, timeout)
	}
	return nil, fmt.Errorf("workload of Job %s not decided within %s; conditions %v", job, timeout, conditions(last))
}

// jobUnsuspended waits until Kueue has unsuspended an admitted Job.
func jobUnsuspended(team, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		job, err := acc.clientset.BatchV1().Jobs(quota.NamespaceName(team)).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && job.Spec.Suspend != nil && !*job.Spec.Suspend {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("job %s not unsuspended by Kueue within %s (%v)", name, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deleteWork deletes the team's Jobs and then their Workloads (there is no garbage collector
// here), so that Kueue releases the quota and the queue can be destroyed.
func deleteWork(t *testing.T, team string) {
	t.Helper()
	ctx := context.Background()
	ns := quota.NamespaceName(team)
	policy := metav1.DeletePropagationBackground
	if err := acc.clientset.BatchV1().Jobs(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &policy}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting Jobs: %v", err)
	}
	if err := acc.dynamic.Resource(kueue.Workloads).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting Workloads: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		list, err := acc.dynamic.Resource(kueue.Workloads).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("Workloads of %s still there a minute after deletion", team)
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

// pendingForQuota: Kueue tried and found no room (QuotaReserved False with its reason).
func pendingForQuota(w *unstructured.Unstructured) bool {
	s, reason, _ := condition(w, "QuotaReserved")
	return s == "False" && reason == "Pending"
}

// checkQueueActive checks that Kueue reports the team's ClusterQueue Active.
func checkQueueActive(t *testing.T, team string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		deadline := time.Now().Add(30 * time.Second)
		for {
			u, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(context.Background(), quota.ClusterQueueName(team), metav1.GetOptions{})
			if err == nil {
				if s, _, _ := condition(u, "Active"); s == "True" {
					return nil
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("ClusterQueue of %s is not Active: %v, %v", team, err, conditionsOf(u))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

func conditionsOf(u *unstructured.Unstructured) any {
	if u == nil {
		return nil
	}
	return conditions(u)
}

// A quota written by the provider governs real admission: Kueue accepts the queue (Active), a
// Job within the nominal quota is admitted on the quota's flavor, and one beyond it waits with
// Kueue's reason.
func TestAccAdmission_withinAndBeyondNominal(t *testing.T) {
	requireKueue(t)
	const team = "e2e-nominal"
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	t.Cleanup(func() { deleteWork(t, team) })
	gpu := corev1.ResourceName("nvidia.com/gpu")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: tnsConfig(team, "  force_destroy = true") + quotaConfig(team, `
  resources        = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  resource_sharing = { strategy = "DontLend" }
  depends_on       = [hyperpod_team_namespace.test]`),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkQueueActive(t, team),
				func(*terraform.State) error {
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
		}, {
			// Destroying a queue waits while Kueue holds admitted workloads: end them first.
			PreConfig: func() { deleteWork(t, team) },
			Config: tnsConfig(team, "  force_destroy = true") + quotaConfig(team, `
  resources        = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  resource_sharing = { strategy = "DontLend" }
  depends_on       = [hyperpod_team_namespace.test]`),
			PlanOnly: true,
		}},
	})
}
