package provider

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// createHyperPodTeam writes a team's objects with client-go in the shapes HyperPod's
// task-governance add-on writes, without anything of this
// provider: no managed-by label, no annotations. The quota is Count=1 of ml.g5.12xlarge with
// LendAndBorrow and BorrowLimit=100: the raw instance size as nominal quota, as much again as
// borrowing limit. The ResourceFlavor, when this call creates it, is deleted when the test ends:
// the provider never deletes a flavor it did not create.
func createHyperPodTeam(t *testing.T, team string) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quota.NamespaceName(team), Labels: map[string]string{
		quota.LabelSageMakerManagedQueue: "true", quota.LabelQuotaAllocationID: team,
	}}}
	if _, err := acc.clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	rf := acctest.MakeResourceFlavor("ml.g5.12xlarge").Obj()
	create := func(gvr schema.GroupVersionResource, namespace string, obj any) (created bool) {
		t.Helper()
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		_, err = acc.dynamic.Resource(gvr).Namespace(namespace).Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{})
		if err != nil && (gvr != kueue.ResourceFlavors || !apierrors.IsAlreadyExists(err)) {
			t.Fatalf("creating %s: %v", gvr.Resource, err)
		}
		return err == nil
	}
	if create(kueue.ResourceFlavors, "", rf) {
		t.Cleanup(func() {
			err := acc.dynamic.Resource(kueue.ResourceFlavors).Delete(context.Background(), rf.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting ResourceFlavor %s: %v", rf.Name, err)
			}
		})
	}
	q := func(s string) k8sresource.Quantity { return k8sresource.MustParse(s) }
	qp := func(s string) *k8sresource.Quantity { v := k8sresource.MustParse(s); return &v }
	cq := kueue.ClusterQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindClusterQueue},
		ObjectMeta: metav1.ObjectMeta{Name: quota.ClusterQueueName(team)},
		Spec: kueue.ClusterQueueSpec{
			CohortName:        "adopt-cohort",
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{quota.LabelQuotaAllocationID: team}},
			ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{"cpu", "memory", "nvidia.com/gpu", "aws.amazon.com/neurondevice", "vpc.amazonaws.com/efa"},
				Flavors: []kueue.FlavorQuotas{{Name: "ml.g5.12xlarge", Resources: []kueue.ResourceQuota{
					{Name: "cpu", NominalQuota: q("48"), BorrowingLimit: qp("48")},
					{Name: "memory", NominalQuota: q("192Gi"), BorrowingLimit: qp("192Gi")},
					{Name: "nvidia.com/gpu", NominalQuota: q("4"), BorrowingLimit: qp("4")},
					{Name: "aws.amazon.com/neurondevice", NominalQuota: q("0"), BorrowingLimit: qp("0")},
					{Name: "vpc.amazonaws.com/efa", NominalQuota: q("1"), BorrowingLimit: qp("1")},
				}}},
			}},
			Preemption: &kueue.ClusterQueuePreemption{
				ReclaimWithinCohort: kueue.PreemptionAny, WithinClusterQueue: kueue.PreemptionLowerPriority,
				BorrowWithinCohort: &kueue.BorrowWithinCohort{Policy: kueue.PreemptionNever},
			},
			FairSharing: &kueue.FairSharing{Weight: qp("0")},
		},
	}
	create(kueue.ClusterQueues, "", &cq)
	lq := quota.RenderLocalQueue(team, "")
	lq.Labels = nil
	create(kueue.LocalQueues, lq.Namespace, &lq)
}

// Queues the provider did not create, in the shapes HyperPod's add-on writes, are adopted:
// `terraform plan -generate-config-out` writes a configuration that, once applied (the apply
// imports and records this provider as the owner), plans empty; import blocks with for_each do
// the same for a map of teams.
func TestAccAdoption_hyperpodShapes(t *testing.T) {
	acctest.RequireCluster(t)
	teams := []string{"adopt-gen", "adopt-each-a", "adopt-each-b"}
	for _, team := range teams {
		cleanupQueue(t, team)
		tnsCleanupNamespace(t, quota.NamespaceName(team))
		createHyperPodTeam(t, team)
	}
	// The working directories of the test go here, so the generated configuration can be found.
	work := t.TempDir()
	t.Setenv("TF_ACC_TEMP_DIR", work)
	adopted := t.TempDir()

	// The test framework's state reader cannot hold for_each resource keys, so the resources use
	// count; the import blocks still expand with for_each.
	forEach := `
locals {
  teams = ["adopt-each-a", "adopt-each-b"]
}

import {
  for_each = local.teams
  to       = hyperpod_compute_quota.team[each.key]
  id       = each.value
}

import {
  for_each = local.teams
  to       = hyperpod_team_namespace.team[each.key]
  id       = each.value
}

resource "hyperpod_team_namespace" "team" {
  count = length(local.teams)
  team  = local.teams[count.index]
}

resource "hyperpod_compute_quota" "team" {
  count             = length(local.teams)
  name              = local.teams[count.index]
  team              = hyperpod_team_namespace.team[count.index].team
  cohort            = "adopt-cohort"
  fair_share_weight = 0
  resource_sharing  = { strategy = "LendAndBorrow", borrow_limit = 100 }
  resources         = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// terraform plan -generate-config-out: the plan imports the queue and records this
				// provider as its owner (an update), with the amounts HyperPod wrote.
				Config:             `# adopting with generated configuration`,
				ResourceName:       "hyperpod_compute_quota.adopted",
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ImportStateId:      "adopt-gen",
				GenerateConfig:     true,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("hyperpod_compute_quota.adopted", plancheck.ResourceActionUpdate),
					captureGenerated{from: work, to: filepath.Join(adopted, "generated.tf")},
				}},
			},
			{
				// The generated configuration, applied with its import block, plans empty after.
				PreConfig: func() {
					raw, err := os.ReadFile(filepath.Join(adopted, "generated.tf"))
					if err != nil {
						t.Fatalf("the generated configuration was not captured: %v", err)
					}
					t.Logf("generated configuration:\n%s", raw)
					imp := "import {\n  to = hyperpod_compute_quota.adopted\n  id = \"adopt-gen\"\n}\n"
					if err := os.WriteFile(filepath.Join(adopted, "import.tf"), []byte(imp), 0o600); err != nil {
						t.Fatal(err)
					}
				},
				ConfigDirectory: func(config.TestStepConfigRequest) string { return adopted },
				Check:           adoptedBy("hyperpod_compute_quota.adopted", "adopt-gen"),
			},
			{
				// Import blocks with for_each, for namespaces and quotas of several teams.
				Config: forEach,
				Check: resource.ComposeAggregateTestCheckFunc(
					adoptedBy("hyperpod_compute_quota.team.0", "adopt-each-a"),
					adoptedBy("hyperpod_compute_quota.team.1", "adopt-each-b"),
				),
			},
		},
	})
}

// adoptedBy checks that the team's ClusterQueue now records the owner_id of the resource at addr
// and the provider's managed-by label.
func adoptedBy(addr, team string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		u, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(context.Background(), quota.ClusterQueueName(team), metav1.GetOptions{})
		if err != nil {
			return err
		}
		owner := rs.Primary.Attributes["owner_id"]
		if owner == "" || u.GetAnnotations()[quota.AnnotationOwner] != owner || u.GetLabels()[quota.LabelManagedBy] != quota.ManagedByValue {
			return fmt.Errorf("%s: state owner %q, queue annotations %v labels %v", addr, owner, u.GetAnnotations(), u.GetLabels())
		}
		return nil
	}
}

// captureGenerated is a plan check that copies the configuration `terraform plan
// -generate-config-out` wrote (in the import step's working directory under from, which the
// test framework deletes after the step) to to.
type captureGenerated struct{ from, to string }

func (c captureGenerated) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	var found []string
	_ = filepath.WalkDir(c.from, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "generated.tf" {
			found = append(found, path)
		}
		return nil
	})
	if len(found) != 1 {
		resp.Error = fmt.Errorf("want one generated.tf under %s, found %v", c.from, found)
		return
	}
	raw, err := os.ReadFile(found[0])
	if err == nil {
		err = os.WriteFile(c.to, raw, 0o600)
	}
	resp.Error = err
}
