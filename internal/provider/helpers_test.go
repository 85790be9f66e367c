package provider

// Helpers the acceptance tests share: the tests' own view of the cluster through client-go,
// out-of-band edits for drift tests, cleanups, and checks of what the provider wrote.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// getClusterQueue reads a ClusterQueue with client-go, as the tests' independent view of the cluster.
func getClusterQueue(t *testing.T, team string) (kueue.ClusterQueue, bool) {
	t.Helper()
	u, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(context.Background(), quota.ClusterQueueName(team), metav1.GetOptions{})
	if err != nil {
		return kueue.ClusterQueue{}, false
	}
	var cq kueue.ClusterQueue
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
		t.Fatalf("decoding ClusterQueue: %v", err)
	}
	return cq, true
}

// nominal returns the nominal quota (and limits) of resource res in flavor of the team's queue.
func quotaCell(cq kueue.ClusterQueue, flavor, res string) (kueue.ResourceQuota, bool) {
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			if f.Name != flavor {
				continue
			}
			for _, r := range f.Resources {
				if string(r.Name) == res {
					return r, true
				}
			}
		}
	}
	return kueue.ResourceQuota{}, false
}

func checkQuantity(t *testing.T, team, flavor, res, field, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cq, ok := getClusterQueue(t, team)
		if !ok {
			return fmt.Errorf("ClusterQueue of team %s not found", team)
		}
		cell, ok := quotaCell(cq, flavor, res)
		if !ok {
			return fmt.Errorf("flavor %s resource %s not in ClusterQueue %s", flavor, res, cq.Name)
		}
		var got string
		switch field {
		case "nominal":
			got = cell.NominalQuota.String()
		case "borrowing":
			if cell.BorrowingLimit != nil {
				got = cell.BorrowingLimit.String()
			}
		case "lending":
			if cell.LendingLimit != nil {
				got = cell.LendingLimit.String()
			}
		}
		if got != want {
			return fmt.Errorf("ClusterQueue %s flavor %s %s %s = %q, want %q", cq.Name, flavor, res, field, got, want)
		}
		return nil
	}
}

// cleanupQueue removes a team's ClusterQueue if a failed test left it behind.
func cleanupQueue(t *testing.T, team string) {
	t.Cleanup(func() {
		if acc.dynamic == nil {
			return // the acceptance test was skipped: there is no cluster
		}
		err := acc.dynamic.Resource(kueue.ClusterQueues).Delete(context.Background(), quota.ClusterQueueName(team), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup of %s: %v", team, err)
		}
	})
}

// checkQueueGone is a CheckDestroy that the team's ClusterQueue no longer exists.
func checkQueueGone(t *testing.T, team string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, ok := getClusterQueue(t, team); ok {
			return fmt.Errorf("ClusterQueue of team %s still exists after destroy", team)
		}
		return nil
	}
}

// patchQueue changes the team's ClusterQueue out of band with a JSON merge patch under another
// field manager, as `kubectl edit` would.
func patchQueue(t *testing.T, team, patch string) {
	t.Helper()
	_, err := acc.dynamic.Resource(kueue.ClusterQueues).Patch(context.Background(), quota.ClusterQueueName(team),
		ktypes.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	if err != nil {
		t.Fatalf("patching ClusterQueue of %s: %v", team, err)
	}
}

// editFlavorResource sets one field of one resource of the first flavor through a JSON patch.
func editQueueJSONPatch(t *testing.T, team, patch string) {
	t.Helper()
	_, err := acc.dynamic.Resource(kueue.ClusterQueues).Patch(context.Background(), quota.ClusterQueueName(team),
		ktypes.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	if err != nil {
		t.Fatalf("patching ClusterQueue of %s: %v", team, err)
	}
}

func checkQueue(t *testing.T, team string, f func(kueue.ClusterQueue) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cq, ok := getClusterQueue(t, team)
		if !ok {
			return fmt.Errorf("ClusterQueue of team %s not found", team)
		}
		return f(cq)
	}
}

// deleteAndWait deletes an object out of band and waits until a GET says it is gone.
func deleteAndWait(t *testing.T, what string, del, get func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := del(ctx); err != nil {
		t.Fatalf("deleting %s: %v", what, err)
	}
	err := acctest.Eventually(ctx, time.Minute, what+" gone", func(ctx context.Context) (bool, string, error) {
		err := get(ctx)
		if err == nil {
			return false, "still exists", nil
		}
		return apierrors.IsNotFound(err), fmt.Sprintf("reading it: %v", err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func flavorLabels(name string) (map[string]string, bool) {
	u, err := acc.dynamic.Resource(kueue.ResourceFlavors).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	return u.GetLabels(), true
}

// checkOwnerRecorded checks that the queue records the owner_id the state holds.
func checkOwnerRecorded(t *testing.T, team string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[quotaAddr]
		if !ok {
			return fmt.Errorf("%s not in state", quotaAddr)
		}
		owner := rs.Primary.Attributes["owner_id"]
		cq, found := getClusterQueue(t, team)
		switch {
		case owner == "":
			return fmt.Errorf("owner_id is empty in state")
		case !found:
			return fmt.Errorf("ClusterQueue of %s is missing", team)
		case cq.Annotations[quota.AnnotationOwner] != owner:
			return fmt.Errorf("queue records owner %q, state holds %q", cq.Annotations[quota.AnnotationOwner], owner)
		}
		return nil
	}
}

// tnsPhrase matches a sentence even when Terraform wraps it across lines.
func tnsPhrase(s string) string {
	return strings.Join(strings.Fields(regexp.QuoteMeta(s)), `\s+`)
}

// tnsGetNamespace reads a Namespace with client-go, the tests' independent view of the cluster.
func tnsGetNamespace(name string) (*corev1.Namespace, error) {
	ns, err := acc.clientset.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return ns, err
}

func tnsGetLocalQueue(namespace, name string) (*kueue.LocalQueue, error) {
	u, err := acc.dynamic.Resource(kueue.LocalQueues).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lq kueue.LocalQueue
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &lq); err != nil {
		return nil, err
	}
	return &lq, nil
}

// tnsDeleteNamespace deletes a Namespace out of band and waits until it is gone.
func tnsDeleteNamespace(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	err := acc.clientset.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting namespace %s: %v", name, err)
	}
	err = acctest.Eventually(ctx, time.Minute, "namespace "+name+" gone", func(context.Context) (bool, string, error) {
		ns, err := tnsGetNamespace(name)
		if err != nil {
			return false, "", fmt.Errorf("reading it: %w", err)
		}
		if ns == nil {
			return true, "", nil
		}
		return false, fmt.Sprintf("phase %s, finalizers %v", ns.Status.Phase, ns.Spec.Finalizers), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// tnsCleanupNamespace deletes a Namespace the test created by hand, in case a step failed.
func tnsCleanupNamespace(t *testing.T, name string) {
	t.Cleanup(func() {
		if acc.clientset == nil {
			return // the acceptance test was skipped: there is no cluster
		}
		err := acc.clientset.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
}

func tnsCreateLocalQueue(t *testing.T, namespace, name, clusterQueue string, labels map[string]string) {
	t.Helper()
	lq := acctest.MakeLocalQueue(name, namespace).ClusterQueue(clusterQueue).Labels(labels).Unstructured()
	if _, err := acc.dynamic.Resource(kueue.LocalQueues).Namespace(namespace).Create(context.Background(), lq, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating LocalQueue %s/%s: %v", namespace, name, err)
	}
}

func tnsDeleteLocalQueue(t *testing.T, namespace, name string) {
	t.Helper()
	err := acc.dynamic.Resource(kueue.LocalQueues).Namespace(namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil {
		t.Fatalf("deleting LocalQueue %s/%s: %v", namespace, name, err)
	}
}

// tnsCheckOwnerRecorded checks that the Namespace and LocalQueue record the state's owner_id.
func tnsCheckOwnerRecorded(team string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[tnsAddr]
		if !ok {
			return fmt.Errorf("%s not in state", tnsAddr)
		}
		owner := rs.Primary.Attributes["owner_id"]
		ns, err := tnsGetNamespace(quota.NamespaceName(team))
		if err != nil || ns == nil {
			return fmt.Errorf("namespace: %v", err)
		}
		lq, err := tnsGetLocalQueue(quota.NamespaceName(team), quota.LocalQueueName(team))
		if err != nil || lq == nil {
			return fmt.Errorf("local queue: %v", err)
		}
		if owner == "" || ns.Annotations[quota.AnnotationOwner] != owner || lq.Annotations[quota.AnnotationOwner] != owner {
			return fmt.Errorf("state owner %q, namespace records %q, local queue %q", owner,
				ns.Annotations[quota.AnnotationOwner], lq.Annotations[quota.AnnotationOwner])
		}
		return nil
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
