package provider

// Deleting a team namespace: what holds a destroy, and a create that waits for a namespace being
// deleted.

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Destroy refuses while Pods or Workloads remain, and succeeds with force_destroy = true.
func TestAccTeamNamespace_forceDestroy(t *testing.T) {
	const team = "nsacc-force"
	nsName := quota.NamespaceName(team)
	ctx := context.Background()

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tnsCheckGone(team),
		Steps: []resource.TestStep{
			{
				Config: acctest.TeamNamespace(team).HCL(),
				Check:  tnsCheckCluster(team, nil, nil),
			},
			{
				PreConfig: func() {
					pod := &corev1.Pod{
						ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: nsName,
							Labels: map[string]string{"kueue.x-k8s.io/queue-name": quota.LocalQueueName(team)}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
					}
					if _, err := acc.clientset.CoreV1().Pods(nsName).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
						t.Fatalf("creating pod: %v", err)
					}
					wl := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": kueue.GroupVersion.String(),
						"kind":       "Workload",
						"metadata":   map[string]any{"name": "trainer", "namespace": nsName},
						"spec": map[string]any{
							"queueName": quota.LocalQueueName(team),
							"podSets": []any{map[string]any{
								"name":  "main",
								"count": int64(1),
								"template": map[string]any{"spec": map[string]any{
									"containers": []any{map[string]any{"name": "main", "image": "busybox"}},
								}},
							}},
						},
					}}
					if _, err := acc.dynamic.Resource(kueue.Workloads).Namespace(nsName).Create(ctx, wl, metav1.CreateOptions{}); err != nil {
						t.Fatalf("creating workload: %v", err)
					}
				},
				Config:  acctest.TeamNamespace(team).HCL(),
				Destroy: true,
				ExpectError: regexp.MustCompile(`(?s)Namespace is not empty.*` + tnsPhrase(
					`namespace "hyperpod-ns-nsacc-force" still holds 1 Pod and 1 Kueue Workload; delete them, or set force_destroy = true and apply before destroying`)),
			},
			{
				Config: acctest.TeamNamespace(team).Body(`
  force_destroy = true
  timeouts {
    delete = "2m"
  }`).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					tnsState("force_destroy", knownvalue.Bool(true)),
				},
				Check: func(*terraform.State) error {
					// The refused destroy left everything in place.
					if _, err := acc.clientset.CoreV1().Pods(nsName).Get(ctx, "trainer", metav1.GetOptions{}); err != nil {
						return fmt.Errorf("pod trainer: %v", err)
					}
					return tnsCheckCluster(team, nil, nil)(nil)
				},
			},
		},
	})
}

// Pods that have finished (Succeeded, Failed) are not work in progress: they do not block destroy.
func TestAccTeamNamespace_finishedPodsDoNotBlockDestroy(t *testing.T) {
	const team = "nsacc-finished"
	nsName := quota.NamespaceName(team)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tnsCheckGone(team),
		Steps: []resource.TestStep{
			{Config: acctest.TeamNamespace(team).HCL()},
			{
				PreConfig: func() {
					ctx := context.Background()
					for name, phase := range map[string]corev1.PodPhase{"done": corev1.PodSucceeded, "crashed": corev1.PodFailed} {
						pod := &corev1.Pod{
							ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: nsName},
							Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
						}
						created, err := acc.clientset.CoreV1().Pods(nsName).Create(ctx, pod, metav1.CreateOptions{})
						if err != nil {
							t.Fatalf("creating pod %s: %v", name, err)
						}
						created.Status.Phase = phase
						if _, err := acc.clientset.CoreV1().Pods(nsName).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
							t.Fatalf("finishing pod %s: %v", name, err)
						}
					}
				},
				Config: acctest.TeamNamespace(team).HCL(),
			},
		},
	})
}

// A Namespace that is being deleted is waited for, and the create explains when it stays.
func TestAccTeamNamespace_createWaitsForDeletion(t *testing.T) {
	const team = "nsacc-terminating"
	const finalizer = "test.quotaworks.io/hold"
	nsName := quota.NamespaceName(team)
	tnsCleanupNamespace(t, nsName)
	release := func() {
		_, err := acc.clientset.CoreV1().Namespaces().Patch(context.Background(), nsName, k8stypes.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("releasing namespace: %v", err)
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tnsCheckGone(team),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName, Finalizers: []string{finalizer}}}
					if _, err := acc.clientset.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
						t.Fatalf("creating namespace: %v", err)
					}
					if err := acc.clientset.CoreV1().Namespaces().Delete(context.Background(), nsName, metav1.DeleteOptions{}); err != nil {
						t.Fatalf("deleting namespace: %v", err)
					}
				},
				Config: acctest.TeamNamespace(team).Body(`  timeouts {
    create = "2s"
  }`).HCL(),
				ExpectError: regexp.MustCompile(`(?s)Namespace is being deleted.*` + tnsPhrase(`finalizers [`+finalizer+`]`)),
			},
			{
				// Released once the create provably waits: it goes on as soon as the namespace
				// is gone.
				PreConfig: func() {
					waiting := waitBegins(t, backend.WaitNamespaceGone, team)
					go func() {
						select {
						case <-waiting:
						case <-time.After(2 * time.Minute):
							t.Error("the create did not wait for the namespace being deleted")
						}
						release()
					}()
				},
				Config: acctest.TeamNamespace(team).Body(`  timeouts {
    create = "1m"
  }`).HCL(),
				Check: tnsCheckOwnerRecorded(team),
			},
		},
	})
}
