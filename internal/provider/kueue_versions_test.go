package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// serveKueueVersions makes every Kueue CRD of a cluster serve the versions served and store
// storage, and waits until the API server routes accordingly. Serving v1beta1 only is an older
// Kueue than v0.15; storing v1beta1 beside v1beta2 is Kueue v0.15.
func serveKueueVersions(t *testing.T, dyn dynamic.Interface, storage string, served ...string) {
	t.Helper()
	ctx := context.Background()
	list, err := dyn.Resource(crds).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing CRDs: %v", err)
	}
	for _, crd := range list.Items {
		if g, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); g != kueue.Group {
			continue
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			m := v.(map[string]any)
			name := m["name"].(string)
			m["served"], m["storage"] = slices.Contains(served, name), name == storage
		}
		if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(crds).Update(ctx, &crd, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating CRD %s: %v", crd.GetName(), err)
		}
	}
	servesV1beta2 := slices.Contains(served, kueue.Version)
	err = acctest.Eventually(ctx, 30*time.Second, fmt.Sprintf("the API server routing %s as the CRDs now say (served: %v)", kueue.ClusterQueues, served),
		func(ctx context.Context) (bool, string, error) {
			_, err := dyn.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{})
			return servesV1beta2 == (err == nil) && (servesV1beta2 || apierrors.IsNotFound(err)), fmt.Sprintf("a list answers %v", err), nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// A cluster whose Kueue serves only v1beta1 (before Kueue v0.15) is refused with the version
// needed: refresh fails instead of dropping the quota from state, create and import say what
// to upgrade. A cluster that stores v1beta1 without Kueue's conversion webhook loses fields
// renamed in v1beta2, and apply says so. It runs on a control plane of its own, without Kueue's
// manager, whose CRDs it changes.
func TestAccKueueVersions_v1beta1Only(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: runs with TF_ACC=1 (make test-acc), like every TestAcc test")
	}
	assets, err := localcluster.AssetsDirFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cluster, err := localcluster.Start(ctx, localcluster.Options{AssetsDir: assets, Fleet: []localcluster.NodeSpec{}})
	if err != nil {
		t.Fatalf("starting a second control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the second control plane: %v", err)
		}
	})
	dyn := dynamic.NewForConfigOrDie(cluster.RESTConfig)
	provider := fmt.Sprintf("provider \"hyperpod\" {\n  config_path = %q\n}\n", cluster.KubeconfigPath)
	config := provider + acctest.TeamNamespace("old-kueue").HCL() + acctest.Quota("old-kueue").Body(`
  resources  = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  depends_on = [hyperpod_team_namespace.test]`).HCL()
	notServed := func(resource string) *regexp.Regexp {
		return regexp.MustCompile(`(?s)does\s+not\s+serve\s+kueue\.x-k8s\.io/v1beta2\s+` + resource +
			`.*serves\s+kueue\.x-k8s\.io\s+v1beta1\s+only.*upgrade\s+Kueue\s+to\s+v0\.15\s+or\s+newer`)
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// Today's Kueue: v1beta2 stored (v0.15.0's CRDs store v1beta1, which needs its manager).
				PreConfig: func() { serveKueueVersions(t, dyn, kueue.Version, "v1beta1", kueue.Version) },
				Config:    config,
			},
			{
				// Kueue downgraded to v1beta1 only: the refresh fails, naming the version needed.
				PreConfig:   func() { serveKueueVersions(t, dyn, "v1beta1", "v1beta1") },
				Config:      config,
				PlanOnly:    true,
				ExpectError: notServed("(localqueues|clusterqueues)"),
			},
			{
				// Served again: the state still holds the quota and the namespace, so nothing changes.
				PreConfig: func() { serveKueueVersions(t, dyn, kueue.Version, "v1beta1", kueue.Version) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})

	// Create and import on a v1beta1-only cluster.
	v1beta1Queues := kueue.ClusterQueues
	v1beta1Queues.Version = "v1beta1"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() { serveKueueVersions(t, dyn, "v1beta1", "v1beta1") },
				Config: provider + acctest.Quota("old-kueue-new").Body(`
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]`).HCL(),
				ExpectError: notServed("clusterqueues"),
			},
			{
				// A v1beta1 queue of the team exists, but the provider cannot read it: the import
				// says why instead of claiming there is nothing to import.
				PreConfig: func() {
					u := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": kueue.Group + "/v1beta1", "kind": kueue.KindClusterQueue,
						"metadata": map[string]any{"name": quota.ClusterQueueName("old-kueue-v1")},
						"spec":     map[string]any{"namespaceSelector": map[string]any{}},
					}}
					if _, err := dyn.Resource(v1beta1Queues).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
						t.Errorf("creating a v1beta1 ClusterQueue: %v", err)
					}
				},
				Config: provider + acctest.Quota("old-kueue-v1").Body(`
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]`).HCL() + `
import {
  to = hyperpod_compute_quota.test
  id = "old-kueue-v1"
}
`,
				ExpectError: notServed("clusterqueues"),
			},
		},
	})

	// Kueue v0.15's CRDs without its manager: v1beta1 stored, no conversion webhook.
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() { serveKueueVersions(t, dyn, "v1beta1", "v1beta1", kueue.Version) },
			Config: provider + acctest.Quota("no-conversion").Resource("ml.g5.12xlarge").Count(1).Body(`
  resource_sharing = { strategy = "LendAndBorrow" }`).HCL(),
			ExpectError: regexp.MustCompile(`(?s)did not keep the ClusterQueue as written.*spec\.cohortName is "".*` +
				`store\s+kueue\.x-k8s\.io/v1beta1.*conversion\s+webhook`),
		}},
	})
}

// A cluster upgraded in place from the oldest supported Kueue, which stores v1beta1, to the
// add-on's: what the provider wrote while v1beta1 was the storage version reads back without a
// false diff and takes updates, and the provider never sends a request for v1beta1. It runs on
// a control plane of its own, whose Kueue it upgrades.
func TestAccKueueVersions_upgradedFromV1beta1Storage(t *testing.T) {
	acctest.RequireKueue(t)
	from := acctest.KueueAssets(t, localcluster.OldestKueueVersion)
	to := acctest.KueueAssets(t, localcluster.DefaultKueueVersion)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cluster, err := localcluster.Start(ctx, localcluster.Options{AssetsDir: from, Kueue: true})
	if err != nil {
		t.Fatalf("starting a control plane on Kueue %s: %v", localcluster.OldestKueueVersion, err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	dyn := dynamic.NewForConfigOrDie(cluster.RESTConfig)
	proxy, url := acctest.CountingProxyTo(t, cluster.RESTConfig)
	config := func(borrowLimit int) string {
		return acctest.ProviderHost(url) + acctest.TeamNamespace("upgraded").HCL() +
			acctest.Quota("upgraded").Resource("ml.g5.12xlarge").Count(2).Body(fmt.Sprintf(`
  resource_sharing = { strategy = "LendAndBorrow", borrow_limit = %d }
  depends_on       = [hyperpod_team_namespace.test]`, borrowLimit)).HCL() +
			acctest.SchedulerConfig().Class("training", 80).Class("inference", 20).HCL()
	}
	storedVersions := func(resource string) []any {
		crd, err := dyn.Resource(crds).Get(context.Background(), resource+"."+kueue.Group, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the %s CRD: %v", resource, err)
		}
		v, _, _ := unstructured.NestedSlice(crd.Object, "status", "storedVersions")
		return v
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(50),
				Check: func(*terraform.State) error {
					// Stored as v1beta1, through Kueue's conversion webhook, which keeps the cohort.
					for _, r := range []string{"clusterqueues", "localqueues", "resourceflavors", "workloadpriorityclasses"} {
						if got := storedVersions(r); len(got) != 1 || got[0] != "v1beta1" {
							return fmt.Errorf("%s stored as %v on Kueue %s, want [v1beta1]", r, got, localcluster.OldestKueueVersion)
						}
					}
					v1beta1Queues := kueue.ClusterQueues
					v1beta1Queues.Version = "v1beta1"
					cq, err := dyn.Resource(v1beta1Queues).Get(context.Background(), quota.ClusterQueueName("upgraded"), metav1.GetOptions{})
					if err != nil {
						return err
					}
					if cohort, _, _ := unstructured.NestedString(cq.Object, "spec", "cohort"); cohort == "" {
						return fmt.Errorf("the v1beta1 ClusterQueue has no spec.cohort: %v", cq.Object["spec"])
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					if err := cluster.UpgradeKueue(ctx, to, 0); err != nil {
						t.Fatalf("upgrading Kueue to %s: %v", localcluster.DefaultKueueVersion, err)
					}
					if got := storedVersions("workloadpriorityclasses"); len(got) != 2 {
						t.Errorf("workloadpriorityclasses stored as %v after the upgrade, want v1beta1 and v1beta2", got)
					}
				},
				Config: config(50),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				Config: config(30),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("hyperpod_compute_quota.test", plancheck.ResourceActionUpdate),
				}},
			},
		},
	})

	writes := 0
	for _, r := range proxy.Recorded() {
		if r.Class.Group != kueue.Group {
			continue
		}
		if r.Class.Version != kueue.Version {
			t.Errorf("the provider sent %s %s: it must read and write %s/%s only", r.Method, r.URI, kueue.Group, kueue.Version)
		}
		if r.Method != http.MethodGet {
			writes++
		}
	}
	if writes == 0 {
		t.Error("the proxy saw no write of a Kueue object: the version check above checked nothing")
	}
}
