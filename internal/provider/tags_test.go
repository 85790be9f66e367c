package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// tagsHCL is a tags attribute line of the given tags ("" for none).
func tagsHCL(tags map[string]string) string {
	if tags == nil {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		parts = append(parts, fmt.Sprintf("%q = %q", k, tags[k]))
	}
	return "  tags = { " + strings.Join(parts, ", ") + " }"
}

// tagsExact checks a tags map attribute.
func tagsExact(want map[string]string) knownvalue.Check {
	if want == nil {
		return knownvalue.Null()
	}
	checks := map[string]knownvalue.Check{}
	for k, v := range want {
		checks[k] = knownvalue.StringExact(v)
	}
	return knownvalue.MapExact(checks)
}

func stateTags(addr string, tags, all map[string]string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("tags"), tagsExact(tags)),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("tags_all"), tagsExact(all)),
	}
}

// plannedUpdateWithTags expects an update (never a replacement) whose tags_all is known at plan time.
func plannedUpdateWithTags(addr string, all map[string]string) resource.ConfigPlanChecks {
	return preApply(plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
		plancheck.ExpectKnownValue(addr, tfjsonpath.New("tags_all"), tagsExact(all)))
}

// annotatedTags checks the tags annotation of an object's metadata.
func annotatedTags(what string, meta metav1.ObjectMeta, want map[string]string) error {
	got, err := quota.TagsOf(meta)
	if err != nil {
		return err
	}
	if len(got) == 0 && len(want) == 0 {
		if _, ok := meta.Annotations[quota.AnnotationTags]; ok {
			return fmt.Errorf("%s keeps annotation %s without tags", what, quota.AnnotationTags)
		}
		return nil
	}
	if !maps.Equal(got, want) {
		return fmt.Errorf("%s carries tags %v, want %v", what, got, want)
	}
	return nil
}

// Tags on the Kubernetes path: kept in the ClusterQueue's tags annotation, planned at plan time,
// changed (added, modified, removed) by an update, an edited annotation is drift the next apply
// repairs, and import reads them back so the configuration plans empty.
func TestAccComputeQuota_tags(t *testing.T) {
	const team = "qacc-tags"
	cleanupQueue(t, team)
	cfg := func(tags map[string]string) string {
		return acctest.Quota(team).Resource("ml.g5.12xlarge").Count(1).Body(tagsHCL(tags)).HCL()
	}
	first := map[string]string{"team": "ml", "env": "prod"}
	second := map[string]string{"team": "ml", "env": "dev", "cost-center": "42"}
	queueTags := func(want map[string]string) resource.TestCheckFunc {
		return checkQueue(t, team, func(cq kueue.ClusterQueue) error { return annotatedTags("ClusterQueue", cq.ObjectMeta, want) })
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{
				Config:            cfg(first),
				ConfigPlanChecks:  preApply(plancheck.ExpectKnownValue(quotaAddr, tfjsonpath.New("tags_all"), tagsExact(first))),
				ConfigStateChecks: stateTags(quotaAddr, first, first),
				Check:             queueTags(first),
			},
			{Config: cfg(second), ConfigPlanChecks: plannedUpdateWithTags(quotaAddr, second), ConfigStateChecks: stateTags(quotaAddr, second, second), Check: queueTags(second)},
			{
				PreConfig: func() {
					patchQueue(t, team, `{"metadata":{"annotations":{"`+quota.AnnotationTags+`":"{\"env\":\"test\",\"team\":\"ml\"}"}}}`)
				},
				Config: cfg(second), ConfigPlanChecks: plannedUpdateWithTags(quotaAddr, second), Check: queueTags(second),
			},
			{
				Config: cfg(second), ResourceName: quotaAddr, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "id", ImportStateVerifyIgnore: []string{"timeouts", "owner_id", "drift"},
			},
			{Config: cfg(nil), ConfigPlanChecks: plannedUpdateWithTags(quotaAddr, map[string]string{}), ConfigStateChecks: stateTags(quotaAddr, nil, map[string]string{}), Check: queueTags(nil)},
			{Config: cfg(nil), ConfigPlanChecks: preApply(plancheck.ExpectEmptyPlan())},
		},
	})
}

// Tags are checked at plan time, at their key, without the cluster.
func TestAccComputeQuota_tagsValidation(t *testing.T) {
	cfg := func(tags string) string {
		return acctest.ProviderHost("https://127.0.0.1:1") + acctest.Quota("qacc-tags-invalid").Resource("ml.g5.12xlarge").Count(1).Body(tags).HCL()
	}
	var fiftyOne []string
	for i := range quota.MaxTags + 1 {
		fiftyOne = append(fiftyOne, fmt.Sprintf("k%d = \"v\"", i))
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg(`  tags = { "aws:owner" = "x" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Reserved tag key.*tags\["aws:owner"\]`)},
			{Config: cfg(`  tags = { "k" = "` + strings.Repeat("v", quota.MaxTagValueLength+1) + `" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`Invalid tag value`)},
			{Config: cfg(`  tags = { "a*b" = "v" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`Invalid tag key`)},
			{Config: cfg(`  tags = { k = null }`), PlanOnly: true, ExpectError: regexp.MustCompile(`Tag without a value`)},
			{Config: cfg(`  tags = { ` + strings.Join(fiftyOne, ", ") + ` }`), PlanOnly: true, ExpectError: regexp.MustCompile(`Too many tags`)},
		},
	})
}

// Tags on the Kubernetes path's scheduler config: each WorkloadPriorityClass it writes carries
// them in the tags annotation; changed by an update, repaired after an edit, read back by import.
func TestAccClusterSchedulerConfig_tags(t *testing.T) {
	acctest.RequireCluster(t)
	classes := []quota.PriorityClass{{Name: "acc-tagged-a", Weight: 7}, {Name: "acc-tagged-b", Weight: 3}}
	cleanupPriorityClasses(t, "acc-tagged-a", "acc-tagged-b")
	cfg := func(tags map[string]string) string {
		return strings.Replace(acctest.SchedulerConfig(classes...).HCL(), "  priority_classes = [", tagsHCL(tags)+"\n  priority_classes = [", 1)
	}
	first := map[string]string{"owner": "platform"}
	second := map[string]string{"owner": "ml-platform", "env": "prod"}
	classTags := func(want map[string]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for _, c := range classes {
				u, err := getPriorityClass(quota.PriorityClassObjectName(c.Name))
				if err != nil || u == nil {
					return fmt.Errorf("class %s: %v", c.Name, err)
				}
				if err := annotatedTags("WorkloadPriorityClass "+u.GetName(), metav1.ObjectMeta{Annotations: u.GetAnnotations()}, want); err != nil {
					return err
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkPriorityClasses(nil, "acc-tagged-a", "acc-tagged-b"),
		Steps: []resource.TestStep{
			{Config: cfg(first), ConfigStateChecks: stateTags(schedAddr, first, first), Check: classTags(first)},
			{Config: cfg(second), ConfigPlanChecks: plannedUpdateWithTags(schedAddr, second), ConfigStateChecks: stateTags(schedAddr, second, second), Check: classTags(second)},
			{
				PreConfig: func() {
					patch := `{"metadata":{"annotations":{"` + quota.AnnotationTags + `":"{\"owner\":\"someone-else\"}"}}}`
					if _, err := acc.dynamic.Resource(kueue.WorkloadPriorityClasses).Patch(context.Background(), "acc-tagged-b-priority",
						ktypes.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
						t.Errorf("patching: %v", err)
					}
				},
				Config: cfg(second), ConfigPlanChecks: plannedUpdateWithTags(schedAddr, second), Check: classTags(second),
			},
			{
				Config: cfg(second), ResourceName: schedAddr, ImportState: true, ImportStateId: "acc-tagged-a,acc-tagged-b",
				ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts", "owner_id", "drift"},
			},
			{Config: cfg(nil), ConfigPlanChecks: plannedUpdateWithTags(schedAddr, map[string]string{}), Check: classTags(nil)},
		},
	})
}

// tgProviderWithDefaultTags is the task_governance provider block with default_tags.
func tgProviderWithDefaultTags(tg *acctest.TaskGovernance, defaults map[string]string) string {
	block := "    default_tags {\n    " + tagsHCL(defaults) + "\n    }\n"
	return strings.Replace(tg.ProviderHCL(), "  task_governance {\n", "  task_governance {\n"+block, 1)
}

// Tags on the SageMaker path: sent with the create, merged over default_tags (the resource's own
// win) and known at plan time; a change goes through AddTags and DeleteTags by ARN and leaves
// the quota's definition (and version) alone; a tag changed in the API is drift the next apply
// repairs; import reads them back into tags without the defaults, so the configuration plans
// empty; a refresh of an untagged quota makes no ListTags request.
func TestAccTaskGovernance_tags(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	const team = "tg-tags"
	defaults := map[string]string{"env": "prod", "owner": "platform"}
	cfg := func(tags map[string]string) string {
		return tgProviderWithDefaultTags(tg, defaults) + acctest.Quota(team).Resource("ml.g5.12xlarge").Accelerators(1).Body(tagsHCL(tags)).HCL()
	}
	own := map[string]string{"team": "ml", "env": "dev"}
	all := map[string]string{"team": "ml", "env": "dev", "owner": "platform"}
	changed := map[string]string{"team": "ml-research", "cost-center": "42"}
	changedAll := map[string]string{"team": "ml-research", "cost-center": "42", "env": "prod", "owner": "platform"}
	apiTags := func(want map[string]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got, err := tg.Emulator.TagsOf(emulatorQuota(t, tg, team).ARN)
			if err != nil || !maps.Equal(got, want) {
				return fmt.Errorf("the API holds tags %v (%v), want %v", got, err, want)
			}
			return nil
		}
	}
	version := func(v int64) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("version"), knownvalue.Int64Exact(v))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tgTeamHoldsNothing(tg, team),
		Steps: []resource.TestStep{
			{
				Config:            cfg(own),
				ConfigPlanChecks:  preApply(plancheck.ExpectKnownValue(tgQuota, tfjsonpath.New("tags_all"), tagsExact(all))),
				ConfigStateChecks: append(stateTags(tgQuota, own, all), version(1)),
				Check:             apiTags(all),
			},
			{
				PreConfig: tg.Emulator.ResetCalls,
				Config:    cfg(changed), ConfigPlanChecks: plannedUpdateWithTags(tgQuota, changedAll),
				ConfigStateChecks: append(stateTags(tgQuota, changed, changedAll), version(1)),
				Check: resource.ComposeAggregateTestCheckFunc(apiTags(changedAll), func(*terraform.State) error {
					if n := tg.Emulator.CallCounts()["UpdateComputeQuota"]; n != 0 {
						return fmt.Errorf("a change of tags only sent %d UpdateComputeQuota", n)
					}
					return nil
				}),
			},
			{
				PreConfig: func() {
					drifted := maps.Clone(changedAll)
					drifted["team"] = "someone-else"
					delete(drifted, "owner")
					if err := tg.Emulator.SetTags(emulatorQuota(t, tg, team).ARN, drifted); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg(changed), ConfigPlanChecks: plannedUpdateWithTags(tgQuota, changedAll),
				ConfigStateChecks: stateTags(tgQuota, changed, changedAll), Check: apiTags(changedAll),
			},
			{
				ResourceName: tgQuota, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"owner_id", "timeouts", "drift"},
			},
			{Config: cfg(nil), ConfigPlanChecks: plannedUpdateWithTags(tgQuota, defaults), ConfigStateChecks: stateTags(tgQuota, nil, defaults), Check: apiTags(defaults)},
		},
	})
}

// A refresh reads tags (ListTags) only of a quota whose state holds some: a workspace that sets
// no tags makes no more requests than before tags existed.
func TestAccTaskGovernance_tagsReadOnlyWhereHeld(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	const team = "tg-untagged"
	cfg := func(tags string) string {
		return tg.ProviderHCL() + acctest.Quota(team).Resource("ml.g5.12xlarge").Accelerators(1).Body(tags).HCL()
	}
	listTags := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			if n := tg.Emulator.CallCounts()["ListTags"]; n != want {
				return fmt.Errorf("the refresh sent %d ListTags, want %d", n, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg(""), ConfigStateChecks: stateTags(tgQuota, nil, map[string]string{})},
			{PreConfig: tg.Emulator.ResetCalls, RefreshState: true, Check: listTags(0)},
			{Config: cfg(`  tags = { team = "ml" }`)},
			{PreConfig: tg.Emulator.ResetCalls, RefreshState: true, Check: listTags(1)},
		},
	})
}

// The SageMaker path's scheduler config: tags merged over default_tags, sent with the create,
// changed by key without touching the config's version, repaired after a change in the API,
// and read back by import.
func TestAccTaskGovernance_tagsSchedulerConfig(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	defaults := map[string]string{"env": "prod"}
	cfg := func(tags map[string]string) string {
		return tgProviderWithDefaultTags(tg, defaults) + fmt.Sprintf(`
resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [{ name = "tg-high", weight = 100 }]
%s
}`, tagsHCL(tags))
	}
	own := map[string]string{"owner": "platform"}
	all := map[string]string{"owner": "platform", "env": "prod"}
	changed := map[string]string{"owner": "ml", "env": "dev"}
	apiTags := func(want map[string]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got, err := tg.Emulator.TagsOf(emulatorSchedulerConfig(t, tg).ARN)
			if err != nil || !maps.Equal(got, want) {
				return fmt.Errorf("the API holds tags %v (%v), want %v", got, err, want)
			}
			return nil
		}
	}
	version := func(v int64) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(tgSchedulerConfig, tfjsonpath.New("version"), knownvalue.Int64Exact(v))
	}
	resource.Test(t, tgSchedulerCase(tg, []resource.TestStep{
		{Config: cfg(own), ConfigStateChecks: append(stateTags(tgSchedulerConfig, own, all), version(1)), Check: apiTags(all)},
		{
			Config: cfg(changed), ConfigPlanChecks: plannedUpdateWithTags(tgSchedulerConfig, changed),
			ConfigStateChecks: append(stateTags(tgSchedulerConfig, changed, changed), version(1)), Check: apiTags(changed),
		},
		{
			PreConfig: func() {
				if err := tg.Emulator.SetTags(emulatorSchedulerConfig(t, tg).ARN, map[string]string{"owner": "someone-else"}); err != nil {
					t.Fatal(err)
				}
			},
			Config: cfg(changed), ConfigPlanChecks: plannedUpdateWithTags(tgSchedulerConfig, changed), Check: apiTags(changed),
		},
		{
			ResourceName: tgSchedulerConfig, ImportState: true, ImportStateId: "any", ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"owner_id", "timeouts", "drift"},
		},
	}))
}

// The plan's tags_all: merged over the default tags, unknown while a tag or the default tags
// are; the read's tags: what is the resource's own of what the object carries.
func TestPlanTagsAll(t *testing.T) {
	known := func(m map[string]string) types.Map { return tagsValue(m) }
	withUnknown := types.MapValueMust(types.StringType, map[string]attr.Value{"a": types.StringUnknown()})
	tests := []struct {
		name     string
		defaults defaultTags
		config   types.Map
		want     types.Map
	}{
		{"none", defaultTags{}, types.MapNull(types.StringType), known(map[string]string{})},
		{"defaults only", defaultTags{tags: map[string]string{"env": "prod"}}, types.MapNull(types.StringType), known(map[string]string{"env": "prod"})},
		{"own wins", defaultTags{tags: map[string]string{"env": "prod"}}, known(map[string]string{"env": "dev", "team": "ml"}),
			known(map[string]string{"env": "dev", "team": "ml"})},
		{"unknown tags", defaultTags{}, types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)},
		{"unknown value", defaultTags{}, withUnknown, types.MapUnknown(types.StringType)},
		{"unknown defaults", defaultTags{unknown: true}, known(map[string]string{"a": "1"}), types.MapUnknown(types.StringType)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := &providerData{defaultTags: tt.defaults}
			var diags diag.Diagnostics
			if got := pd.planTagsAll(tt.config, &diags); diags.HasError() || !got.Equal(tt.want) {
				t.Errorf("got %v (%v), want %v", got, diags, tt.want)
			}
		})
	}
}

func TestRefreshedTags(t *testing.T) {
	pd := &providerData{defaultTags: defaultTags{tags: map[string]string{"env": "prod"}}}
	null := types.MapNull(types.StringType)
	tests := []struct {
		name     string
		prior    tagsModel
		stored   map[string]string
		wantTags types.Map
		wantAll  types.Map
	}{
		{"untagged", tagsModel{Tags: null, TagsAll: tagsValue(nil)}, nil, null, tagsValue(map[string]string{})},
		{"imported, only defaults", tagsModel{Tags: null, TagsAll: null}, map[string]string{"env": "prod"}, null, tagsValue(map[string]string{"env": "prod"})},
		{"imported, own and defaults", tagsModel{Tags: null, TagsAll: null}, map[string]string{"env": "prod", "team": "ml"},
			tagsValue(map[string]string{"team": "ml"}), tagsValue(map[string]string{"env": "prod", "team": "ml"})},
		{"own equal to a default kept", tagsModel{Tags: tagsValue(map[string]string{"env": "prod"}), TagsAll: tagsValue(map[string]string{"env": "prod"})},
			map[string]string{"env": "prod"}, tagsValue(map[string]string{"env": "prod"}), tagsValue(map[string]string{"env": "prod"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pd.refreshed(tt.prior, tt.stored)
			if !got.Tags.Equal(tt.wantTags) || !got.TagsAll.Equal(tt.wantAll) {
				t.Errorf("got tags %v, tags_all %v; want %v, %v", got.Tags, got.TagsAll, tt.wantTags, tt.wantAll)
			}
		})
	}
	if !readsTags(tagsModel{TagsAll: null}) || readsTags(tagsModel{TagsAll: tagsValue(nil)}) || !readsTags(tagsModel{TagsAll: tagsValue(map[string]string{"a": "1"})}) {
		t.Error("readsTags: want a read for null or non-empty tags_all only")
	}
}
