package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The least-privilege ClusterRole of examples/rbac, tested as a user that has nothing else.

const rbacManifest = "../../examples/rbac/clusterrole.yaml"

var (
	gvrClusterRoles        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	gvrClusterRoleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// rbacTarget is a local control plane on which RBAC tests create users, with its admin
// clients, and the example manifest whose ClusterRole they are given.
type rbacTarget struct {
	cluster   *localcluster.Cluster
	clientset kubernetes.Interface
	dynamic   dynamic.Interface
	manifest  string
}

// suiteRBAC is the acceptance tests' cluster with the Kubernetes path's example role.
func suiteRBAC() rbacTarget {
	return rbacTarget{cluster: acc.cluster, clientset: acc.clientset, dynamic: acc.dynamic, manifest: rbacManifest}
}

// rbacExample reads the ClusterRole and ClusterRoleBinding of an examples/rbac manifest.
func rbacExample(t *testing.T, manifest string) (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	t.Helper()
	f, err := os.Open(manifest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding %s: %v", manifest, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		switch u.GetKind() {
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				t.Fatal(err)
			}
		case "ClusterRoleBinding":
			binding = &rbacv1.ClusterRoleBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, binding); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: unexpected kind %s", manifest, u.GetKind())
		}
	}
	if role == nil || binding == nil {
		t.Fatalf("%s must hold a ClusterRole and a ClusterRoleBinding", manifest)
	}
	return role, binding
}

// rbacUser is a user whose only permissions come from its own copy of the example ClusterRole.
type rbacUser struct {
	t          *testing.T
	on         rbacTarget
	name       string
	groups     []string
	role       *rbacv1.ClusterRole
	full       []rbacv1.PolicyRule
	kubeconfig string
}

// newRBACUser creates user rbac-<suffix> in group hyperpod-provider-<suffix>, bound to the
// example ClusterRole (renamed hyperpod-provider-<suffix>) by the example binding (renamed
// likewise), applied with the admin client. Both are deleted when the test ends.
func newRBACUser(t *testing.T, suffix string) *rbacUser {
	t.Helper()
	if acc.cluster == nil {
		t.Skip("RBAC tests provision users with the local control plane's client CA; KUBE_CONFIG_PATH names an " +
			"external cluster, whose users this test cannot create (unset it to run against the local control plane)")
	}
	return newRBACUserOn(t, suiteRBAC(), suffix)
}

// newRBACUserOn is newRBACUser on another local control plane, with its manifest's role.
func newRBACUserOn(t *testing.T, on rbacTarget, suffix string) *rbacUser {
	t.Helper()
	role, binding := rbacExample(t, on.manifest)
	name := "hyperpod-provider-" + suffix
	role.Name, binding.Name, binding.RoleRef.Name = name, name, name
	for i := range binding.Subjects {
		binding.Subjects[i].Name = name
	}
	u := &rbacUser{t: t, on: on, name: "rbac-" + suffix, groups: []string{name, "system:authenticated"}, role: role,
		full: slices.Clone(role.Rules)}
	ctx := context.Background()
	for _, o := range []struct {
		gvr schema.GroupVersionResource
		obj any
	}{{gvrClusterRoles, role}, {gvrClusterRoleBindings, binding}} {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.obj)
		if err != nil {
			t.Fatal(err)
		}
		_ = on.dynamic.Resource(o.gvr).Delete(ctx, name, metav1.DeleteOptions{})
		if _, err := on.dynamic.Resource(o.gvr).Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", o.gvr.Resource, name, err)
		}
		t.Cleanup(func() {
			if err := on.dynamic.Resource(o.gvr).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s %s: %v", o.gvr.Resource, name, err)
			}
		})
	}
	path, err := on.cluster.AddUser(u.name, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	u.kubeconfig = path
	u.waitFor(u.full, "", "")
	return u
}

// provider is the provider block that authenticates as the user.
func (u *rbacUser) provider() string {
	return fmt.Sprintf("provider \"hyperpod\" {\n  config_path = %q\n}\n", u.kubeconfig)
}

// without returns the rules with verb removed from the rule of resource.
func without(rules []rbacv1.PolicyRule, resource, verb string) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	found := false
	for _, r := range rules {
		r = *r.DeepCopy()
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			found = true
			r.Verbs = slices.DeleteFunc(r.Verbs, func(v string) bool { return v == verb })
			if len(r.Verbs) == 0 {
				continue
			}
		}
		out = append(out, r)
	}
	if !found {
		panic(fmt.Sprintf("the example ClusterRole has no %s on %s", verb, resource))
	}
	return out
}

// setRules replaces the rules of the user's ClusterRole and waits until the authorizer uses
// them: every verb of rules allowed, and the removed one (when given) denied.
func (u *rbacUser) setRules(rules []rbacv1.PolicyRule, removedResource, removedVerb string) {
	t := u.t
	ctx := context.Background()
	cr, err := u.on.clientset.RbacV1().ClusterRoles().Get(ctx, u.role.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr.Rules = rules
	if _, err := u.on.clientset.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	u.waitFor(rules, removedResource, removedVerb)
}

func (u *rbacUser) waitFor(rules []rbacv1.PolicyRule, removedResource, removedVerb string) {
	t := u.t
	ctx := context.Background()
	// A rule with resourceNames allows only requests for those names: each is asked for.
	allowed := func(group, resource, verb string, names []string) bool {
		if len(names) == 0 {
			names = []string{""}
		}
		ok := true
		for _, name := range names {
			sar, err := u.on.clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{
				Spec: authzv1.SubjectAccessReviewSpec{User: u.name, Groups: u.groups,
					ResourceAttributes: &authzv1.ResourceAttributes{Group: group, Resource: resource, Verb: verb, Name: name}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ok = ok && sar.Status.Allowed
		}
		return ok
	}
	err := acctest.Eventually(ctx, 30*time.Second, "the authorizer using the rules of "+u.role.Name,
		func(context.Context) (bool, string, error) {
			for _, r := range rules {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						if !allowed(r.APIGroups[0], res, v, r.ResourceNames) {
							return false, fmt.Sprintf("%s of %s not allowed yet", v, res), nil
						}
					}
				}
			}
			if removedResource != "" {
				group, names := "", []string(nil)
				for _, r := range u.full {
					if slices.Contains(r.Resources, removedResource) {
						group, names = r.APIGroups[0], r.ResourceNames
					}
				}
				if allowed(group, removedResource, removedVerb, names) {
					return false, fmt.Sprintf("%s of %s still allowed", removedVerb, removedResource), nil
				}
			}
			return true, "", nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// Configurations of the RBAC tests, each named "test" like the other tests' configurations.

func rbacTeamNamespace(team, body string) string { return acctest.TeamNamespace(team).Body(body).HCL() }

func rbacTeamNamespaces(prefix string, n int) string {
	return fmt.Sprintf(`
resource "hyperpod_team_namespace" "many" {
  count = %d
  team  = "%s-${count.index}"
}
`, n, prefix)
}

func rbacQuota(team, instanceType string, count int) string {
	return fmt.Sprintf(`
resource "hyperpod_compute_quota" "test" {
  name = "%s-quota"
  team = %q
  resources = [{
    instance_type = %q
    count         = %d
  }]
}
`, team, team, instanceType, count)
}

func rbacClasses(prefix string, n int, weight int64) []quota.PriorityClass {
	var out []quota.PriorityClass
	for i := range n {
		out = append(out, quota.PriorityClass{Name: fmt.Sprintf("%s-%d", prefix, i), Weight: weight + int64(i)})
	}
	return out
}

func classNames(cs []quota.PriorityClass) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

const rbacCapacity = `
data "hyperpod_instance_type_capacity" "test" {
  instance_type = "ml.g5.12xlarge"
}
`

// rbacInstanceTypes are distinct instance types for tests that run in parallel: each
// quota's ResourceFlavor is its own, so one test's flavor cleanup never races another's create.
func rbacInstanceTypes() []string {
	var out []string
	for _, n := range catalog.Builtin().Names() {
		if strings.HasPrefix(n, "ml.g") || strings.HasPrefix(n, "ml.p") || strings.HasPrefix(n, "ml.c") || strings.HasPrefix(n, "ml.m") {
			out = append(out, n)
		}
	}
	return out
}

// cleanupFlavor deletes an instance type's ResourceFlavor when the test ends.
func cleanupFlavor(t *testing.T, instanceType string) {
	t.Cleanup(func() {
		err := acc.dynamic.Resource(kueue.ResourceFlavors).Delete(context.Background(), instanceType, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup of flavor %s: %v", instanceType, err)
		}
	})
}

func flavorExists(instanceType string) (bool, error) {
	_, err := acc.dynamic.Resource(kueue.ResourceFlavors).Get(context.Background(), instanceType, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// checkAllGone is a CheckDestroy: the team's Namespace and ClusterQueue and the classes are gone.
func checkAllGone(team string, classes []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if ns, err := tnsGetNamespace(quota.NamespaceName(team)); err != nil || ns != nil {
			return fmt.Errorf("namespace of %s still there after destroy (%v)", team, err)
		}
		if _, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(context.Background(), quota.ClusterQueueName(team), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ClusterQueue of %s still there after destroy (%v)", team, err)
		}
		for _, c := range classes {
			if u, err := getPriorityClass(quota.PriorityClassObjectName(c)); err != nil || u != nil {
				return fmt.Errorf("priority class %s still there after destroy (%v)", c, err)
			}
		}
		return nil
	}
}

// TestAccRBAC_leastPrivilege runs every resource and data source as a user that holds only the
// example ClusterRole: create, update, drift, import and destroy, and refreshes of 18 team
// namespaces, which read the 16th and later Namespace and LocalQueue with one LIST (priming).
func TestAccRBAC_leastPrivilege(t *testing.T) {
	acctest.RequireCluster(t)
	u := newRBACUser(t, "least")
	team := "rbac-least"
	it := "ml.g5.12xlarge"
	first := rbacClasses("rbac-least", quota.MaxPriorityClasses, 10)
	second := rbacClasses("rbac-least", quota.MaxPriorityClasses, 20)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	for j := range 17 {
		tnsCleanupNamespace(t, quota.NamespaceName(fmt.Sprintf("%s-many-%d", team, j)))
	}
	cleanupQueue(t, team)
	cleanupPriorityClasses(t, classNames(first)...)
	cleanupFlavor(t, it)

	cfg := func(label string, count int, classes []quota.PriorityClass) string {
		return u.provider() +
			rbacTeamNamespace(team, fmt.Sprintf("  labels = { tier = %q }", label)) +
			rbacTeamNamespaces(team+"-many", 17) +
			rbacQuota(team, it, count) +
			acctest.SchedulerConfig(classes...).HCL() + rbacCapacity + `
data "hyperpod_team_usage" "test" {
  team = hyperpod_compute_quota.test.team
}
`
	}
	const usage, capacity = "data.hyperpod_team_usage.test", "data.hyperpod_instance_type_capacity.test"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkAllGone(team, classNames(first)),
		Steps: []resource.TestStep{
			{
				Config: cfg("gold", 1, first),
				Check: resource.ComposeAggregateTestCheckFunc(
					tnsCheckCluster(team, map[string]string{"tier": "gold"}, nil),
					checkPriorityClasses(first),
					resource.TestCheckResourceAttrSet(usage, "active"),
					resource.TestCheckResourceAttrSet(capacity, "node_count"),
				),
			},
			{
				// Update every resource; the refresh before it reads 18 Namespaces and LocalQueues
				// (the 16th and later come from one LIST each: priming).
				Config: cfg("silver", 2, second),
				Check: resource.ComposeAggregateTestCheckFunc(
					tnsCheckCluster(team, map[string]string{"tier": "silver"}, nil),
					checkPriorityClasses(second),
					resource.TestCheckResourceAttr(quotaAddr, "resources.0.count", "2"),
				),
			},
			{
				// Drift made with the admin client is seen by the restricted user's refresh.
				PreConfig: func() {
					ctx := context.Background()
					if _, err := acc.clientset.CoreV1().Namespaces().Patch(ctx, quota.NamespaceName(team), ktypes.MergePatchType,
						[]byte(`{"metadata":{"labels":{"tier":"bronze"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
						t.Errorf("patching the namespace: %v", err)
					}
					if _, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Patch(ctx, quota.PriorityClassObjectName(second[3].Name),
						ktypes.MergePatchType, []byte(`{"value": 7}`), metav1.PatchOptions{}); err != nil {
						t.Errorf("patching the priority class: %v", err)
					}
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(tnsAddr, "labels.tier", "bronze"),
					resource.TestCheckResourceAttr(schedAddr, "priority_classes.3.weight", "7"),
				),
			},
			{
				// The apply repairs it.
				Config: cfg("silver", 2, second),
				Check: resource.ComposeAggregateTestCheckFunc(
					tnsCheckCluster(team, map[string]string{"tier": "silver"}, nil),
					checkPriorityClasses(second),
				),
			},
			{
				ResourceName: tnsAddr, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"owner_id", "drift"},
			},
			{
				ResourceName: quotaAddr, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "id",
				ImportStateVerifyIgnore:              []string{"timeouts", "owner_id", "drift"},
			},
			{
				ResourceName: schedAddr, ImportState: true, ImportStateId: strings.Join(classNames(second), ","),
				ImportStateVerify: true, ImportStateVerifyIgnore: []string{"owner_id", "drift"},
			},
		},
	})
}

// rbacCase removes one verb on one resource from the example ClusterRole and runs config.
type rbacCase struct {
	resource, verb string
	// variant tells cases of the same verb apart in the subtest name.
	variant string
	// setup is applied with the full role before the verb is removed ("": none); a destroy case
	// then destroys it without the verb.
	setup   func(team, instanceType string) string
	config  func(team, instanceType string) string
	destroy bool
	// wantErr is what the failing operation's diagnostic must say; empty for a verb the
	// provider does without (the whole lifecycle, destroy included, then runs without it).
	wantErr string
	// checkDestroy runs after the final destroy.
	checkDestroy func(team, instanceType string) error
}

func (c rbacCase) name() string {
	n := c.resource + "/" + c.verb
	if c.variant != "" {
		n += "/" + c.variant
	}
	return n
}

// needs is the provider's own hint, from kubeErrorDetail.
func needs(verb, resource string) string {
	return tnsPhrase(fmt.Sprintf("The provider's credentials need %s permission on %s", verb, resource))
}

// refused is the API server's Forbidden message, which names the verb and the resource itself.
func refused(verb, resource string) string {
	return tnsPhrase(fmt.Sprintf(`cannot %s resource "%s"`, verb, resource))
}

func rbacMissingCases() []rbacCase {
	tns := func(team, _ string) string { return rbacTeamNamespace(team, "") }
	many := func(team, _ string) string { return rbacTeamNamespaces(team, 17) }
	cq := func(team, it string) string { return rbacQuota(team, it, 1) }
	usage := func(team, it string) string {
		return rbacQuota(team, it, 1) + "\ndata \"hyperpod_team_usage\" \"test\" {\n  team = hyperpod_compute_quota.test.team\n}\n"
	}
	capacity := func(string, string) string { return rbacCapacity }
	sched := func(w int64) func(team, _ string) string {
		return func(team, _ string) string { return acctest.SchedulerConfig(rbacClasses(team, 1, w)...).HCL() }
	}
	// At most 10 classes per resource: one resource never reads enough for priming; this checks the
	// largest one without list.
	manyClasses := func(team, _ string) string {
		return acctest.SchedulerConfig(rbacClasses(team, quota.MaxPriorityClasses, 1)...).HCL()
	}
	flavorLeft := func(_, it string) error {
		if ok, err := flavorExists(it); err != nil || !ok {
			return fmt.Errorf("ResourceFlavor %s should be left behind (warning, not failure), found %t (%v)", it, ok, err)
		}
		return nil
	}
	const (
		ns, lq, cqs, rf, wpc = "namespaces", "localqueues", "clusterqueues", "resourceflavors", "workloadpriorityclasses"
		kq                   = ".kueue.x-k8s.io"
	)
	lqHint := needs("create and patch", lq+kq)
	return []rbacCase{
		{resource: ns, verb: "get", config: tns, wantErr: needs("get", ns)},
		{resource: ns, verb: "list", config: many},
		{resource: ns, verb: "watch", config: tns},
		{resource: ns, verb: "create", config: tns, wantErr: needs("create", ns)},
		{resource: ns, verb: "patch", config: tns, wantErr: needs("patch", ns)},
		// Not kubeErrorDetail: only the API server's Forbidden message names the verb and resource.
		{resource: ns, verb: "delete", setup: tns, destroy: true, wantErr: refused("delete", ns)},

		{resource: lq, verb: "get", config: tns, wantErr: needs("get", lq+kq)},
		{resource: lq, verb: "list", config: many},
		{resource: lq, verb: "watch", config: tns},
		// Gap: the server-side apply that creates the LocalQueue is refused with the message "unknown", and the
		// provider's hint names patch, not the missing create.
		{resource: lq, verb: "create", config: tns, wantErr: lqHint},
		{resource: lq, verb: "patch", config: tns, wantErr: lqHint},
		{resource: lq, verb: "delete", setup: tns, destroy: true, wantErr: refused("delete", lq)},

		{resource: cqs, verb: "get", config: usage, wantErr: needs("get", cqs+kq)},
		{resource: cqs, verb: "list", variant: "flavor-cleanup", config: cq, checkDestroy: flavorLeft},
		{resource: cqs, verb: "list", variant: "capacity", config: capacity, wantErr: tnsPhrase("need list permission on " + cqs + kq)},
		{resource: cqs, verb: "watch", config: cq},
		{resource: cqs, verb: "create", config: cq, wantErr: needs("create", cqs+kq)},
		{resource: cqs, verb: "patch", config: cq, wantErr: needs("patch", cqs+kq)},
		{resource: cqs, verb: "delete", setup: cq, destroy: true, wantErr: refused("delete", cqs)},

		{resource: rf, verb: "get", config: cq, wantErr: needs("get", rf+kq)},
		{resource: rf, verb: "list", config: cq},
		{resource: rf, verb: "watch", config: cq},
		// A missing flavor is created by server-side apply, which needs both verbs.
		{resource: rf, verb: "create", config: cq, wantErr: needs("create and patch", rf+kq)},
		{resource: rf, verb: "patch", config: cq, wantErr: needs("create and patch", rf+kq)},
		{resource: rf, verb: "delete", config: cq, checkDestroy: flavorLeft},

		{resource: wpc, verb: "get", config: sched(10), wantErr: needs("get", wpc+kq)},
		{resource: wpc, verb: "list", config: manyClasses},
		{resource: wpc, verb: "watch", config: sched(10)},
		{resource: wpc, verb: "create", config: sched(10), wantErr: needs("create", wpc+kq)},
		{resource: wpc, verb: "patch", setup: sched(10), config: sched(20), wantErr: needs("patch", wpc+kq)},
		{resource: wpc, verb: "delete", setup: sched(10), destroy: true, wantErr: needs("delete", wpc+kq)},

		{resource: "pods", verb: "list", setup: tns, destroy: true, wantErr: tnsPhrase("need list permission on pods")},
		{resource: "workloads", verb: "list", setup: tns, destroy: true, wantErr: tnsPhrase("need list permission on workloads" + kq)},
		{resource: "nodes", verb: "list", config: capacity, wantErr: tnsPhrase("need list permission on nodes")},
	}
}

// TestAccRBAC_missingRule removes each verb of the example ClusterRole in turn. An operation
// that needs it fails with a diagnostic naming the verb and the resource; one that can do
// without it (list for priming, watch, flavor cleanup) succeeds.
func TestAccRBAC_missingRule(t *testing.T) {
	acctest.RequireCluster(t)
	if acc.cluster == nil {
		t.Skip("RBAC tests provision users with the local control plane's client CA; KUBE_CONFIG_PATH names an external cluster")
	}
	// Every verb of the example role is covered by a case.
	cases := rbacMissingCases()
	checkEveryVerbCovered(t, rbacManifest, cases)
	types := rbacInstanceTypes()
	for i, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel()
			suffix := fmt.Sprintf("m%d", i)
			team, it := "rbac-"+suffix, types[i%len(types)]
			u := newRBACUser(t, suffix)
			tnsCleanupNamespace(t, quota.NamespaceName(team))
			for j := range 17 {
				tnsCleanupNamespace(t, quota.NamespaceName(fmt.Sprintf("%s-%d", team, j)))
			}
			cleanupQueue(t, team)
			cleanupPriorityClasses(t, classNames(rbacClasses(team, 17, 0))...)
			cleanupFlavor(t, it)
			runRBACCase(t, u, u.provider(), c, team, it)
		})
	}
}

// checkEveryVerbCovered fails for each verb of the manifest's role that no case removes, but the
// admission preview's reads, which the refused-read tests remove (admission_preview_rbac_test.go).
func checkEveryVerbCovered(t *testing.T, manifest string, cases []rbacCase) {
	t.Helper()
	role, _ := rbacExample(t, manifest)
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if !isPreviewRead(res, v) && !slices.ContainsFunc(cases, func(c rbacCase) bool { return c.resource == res && c.verb == v }) {
					t.Errorf("no case removes %s on %s", v, res)
				}
			}
		}
	}
}

// runRBACCase runs one case as user u (whose provider block is provider): the setup with the
// full role, then the configuration without the case's verb, then, after a failure, a destroy
// with the full role again.
func runRBACCase(t *testing.T, u *rbacUser, provider string, c rbacCase, team, it string) {
	reduced := without(u.full, c.resource, c.verb)
	reduce := func() { u.setRules(reduced, c.resource, c.verb) }
	restore := func() { u.setRules(u.full, "", "") }

	var steps []resource.TestStep
	if c.setup != nil {
		steps = append(steps, resource.TestStep{Config: provider + c.setup(team, it)})
	}
	config := c.config
	if config == nil {
		config = c.setup
	}
	step := resource.TestStep{PreConfig: reduce, Config: provider + config(team, it), Destroy: c.destroy}
	if c.setup == nil {
		reduce() // before the provider's first request
		step.PreConfig = nil
	}
	if c.wantErr != "" {
		step.ExpectError = regexp.MustCompile("(?s)" + c.wantErr)
	}
	steps = append(steps, step)
	if c.wantErr != "" {
		// Destroy what is left with the full role again.
		steps = append(steps, resource.TestStep{PreConfig: restore, Config: provider + config(team, it), Destroy: true})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    steps,
		CheckDestroy: func(*terraform.State) error {
			if c.checkDestroy != nil {
				return c.checkDestroy(team, it)
			}
			return nil
		},
	})
}
