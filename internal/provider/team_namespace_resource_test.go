package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const tnsAddr = "hyperpod_team_namespace.test"

func tnsExpectName(attr, want string) plancheck.PlanCheck {
	return plancheck.ExpectKnownValue(tnsAddr, tfjsonpath.New(attr), knownvalue.StringExact(want))
}

func tnsState(attr string, v knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(tnsAddr, tfjsonpath.New(attr), v)
}

func tnsStringMap(m map[string]string) knownvalue.Check {
	checks := map[string]knownvalue.Check{}
	for k, v := range m {
		checks[k] = knownvalue.StringExact(v)
	}
	return knownvalue.MapExact(checks)
}

// tnsCheckCluster verifies the team's Namespace (the provider's labels, want labels and
// annotations present, absent keys gone) and its LocalQueue.
func tnsCheckCluster(team string, labels, annotations map[string]string, absent ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		nsName := quota.NamespaceName(team)
		ns, err := tnsGetNamespace(nsName)
		if err != nil || ns == nil {
			return fmt.Errorf("namespace %s: not found (%v)", nsName, err)
		}
		wantLabels := quota.NamespaceLabels(team)
		for k, v := range labels {
			wantLabels[k] = v
		}
		for k, v := range wantLabels {
			if got, ok := ns.Labels[k]; !ok || got != v {
				return fmt.Errorf("namespace %s label %s = %q (present %t), want %q", nsName, k, got, ok, v)
			}
		}
		for k, v := range annotations {
			if got, ok := ns.Annotations[k]; !ok || got != v {
				return fmt.Errorf("namespace %s annotation %s = %q (present %t), want %q", nsName, k, got, ok, v)
			}
		}
		for _, k := range absent {
			if v, ok := ns.Labels[k]; ok {
				return fmt.Errorf("namespace %s still has label %s=%q", nsName, k, v)
			}
			if v, ok := ns.Annotations[k]; ok {
				return fmt.Errorf("namespace %s still has annotation %s=%q", nsName, k, v)
			}
		}
		lq, err := tnsGetLocalQueue(nsName, quota.LocalQueueName(team))
		if err != nil || lq == nil {
			return fmt.Errorf("LocalQueue %s/%s: not found (%v)", nsName, quota.LocalQueueName(team), err)
		}
		if lq.Spec.ClusterQueue != quota.ClusterQueueName(team) {
			return fmt.Errorf("LocalQueue spec.clusterQueue = %q, want %q", lq.Spec.ClusterQueue, quota.ClusterQueueName(team))
		}
		if lq.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
			return fmt.Errorf("LocalQueue labels %v lack %s=%s", lq.Labels, quota.LabelManagedBy, quota.ManagedByValue)
		}
		return nil
	}
}

// tnsCheckGone verifies that the teams' Namespaces no longer exist (CheckDestroy and replacement).
func tnsCheckGone(teams ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		for _, team := range teams {
			ns, err := tnsGetNamespace(quota.NamespaceName(team))
			if err != nil {
				return err
			}
			if ns != nil {
				return fmt.Errorf("namespace %s still exists (phase %s, deletionTimestamp %v)", ns.Name, ns.Status.Phase, ns.DeletionTimestamp)
			}
		}
		return nil
	}
}

// Create with labels and annotations, update them in place, import both ways, replace on a
// team change.
func TestAccTeamNamespace_basic(t *testing.T) {
	const team, team2 = "nsacc-basic", "nsacc-basic-b"
	labels := map[string]string{"example.com/owner": "alice", "cost-center": "cc-42"}
	annotations := map[string]string{"example.com/contact": "alice@example.com"}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tnsCheckGone(team, team2),
		Steps: []resource.TestStep{
			{
				Config: acctest.TeamNamespace(team).Body(`
  labels = {
    "example.com/owner" = "alice"
    "cost-center"       = "cc-42"
  }
  annotations = {
    "example.com/contact" = "alice@example.com"
  }`).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionCreate),
					tnsExpectName("id", team),
					tnsExpectName("namespace", "hyperpod-ns-nsacc-basic"),
					tnsExpectName("local_queue_name", "hyperpod-ns-nsacc-basic-localqueue"),
					tnsExpectName("cluster_queue_name", "hyperpod-ns-nsacc-basic-clusterqueue"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					tnsState("id", knownvalue.StringExact(team)),
					tnsState("team", knownvalue.StringExact(team)),
					tnsState("namespace", knownvalue.StringExact("hyperpod-ns-nsacc-basic")),
					tnsState("local_queue_name", knownvalue.StringExact("hyperpod-ns-nsacc-basic-localqueue")),
					tnsState("cluster_queue_name", knownvalue.StringExact("hyperpod-ns-nsacc-basic-clusterqueue")),
					tnsState("force_destroy", knownvalue.Bool(false)),
					tnsState("labels", tnsStringMap(labels)),
					tnsState("annotations", tnsStringMap(annotations)),
				},
				Check: tnsCheckCluster(team, labels, annotations),
			},
			{
				// One label changes, one is removed, the annotations go: in place, and the
				// removed keys disappear from the cluster.
				Config: acctest.TeamNamespace(team).Body(`
  labels = {
    "example.com/owner" = "bob"
  }`).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
					tnsExpectName("namespace", "hyperpod-ns-nsacc-basic"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					tnsState("labels", tnsStringMap(map[string]string{"example.com/owner": "bob"})),
					tnsState("annotations", knownvalue.Null()),
				},
				Check: tnsCheckCluster(team, map[string]string{"example.com/owner": "bob"}, nil, "cost-center", "example.com/contact"),
			},
			{
				ResourceName:      tnsAddr,
				ImportState:       true,
				ImportStateId:     team,
				ImportStateVerify: true,
				// An import takes the objects over: owner_id is recorded anew by the next apply,
				// and drift says so until then (TestAccTeamNamespace_ownership checks both).
				ImportStateVerifyIgnore: []string{"owner_id", "drift"},
			},
			{
				// The import takes the namespace over: its plan updates, and says why.
				ResourceName:       tnsAddr,
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ImportStateId:      team,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(tnsAddr, tfjsonpath.New("owner_id")),
				}},
			},
			{
				Config: acctest.TeamNamespace(team2).Body(`
  labels = {
    "example.com/owner" = "bob"
  }`).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionReplace),
					tnsExpectName("id", team2),
					tnsExpectName("namespace", "hyperpod-ns-nsacc-basic-b"),
					tnsExpectName("local_queue_name", "hyperpod-ns-nsacc-basic-b-localqueue"),
					tnsExpectName("cluster_queue_name", "hyperpod-ns-nsacc-basic-b-clusterqueue"),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					tnsCheckCluster(team2, map[string]string{"example.com/owner": "bob"}, nil),
					tnsCheckGone(team),
				),
			},
		},
	})
}

// Out-of-band changes to what the resource manages show as an update and are restored;
// changes by other field managers do not show; a deleted Namespace is created again.
func TestAccTeamNamespace_drift(t *testing.T) {
	const team = "nsacc-drift"
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)
	labels := map[string]string{"example.com/owner": "alice"}
	annotations := map[string]string{"example.com/contact": "alice@example.com"}
	config := acctest.TeamNamespace(team).Body(`
  labels = {
    "example.com/owner" = "alice"
  }
  annotations = {
    "example.com/contact" = "alice@example.com"
  }`).HCL()
	expectUpdate := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
	}}
	ctx := context.Background()

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tnsCheckGone(team),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  tnsCheckCluster(team, labels, annotations),
			},
			{
				// A managed label changes value, the managed annotation and the LocalQueue go,
				// and the provider's own quota-allocation-id label is changed.
				PreConfig: func() {
					patch := fmt.Sprintf(`{"metadata":{"labels":{"example.com/owner":"mallory",%q:"someone-else"},"annotations":{"example.com/contact":null}}}`,
						quota.LabelQuotaAllocationID)
					if _, err := acc.clientset.CoreV1().Namespaces().Patch(ctx, nsName, k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
						t.Fatalf("patching namespace: %v", err)
					}
					tnsDeleteLocalQueue(t, nsName, lqName)
				},
				Config:           config,
				ConfigPlanChecks: expectUpdate,
				Check:            tnsCheckCluster(team, labels, annotations),
			},
			{
				// The managed-by label removed alone is drift too.
				PreConfig: func() {
					patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, quota.LabelManagedBy)
					if _, err := acc.clientset.CoreV1().Namespaces().Patch(ctx, nsName, k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
						t.Fatalf("patching namespace: %v", err)
					}
				},
				Config:           config,
				ConfigPlanChecks: expectUpdate,
				Check:            tnsCheckCluster(team, labels, annotations),
			},
			{
				// A LocalQueue that points at another ClusterQueue is recreated (the field is immutable).
				PreConfig: func() {
					tnsDeleteLocalQueue(t, nsName, lqName)
					tnsCreateLocalQueue(t, nsName, lqName, "someone-elses-clusterqueue",
						map[string]string{quota.LabelManagedBy: quota.ManagedByValue})
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
					tnsExpectName("cluster_queue_name", quota.ClusterQueueName(team)),
				}},
				Check: tnsCheckCluster(team, labels, annotations),
			},
			{
				// Labels and annotations another field manager adds are not drift and survive applies.
				PreConfig: func() {
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "v1", "kind": "Namespace",
						"metadata": map[string]any{
							"name":        nsName,
							"labels":      map[string]any{"other.example.com/tier": "gold"},
							"annotations": map[string]any{"other.example.com/note": "added by another tool"},
						},
					}}
					_, err := acc.dynamic.Resource(kube.Namespaces).Apply(ctx, nsName, obj, metav1.ApplyOptions{FieldManager: "another-tool"})
					if err != nil {
						t.Fatalf("server-side apply as another-tool: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: tnsCheckCluster(team,
					map[string]string{"example.com/owner": "alice", "other.example.com/tier": "gold"},
					map[string]string{"example.com/contact": "alice@example.com", "other.example.com/note": "added by another tool"}),
			},
			{
				// A Namespace deleted out of band is created again.
				PreConfig: func() { tnsDeleteNamespace(t, nsName) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionCreate),
				}},
				Check: tnsCheckCluster(team, labels, annotations, "other.example.com/tier"),
			},
		},
	})
}

// Create refuses a Namespace it did not create and shows how to import it; importing with an
// import block and applying adopts it.
func TestAccTeamNamespace_existingNamespace(t *testing.T) {
	const team = "nsacc-foreign"
	nsName := quota.NamespaceName(team)
	config := acctest.TeamNamespace(team).Body(`
  labels = {
    "example.com/owner" = "platform"
  }`).HCL()
	tnsCleanupNamespace(t, nsName)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tnsCheckGone(team),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
						Name: nsName,
						Labels: map[string]string{
							quota.LabelManagedBy:         "hyperpod-addon",
							quota.LabelQuotaAllocationID: team,
							"example.com/owner":          "platform",
						},
						Annotations: map[string]string{"example.com/note": "made by hand"},
					}}
					if _, err := acc.clientset.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
						t.Fatalf("creating namespace: %v", err)
					}
				},
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)Namespace already exists.*` +
					tnsPhrase(`Namespace "hyperpod-ns-nsacc-foreign" already exists and is managed by "hyperpod-addon"`) + `.*` +
					tnsPhrase(`terraform import hyperpod_team_namespace.<name> nsacc-foreign`) + `.*` +
					tnsPhrase(`import {`) + `.*` + tnsPhrase(`id = "nsacc-foreign"`)),
			},
			{
				// Import block plus apply: the import keeps the Namespace's own labels and
				// annotations, and the apply adds the provider's labels and the LocalQueue.
				Config: config + `
import {
  to = hyperpod_team_namespace.test
  id = "nsacc-foreign"
}
`,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
					tnsExpectName("namespace", nsName),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					tnsState("labels", tnsStringMap(map[string]string{"example.com/owner": "platform"})),
					tnsState("annotations", knownvalue.Null()),
				},
				Check: tnsCheckCluster(team, map[string]string{"example.com/owner": "platform"},
					map[string]string{"example.com/note": "made by hand"}),
			},
		},
	})
}

// Create refuses a Namespace that an earlier version of the provider wrote (it has the
// provider's labels but records no owner): any state may manage it, so only an import takes it.
func TestAccTeamNamespace_refusesUnrecordedNamespace(t *testing.T) {
	const team = "nsacc-unrecorded"
	nsName := quota.NamespaceName(team)
	tnsCleanupNamespace(t, nsName)

	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName, Labels: quota.NamespaceLabels(team)}}
				if _, err := acc.clientset.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
					t.Fatalf("creating namespace: %v", err)
				}
			},
			Config: acctest.TeamNamespace(team).HCL(),
			ExpectError: regexp.MustCompile(`(?s)Namespace already exists.*` +
				tnsPhrase(`Namespace "hyperpod-ns-nsacc-unrecorded" already exists and is managed by a Terraform state using an earlier version of this provider, which recorded no owner identity`) + `.*` +
				tnsPhrase(`terraform import hyperpod_team_namespace.<name> nsacc-unrecorded`)),
		}},
	})
}

// Reserved label and annotation keys and invalid teams fail at plan time, before any API call.
func TestAccTeamNamespace_validation(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: acctest.TeamNamespace("nsacc-invalid").Body(`
  labels = {
    "app.kubernetes.io/managed-by" = "me"
  }`).HCL(),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Reserved label key.*` + tnsPhrase(
					`"app.kubernetes.io/managed-by" is reserved: the provider sets this label itself`) + `.*` +
					tnsPhrase(`Remove it from labels`)),
			},
			{
				Config: acctest.TeamNamespace("nsacc-invalid").Body(`
  annotations = {
    "hyperpod.quotaworks.io/name" = "x"
  }`).HCL(),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Reserved annotation key.*` + tnsPhrase(
					`"hyperpod.quotaworks.io/name" is reserved: keys under "hyperpod.quotaworks.io/" are kept for the provider's own bookkeeping`)),
			},
			{
				Config:      acctest.TeamNamespace("ML_Research").HCL(),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Attribute team must be 1-40 lower-case letters.*got: ML_Research`),
			},
			{
				Config:      acctest.TeamNamespace(strings.Repeat("a", 41)).HCL(),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Attribute team string length must be between 1 and 40`),
			},
		},
	})
}

// The validation diagnostics carry the attribute path of the offending key.
func TestTeamNamespaceResource_validateConfigPaths(t *testing.T) {
	ctx := context.Background()
	r := &teamNamespaceResource{}
	var sresp fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &sresp)
	typ, ok := sresp.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatal("schema type is not an object")
	}
	strMap := func(m map[string]string) tftypes.Value {
		vals := map[string]tftypes.Value{}
		for k, v := range m {
			vals[k] = tftypes.NewValue(tftypes.String, v)
		}
		return tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, vals)
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	vals["team"] = tftypes.NewValue(tftypes.String, "ml")
	vals["labels"] = strMap(map[string]string{
		quota.LabelManagedBy:             "me",
		quota.LabelSageMakerManagedQueue: "true",
		"ok.example.com/fine":            "yes",
		"bad key":                        "x",
		"example.com/bad-value":          "has spaces",
	})
	vals["annotations"] = strMap(map[string]string{quota.AnnotationPrefix + "anything": "x", "example.com/ok": "any value at all"})

	req := fwresource.ValidateConfigRequest{Config: tfsdk.Config{Schema: sresp.Schema, Raw: tftypes.NewValue(typ, vals)}}
	var resp fwresource.ValidateConfigResponse
	r.ValidateConfig(ctx, req, &resp)

	got := map[string]string{}
	for _, d := range resp.Diagnostics {
		dp, ok := d.(diag.DiagnosticWithPath)
		if !ok {
			t.Errorf("diagnostic without a path: %s: %s", d.Summary(), d.Detail())
			continue
		}
		got[dp.Path().String()] = d.Summary()
	}
	want := map[string]string{
		path.Root("labels").AtMapKey(quota.LabelManagedBy).String():                     "Reserved label key",
		path.Root("labels").AtMapKey(quota.LabelSageMakerManagedQueue).String():         "Reserved label key",
		path.Root("labels").AtMapKey("bad key").String():                                "Invalid label key",
		path.Root("labels").AtMapKey("example.com/bad-value").String():                  "Invalid label value",
		path.Root("annotations").AtMapKey(quota.AnnotationPrefix + "anything").String(): "Reserved annotation key",
	}
	if len(got) != len(want) {
		t.Errorf("got %d diagnostics %v, want %d", len(got), got, len(want))
	}
	for p, summary := range want {
		if got[p] != summary {
			t.Errorf("at %s: got %q, want %q", p, got[p], summary)
		}
	}
	if p := path.Root("labels").AtMapKey(quota.LabelManagedBy).String(); p != `labels["app.kubernetes.io/managed-by"]` {
		t.Errorf("path renders as %s", p)
	}
}

// One owner per team, for namespaces: a second state declaring the team is refused with the
// owner named; a namespace that records another owner refuses the plan of the first state, and
// destroying the first state leaves it alone. Empty maps are kept as written.
func TestAccTeamNamespace_ownership(t *testing.T) {
	const team = "nsacc-owner"
	nsName := quota.NamespaceName(team)
	tnsCleanupNamespace(t, nsName)
	cfg := acctest.TeamNamespace(team).Body("  labels = {}\n  annotations = {}").HCL()
	// Not parallel: a step runs a second, independent test case (another state) inside it.
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			ns, err := tnsGetNamespace(nsName)
			if err != nil || ns == nil || ns.Annotations[quota.AnnotationOwner] != "someone-else" {
				return fmt.Errorf("destroying a resource that no longer owns the namespace must leave it: %v %v", ns, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					tnsState("labels", knownvalue.MapExact(map[string]knownvalue.Check{})),
					tnsState("annotations", knownvalue.MapExact(map[string]knownvalue.Check{})),
					tnsState("drift", knownvalue.ListExact([]knownvalue.Check{})),
				},
				Check: tnsCheckOwnerRecorded(team),
			},
			{
				PreConfig: func() {
					resource.Test(t, resource.TestCase{
						ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
						Steps: []resource.TestStep{{
							Config: acctest.TeamNamespace(team).HCL(),
							ExpectError: regexp.MustCompile(`(?s)Namespace already exists.*` +
								tnsPhrase(`managed by another Terraform resource (owner_id "`) + `.*` +
								tnsPhrase(`terraform import hyperpod_team_namespace.<name> nsacc-owner`)),
						}},
					})
				},
				Config:   cfg,
				PlanOnly: true,
				Check:    tnsCheckOwnerRecorded(team),
			},
			{
				PreConfig: func() {
					_, err := acc.clientset.CoreV1().Namespaces().Patch(context.Background(), nsName, k8stypes.MergePatchType,
						[]byte(`{"metadata":{"annotations":{"`+quota.AnnotationOwner+`":"someone-else"}}}`), metav1.PatchOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:      cfg,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Team owned by another resource.*` + tnsPhrase(`owner_id "someone-else"`)),
			},
		},
	})
}

// Every attribute may be unknown or null at plan time: a new team namespace plans without the
// cluster (the provider points at an unreachable host), the names follow team when it is known
// and are unknown when it is not, and configured values stay as written.
func TestAccTeamNamespace_unknownAndNull(t *testing.T) {
	known := func(attr, want string) plancheck.PlanCheck { return tnsExpectName(attr, want) }
	unknown := func(attr string) plancheck.PlanCheck {
		return plancheck.ExpectUnknownValue(tnsAddr, tfjsonpath.New(attr))
	}
	named := []plancheck.PlanCheck{
		known("id", "nsacc-unknown"), known("namespace", "hyperpod-ns-nsacc-unknown"),
		known("local_queue_name", "hyperpod-ns-nsacc-unknown-localqueue"),
		known("cluster_queue_name", "hyperpod-ns-nsacc-unknown-clusterqueue"),
		unknown("owner_id"),
		plancheck.ExpectKnownValue(tnsAddr, tfjsonpath.New("drift"), knownvalue.ListExact([]knownvalue.Check{})),
	}
	cases := []struct {
		name, body string
		checks     []plancheck.PlanCheck
	}{
		{"team", `team = terraform_data.v.output.team`, []plancheck.PlanCheck{
			unknown("id"), unknown("namespace"), unknown("local_queue_name"), unknown("cluster_queue_name"), unknown("owner_id"),
		}},
		{"labels", `team = "nsacc-unknown"
  labels = terraform_data.v.output.labels`, append(named, unknown("labels"))},
		{"label value", `team = "nsacc-unknown"
  labels = { "example.com/owner" = terraform_data.v.output.owner }`, append(named,
			plancheck.ExpectUnknownValue(tnsAddr, tfjsonpath.New("labels").AtMapKey("example.com/owner")))},
		{"annotations", `team = "nsacc-unknown"
  annotations = terraform_data.v.output.labels`, append(named, unknown("annotations"))},
		{"annotation value", `team = "nsacc-unknown"
  annotations = { "example.com/note" = terraform_data.v.output.owner }`, append(named,
			plancheck.ExpectUnknownValue(tnsAddr, tfjsonpath.New("annotations").AtMapKey("example.com/note")))},
		{"force_destroy", `team = "nsacc-unknown"
  force_destroy = terraform_data.v.output.force`, append(named, unknown("force_destroy"))},
		{"all null", `team = "nsacc-unknown"`, append(named,
			plancheck.ExpectKnownValue(tnsAddr, tfjsonpath.New("labels"), knownvalue.Null()),
			plancheck.ExpectKnownValue(tnsAddr, tfjsonpath.New("annotations"), knownvalue.Null()),
			plancheck.ExpectKnownValue(tnsAddr, tfjsonpath.New("force_destroy"), knownvalue.Bool(false)))},
		{"empty maps", `team = "nsacc-unknown"
  labels = {}
  annotations = {}`, append(named,
			plancheck.ExpectKnownValue(tnsAddr, tfjsonpath.New("labels"), knownvalue.MapExact(map[string]knownvalue.Check{})),
			plancheck.ExpectKnownValue(tnsAddr, tfjsonpath.New("annotations"), knownvalue.MapExact(map[string]knownvalue.Check{})))},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{
			Config: unreachableProvider + `
resource "terraform_data" "v" {
  input = { team = "nsacc-unknown", labels = { a = "b" }, owner = "bob", force = true }
}

resource "hyperpod_team_namespace" "test" {
  ` + c.body + `
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks:   resource.ConfigPlanChecks{PostApplyPostRefresh: c.checks},
		})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
}
