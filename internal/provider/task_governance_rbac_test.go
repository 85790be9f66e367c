package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator/addon"
)

// The least-privilege ClusterRole of examples/rbac for the SageMaker path, tested on the
// task-governance cluster as a user that has nothing else: what the provider does over
// Kubernetes there (team namespaces, Kueue's status for team usage, Nodes for capacity).

const tgRBACManifest = "../../examples/rbac/task-governance-clusterrole.yaml"

// tgRBAC is the task-governance cluster with the SageMaker path's example role.
func tgRBAC(tg *acctest.TaskGovernance) rbacTarget {
	return rbacTarget{cluster: tg.Cluster, clientset: tg.Clientset, dynamic: tg.Dynamic, manifest: tgRBACManifest}
}

// tgProviderAs is the SageMaker path's provider block with u's Kubernetes credentials.
func tgProviderAs(tg *acctest.TaskGovernance, u *rbacUser) string {
	return addon.Connection{Kubeconfig: u.kubeconfig, ClusterARN: tg.ClusterARN, Endpoint: tg.Emulator.URL()}.ProviderHCL()
}

// tgCleanupNamespace deletes a Namespace of the task-governance cluster when the test ends.
func tgCleanupNamespace(t *testing.T, tg *acctest.TaskGovernance, name string) {
	t.Cleanup(func() {
		err := tg.Clientset.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
}

// tgRBACQuota is the team's compute quota, created after the team's namespace (the add-on
// would otherwise create the namespace itself, with its quota).
func tgRBACQuota(accelerators int) string {
	return fmt.Sprintf(`
resource "hyperpod_compute_quota" "test" {
  name      = "${hyperpod_team_namespace.test.team}-quota"
  team      = hyperpod_team_namespace.test.team
  resources = [{ instance_type = "ml.g5.12xlarge", accelerators = %d }]
}
`, accelerators)
}

const tgRBACUsage = `
data "hyperpod_team_usage" "test" {
  team = hyperpod_compute_quota.test.team
}
`

// tgCheckGone is a CheckDestroy: the teams' Namespaces are gone, and the SageMaker API holds no
// compute quota for team (a destroy waits until it no longer knows it).
func tgCheckGone(tg *acctest.TaskGovernance, team string, namespaces ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, ns := range namespaces {
			if _, err := tg.Clientset.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("namespace %s still there after destroy (%v)", ns, err)
			}
		}
		for _, q := range tg.Emulator.Quotas() {
			if q.Target.TeamName != nil && *q.Target.TeamName == team {
				return fmt.Errorf("compute quota %s of team %s still there after destroy (%s)", q.Name, team, q.Status)
			}
		}
		return nil
	}
}

// TestAccTaskGovernance_rbacLeastPrivilege runs everything the SageMaker path does over
// Kubernetes as a user that holds only the example ClusterRole: team namespaces created,
// updated, drifted, imported and destroyed (without force_destroy), refreshes of 18 of them
// (the 16th and later read with one LIST), a team's usage and an instance type's capacity. The
// quota goes through the SageMaker API; imported by team and by quota id with import blocks,
// it plans empty.
func TestAccTaskGovernance_rbacLeastPrivilege(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	u := newRBACUserOn(t, tgRBAC(tg), "tg-least")
	team := "tg-rbac-least"
	namespaces := []string{quota.NamespaceName(team)}
	for j := range 17 {
		namespaces = append(namespaces, quota.NamespaceName(fmt.Sprintf("%s-many-%d", team, j)))
	}
	for _, ns := range namespaces {
		tgCleanupNamespace(t, tg, ns)
	}
	cfg := func(label string, accelerators int) string {
		return tgProviderAs(tg, u) +
			rbacTeamNamespace(team, fmt.Sprintf("  labels = { tier = %q }", label)) +
			rbacTeamNamespaces(team+"-many", 17) +
			tgRBACQuota(accelerators) + rbacCapacity + tgRBACUsage
	}
	const usage, capacity = "data.hyperpod_team_usage.test", "data.hyperpod_instance_type_capacity.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tgCheckGone(tg, team, namespaces...),
		Steps: []resource.TestStep{
			{
				Config: cfg("gold", 1),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(tnsAddr, "labels.tier", "gold"),
					resource.TestCheckResourceAttrSet(usage, "active"),
					resource.TestCheckResourceAttrSet(capacity, "node_count"),
				),
			},
			{
				// Update the namespace and the quota; the refresh before it reads 18 Namespaces
				// and LocalQueues (the 16th and later from one LIST each: priming).
				Config: cfg("silver", 2),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(tnsAddr, "labels.tier", "silver"),
					resource.TestCheckResourceAttr(quotaAddr, "resources.0.accelerators", "2"),
				),
			},
			{
				// Drift made with the admin client is seen by the restricted user's refresh.
				PreConfig: func() {
					if _, err := tg.Clientset.CoreV1().Namespaces().Patch(context.Background(), quota.NamespaceName(team), ktypes.MergePatchType,
						[]byte(`{"metadata":{"labels":{"tier":"bronze"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
						t.Errorf("patching the namespace: %v", err)
					}
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check:              resource.TestCheckResourceAttr(tnsAddr, "labels.tier", "bronze"),
			},
			{
				// The apply repairs it.
				Config: cfg("silver", 2),
				Check:  resource.TestCheckResourceAttr(tnsAddr, "labels.tier", "silver"),
			},
			{
				ResourceName: tnsAddr, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"owner_id", "drift"},
			},
			{
				// An import block of the namespace plans an update in place: the apply records
				// this resource's owner_id on the Namespace.
				ResourceName: tnsAddr, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: team,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
				}},
			},
			{
				// An import block by team plans no change (the step fails on any other action).
				ResourceName: quotaAddr, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: team,
			},
			{
				// And by the quota's id.
				ResourceName: quotaAddr, ImportState: true, ImportStateKind: resource.ImportBlockWithID,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return s.RootModule().Resources[quotaAddr].Primary.Attributes["quota_id"], nil
				},
			},
		},
	})
}

// tgRBACMissingCases are the SageMaker path's cases of removing one verb of its example role.
func tgRBACMissingCases() []rbacCase {
	tns := func(team, _ string) string { return rbacTeamNamespace(team, "") }
	many := func(team, _ string) string { return rbacTeamNamespaces(team, 17) }
	usage := func(team, _ string) string { return rbacTeamNamespace(team, "") + tgRBACQuota(1) + tgRBACUsage }
	capacity := func(string, string) string { return rbacCapacity }
	const (
		ns, lq, cqs = "namespaces", "localqueues", "clusterqueues"
		kq          = ".kueue.x-k8s.io"
	)
	return []rbacCase{
		{resource: ns, verb: "get", config: tns, wantErr: needs("get", ns)},
		{resource: ns, verb: "list", config: many},
		{resource: ns, verb: "watch", config: tns},
		{resource: ns, verb: "create", config: tns, wantErr: needs("create", ns)},
		{resource: ns, verb: "patch", config: tns, wantErr: needs("patch", ns)},
		{resource: ns, verb: "delete", setup: tns, destroy: true, wantErr: refused("delete", ns)},

		{resource: lq, verb: "get", config: tns, wantErr: needs("get", lq+kq)},
		{resource: lq, verb: "list", config: many},

		{resource: cqs, verb: "get", config: usage, wantErr: needs("get", cqs+kq)},

		{resource: "pods", verb: "list", setup: tns, destroy: true, wantErr: tnsPhrase("need list permission on pods")},
		{resource: "workloads", verb: "list", setup: tns, destroy: true, wantErr: tnsPhrase("need list permission on workloads" + kq)},
		{resource: "nodes", verb: "list", config: capacity, wantErr: tnsPhrase("need list permission on nodes")},
	}
}

// TestAccTaskGovernance_rbacMissingRule removes each verb of the SageMaker path's example role
// in turn. An operation that needs it fails with a diagnostic naming the verb and the resource;
// one that can do without it (list for priming, watch) succeeds. Every rule of the role has a
// verb without which something fails, or serves only the admission preview's reads (each
// removed by TestAccTaskGovernance_admissionPreviewRefusedRead).
func TestAccTaskGovernance_rbacMissingRule(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	cases := tgRBACMissingCases()
	checkEveryVerbCovered(t, tgRBACManifest, cases)
	role, _ := rbacExample(t, tgRBACManifest)
	for _, r := range role.Rules {
		// A rule of the admission preview's reads alone is needed by the preview, which the
		// refused-read test checks without each of them.
		needed := true
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				needed = needed && isPreviewRead(res, v)
			}
		}
		for _, c := range cases {
			for _, res := range r.Resources {
				needed = needed || (c.resource == res && c.wantErr != "")
			}
		}
		if !needed {
			t.Errorf("the rule for %v is not needed: removing any of its verbs fails nothing", r.Resources)
		}
	}
	for i, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel()
			suffix := fmt.Sprintf("tg-m%d", i)
			team := "tg-rbac-m" + fmt.Sprint(i)
			u := newRBACUserOn(t, tgRBAC(tg), suffix)
			tgCleanupNamespace(t, tg, quota.NamespaceName(team))
			for j := range 17 {
				tgCleanupNamespace(t, tg, quota.NamespaceName(fmt.Sprintf("%s-%d", team, j)))
			}
			if c.checkDestroy == nil {
				c.checkDestroy = func(team, _ string) error { return tgCheckGone(tg, team, quota.NamespaceName(team))(nil) }
			}
			runRBACCase(t, u, tgProviderAs(tg, u), c, team, "ml.g5.12xlarge")
		})
	}
}
