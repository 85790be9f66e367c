package provider

// Drift: changes made out of band, to the attributes and outside them, are shown and repaired.

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Out-of-band changes to fields the provider manages show as an update and apply restores them;
// a deleted ClusterQueue is planned for creation.
func TestAccComputeQuota_drift(t *testing.T) {
	const team = "qacc-drift"
	// A type no other test uses, so deleting its flavor cannot disturb them.
	const driftFlavor = "ml.g6.4xlarge"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Body(`
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }, { instance_type = "ml.g6.4xlarge", count = 1 }]
`).HCL()
	expectUpdate := preApply(plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate))
	restored := resource.ComposeAggregateTestCheckFunc(
		checkQuantity(t, team, "ml.g5.12xlarge", "cpu", "nominal", "48"),
		checkQuantity(t, team, "ml.g5.12xlarge", "nvidia.com/gpu", "borrowing", "2"),
		checkQueue(t, team, func(cq kueue.ClusterQueue) error {
			if cq.Spec.CohortName != quota.DefaultCohort || cq.Spec.StopPolicy == nil || *cq.Spec.StopPolicy != "None" {
				return fmt.Errorf("cohort %q stopPolicy %v not restored", cq.Spec.CohortName, cq.Spec.StopPolicy)
			}
			return nil
		}),
	)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{Config: cfg, Check: restored},
			{
				PreConfig: func() {
					editQueueJSONPatch(t, team, `[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":"40"}]`)
				},
				Config: cfg, ConfigPlanChecks: expectUpdate, Check: restored,
			},
			{
				PreConfig: func() {
					editQueueJSONPatch(t, team, `[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/2/borrowingLimit","value":"7"}]`)
				},
				Config: cfg, ConfigPlanChecks: expectUpdate, Check: restored,
			},
			{
				PreConfig: func() { patchQueue(t, team, `{"spec":{"cohortName":"someone-elses-cohort"}}`) },
				Config:    cfg, ConfigPlanChecks: expectUpdate, Check: restored,
			},
			{
				PreConfig: func() { patchQueue(t, team, `{"spec":{"stopPolicy":"HoldAndDrain"}}`) },
				Config:    cfg, ConfigPlanChecks: expectUpdate, Check: restored,
			},
			{
				// The quota's flavor deleted out of band, its finalizer removed (Kueue's finalizer
				// would keep a flavor in use): the update creates it again.
				PreConfig: func() {
					deleteAndWait(t, kueue.ResourceFlavors.Resource, func(ctx context.Context) error {
						if _, err := acc.dynamic.Resource(kueue.ResourceFlavors).Patch(ctx, driftFlavor, ktypes.MergePatchType,
							[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
							return err
						}
						return acc.dynamic.Resource(kueue.ResourceFlavors).Delete(ctx, driftFlavor, metav1.DeleteOptions{})
					}, func(ctx context.Context) error {
						_, err := acc.dynamic.Resource(kueue.ResourceFlavors).Get(ctx, driftFlavor, metav1.GetOptions{})
						return err
					})
				},
				Config: cfg, ConfigPlanChecks: expectUpdate,
				Check: func(*terraform.State) error {
					if _, ok := flavorLabels(driftFlavor); !ok {
						return fmt.Errorf("ResourceFlavor %s was not recreated", driftFlavor)
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					deleteAndWait(t, kueue.ClusterQueues.Resource, func(ctx context.Context) error {
						return acc.dynamic.Resource(kueue.ClusterQueues).Delete(ctx, quota.ClusterQueueName(team), metav1.DeleteOptions{})
					}, func(ctx context.Context) error {
						_, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName(team), metav1.GetOptions{})
						return err
					})
				},
				Config:           cfg,
				ConfigPlanChecks: preApply(plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionCreate)),
				Check:            restored,
			},
		},
	})
}

// Labels of other managers and the canonical spelling of quantities are not drift.
func TestAccComputeQuota_noDrift(t *testing.T) {
	const team = "qacc-nodrift"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Body(`
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
`).HCL()
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					applyForeignLabel(t, team)
					// "48" rewritten as 48000m and 192Gi as 196608Mi, as a canonicalising writer would.
					editQueueJSONPatch(t, team, `[
  {"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":"48000m"},
  {"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/1/nominalQuota","value":"196608Mi"}]`)
				},
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: checkQueue(t, team, func(cq kueue.ClusterQueue) error {
					if cq.Labels["team.example.com/cost-center"] != "cc-42" {
						return fmt.Errorf("the other manager's label was removed: %v", cq.Labels)
					}
					return nil
				}),
			},
		},
	})
}

// applyForeignLabel adds a label to the team's ClusterQueue with server-side apply under another
// field manager.
func applyForeignLabel(t *testing.T, team string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kueue.GroupVersion.String(), "kind": kueue.KindClusterQueue,
		"metadata": map[string]any{"name": quota.ClusterQueueName(team), "labels": map[string]any{"team.example.com/cost-center": "cc-42"}},
	}}
	_, err := acc.dynamic.Resource(kueue.ClusterQueues).Apply(context.Background(), u.GetName(), u,
		metav1.ApplyOptions{FieldManager: "cost-tagger"})
	if err != nil {
		t.Fatalf("applying a foreign label: %v", err)
	}
}

// Drift of every field outside the attributes is named in drift by a refresh-only run, with
// every attribute left true, and repaired by the next apply.
func TestAccComputeQuota_driftOutsideAttributes(t *testing.T) {
	const team = "qacc-drift-fields"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Resource("ml.g5.12xlarge").Count(1).HCL()
	// Refresh-only steps run Check functions only (no state checks).
	driftIs := func(pattern string, firstOfMore bool) resource.TestCheckFunc {
		count := resource.TestCheckResourceAttr(quotaAddr, "drift.#", "1")
		if firstOfMore {
			count = resource.TestCheckResourceAttrWith(quotaAddr, "drift.#", func(v string) error {
				if v == "0" || v == "1" {
					return fmt.Errorf("drift has %s lines, want more than one", v)
				}
				return nil
			})
		}
		return resource.ComposeAggregateTestCheckFunc(
			count,
			resource.TestMatchResourceAttr(quotaAddr, "drift.0", regexp.MustCompile(pattern)),
			resource.TestCheckResourceAttr(quotaAddr, "cluster_queue_name", quota.ClusterQueueName(team)),
		)
	}
	inSync := resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttr(quotaAddr, "drift.#", "0"),
		checkOwnerRecorded(t, team),
	)
	steps := []resource.TestStep{{Config: cfg, Check: inSync}}
	for _, c := range []struct {
		name, patch, want string
		firstOfMore       bool // the read-back entries change too, so more lines follow
	}{
		{"namespaceSelector", `{"spec":{"namespaceSelector":{"matchLabels":{"team":"other","` + quota.LabelQuotaAllocationID + `":null}}}}`, `^spec\.namespaceSelector is team=other, want sagemaker\.amazonaws\.com/quota-allocation-id=qacc-drift-fields$`, false},
		{"preemption", `{"spec":{"preemption":{"reclaimWithinCohort":"Never"}}}`, `^spec\.preemption is reclaimWithinCohort Never`, false},
		{"owned label", `{"metadata":{"labels":{"` + quota.LabelQuotaAllocationID + `":"someone"}}}`, `^label sagemaker\.amazonaws\.com/quota-allocation-id was changed outside Terraform$`, false},
		{"owned annotation", `{"metadata":{"annotations":{"` + quota.AnnotationName + `":"renamed"}}}`, `^annotation hyperpod\.quotaworks\.io/name was changed outside Terraform$`, false},
		{"owner annotation removed", `{"metadata":{"annotations":{"` + quota.AnnotationOwner + `":null}}}`, `^annotation hyperpod\.quotaworks\.io/owner-id is missing$`, false},
		{"extra resource group", `{"spec":{"resourceGroups":[{"coveredResources":["cpu","memory","nvidia.com/gpu","aws.amazon.com/neurondevice","vpc.amazonaws.com/efa"],"flavors":[{"name":"ml.g5.12xlarge","resources":[{"name":"cpu","nominalQuota":"48"},{"name":"memory","nominalQuota":"192Gi"},{"name":"nvidia.com/gpu","nominalQuota":"4"},{"name":"aws.amazon.com/neurondevice","nominalQuota":"0"},{"name":"vpc.amazonaws.com/efa","nominalQuota":"1"}]}]},{"coveredResources":["example.com/widget"],"flavors":[{"name":"ml.g5.12xlarge-extra","resources":[{"name":"example.com/widget","nominalQuota":"1"}]}]}]}}`, `^spec\.resourceGroups has 2 groups, want 1$`, true},
	} {
		patch, want, firstOfMore := c.patch, c.want, c.firstOfMore
		steps = append(steps,
			resource.TestStep{
				PreConfig:    func() { patchQueue(t, team, patch) },
				RefreshState: true,
				// The refresh records the drift; the plan that follows it repairs it.
				ExpectNonEmptyPlan: true,
				Check:              driftIs(want, firstOfMore),
			},
			resource.TestStep{
				Config:           cfg,
				ConfigPlanChecks: preApply(plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate)),
				Check:            inSync,
			},
		)
	}
	// fairSharing.weight is an attribute (fair_share_weight): its drift shows there, not in drift.
	steps = append(steps,
		resource.TestStep{
			PreConfig:          func() { patchQueue(t, team, `{"spec":{"fairSharing":{"weight":"7"}}}`) },
			RefreshState:       true,
			ExpectNonEmptyPlan: true,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(quotaAddr, "fair_share_weight", "7"),
				resource.TestCheckResourceAttr(quotaAddr, "drift.#", "0"),
			),
		},
		resource.TestStep{
			Config:           cfg,
			ConfigPlanChecks: preApply(plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate)),
			Check:            resource.ComposeAggregateTestCheckFunc(inSync, resource.TestCheckResourceAttr(quotaAddr, "fair_share_weight", "0")),
		},
	)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps:                    steps,
	})
}
