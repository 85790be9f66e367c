package provider

// Concurrent writers: other field managers write the objects this provider
// manages, between plan and apply, during an apply, and while Kueue holds a queue with its
// finalizer. Server-side apply with force must restore exactly the provider's fields and leave
// everyone else's alone.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// cwOtherManager is the field manager of the other controller in these tests.
const cwOtherManager = "other-controller"

// cwFinalizer is the finalizer Kueue puts on ClusterQueues and ResourceFlavors.
const cwFinalizer = "kueue.x-k8s.io/resource-in-use"

// cwPlanHook is a plan check that runs f after the plan and before the apply: plugin-testing
// applies the saved plan, so what f changes in the cluster happens between the two.
type cwPlanHook func() error

func (h cwPlanHook) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = h()
}

// cwCleanupFlavor deletes a ResourceFlavor a failed test left behind. The tests use instance
// types no other test uses, so the flavor is theirs alone.
func cwCleanupFlavor(t *testing.T, name string) {
	t.Cleanup(func() {
		err := acc.dynamic.Resource(kueue.ResourceFlavors).Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting ResourceFlavor %s: %v", name, err)
		}
	})
}

// cwGet reads an object with the tests' own client.
func cwGet(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return acc.dynamic.Resource(gvr).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

// cwOwned is the fieldsV1 JSON of what manager owns in an object ("" when it owns nothing),
// across its Apply and Update entries.
func cwOwned(u *unstructured.Unstructured, manager string) string {
	var b strings.Builder
	for _, e := range u.GetManagedFields() {
		if e.Manager == manager && e.FieldsV1 != nil {
			b.Write(e.FieldsV1.GetRawBytes())
		}
	}
	return b.String()
}

// cwOwnedByApply is the fieldsV1 JSON of what manager owns through server-side apply.
func cwOwnedByApply(u *unstructured.Unstructured, manager string) string {
	var b strings.Builder
	for _, e := range u.GetManagedFields() {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.FieldsV1 != nil {
			b.Write(e.FieldsV1.GetRawBytes())
		}
	}
	return b.String()
}

// cwOwners are the managers whose fieldsV1 contain field (e.g. `"f:finalizers"`).
func cwOwners(u *unstructured.Unstructured, field string) []string {
	var out []string
	for _, e := range u.GetManagedFields() {
		if e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), field) && !slices.Contains(out, e.Manager) {
			out = append(out, e.Manager)
		}
	}
	return out
}

// cwSetNominal sets the nominalQuota of one resource of one flavor in a ClusterQueue object.
func cwSetNominal(u *unstructured.Unstructured, flavor, res, value string) error {
	groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "resourceGroups")
	for _, g := range groups {
		flavors, _ := g.(map[string]any)["flavors"].([]any)
		for _, f := range flavors {
			fm := f.(map[string]any)
			if fm["name"] != flavor {
				continue
			}
			resources, _ := fm["resources"].([]any)
			for _, r := range resources {
				if rm := r.(map[string]any); rm["name"] == res {
					rm["nominalQuota"] = value
					return unstructured.SetNestedSlice(u.Object, groups, "spec", "resourceGroups")
				}
			}
		}
	}
	return fmt.Errorf("ClusterQueue %s has no %s in flavor %s", u.GetName(), res, flavor)
}

// --- 1. A change between plan and apply ---

// Another field manager changes fields the provider owns after the plan was made and before it
// is applied: a nominalQuota of the ClusterQueue and a configured label of the Namespace. The
// apply of the (unrelated) planned update restores the provider's values, keeps the other
// manager's own label, and leaves it no claim to the fields it overwrote.
func TestAccConcurrentWriters_restoredBetweenPlanAndApply(t *testing.T) {
	acctest.RequireCluster(t)
	const team, flavor, gpu = "cw-restore", "ml.g6.24xlarge", "nvidia.com/gpu"
	const touched = "other.example.com/touched"
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	cwCleanupFlavor(t, flavor)
	config := func(version string) string {
		return fmt.Sprintf(`
resource "hyperpod_team_namespace" "test" {
  team        = %[1]q
  labels      = { "example.com/owner" = "alice" }
  annotations = { "example.com/note" = %[2]q }
}

resource "hyperpod_compute_quota" "test" {
  name        = "%[1]s-quota"
  team        = hyperpod_team_namespace.test.team
  description = %[2]q
  resources   = [{ instance_type = %[3]q, accelerators = 2 }]
}
`, team, version, flavor)
	}
	// The other controller reads, edits and updates, as a controller with a typed client does.
	interfere := func() error {
		ctx := context.Background()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(team))
			if err != nil {
				return err
			}
			if err := cwSetNominal(u, flavor, gpu, "7"); err != nil {
				return err
			}
			labels := u.GetLabels()
			labels[touched] = "yes"
			u.SetLabels(labels)
			_, err = acc.dynamic.Resource(kueue.ClusterQueues).Update(ctx, u, metav1.UpdateOptions{FieldManager: cwOtherManager})
			return err
		})
		if err != nil {
			return fmt.Errorf("other controller updating the ClusterQueue: %w", err)
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ns, err := acc.clientset.CoreV1().Namespaces().Get(ctx, quota.NamespaceName(team), metav1.GetOptions{})
			if err != nil {
				return err
			}
			ns.Labels["example.com/owner"] = "mallory"
			ns.Labels[touched] = "yes"
			_, err = acc.clientset.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{FieldManager: cwOtherManager})
			return err
		})
		if err != nil {
			return fmt.Errorf("other controller updating the Namespace: %w", err)
		}
		// The changes landed: the apply that follows starts from them.
		if err := checkQuantity(t, team, flavor, gpu, "nominal", "7")(nil); err != nil {
			return err
		}
		if ns, err := tnsGetNamespace(quota.NamespaceName(team)); err != nil || ns == nil || ns.Labels["example.com/owner"] != "mallory" {
			return fmt.Errorf("the other controller's label did not land: %v %v", ns, err)
		}
		return nil
	}
	restored := func(*terraform.State) error {
		cq, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(team))
		if err != nil {
			return err
		}
		if cq.GetLabels()[touched] != "yes" {
			return fmt.Errorf("ClusterQueue lost the other controller's label: %v", cq.GetLabels())
		}
		if other := cwOwned(cq, cwOtherManager); strings.Contains(other, "f:resourceGroups") || !strings.Contains(other, `"f:`+touched+`"`) {
			return fmt.Errorf("ClusterQueue: %s should own its label and no longer the resource groups, owns %s", cwOtherManager, other)
		}
		if ours := cwOwnedByApply(cq, quota.FieldManager); !strings.Contains(ours, "f:resourceGroups") {
			return fmt.Errorf("ClusterQueue: %s does not own the resource groups again: %s", quota.FieldManager, ours)
		}
		ns, err := cwGet(kube.Namespaces, "", quota.NamespaceName(team))
		if err != nil {
			return err
		}
		if l := ns.GetLabels(); l["example.com/owner"] != "alice" || l[touched] != "yes" {
			return fmt.Errorf("namespace labels %v, want example.com/owner=alice and %s=yes", l, touched)
		}
		other, ours := cwOwned(ns, cwOtherManager), cwOwnedByApply(ns, quota.FieldManager)
		if strings.Contains(other, `"f:example.com/owner"`) || !strings.Contains(other, `"f:`+touched+`"`) || !strings.Contains(ours, `"f:example.com/owner"`) {
			return fmt.Errorf("namespace: %s owns %s; %s owns %s", cwOtherManager, other, quota.FieldManager, ours)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(checkQueueGone(t, team), tnsCheckGone(team)),
		Steps: []resource.TestStep{
			{
				Config: config("v1"),
				Check:  checkQuantity(t, team, flavor, gpu, "nominal", "2"),
			},
			{
				// The plan updates the description and annotation only; the other controller
				// writes between this plan and its apply.
				Config: config("v2"),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
					cwPlanHook(interfere),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuantity(t, team, flavor, gpu, "nominal", "2"),
					checkQuantity(t, team, flavor, gpu, "borrowing", "1"),
					restored,
				),
			},
		},
	})
}

// --- 3. Kueue's finalizer holds a destroy ---

// cwAllOf matches text that contains every pattern, in any order.
func cwAllOf(patterns ...string) *regexp.Regexp {
	var alternatives []string
	var permute func(rest, done []string)
	permute = func(rest, done []string) {
		if len(rest) == 0 {
			alternatives = append(alternatives, strings.Join(done, `[\s\S]*`))
			return
		}
		for i := range rest {
			next := append(slices.Clone(rest[:i]), rest[i+1:]...)
			permute(next, append(slices.Clone(done), rest[i]))
		}
	}
	permute(patterns, nil)
	return regexp.MustCompile("(?:" + strings.Join(alternatives, "|") + ")")
}

// A quota whose ClusterQueue holds an admitted workload: destroy waits for the delete timeout,
// then fails with a message naming Kueue's finalizer, the workload and what to do. Once the
// workload is gone, destroy succeeds.
func TestAccConcurrentWriters_finalizerHoldsDestroy(t *testing.T) {
	acctest.RequireKueue(t)
	const team, flavor = "cw-hold", "ml.g6.12xlarge"
	const workNS, lqName, jobName = "cw-hold-work", "cw-hold-lq", "hold"
	const deleteTimeout = 15 * time.Second
	cleanupQueue(t, team)
	cwCleanupFlavor(t, flavor)
	// Registered after the queue's cleanup, so it runs first: the work must go before the queue can.
	tnsCleanupNamespace(t, workNS)
	jobs := []batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Namespace: workNS, Name: jobName}}}
	t.Cleanup(func() {
		if err := localcluster.DeleteJobs(context.Background(), acc.clientset, acc.dynamic, jobs); err != nil {
			t.Errorf("deleting the job: %v", err)
		}
	})

	config := acctest.Quota(team).Body(fmt.Sprintf(`
  resources        = [{ instance_type = %q, count = 1 }]
  cohort           = "cw-hold"
  resource_sharing = { strategy = "DontLend" }
  timeouts {
    delete = %q
  }`, flavor, deleteTimeout.String())).HCL()

	// admit puts a Job in a namespace of the team (the queue selects namespaces by the team's
	// label) through a LocalQueue of its own, and waits until Kueue admits it.
	admit := func(*terraform.State) error {
		ctx := context.Background()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workNS, Labels: map[string]string{quota.LabelQuotaAllocationID: team}}}
		if _, err := acc.clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", workNS, err)
		}
		lq := acctest.MakeLocalQueue(lqName, workNS).ClusterQueue(quota.ClusterQueueName(team)).Unstructured()
		if _, err := acc.dynamic.Resource(kueue.LocalQueues).Namespace(workNS).Create(ctx, lq, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating LocalQueue %s/%s: %w", workNS, lqName, err)
		}
		// A job submitted before Kueue has taken in the new queue is first left pending, "ClusterQueue
		// doesn't exist", until Kueue catches up: submit once it reports the LocalQueue Active.
		if err := waitActive(func(ctx context.Context) (*unstructured.Unstructured, error) {
			return acc.dynamic.Resource(kueue.LocalQueues).Namespace(workNS).Get(ctx, lqName, metav1.GetOptions{})
		}, "LocalQueue "+workNS+"/"+lqName); err != nil {
			return err
		}
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: jobName, Namespace: workNS, Labels: map[string]string{localcluster.LabelQueueName: lqName}},
			Spec: batchv1.JobSpec{
				Suspend: ptr.To(true),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					NodeSelector:  map[string]string{quota.LabelInstanceType: flavor},
					Containers: []corev1.Container{{
						Name: "main", Image: "busybox",
						Resources: corev1.ResourceRequirements{
							Requests: gpus("1"),
							Limits:   corev1.ResourceList{"nvidia.com/gpu": k8sresource.MustParse("1")},
						},
					}},
				}},
			},
		}
		if _, err := acc.clientset.BatchV1().Jobs(workNS).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Job %s/%s: %w", workNS, jobName, err)
		}
		d, err := localcluster.WaitDecision(ctx, acc.dynamic, workNS, jobName, time.Minute)
		if err != nil {
			return err
		}
		if d.State != "Admitted" {
			return fmt.Errorf("kueue decided %s for the job (%s %s), want Admitted", d.State, d.Reason, d.Message)
		}
		return cwWaitFinalizer(cwObject{"ClusterQueue", kueue.ClusterQueues, "", quota.ClusterQueueName(team)})
	}

	// destroyed checks, right after the destroy that follows the failed one, that the queue is
	// gone, as after any destroy (the provider waits for it), and that the ResourceFlavor the
	// provider made for the queue, which nothing else uses, went with it.
	destroyed := func(s *terraform.State) error {
		_, inState := s.RootModule().Resources[quotaAddr]
		if u, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(team)); !apierrors.IsNotFound(err) {
			if err != nil {
				return err
			}
			return fmt.Errorf("ClusterQueue %s still exists after destroy (deletionTimestamp %v, finalizers %v); the quota is in state: %t",
				u.GetName(), u.GetDeletionTimestamp(), u.GetFinalizers(), inState)
		}
		if _, err := cwGet(kueue.ResourceFlavors, "", flavor); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ResourceFlavor %s, which only the destroyed quota used, after destroy: %v, want it deleted; the quota is in state: %t",
				flavor, err, inState)
		}
		return nil
	}
	var applyStarted time.Time
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  admit,
			},
			{
				// Destroy the quota while the workload holds the queue.
				Config: `# nothing`,
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionDestroy),
					cwPlanHook(func() error { applyStarted = time.Now(); return nil }),
				),
				// The delete timeout, not anything sooner or later, ended the wait.
				ExpectError: cwAllOf(
					`did\s+not\s+finish\s+within\s+timeouts\.delete\s+\(`+regexp.QuoteMeta(deleteTimeout.String())+`\)`,
					regexp.QuoteMeta(cwFinalizer),
					regexp.QuoteMeta(workNS+"/job-"+jobName+"-"),
					`destroy\s+again`,
				),
			},
			{
				// The destroy waited for its timeout, and the queue is still held, not gone.
				// Then the work ends, and destroying again succeeds.
				PreConfig: func() {
					waited := time.Since(applyStarted)
					t.Logf("the destroy held by the finalizer took %s (delete timeout %s)", waited.Round(100*time.Millisecond), deleteTimeout)
					if waited < deleteTimeout {
						t.Errorf("the destroy ended after %s, before its delete timeout %s", waited, deleteTimeout)
					}
					u, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(team))
					switch {
					case err != nil:
						t.Errorf("the held ClusterQueue: %v", err)
					case u.GetDeletionTimestamp() == nil || !slices.Contains(u.GetFinalizers(), cwFinalizer):
						t.Errorf("the held ClusterQueue is not terminating under %s: deletionTimestamp %v, finalizers %v",
							cwFinalizer, u.GetDeletionTimestamp(), u.GetFinalizers())
					}
					if err := localcluster.DeleteJobs(context.Background(), acc.clientset, acc.dynamic, jobs); err != nil {
						t.Errorf("deleting the job: %v", err)
					}
				},
				Config: `# nothing`,
				// Checked here, not in CheckDestroy: plugin-testing skips CheckDestroy when the
				// state is already empty, as it is after this step.
				Check: destroyed,
			},
		},
	})
}
