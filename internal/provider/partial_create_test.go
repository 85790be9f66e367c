package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// A create that fails after its claim saves what it wrote, tainted, and names what it did and did
// not write; the next apply (here with the API server healthy again) replaces it. The fault proxy
// fails exactly the second write of each resource: the LocalQueue of a team namespace, the
// ClusterQueue's spec of a compute quota.
func TestAccPartialCreate_savedTainted(t *testing.T) {
	acctest.RequireCluster(t)
	const team = "pc-partial"
	nsName, lqName, cqName := quota.NamespaceName(team), quota.LocalQueueName(team), quota.ClusterQueueName(team)
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, nsName)
	failSecondWrite := faultproxy.MatchRequest(func(r faultproxy.Request) bool {
		return isPatchOf(r, kueue.LocalQueues.Resource) || isPatchOf(r, kueue.ClusterQueues.Resource)
	})
	_, kubeconfig := acctest.FaultProxy(t, faultproxy.Config{Seed: 1, Idempotent: faultproxy.Rates{InternalError: 1}, Match: failSecondWrite})
	resources := acctest.TeamNamespace(team).HCL() + acctest.Quota(team).Resource("ml.c5.4xlarge").VCPU(2).HCL()
	flaky := fmt.Sprintf(`
provider "hyperpod" {
  config_path = %q
  retry {
    max_attempts = 2
    max_elapsed  = "2s"
  }
}
`, kubeconfig)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, ok := getClusterQueue(t, team); ok {
				return fmt.Errorf("ClusterQueue %s left after destroy", cqName)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: flaky + resources,
				ExpectError: regexp.MustCompile(`(?s)` +
					// The cause, transient, with its retry count and no permission hint.
					`Cannot apply LocalQueue.*` + tnsPhrase(`tried 2 times`) + `.*` + tnsPhrase(`Running apply again is safe`) + `.*` +
					`hyperpod_team_namespace partly created.*` +
					tnsPhrase(fmt.Sprintf(`Written: Namespace %q. Not written: LocalQueue %q in namespace %q.`, nsName, lqName, nsName)) +
					`.*` + tnsPhrase(`marked tainted`)),
			},
			{
				// The API server healthy again (no proxy): the next apply replaces both, which
				// deletes what they wrote and creates it again.
				PreConfig: func() {
					ns, err := tnsGetNamespace(nsName)
					if err != nil || ns == nil || ns.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
						t.Errorf("the half-written Namespace %s is not in the cluster: %v %v", nsName, ns, err)
					}
					if lq, err := tnsGetLocalQueue(nsName, lqName); err != nil || lq != nil {
						t.Errorf("LocalQueue %s exists although its write failed every time: %v %v", lqName, lq, err)
					}
					cq, ok := getClusterQueue(t, team)
					if !ok || len(cq.Spec.ResourceGroups) != 0 || cq.Annotations[quota.AnnotationOwner] == "" {
						t.Errorf("want the claimed ClusterQueue %s without quotas, got found=%v %+v", cqName, ok, cq.Spec)
					}
				},
				Config: resources,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkQuantity(t, team, "ml.c5.4xlarge", "cpu", "nominal", "2"),
					func(*terraform.State) error {
						lq, err := tnsGetLocalQueue(nsName, lqName)
						if err != nil || lq == nil || lq.Spec.ClusterQueue != cqName {
							return fmt.Errorf("LocalQueue %s after the second apply: %v %v", lqName, lq, err)
						}
						return nil
					},
				),
			},
		},
	})
}

// The compute quota's half of the same failure, on its own so its diagnostics can be matched.
func TestAccPartialCreate_quotaSavedTainted(t *testing.T) {
	acctest.RequireCluster(t)
	const team = "pc-partial-quota"
	cqName := quota.ClusterQueueName(team)
	cleanupQueue(t, team)
	failSpec := faultproxy.MatchRequest(func(r faultproxy.Request) bool {
		return isPatchOf(r, kueue.ClusterQueues.Resource)
	})
	_, kubeconfig := acctest.FaultProxy(t, faultproxy.Config{Seed: 1, Idempotent: faultproxy.Rates{ServiceUnavailable: 1}, Match: failSpec})
	res := acctest.Quota(team).Resource("ml.c5.4xlarge").VCPU(2).HCL()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf("provider \"hyperpod\" {\n  config_path = %q\n  retry {\n    max_attempts = 3\n    max_elapsed = \"2s\"\n  }\n}\n", kubeconfig) + res,
				ExpectError: regexp.MustCompile(`(?s)Cannot apply the ClusterQueue.*` + tnsPhrase(`tried 3 times`) + `.*` + tnsPhrase(`Running apply again is safe`) + `.*` +
					`hyperpod_compute_quota partly created.*` + tnsPhrase(fmt.Sprintf(`Written: ClusterQueue %q. Not written: the quotas of ClusterQueue %q`, cqName, cqName))),
			},
			{
				Config: res,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: checkQuantity(t, team, "ml.c5.4xlarge", "cpu", "nominal", "2"),
			},
		},
	})
}

// isPatchOf reports whether r is a PATCH (server-side apply or another) of one object of
// resource, or of one of its subresources.
func isPatchOf(r faultproxy.Request, resource string) bool {
	return (r.Verb == faultproxy.VerbApply || r.Verb == faultproxy.VerbPatch) && r.Resource == resource && r.Name != ""
}
