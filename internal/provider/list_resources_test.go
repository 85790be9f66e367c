package provider

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// `terraform query` runs with the CLI harness: plugin-testing v1.16.0's Query steps list and check
// results, but do not run -generate-config-out.

// requireQueryCLI skips the test on a CLI without `terraform query` (Terraform before 1.14, or
// OpenTofu), saying which CLI ran and how to run it.
func requireQueryCLI(t *testing.T, c *tfCLI) {
	t.Helper()
	first := strings.TrimSpace(strings.SplitN(c.mustRun(time.Minute, "version").stdout, "\n", 2)[0])
	var major, minor int
	if _, err := fmt.Sscanf(first, "Terraform v%d.%d.", &major, &minor); err != nil || major < 1 || (major == 1 && minor < 14) {
		t.Skipf("terraform query needs Terraform 1.14 or later; %s is %q. Run with "+
			"TF_ACC_TERRAFORM_PATH=$(scripts/terraform-assets.sh), as make test's Terraform 1.15.0 phase does.", c.bin, first)
	}
}

// writeFile writes a file of the working directory; "" content removes it.
func (c *tfCLI) writeFile(name, content string) {
	c.t.Helper()
	path := filepath.Join(c.dir, name)
	if content == "" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			c.t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// readFile reads a file of the working directory.
func (c *tfCLI) readFile(name string) string {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

// queryResult is one list_resource_found message of `terraform query -json`.
type queryResult struct {
	Address        string                     `json:"address"`
	DisplayName    string                     `json:"display_name"`
	Identity       map[string]json.RawMessage `json:"identity"`
	ResourceType   string                     `json:"resource_type"`
	ResourceObject map[string]json.RawMessage `json:"resource_object"`
}

// identity is the result's identity attribute attr, as a string.
func (r queryResult) identity(attr string) string {
	var s string
	_ = json.Unmarshal(r.Identity[attr], &s)
	return s
}

// query runs `terraform query -json`: its results by list block address, and its diagnostics.
func (c *tfCLI) query(timeout time.Duration) (map[string][]queryResult, []tfDiagnostic) {
	c.t.Helper()
	r := c.mustRun(timeout, "query", "-json", "-no-color")
	results := map[string][]queryResult{}
	var diags []tfDiagnostic
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var m struct {
			Type       string        `json:"type"`
			Found      *queryResult  `json:"list_resource_found"`
			Diagnostic *tfDiagnostic `json:"diagnostic"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Type == "list_resource_found" && m.Found != nil:
			results[m.Found.Address] = append(results[m.Found.Address], *m.Found)
		case m.Type == "diagnostic" && m.Diagnostic != nil:
			diags = append(diags, *m.Diagnostic)
		}
	}
	return results, diags
}

// teamsListed are the identities' attr of results, sorted.
func teamsListed(results []queryResult, attr string) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.identity(attr))
	}
	sort.Strings(out)
	return out
}

// resultOf is the result whose identity attr is value.
func resultOf(t *testing.T, results []queryResult, attr, value string) queryResult {
	t.Helper()
	for _, r := range results {
		if r.identity(attr) == value {
			return r
		}
	}
	t.Fatalf("no result with %s %q among %v", attr, value, teamsListed(results, attr))
	return queryResult{}
}

// listedWithout checks the warning of an object listed without its configuration: it names the
// object and what an apply would change.
func listedWithout(t *testing.T, diags []tfDiagnostic, object string, change *regexp.Regexp) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == "warning" && d.Summary == "Listed without its configuration" && strings.Contains(d.Detail, object) {
			if !change.MatchString(d.Detail) {
				t.Errorf("the warning of %s does not say %s:\n%s", object, change, d.Detail)
			}
			return
		}
	}
	t.Errorf("no warning that %s is listed without its configuration among %+v", object, diags)
}

// generatedImports are the `to` addresses of the import blocks of a generated configuration.
func generatedImports(hcl string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\s*to\s*=\s*(\S+)`).FindAllStringSubmatch(hcl, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

// outsideTeam is a team's objects as another tool writes them, without anything of this
// provider's: a Namespace, its LocalQueue (feeding feeds, the team's ClusterQueue when empty),
// and a ClusterQueue of spec (none when nil).
type outsideTeam struct {
	team   string
	labels map[string]string
	feeds  string
	spec   *kueue.ClusterQueueSpec
}

// create writes the team's objects and removes them when the test ends.
func (o outsideTeam) create(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	nsName := quota.NamespaceName(o.team)
	labels := map[string]string{quota.LabelQuotaAllocationID: o.team, quota.LabelSageMakerManagedQueue: "true"}
	maps.Copy(labels, o.labels)
	tnsCleanupNamespace(t, nsName)
	if _, err := acc.clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName, Labels: labels}},
		metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", nsName, err)
	}
	feeds := o.feeds
	if feeds == "" {
		feeds = quota.ClusterQueueName(o.team)
	}
	tnsCreateLocalQueue(t, nsName, quota.LocalQueueName(o.team), feeds, nil)
	if o.spec == nil {
		return
	}
	cleanupQueue(t, o.team)
	cq := kueue.ClusterQueue{TypeMeta: kueue.TypeMeta(kueue.KindClusterQueue), ObjectMeta: metav1.ObjectMeta{Name: quota.ClusterQueueName(o.team)}, Spec: *o.spec}
	cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{quota.LabelQuotaAllocationID: o.team}}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cq)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.dynamic.Resource(kueue.ClusterQueues).Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ClusterQueue of %s: %v", o.team, err)
	}
}

// outsideFlavor creates the ResourceFlavor of an instance type unless it exists, and removes the
// one it created when the test ends: the provider never deletes a flavor it did not create.
func outsideFlavor(t *testing.T, instanceType string) {
	t.Helper()
	rf := acctest.MakeResourceFlavor(instanceType).Unstructured()
	_, err := acc.dynamic.Resource(kueue.ResourceFlavors).Create(context.Background(), rf, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
	case err != nil:
		t.Fatalf("creating ResourceFlavor %s: %v", instanceType, err)
	default:
		t.Cleanup(func() {
			err := acc.dynamic.Resource(kueue.ResourceFlavors).Delete(context.Background(), instanceType, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting ResourceFlavor %s: %v", instanceType, err)
			}
		})
	}
}

// cell is one resource of a flavor: its nominal quota and its borrowing and lending limits
// ("" leaves a limit unset).
func cell(name, nominal, borrow, lend string) kueue.ResourceQuota {
	r := kueue.ResourceQuota{Name: corev1.ResourceName(name), NominalQuota: k8sresource.MustParse(nominal)}
	if borrow != "" {
		b := k8sresource.MustParse(borrow)
		r.BorrowingLimit = &b
	}
	if lend != "" {
		l := k8sresource.MustParse(lend)
		r.LendingLimit = &l
	}
	return r
}

// renderedColumns are the resources a queue the provider renders covers, in its order.
var renderedColumns = []corev1.ResourceName{"cpu", "memory", "nvidia.com/gpu", "aws.amazon.com/neurondevice", "vpc.amazonaws.com/efa"}

// Queues, namespaces and priority classes made outside Terraform are adopted with `terraform
// query -generate-config-out`: the query lists them by team (the team prefix, cohort and
// instance type filters select), writes their configuration and import blocks, an apply imports
// and takes them over, and the next plan is empty. A queue with a second resource group and a
// namespace whose LocalQueue feeds another ClusterQueue are listed with a warning that says
// what an apply would change, and no configuration is generated for them.
func TestAccQuery_adoptsQueues(t *testing.T) {
	acctest.RequireCluster(t)
	cli := newTFCLI(t)
	requireQueryCLI(t, cli)
	outsideFlavor(t, "ml.g5.12xlarge")
	outsideFlavor(t, "ml.c5.4xlarge")
	weight := func(w string) *kueue.FairSharing {
		q := k8sresource.MustParse(w)
		return &kueue.FairSharing{Weight: &q}
	}
	preemption := func(within string) *kueue.ClusterQueuePreemption {
		return &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionAny, WithinClusterQueue: within,
			BorrowWithinCohort: &kueue.BorrowWithinCohort{Policy: kueue.PreemptionNever}}
	}
	hold := kueue.StopPolicyHold
	// alpha borrows as much again as its nominal quota; beta, stopped, neither lends nor borrows;
	// gamma is beta with a second resource group.
	alphaSpec := func() *kueue.ClusterQueueSpec {
		return &kueue.ClusterQueueSpec{CohortName: "qry-cohort", Preemption: preemption(kueue.PreemptionLowerPriority), FairSharing: weight("0"),
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: renderedColumns, Flavors: []kueue.FlavorQuotas{{Name: "ml.g5.12xlarge",
				Resources: []kueue.ResourceQuota{cell("cpu", "48", "48", ""), cell("memory", "192Gi", "192Gi", ""), cell("nvidia.com/gpu", "4", "4", ""),
					cell("aws.amazon.com/neurondevice", "0", "0", ""), cell("vpc.amazonaws.com/efa", "1", "1", "")}}}}}}
	}
	betaSpec := func() *kueue.ClusterQueueSpec {
		return &kueue.ClusterQueueSpec{CohortName: "qry-cohort", Preemption: preemption(kueue.PreemptionNever), FairSharing: weight("3"), StopPolicy: &hold,
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: renderedColumns, Flavors: []kueue.FlavorQuotas{{Name: "ml.c5.4xlarge",
				Resources: []kueue.ResourceQuota{cell("cpu", "8", "0", "0"), cell("memory", "16Gi", "0", "0"), cell("nvidia.com/gpu", "0", "0", "0"),
					cell("aws.amazon.com/neurondevice", "0", "0", "0"), cell("vpc.amazonaws.com/efa", "0", "0", "0")}}}}}}
	}
	gamma := betaSpec()
	gamma.CohortName, gamma.StopPolicy = "qry-other", nil
	gamma.ResourceGroups = append(gamma.ResourceGroups, kueue.ResourceGroup{CoveredResources: []corev1.ResourceName{"example.com/fpga"},
		Flavors: []kueue.FlavorQuotas{{Name: "ml.c5.4xlarge-fpga", Resources: []kueue.ResourceQuota{cell("example.com/fpga", "2", "", "")}}}})
	for _, o := range []outsideTeam{
		{team: "qry-alpha", labels: map[string]string{"tier": "gold"}, spec: alphaSpec()},
		{team: "qry-beta", spec: betaSpec()},
		{team: "qry-gamma", spec: gamma},
		{team: "qry-delta", feeds: "shared-clusterqueue"},
		{team: "other-omega", spec: alphaSpec()},
	} {
		o.create(t)
	}
	cleanupPriorityClasses(t, "qry-high", "qry-low")
	createForeignPriorityClass(t, "qry-high", 90)
	createForeignPriorityClass(t, "qry-low", 10)

	cli.writeConfig("provider \"hyperpod\" {}\n")
	cli.init()
	// The filters: the team prefix, the cohort (quotas and the namespaces of their teams), the
	// instance type.
	cli.writeFile("filters.tfquery.hcl", `
list "hyperpod_compute_quota" "in_cohort" {
  provider = hyperpod
  config {
    team_prefix = "qry-"
    cohort      = "qry-cohort"
  }
}

list "hyperpod_team_namespace" "with_c5" {
  provider = hyperpod
  config {
    team_prefix   = "qry-"
    instance_type = "ml.c5.4xlarge"
  }
}

list "hyperpod_compute_quota" "all" {
  provider = hyperpod
  config {
    team_prefix = "qry-"
  }
}
`)
	results, diags := cli.query(2 * time.Minute)
	if got := teamsListed(results["list.hyperpod_compute_quota.in_cohort"], "team"); !slices.Equal(got, []string{"qry-alpha", "qry-beta"}) {
		t.Errorf("quotas of cohort qry-cohort: %v", got)
	}
	if got := teamsListed(results["list.hyperpod_team_namespace.with_c5"], "team"); !slices.Equal(got, []string{"qry-beta", "qry-gamma"}) {
		t.Errorf("namespaces of teams with an ml.c5.4xlarge quota: %v", got)
	}
	// Without resource data, a queue the resource cannot hold is listed, with the warning.
	if got := teamsListed(results["list.hyperpod_compute_quota.all"], "team"); !slices.Equal(got, []string{"qry-alpha", "qry-beta", "qry-gamma"}) {
		t.Errorf("quotas of teams qry-*: %v", got)
	}
	listedWithout(t, diags, `ClusterQueue "hyperpod-ns-qry-gamma-clusterqueue"`, regexp.MustCompile(`(?s)resourceGroups has 2 groups, want 1.*listed with its identity only`))
	cli.writeFile("filters.tfquery.hcl", "")

	cli.writeFile("adopt.tfquery.hcl", `
list "hyperpod_compute_quota" "quota" {
  provider         = hyperpod
  include_resource = true
  config {
    team_prefix = "qry-"
  }
}

list "hyperpod_team_namespace" "namespace" {
  provider         = hyperpod
  include_resource = true
  config {
    team_prefix = "qry-"
  }
}

list "hyperpod_cluster_scheduler_config" "policy" {
  provider         = hyperpod
  include_resource = true
}
`)
	results, diags = cli.query(2 * time.Minute)
	quotas, namespaces, policy := results["list.hyperpod_compute_quota.quota"], results["list.hyperpod_team_namespace.namespace"],
		results["list.hyperpod_cluster_scheduler_config.policy"]
	// With resource data, what the resources cannot hold is left out, with the warning.
	if got := teamsListed(quotas, "team"); !slices.Equal(got, []string{"qry-alpha", "qry-beta"}) {
		t.Errorf("quotas listed: %v", got)
	}
	if got := teamsListed(namespaces, "team"); !slices.Equal(got, []string{"qry-alpha", "qry-beta", "qry-gamma"}) {
		t.Errorf("namespaces listed: %v", got)
	}
	if got := teamsListed(policy, "id"); !slices.Equal(got, []string{"qry-high,qry-low"}) {
		t.Errorf("scheduler config listed: %v", got)
	}
	if r := resultOf(t, quotas, "team", "qry-beta"); string(r.ResourceObject["activation_state"]) != `"Disabled"` ||
		string(r.ResourceObject["fair_share_weight"]) != "3" || !strings.Contains(string(r.ResourceObject["resource_sharing"]), `"DontLend"`) {
		t.Errorf("qry-beta's resource data: %v", r.ResourceObject)
	}
	if r := resultOf(t, namespaces, "team", "qry-alpha"); string(r.ResourceObject["labels"]) != `{"tier":"gold"}` {
		t.Errorf("qry-alpha's namespace labels: %s", r.ResourceObject["labels"])
	}
	listedWithout(t, diags, `ClusterQueue "hyperpod-ns-qry-gamma-clusterqueue"`, regexp.MustCompile(`(?s)resourceGroups has 2 groups, want 1.*left out of the results`))
	listedWithout(t, diags, `Namespace "hyperpod-ns-qry-delta"`, regexp.MustCompile(`feeds ClusterQueue "shared-clusterqueue"`))

	r := cli.mustRun(2*time.Minute, "query", "-generate-config-out=adopt.tf", "-no-color")
	generated := cli.readFile("adopt.tf")
	t.Logf("terraform query -generate-config-out:\n%s\ngenerated:\n%s", r.stdout, generated)
	if got, want := generatedImports(generated), []string{
		"hyperpod_cluster_scheduler_config.policy_0", "hyperpod_compute_quota.quota_0", "hyperpod_compute_quota.quota_1",
		"hyperpod_team_namespace.namespace_0", "hyperpod_team_namespace.namespace_1", "hyperpod_team_namespace.namespace_2",
	}; !slices.Equal(got, want) {
		t.Errorf("import blocks for %v, want %v", got, want)
	}
	cli.writeFile("adopt.tfquery.hcl", "")

	if r := cli.apply(5 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply of the generated configuration: %s", r)
	}
	// The apply imported each queue and took it over: it records the state's owner_id.
	owners := map[string]string{}
	for _, r := range cli.show() {
		if r.Type == "hyperpod_compute_quota" {
			owners[r.str("team")] = r.str("owner_id")
		}
	}
	for _, team := range []string{"qry-alpha", "qry-beta"} {
		cq, found := getClusterQueue(t, team)
		if !found || owners[team] == "" || cq.Annotations[quota.AnnotationOwner] != owners[team] || cq.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
			t.Errorf("%s: state owner_id %q, queue found %v with labels %v and annotations %v", team, owners[team], found, cq.Labels, cq.Annotations)
		}
	}
	if r := cli.plan(2 * time.Minute); r.exitCode != 0 {
		t.Errorf("the plan after adopting is not empty: %s", r)
	}
	if r := cli.destroy(5 * time.Minute); r.exitCode != 0 {
		t.Errorf("destroy: %s", r)
	}
}
