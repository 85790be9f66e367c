package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const schedAddr = "hyperpod_cluster_scheduler_config.test"

// getPriorityClass reads a WorkloadPriorityClass by object name; nil when it does not exist.
func getPriorityClass(name string) (*unstructured.Unstructured, error) {
	u, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// cleanupPriorityClasses deletes the classes' WorkloadPriorityClasses before and after a test.
func cleanupPriorityClasses(t *testing.T, classes ...string) {
	del := func() {
		for _, c := range classes {
			err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Delete(context.Background(), quota.PriorityClassObjectName(c), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting priority class %s: %v", c, err)
			}
		}
	}
	del()
	t.Cleanup(del)
}

// createForeignPriorityClass creates a WorkloadPriorityClass as another tool would.
func createForeignPriorityClass(t *testing.T, class string, value int32) {
	t.Helper()
	u := acctest.MakeWorkloadPriorityClass(quota.PriorityClassObjectName(class)).Value(value).Unstructured()
	if _, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating priority class %s: %v", class, err)
	}
}

// checkPriorityClasses checks that each class exists with its weight as value, owned by the
// resource's owner_id, and that each of gone does not exist.
func checkPriorityClasses(want []quota.PriorityClass, gone ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[schedAddr]
		if !ok {
			return fmt.Errorf("%s not in state", schedAddr)
		}
		owner := rs.Primary.Attributes["owner_id"]
		for _, c := range want {
			u, err := getPriorityClass(quota.PriorityClassObjectName(c.Name))
			if err != nil || u == nil {
				return fmt.Errorf("priority class %s: not found (%v)", c.Name, err)
			}
			if v, _, _ := unstructured.NestedInt64(u.Object, "value"); v != c.Weight {
				return fmt.Errorf("priority class %s has value %d, want %d", c.Name, v, c.Weight)
			}
			if got := u.GetAnnotations()[quota.AnnotationOwner]; owner == "" || got != owner {
				return fmt.Errorf("priority class %s records owner %q, want the state's %q", c.Name, got, owner)
			}
			if got := u.GetLabels()[quota.LabelManagedBy]; got != quota.ManagedByValue {
				return fmt.Errorf("priority class %s managed-by label %q", c.Name, got)
			}
		}
		for _, c := range gone {
			if u, err := getPriorityClass(quota.PriorityClassObjectName(c)); err != nil || u != nil {
				return fmt.Errorf("priority class %s still exists (%v)", c, err)
			}
		}
		return nil
	}
}

func schedClass(i int, name string, weight int64) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(schedAddr, tfjsonpath.New("priority_classes").AtSliceIndex(i), knownvalue.ObjectExact(map[string]knownvalue.Check{
		"name": knownvalue.StringExact(name), "weight": knownvalue.Int64Exact(weight),
		"priority_class_name": knownvalue.StringExact(name + "-priority"),
	}))
}

// Create, drift (a changed value, a deleted class, an edited label), update (a class removed,
// one added, a weight changed), import by class names, and destroy.
func TestAccClusterSchedulerConfig_lifecycle(t *testing.T) {
	acctest.RequireCluster(t)
	cleanupPriorityClasses(t, "acc-inference", "acc-training", "acc-research")
	first := []quota.PriorityClass{{Name: "acc-inference", Weight: 100}, {Name: "acc-training", Weight: 50}}
	second := []quota.PriorityClass{{Name: "acc-inference", Weight: 90}, {Name: "acc-research", Weight: 0}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkPriorityClasses(nil, "acc-inference", "acc-training", "acc-research"),
		Steps: []resource.TestStep{
			{
				Config: acctest.SchedulerConfig(first...).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(schedAddr, tfjsonpath.New("id"), knownvalue.StringExact("acc-inference,acc-training")),
					plancheck.ExpectKnownValue(schedAddr, tfjsonpath.New("priority_classes").AtSliceIndex(1).AtMapKey("priority_class_name"),
						knownvalue.StringExact("acc-training-priority")),
					plancheck.ExpectUnknownValue(schedAddr, tfjsonpath.New("owner_id")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					schedClass(0, "acc-inference", 100), schedClass(1, "acc-training", 50),
					statecheck.ExpectKnownValue(schedAddr, tfjsonpath.New("drift"), knownvalue.ListExact(nil)),
				},
				Check: checkPriorityClasses(first),
			},
			{
				// Drift: the training class's value changed, the inference class deleted.
				PreConfig: func() {
					patch := []byte(`{"value": 7}`)
					if _, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Patch(context.Background(), "acc-training-priority",
						k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Errorf("patching: %v", err)
					}
					if err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Delete(context.Background(), "acc-inference-priority", metav1.DeleteOptions{}); err != nil {
						t.Errorf("deleting: %v", err)
					}
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(schedAddr, "priority_classes.#", "1"),
					resource.TestCheckResourceAttr(schedAddr, "priority_classes.0.name", "acc-training"),
					resource.TestCheckResourceAttr(schedAddr, "priority_classes.0.weight", "7"),
				),
			},
			{
				// The plan repairs both; an edited managed-by label is repaired too.
				PreConfig: func() {
					patch := []byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"someone"}}}`)
					if _, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Patch(context.Background(), "acc-training-priority",
						k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Errorf("patching: %v", err)
					}
				},
				Config: acctest.SchedulerConfig(first...).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(schedAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(schedAddr, tfjsonpath.New("drift"), knownvalue.ListExact(nil)),
				}},
				Check: checkPriorityClasses(first),
			},
			{
				Config: acctest.SchedulerConfig(second...).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(schedAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(schedAddr, tfjsonpath.New("id"), knownvalue.StringExact("acc-inference,acc-research")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{schedClass(0, "acc-inference", 90), schedClass(1, "acc-research", 0)},
				Check:             checkPriorityClasses(second, "acc-training"),
			},
			{
				ResourceName:            schedAddr,
				ImportState:             true,
				ImportStateId:           "acc-inference,acc-research",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"owner_id", "drift"},
			},
		},
	})
}

// The drift line of an edited label shows in the refreshed state.
func TestAccClusterSchedulerConfig_labelDrift(t *testing.T) {
	acctest.RequireCluster(t)
	cleanupPriorityClasses(t, "acc-labelled")
	classes := []quota.PriorityClass{{Name: "acc-labelled", Weight: 5}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.SchedulerConfig(classes...).HCL(), Check: checkPriorityClasses(classes)},
			{
				PreConfig: func() {
					patch := []byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":null}}}`)
					if _, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Patch(context.Background(), "acc-labelled-priority",
						k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Errorf("patching: %v", err)
					}
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(schedAddr, "drift.#", "1"),
					resource.TestCheckResourceAttr(schedAddr, "drift.0",
						`WorkloadPriorityClass "acc-labelled-priority" label app.kubernetes.io/managed-by is missing`),
				),
			},
			{Config: acctest.SchedulerConfig(classes...).HCL(), Check: checkPriorityClasses(classes)},
		},
	})
}

// A class that already exists, made by another tool, is refused on create with its owner
// named and left untouched; the classes the failed create made are saved to the state, tainted,
// and the next apply (here a destroy) deletes them. Importing it takes it over explicitly.
func TestAccClusterSchedulerConfig_existingClass(t *testing.T) {
	acctest.RequireCluster(t)
	cleanupPriorityClasses(t, "acc-fresh", "acc-taken")
	createForeignPriorityClass(t, "acc-taken", 42)
	classes := []quota.PriorityClass{{Name: "acc-fresh", Weight: 1}, {Name: "acc-taken", Weight: 2}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: acctest.SchedulerConfig(classes...).HCL(),
				ExpectError: regexp.MustCompile(`(?s)WorkloadPriorityClass already exists.*acc-taken-priority.*another tool.*terraform import` +
					`.*partly created.*` + tnsPhrase(`Written: WorkloadPriorityClass "acc-fresh-priority". Not written: WorkloadPriorityClass "acc-taken-priority"`)),
			},
			{
				Config: `# nothing`,
				Check: func(*terraform.State) error {
					if u, err := getPriorityClass("acc-fresh-priority"); err != nil || u != nil {
						return fmt.Errorf("the failed create left acc-fresh-priority behind (%v)", err)
					}
					u, err := getPriorityClass("acc-taken-priority")
					if err != nil || u == nil {
						return fmt.Errorf("the other tool's class is gone (%v)", err)
					}
					if v, _, _ := unstructured.NestedInt64(u.Object, "value"); v != 42 || len(u.GetAnnotations()) != 0 {
						return fmt.Errorf("the other tool's class was changed: value %d, annotations %v", v, u.GetAnnotations())
					}
					return nil
				},
			},
			{
				Config:             acctest.SchedulerConfig(quota.PriorityClass{Name: "acc-taken", Weight: 2}).HCL(),
				ResourceName:       schedAddr,
				ImportState:        true,
				ImportStateId:      "acc-taken",
				ImportStatePersist: true,
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					if len(s) != 1 || s[0].Attributes["priority_classes.0.weight"] != "42" {
						return fmt.Errorf("imported %v, want weight 42", s)
					}
					return nil
				},
			},
			{
				Config: acctest.SchedulerConfig(quota.PriorityClass{Name: "acc-taken", Weight: 2}).HCL(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(schedAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(schedAddr, tfjsonpath.New("owner_id")),
				}},
				Check: checkPriorityClasses([]quota.PriorityClass{{Name: "acc-taken", Weight: 2}}),
			},
		},
	})
}

// A class recorded for another owner is refused at plan time, naming that owner.
func TestAccClusterSchedulerConfig_foreignOwner(t *testing.T) {
	acctest.RequireCluster(t)
	cleanupPriorityClasses(t, "acc-owned")
	classes := []quota.PriorityClass{{Name: "acc-owned", Weight: 3}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.SchedulerConfig(classes...).HCL(), Check: checkPriorityClasses(classes)},
			{
				PreConfig: func() {
					patch := []byte(`{"metadata":{"annotations":{"` + quota.AnnotationOwner + `":"someone-else"}}}`)
					if _, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Patch(context.Background(), "acc-owned-priority",
						k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Errorf("patching: %v", err)
					}
				},
				Config:      acctest.SchedulerConfig(quota.PriorityClass{Name: "acc-owned", Weight: 4}).HCL(),
				ExpectError: regexp.MustCompile(`(?s)Priority class owned by another resource.*` + tnsPhrase(`owner_id "someone-else"`)),
			},
			{
				// Destroying leaves the other owner's class in place.
				PreConfig: func() {},
				Config:    `# nothing`,
				Check: func(*terraform.State) error {
					u, err := getPriorityClass("acc-owned-priority")
					if err != nil || u == nil {
						return fmt.Errorf("destroy deleted a class another owner records (%v)", err)
					}
					return nil
				},
			},
		},
	})
}

// Plan-time validation, before any API call.
func TestAccClusterSchedulerConfig_validation(t *testing.T) {
	acctest.RequireCluster(t)
	eleven := make([]quota.PriorityClass, 11)
	for i := range eleven {
		eleven[i] = quota.PriorityClass{Name: fmt.Sprintf("c%d", i), Weight: 1}
	}
	for _, tc := range []struct {
		name, config, want string
	}{
		{"duplicate", acctest.SchedulerConfig(quota.PriorityClass{Name: "a", Weight: 1}, quota.PriorityClass{Name: "a", Weight: 2}).HCL(),
			`(?s)Duplicate priority class.*priority_classes\[1\]\.name.*already declared at\s+priority_classes\[0\]`},
		{"weight", acctest.SchedulerConfig(quota.PriorityClass{Name: "a", Weight: 101}).HCL(), `(?s)weight.*between 0 and 100`},
		{"name", acctest.SchedulerConfig(quota.PriorityClass{Name: "Training", Weight: 1}).HCL(), `(?s)lower-case letters`},
		{"too many", acctest.SchedulerConfig(eleven...).HCL(), `(?s)priority_classes.*at most 10`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: tc.config, PlanOnly: true, ExpectError: regexp.MustCompile(tc.want)}},
			})
		})
	}
}

// An unknown class name plans: only what depends on it is unknown.
func TestAccClusterSchedulerConfig_unknownName(t *testing.T) {
	acctest.RequireCluster(t)
	cleanupPriorityClasses(t, "acc-known", "acc-later")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "name" {
  input = "acc-later"
}

resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [
    { name = "acc-known", weight = 10 },
    { name = terraform_data.name.output, weight = 20 },
  ]
}
`,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(schedAddr, tfjsonpath.New("priority_classes").AtSliceIndex(0).AtMapKey("priority_class_name"),
					knownvalue.StringExact("acc-known-priority")),
				plancheck.ExpectUnknownValue(schedAddr, tfjsonpath.New("priority_classes").AtSliceIndex(1).AtMapKey("priority_class_name")),
				plancheck.ExpectUnknownValue(schedAddr, tfjsonpath.New("id")),
			}},
			Check: checkPriorityClasses([]quota.PriorityClass{{Name: "acc-known", Weight: 10}, {Name: "acc-later", Weight: 20}}),
		}},
	})
}

// Within a team, a higher-priority job preempts a lower-priority one when the team's
// preempt_team_tasks is LowerPriority; with Never it waits for the lower one to finish.
func TestAccAdmission_priorityPreemption(t *testing.T) {
	acctest.RequireKueue(t)
	teams := []string{"e2e-prio-preempt", "e2e-prio-never"}
	e2eCleanup(t, teams...)
	cleanupPriorityClasses(t, "e2e-low", "e2e-high")
	team := func(name, preempt string) string {
		return e2eTeam(name, fmt.Sprintf(`  resources          = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  cohort             = %q
  resource_sharing   = { strategy = "DontLend" }
  preempt_team_tasks = %q
  depends_on         = [hyperpod_cluster_scheduler_config.test]`, name, preempt))
	}
	config := acctest.SchedulerConfig(quota.PriorityClass{Name: "e2e-low", Weight: 10}, quota.PriorityClass{Name: "e2e-high", Weight: 90}).HCL() +
		team("e2e-prio-preempt", "LowerPriority") + team("e2e-prio-never", "Never")
	priority := func(w *unstructured.Unstructured) int64 {
		p, _, _ := unstructured.NestedInt64(w.Object, "spec", "priority")
		return p
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				defer deleteAllWork(t, teams)
				for _, tm := range teams {
					submitJobWithPriority(t, tm, "low", "ml.g5.12xlarge", "e2e-low-priority", gpus("4"))
					w, err := workloadOf(tm, "low", admitted, time.Minute)
					if err != nil {
						return err
					}
					if p := priority(w); p != 10 {
						return fmt.Errorf("%s: low job has priority %d, want the class's weight 10", tm, p)
					}
					submitJobWithPriority(t, tm, "high", "ml.g5.12xlarge", "e2e-high-priority", gpus("4"))
				}
				// LowerPriority: the high job evicts the low one and is admitted.
				w, err := workloadOf("e2e-prio-preempt", "low", evicted, time.Minute)
				if err != nil {
					return err
				}
				if _, reason, msg := condition(w, "Evicted"); reason != "Preempted" {
					return fmt.Errorf("low job evicted for %q (%s), want Preempted", reason, msg)
				}
				if _, err := workloadOf("e2e-prio-preempt", "high", admitted, time.Minute); err != nil {
					return err
				}
				// Never: the high job waits and the low one keeps its quota.
				if _, err := workloadOf("e2e-prio-never", "high", pendingForQuota, time.Minute); err != nil {
					return err
				}
				if err := stillAdmitted("e2e-prio-never", "low", "e2e-prio-never", "high"); err != nil {
					return fmt.Errorf("with preempt_team_tasks = Never: %w", err)
				}
				return nil
			},
		}},
	})
}
