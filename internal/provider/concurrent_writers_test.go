package provider

// Concurrent writers: other field managers write the objects this provider
// manages, between plan and apply, during an apply, and while Kueue holds a queue with its
// finalizer. Server-side apply with force must restore exactly the provider's fields and leave
// everyone else's alone.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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

// --- 2. Other managers' fields survive ---

// cwForeign is what the other controller adds to each object in TestAccConcurrentWriters_foreignFieldsSurvive.
var cwForeign = struct{ labelKey, labelValue, annotationKey, annotationValue string }{
	"other.example.com/cost-center", "cc-9", "other.example.com/note", "added by another controller",
}

// cwObject names one object.
type cwObject struct {
	kind            string
	gvr             schema.GroupVersionResource
	namespace, name string
}

func (o cwObject) String() string {
	if o.namespace != "" {
		return fmt.Sprintf("%s %s/%s", o.kind, o.namespace, o.name)
	}
	return o.kind + " " + o.name
}

// cwAddForeign adds the foreign label and annotation to an object with a merge patch under
// the other manager, as `kubectl label` and `kubectl annotate` would.
func cwAddForeign(o cwObject) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q},"annotations":{%q:%q}}}`,
		cwForeign.labelKey, cwForeign.labelValue, cwForeign.annotationKey, cwForeign.annotationValue)
	_, err := acc.dynamic.Resource(o.gvr).Namespace(o.namespace).Patch(context.Background(), o.name, ktypes.MergePatchType,
		[]byte(patch), metav1.PatchOptions{FieldManager: cwOtherManager})
	if err != nil {
		return fmt.Errorf("adding labels to %s: %w", o, err)
	}
	return nil
}

// cwCheckForeign checks that the object still has the foreign label and annotation, that the
// other manager still owns them, and that the provider never took them.
func cwCheckForeign(o cwObject) error {
	u, err := cwGet(o.gvr, o.namespace, o.name)
	if err != nil {
		return fmt.Errorf("%s: %w", o, err)
	}
	if v := u.GetLabels()[cwForeign.labelKey]; v != cwForeign.labelValue {
		return fmt.Errorf("%s: label %s = %q, want %q (labels %v)", o, cwForeign.labelKey, v, cwForeign.labelValue, u.GetLabels())
	}
	if v := u.GetAnnotations()[cwForeign.annotationKey]; v != cwForeign.annotationValue {
		return fmt.Errorf("%s: annotation %s = %q, want %q", o, cwForeign.annotationKey, v, cwForeign.annotationValue)
	}
	for _, k := range []string{cwForeign.labelKey, cwForeign.annotationKey} {
		f := `"f:` + k + `"`
		if owners := cwOwners(u, f); !slices.Equal(owners, []string{cwOtherManager}) {
			return fmt.Errorf("%s: %s is owned by %v, want %s alone", o, k, owners, cwOtherManager)
		}
	}
	return nil
}

// cwHasFinalizer checks that Kueue's finalizer is on the object, set by a manager other than
// the provider.
func cwHasFinalizer(o cwObject) error {
	u, err := cwGet(o.gvr, o.namespace, o.name)
	if err != nil {
		return fmt.Errorf("%s: %w", o, err)
	}
	if !slices.Contains(u.GetFinalizers(), cwFinalizer) {
		return fmt.Errorf("%s: finalizers %v lack %s", o, u.GetFinalizers(), cwFinalizer)
	}
	// Kueue's defaulting webhook adds it on create, and no manager is recorded for it; the provider must
	// never claim it, or a later apply without it could remove it.
	if owners := cwOwners(u, `"v:\"`+cwFinalizer+`\""`); slices.Contains(owners, quota.FieldManager) {
		return fmt.Errorf("%s: finalizer %s is owned by %v, want not by %s", o, cwFinalizer, owners, quota.FieldManager)
	}
	return nil
}

// cwWaitFinalizer waits until the Kueue manager has put its finalizer on the object.
func cwWaitFinalizer(o cwObject) error {
	return acctest.Eventually(context.Background(), 30*time.Second, fmt.Sprintf("%s with Kueue's finalizer", o),
		func(context.Context) (bool, string, error) {
			if err := cwHasFinalizer(o); err != nil {
				return false, err.Error(), nil
			}
			return true, "", nil
		})
}

// cwUnmodelledSpec returns the fields of a ClusterQueue's spec that the provider's model of
// the queue (kueue.ClusterQueue, what RenderClusterQueue writes) has no place for, by path:
// what Kueue's webhooks and the CRD's defaults filled in.
func cwUnmodelledSpec(u *unstructured.Unstructured) (map[string]any, error) {
	var cq kueue.ClusterQueue
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
		return nil, err
	}
	// The fields the type reads only for the admission preview are no more the provider's than
	// the ones it does not read: the renderer never sets them.
	cq.Spec.QueueingStrategy, cq.Spec.FlavorFungibility = "", nil
	cq.Spec.AdmissionChecksStrategy, cq.Spec.AdmissionScope = nil, nil
	modelled, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cq)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	cwDiffKeys("spec", u.Object["spec"], modelled["spec"], out)
	return out, nil
}

func cwDiffKeys(path string, live, modelled any, out map[string]any) {
	switch l := live.(type) {
	case map[string]any:
		m, _ := modelled.(map[string]any)
		for k, v := range l {
			if mv, ok := m[k]; ok {
				cwDiffKeys(path+"."+k, v, mv, out)
			} else {
				out[path+"."+k] = v
			}
		}
	case []any:
		m, _ := modelled.([]any)
		for i, v := range l {
			p := fmt.Sprintf("%s[%d]", path, i)
			if i < len(m) {
				cwDiffKeys(p, v, m[i], out)
			} else {
				out[p] = v
			}
		}
	}
}

// Fields other managers own survive every apply and destroy: labels and annotations another
// controller adds to the Namespaces, LocalQueues, ClusterQueues and the shared ResourceFlavor;
// Kueue's finalizer on the queues and the flavor; and the spec fields Kueue's webhooks default.
// Destroying one of two quotas that share an instance type keeps the flavor with its foreign
// fields, and leaves the team's namespace as it was.
func TestAccConcurrentWriters_foreignFieldsSurvive(t *testing.T) {
	acctest.RequireKueue(t)
	const teamA, teamB, flavor = "cw-keep-a", "cw-keep-b", "ml.g6e.12xlarge"
	for _, team := range []string{teamA, teamB} {
		cleanupQueue(t, team)
		tnsCleanupNamespace(t, quota.NamespaceName(team))
	}
	cwCleanupFlavor(t, flavor)
	config := func(tier, description string, accelerators int, withB bool) string {
		c := fmt.Sprintf(`
resource "hyperpod_team_namespace" "a" {
  team   = %[1]q
  labels = { "example.com/tier" = %[3]q }
}

resource "hyperpod_team_namespace" "b" {
  team = %[2]q
}

resource "hyperpod_compute_quota" "a" {
  name        = "%[1]s-quota"
  team        = hyperpod_team_namespace.a.team
  description = %[4]q
  resources   = [{ instance_type = %[5]q, accelerators = %[6]d }]
}
`, teamA, teamB, tier, description, flavor, accelerators)
		if withB {
			c += fmt.Sprintf(`
resource "hyperpod_compute_quota" "b" {
  name        = "%[1]s-quota"
  team        = hyperpod_team_namespace.b.team
  description = %[2]q
  resources   = [{ instance_type = %[3]q, count = 1 }]
}
`, teamB, description, flavor)
		}
		return c
	}
	objects := func(teams ...string) []cwObject {
		var out []cwObject
		for _, team := range teams {
			out = append(out,
				cwObject{"Namespace", kube.Namespaces, "", quota.NamespaceName(team)},
				cwObject{"LocalQueue", kueue.LocalQueues, quota.NamespaceName(team), quota.LocalQueueName(team)},
				cwObject{"ClusterQueue", kueue.ClusterQueues, "", quota.ClusterQueueName(team)})
		}
		return out
	}
	rf := cwObject{"ResourceFlavor", kueue.ResourceFlavors, "", flavor}
	objsA, objsB := objects(teamA), objects(teamB) // Namespace, LocalQueue, ClusterQueue
	queueA, queueB := objsA[2], objsB[2]
	all := slices.Concat(objsA, objsB, []cwObject{rf})
	// What Kueue defaulted in queue A's spec when it was created.
	var defaulted map[string]any

	checkAll := func(objs []cwObject, finalized ...cwObject) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for _, o := range objs {
				if err := cwCheckForeign(o); err != nil {
					return err
				}
			}
			for _, o := range finalized {
				if err := cwHasFinalizer(o); err != nil {
					return err
				}
			}
			return nil
		}
	}
	defaultsUnchanged := func(*terraform.State) error {
		u, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(teamA))
		if err != nil {
			return err
		}
		got, err := cwUnmodelledSpec(u)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, defaulted) {
			return fmt.Errorf("the fields Kueue defaulted changed:\n got  %v\n want %v", got, defaulted)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeTestCheckFunc(checkQueueGone(t, teamA), checkQueueGone(t, teamB), tnsCheckGone(teamA, teamB),
			func(*terraform.State) error {
				// The provider made the flavor; the last quota using it takes it along, foreign labels or not.
				if _, err := cwGet(kueue.ResourceFlavors, "", flavor); !apierrors.IsNotFound(err) {
					return fmt.Errorf("ResourceFlavor %s after destroy: %v, want it deleted", flavor, err)
				}
				return nil
			}),
		Steps: []resource.TestStep{
			{
				Config: config("gold", "v1", 2, true),
				// Another controller labels and annotates every object; Kueue finalizes and
				// defaults. The post-apply plan of this step must not see any of it as drift.
				Check: func(*terraform.State) error {
					for _, o := range all {
						if err := cwAddForeign(o); err != nil {
							return err
						}
					}
					for _, o := range []cwObject{queueA, queueB, rf} {
						if err := cwWaitFinalizer(o); err != nil {
							return err
						}
					}
					u, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(teamA))
					if err != nil {
						return err
					}
					if defaulted, err = cwUnmodelledSpec(u); err != nil {
						return err
					}
					// The queueing strategy and flavor fungibility are never set by the provider:
					// Kueue's defaults must be there for this test to mean anything.
					for _, k := range []string{"spec.queueingStrategy", "spec.flavorFungibility"} {
						if _, ok := defaulted[k]; !ok {
							return fmt.Errorf("kueue did not default %s; unmodelled fields %v", k, defaulted)
						}
					}
					raw, _ := json.Marshal(defaulted)
					t.Logf("fields Kueue defaulted in %s: %s", u.GetName(), raw)
					// The provider's applies never claim them (the create that made the queue
					// may be recorded for them: the server attributes defaults to the creator).
					applied := cwOwnedByApply(u, quota.FieldManager)
					for _, k := range sortedKeys(defaulted) {
						f := `"f:` + k[strings.LastIndex(k, ".")+1:] + `"`
						t.Logf("  %s is owned by %v", k, cwOwners(u, f))
						if strings.Contains(applied, f) {
							return fmt.Errorf("the provider's server-side apply claims %s, which Kueue defaulted: %s", k, applied)
						}
					}
					return checkAll(all, queueA, queueB, rf)(nil)
				},
			},
			{
				// An update of every resource: the provider's labels, description and quota change.
				Config: config("silver", "v2", 3, true),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction("hyperpod_team_namespace.a", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("hyperpod_compute_quota.a", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("hyperpod_compute_quota.b", plancheck.ResourceActionUpdate),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkAll(all, queueA, queueB, rf),
					defaultsUnchanged,
					checkQuantity(t, teamA, flavor, "nvidia.com/gpu", "nominal", "3"),
					tnsCheckCluster(teamA, map[string]string{"example.com/tier": "silver"}, nil),
				),
			},
			{
				// Quota b goes; quota a still uses the flavor, and team b keeps its namespace.
				Config: config("silver", "v2", 3, false),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction("hyperpod_compute_quota.b", plancheck.ResourceActionDestroy),
					plancheck.ExpectResourceAction("hyperpod_team_namespace.b", plancheck.ResourceActionNoop),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQueueGone(t, teamB),
					// Team b's Namespace and LocalQueue are still there, with the foreign fields.
					checkAll(slices.Concat(objsA, objsB[:2], []cwObject{rf}), queueA, rf),
					tnsCheckCluster(teamB, nil, nil),
					defaultsUnchanged,
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

// --- 4. An update racing other writers ---

// cwRacer keeps changing one label of a ClusterQueue and a Namespace with read-modify-update
// calls that carry the resourceVersion they read, under its own field manager, retrying on
// 409 Conflict, until stopped. For each object it records the sequence of values of a field
// the provider's update changes, as each of its successful writes saw it.
type cwRacer struct {
	team     string
	stopping atomic.Bool // checked between requests, so none is cut off midway
	done     chan struct{}

	mu        sync.Mutex
	last      map[string]string   // object -> the last label value written successfully
	seen      map[string][]string // object -> the provider's value at each write, repeats collapsed
	writes    int
	conflicts int
	err       error
	started   time.Time
}

const cwRacerLabel = "racer.example.com/seq"

func cwStartRacer(team string) *cwRacer {
	// A client of its own, without client-go's default 5 requests per second.
	cfg := rest.CopyConfig(acc.config)
	cfg.QPS, cfg.Burst = 1000, 1000
	r := &cwRacer{team: team, done: make(chan struct{}), last: map[string]string{}, seen: map[string][]string{}, started: time.Now()}
	go r.run(context.Background(), dynamic.NewForConfigOrDie(cfg), kubernetes.NewForConfigOrDie(cfg))
	return r
}

func (r *cwRacer) run(ctx context.Context, dyn dynamic.Interface, cs kubernetes.Interface) {
	defer close(r.done)
	cqs := dyn.Resource(kueue.ClusterQueues)
	nss := cs.CoreV1().Namespaces()
	for i := 1; !r.stopping.Load(); i++ {
		value := fmt.Sprint(i)
		// Alternate the objects, so each sees writes all along.
		var err error
		if i%2 == 1 {
			err = r.write("ClusterQueue", value, func() (string, error) {
				u, err := cqs.Get(ctx, quota.ClusterQueueName(r.team), metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				labels := u.GetLabels()
				labels[cwRacerLabel] = value
				u.SetLabels(labels)
				if u, err = cqs.Update(ctx, u, metav1.UpdateOptions{FieldManager: "racer"}); err != nil {
					return "", err
				}
				return u.GetAnnotations()[quota.AnnotationDescription], nil
			})
		} else {
			err = r.write("Namespace", value, func() (string, error) {
				ns, err := nss.Get(ctx, quota.NamespaceName(r.team), metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				ns.Labels[cwRacerLabel] = value
				if ns, err = nss.Update(ctx, ns, metav1.UpdateOptions{FieldManager: "racer"}); err != nil {
					return "", err
				}
				return ns.Labels["example.com/version"], nil
			})
		}
		if err != nil {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// write runs one read-modify-update until it does not conflict. update returns the
// provider's value in the object it wrote.
func (r *cwRacer) write(object, value string, update func() (string, error)) error {
	for !r.stopping.Load() {
		providers, err := update()
		r.mu.Lock()
		switch {
		case err == nil:
			r.last[object] = value
			r.writes++
			if s := r.seen[object]; len(s) == 0 || s[len(s)-1] != providers {
				r.seen[object] = append(s, providers)
			}
		case apierrors.IsConflict(err):
			r.conflicts++
		}
		r.mu.Unlock()
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// waitSeen waits until the racer's writes of every object have seen the provider's value.
func (r *cwRacer) waitSeen(value string, timeout time.Duration, objects ...string) error {
	return acctest.Eventually(context.Background(), timeout,
		fmt.Sprintf("the other writer's writes of %s seeing the provider's %s", strings.Join(objects, " and "), value),
		func(context.Context) (bool, string, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			all := true
			for _, o := range objects {
				s := r.seen[o]
				all = all && len(s) > 0 && s[len(s)-1] == value
			}
			return all, fmt.Sprintf("the provider's values it saw: %v", r.seen), nil
		})
}

// stop ends the racer and waits for its last write to finish.
func (r *cwRacer) stop() {
	r.stopping.Store(true)
	<-r.done
}

// An update applied while another writer keeps updating the same ClusterQueue and Namespace:
// the other writer's read-modify-update calls conflict and retry, but the provider's
// server-side apply with force needs no resourceVersion and never conflicts. Afterwards both
// the provider's values and the other writer's last label are there, and the plan is empty.
func TestAccConcurrentWriters_racingUpdates(t *testing.T) {
	acctest.RequireCluster(t)
	const team, flavor = "cw-race", "ml.g6.48xlarge"
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	cwCleanupFlavor(t, flavor)
	config := func(version string, accelerators int) string {
		return fmt.Sprintf(`
resource "hyperpod_team_namespace" "test" {
  team        = %[1]q
  labels      = { "example.com/version" = %[2]q }
}

resource "hyperpod_compute_quota" "test" {
  name        = "%[1]s-quota"
  team        = hyperpod_team_namespace.test.team
  description = %[2]q
  resources   = [{ instance_type = %[3]q, accelerators = %[4]d }]
}
`, team, version, flavor, accelerators)
	}
	var racer *cwRacer
	t.Cleanup(func() {
		if racer != nil {
			racer.stop()
		}
	})
	check := func(*terraform.State) error {
		// The provider's write of the queue comes last in the apply: let the other writer go on
		// until it has written both objects after the apply too.
		if err := racer.waitSeen("v2", 10*time.Second, "ClusterQueue", "Namespace"); err != nil {
			return err
		}
		racer.stop()
		racer.mu.Lock()
		defer racer.mu.Unlock()
		lastCQ, lastNS := racer.last["ClusterQueue"], racer.last["Namespace"]
		t.Logf("the other writer made %d updates in %s and retried %d conflicts; the provider's values it saw: %v",
			racer.writes, time.Since(racer.started).Round(time.Millisecond), racer.conflicts, racer.seen)
		if racer.err != nil {
			return fmt.Errorf("the other writer failed: %w", racer.err)
		}
		// It wrote before and after the provider's write, and never put the old value back.
		for _, object := range []string{"ClusterQueue", "Namespace"} {
			if got := racer.seen[object]; !slices.Equal(got, []string{"v1", "v2"}) {
				return fmt.Errorf("the other writer's updates of the %s saw the provider's values %v, want [v1 v2]: "+
					"writes before and after the apply, and none that undid it", object, got)
			}
		}
		cq, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(team))
		if err != nil {
			return err
		}
		if got := cq.GetLabels()[cwRacerLabel]; got != lastCQ {
			return fmt.Errorf("ClusterQueue label %s = %q, want the other writer's last %q", cwRacerLabel, got, lastCQ)
		}
		if got := cq.GetAnnotations()[quota.AnnotationDescription]; got != "v2" {
			return fmt.Errorf("ClusterQueue description %q, want v2", got)
		}
		ns, err := tnsGetNamespace(quota.NamespaceName(team))
		if err != nil || ns == nil {
			return fmt.Errorf("namespace: %v", err)
		}
		if got := ns.Labels[cwRacerLabel]; got != lastNS {
			return fmt.Errorf("namespace label %s = %q, want the other writer's last %q", cwRacerLabel, got, lastNS)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(checkQueueGone(t, team), tnsCheckGone(team)),
		Steps: []resource.TestStep{
			{Config: config("v1", 4)},
			{
				Config: config("v2", 6),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
					cwPlanHook(func() error {
						// The apply starts once the other writer has written both objects.
						racer = cwStartRacer(team)
						return racer.waitSeen("v1", 10*time.Second, "ClusterQueue", "Namespace")
					}),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					check,
					checkQuantity(t, team, flavor, "nvidia.com/gpu", "nominal", "6"),
					checkQuantity(t, team, flavor, "nvidia.com/gpu", "borrowing", "3"),
					tnsCheckCluster(team, map[string]string{"example.com/version": "v2"}, nil),
				),
			},
		},
	})
}
