package provider

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
)

// plannedQuotas are compute quotas' values as `terraform show -json` prints them, which the
// review reads without the provider: between them, every attribute that plans a quota.
var plannedQuotas = []string{
	`{"name": "full", "description": "every attribute", "team": "ml", "activation_state": "Disabled",
	  "preempt_team_tasks": "Never", "fair_share_weight": 30, "cohort": "research",
	  "resource_sharing": {"strategy": "LendAndBorrow", "borrow_limit": 80, "absolute_borrow_limits": [
	    {"instance_type": "ml.g5.12xlarge", "count": 1},
	    {"instance_type": "ml.g5.48xlarge", "accelerators": 2, "vcpu": 8.5, "memory_in_gib": 2.9},
	    {"instance_type": "ml.p4d.24xlarge", "accelerator_partition": {"type": "mig-1g.5gb", "count": 4}}]},
	  "resources": [
	    {"instance_type": "ml.g5.12xlarge", "count": 2, "efa": 1},
	    {"instance_type": "ml.c5.9xlarge", "vcpu": 2.9, "memory_in_gib": 0.1},
	    {"instance_type": "ml.p4d.24xlarge", "accelerator_partition": {"type": "mig-1g.5gb", "count": 2}},
	    {"instance_type": "ml.g5.48xlarge", "accelerators": 3}],
	  "tags": {"a": "b"}, "tags_all": {"a": "b"}, "id": "ml", "drift": []}`,
	`{"name": "least", "team": "ml", "resource_sharing": null, "resources": [{"instance_type": "ml.g5.12xlarge", "count": 1}]}`,
	`{"name": "empty", "team": "ml", "resource_sharing": {"strategy": "Lend", "absolute_borrow_limits": []}, "resources": []}`,
}

// notPlanning are the compute quota's attributes that do not plan its quota: the store's
// record, ownership, drift, timeouts and tags.
var notPlanning = []string{"id", "cluster_queue_name", "quota_id", "arn", "version", "status", "owner_id", "drift",
	"timeouts", "tags", "tags_all"}

// The review reads a plan's compute quotas without the provider, and so must read them as the
// provider does: the same configuration from the same values, and every attribute that plans a
// quota among those values.
func TestPlannedQuotaReadsAsTheProvider(t *testing.T) {
	ctx := context.Background()
	var sch resource.SchemaResponse
	(&computeQuotaResource{}).Schema(ctx, resource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx)
	set := map[string]bool{}
	for _, raw := range plannedQuotas {
		v, err := tftypes.ValueFromJSONWithOpts([]byte(raw), typ, tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true})
		if err != nil {
			t.Fatal(err)
		}
		var m computeQuotaModel
		if d := getModel(ctx, tfsdk.State{Raw: v, Schema: sch.Schema}, &m); d.HasError() {
			t.Fatal(d)
		}
		want := quotaConfigFromModel(m)
		got, err := review.PlannedQuota(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || !reflect.DeepEqual(*got, want) {
			t.Errorf("the review reads\n%s\nas\n %+v\nthe provider as\n %+v", raw, got, want)
		}
		var values any
		if err := json.Unmarshal([]byte(raw), &values); err != nil {
			t.Fatal(err)
		}
		setPaths(values, "", set)
	}
	for _, p := range attributePaths(typ, "") {
		if !set[p] && !slices.Contains(notPlanning, strings.Split(p, ".")[0]) {
			t.Errorf("no planned quota above sets %s: add it, so the review is held to reading it as the provider does", p)
		}
	}
}

// attributePaths are the paths of typ's attributes that hold values ("resources.count"), a
// list's elements sharing their list's path.
func attributePaths(typ tftypes.Type, at string) []string {
	switch t := typ.(type) {
	case tftypes.Object:
		var out []string
		for name, a := range t.AttributeTypes {
			out = append(out, attributePaths(a, strings.TrimPrefix(at+"."+name, "."))...)
		}
		return out
	case tftypes.List:
		if _, ok := t.ElementType.(tftypes.Object); ok {
			return attributePaths(t.ElementType, at)
		}
	}
	return []string{at}
}

// setPaths adds the paths of v's non-null values to set, as attributePaths names them.
func setPaths(v any, at string, set map[string]bool) {
	switch v := v.(type) {
	case nil:
	case map[string]any:
		if len(v) > 0 && at != "" {
			set[at] = true // a map attribute (tags) is a value of its own
		}
		for k, e := range v {
			setPaths(e, strings.TrimPrefix(at+"."+k, "."), set)
		}
	case []any:
		set[at] = true
		for _, e := range v {
			setPaths(e, at, set)
		}
	default:
		set[at] = true
	}
}
