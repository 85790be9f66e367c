package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

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
