package provider

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

func entryValue(it string, count types.Int64, vcpu types.Float64, part types.Object) types.Object {
	return types.ObjectValueMust(resourceEntryAttrTypes, map[string]attr.Value{
		"instance_type": types.StringValue(it), "count": count, "accelerators": types.Int64Null(), "vcpu": vcpu,
		"memory_in_gib": types.Float64Null(), "efa": types.Int64Null(), "accelerator_partition": part,
	})
}

func withAttr(o types.Object, name string, v attr.Value) types.Object {
	a := maps.Clone(o.Attributes())
	a[name] = v
	return types.ObjectValueMust(o.AttributeTypes(context.TODO()), a)
}

var (
	entryType = types.ObjectType{AttrTypes: resourceEntryAttrTypes}
	limitType = types.ObjectType{AttrTypes: absoluteLimitAttrTypes}
)

// baseQuotaConfig is a configuration with three entries (sized by count, by vcpu and by a MIG
// partition) and every optional attribute null.
func baseQuotaConfig() computeQuotaModel {
	nullPart := types.ObjectNull(partitionAttrTypes)
	part := types.ObjectValueMust(partitionAttrTypes, map[string]attr.Value{"type": types.StringValue("mig-1g.5gb"), "count": types.Int64Value(2)})
	return computeQuotaModel{
		ID: types.StringNull(), Name: types.StringValue("q"), Description: types.StringNull(), Team: types.StringValue("t"),
		ActivationState: types.StringNull(), PreemptTeamTasks: types.StringNull(), FairShareWeight: types.Int64Null(),
		Cohort: types.StringNull(), ResourceSharing: types.ObjectNull(resourceSharingAttrTypes),
		Resources: types.ListValueMust(entryType, []attr.Value{
			entryValue("ml.g5.12xlarge", types.Int64Value(1), types.Float64Null(), nullPart),
			entryValue("ml.c5.4xlarge", types.Int64Null(), types.Float64Value(4), nullPart),
			entryValue("ml.p4d.24xlarge", types.Int64Null(), types.Float64Null(), part),
		}),
		ClusterQueueName: types.StringNull(), OwnerID: types.StringNull(), Drift: types.ListNull(types.StringType),
		Timeouts: timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)},
	}
}

func sharing(strategy types.String, borrow types.Int64, limits types.List) types.Object {
	return types.ObjectValueMust(resourceSharingAttrTypes, map[string]attr.Value{"strategy": strategy, "borrow_limit": borrow, "absolute_borrow_limits": limits})
}

func limit(it types.String, vcpu types.Float64) types.Object {
	return limitWith(map[string]attr.Value{"instance_type": it, "vcpu": vcpu})
}

// limitWith is an absolute_borrow_limits element with the given attributes, the others null.
func limitWith(set map[string]attr.Value) types.Object {
	attrs := map[string]attr.Value{"instance_type": types.StringNull(), "count": types.Int64Null(), "accelerators": types.Int64Null(),
		"accelerator_partition": types.ObjectNull(partitionAttrTypes), "vcpu": types.Float64Null(), "memory_in_gib": types.Float64Null()}
	maps.Copy(attrs, set)
	return types.ObjectValueMust(absoluteLimitAttrTypes, attrs)
}

func editEntry(m *computeQuotaModel, i int, f func(types.Object) attr.Value) {
	elems := slices.Clone(m.Resources.Elements())
	elems[i] = f(elems[i].(types.Object))
	m.Resources = types.ListValueMust(entryType, elems)
}

// walk lists every value of v by path, e.g. "resources.0.vcpu".
func walk(prefix string, v attr.Value, out map[string]attr.Value) {
	out[prefix] = v
	if v.IsNull() || v.IsUnknown() {
		return
	}
	switch x := v.(type) {
	case types.Object:
		for k, a := range x.Attributes() {
			walk(prefix+"."+k, a, out)
		}
	case types.List:
		for i, e := range x.Elements() {
			walk(fmt.Sprintf("%s.%d", prefix, i), e, out)
		}
	}
}

func modelValues(m computeQuotaModel) map[string]attr.Value {
	out := map[string]attr.Value{}
	for name, v := range map[string]attr.Value{"id": m.ID, "name": m.Name, "description": m.Description, "team": m.Team,
		"activation_state": m.ActivationState, "preempt_team_tasks": m.PreemptTeamTasks, "fair_share_weight": m.FairShareWeight,
		"cohort": m.Cohort, "resource_sharing": m.ResourceSharing, "resources": m.Resources, "cluster_queue_name": m.ClusterQueueName} {
		walk(name, v, out)
	}
	return out
}

// Every attribute may be unknown or null at plan time: the plan keeps each configured value
// exactly (unknown, null or empty), computes every default it can, and leaves unknown exactly
// the computed values that depend on something unknown.
func TestPlannedQuotaModel_unknownAndNull(t *testing.T) {
	entry0Computed := []string{"resources.0.accelerators", "resources.0.efa", "resources.0.memory_in_gib", "resources.0.vcpu"}
	entry2Computed := []string{"resources.2.accelerators", "resources.2.efa", "resources.2.memory_in_gib", "resources.2.vcpu"}
	us := types.StringUnknown()
	cases := []struct {
		name        string
		edit        func(*computeQuotaModel)
		pendingType string
		unknown     []string // planned unknown beyond what the configuration holds unknown
	}{
		{"all known", func(*computeQuotaModel) {}, "", nil},
		{"name", func(m *computeQuotaModel) { m.Name = us }, "", nil},
		{"description", func(m *computeQuotaModel) { m.Description = us }, "", nil},
		{"team", func(m *computeQuotaModel) { m.Team = us }, "", []string{"cluster_queue_name", "id"}},
		{"activation_state", func(m *computeQuotaModel) { m.ActivationState = us }, "", nil},
		{"preempt_team_tasks", func(m *computeQuotaModel) { m.PreemptTeamTasks = us }, "", nil},
		{"fair_share_weight", func(m *computeQuotaModel) { m.FairShareWeight = types.Int64Unknown() }, "", nil},
		{"cohort", func(m *computeQuotaModel) { m.Cohort = us }, "", nil},
		{"resource_sharing", func(m *computeQuotaModel) { m.ResourceSharing = types.ObjectUnknown(resourceSharingAttrTypes) }, "", nil},
		{"resource_sharing.strategy", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(us, types.Int64Null(), types.ListNull(limitType))
		}, "", []string{"resource_sharing.borrow_limit"}},
		{"resource_sharing.borrow_limit", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Unknown(), types.ListNull(limitType))
		}, "", nil},
		{"absolute_borrow_limits", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListUnknown(limitType))
		}, "", nil},
		{"absolute_borrow_limits element", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListValueMust(limitType, []attr.Value{
				limit(types.StringValue("ml.g5.12xlarge"), types.Float64Value(2)), types.ObjectUnknown(absoluteLimitAttrTypes)}))
		}, "", nil},
		{"absolute_borrow_limits element field", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListValueMust(limitType, []attr.Value{
				limit(us, types.Float64Unknown())}))
		}, "", nil},
		{"absolute_borrow_limits element count", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListValueMust(limitType, []attr.Value{
				limitWith(map[string]attr.Value{"instance_type": types.StringValue("ml.g5.12xlarge"), "count": types.Int64Unknown(),
					"accelerators": types.Int64Value(1)})}))
		}, "", nil},
		{"absolute_borrow_limits element accelerator_partition", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListValueMust(limitType, []attr.Value{
				limitWith(map[string]attr.Value{"instance_type": types.StringValue("ml.p4d.24xlarge"),
					"accelerator_partition": types.ObjectUnknown(partitionAttrTypes)})}))
		}, "", nil},
		{"absolute_borrow_limits element accelerator_partition.type", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListValueMust(limitType, []attr.Value{
				limitWith(map[string]attr.Value{"instance_type": types.StringValue("ml.p4d.24xlarge"),
					"accelerator_partition": types.ObjectValueMust(partitionAttrTypes, map[string]attr.Value{
						"type": types.StringUnknown(), "count": types.Int64Value(2)})})}))
		}, "", nil},
		{"resources", func(m *computeQuotaModel) { m.Resources = types.ListUnknown(entryType) }, "", nil},
		{"resources element", func(m *computeQuotaModel) {
			editEntry(m, 0, func(types.Object) attr.Value { return types.ObjectUnknown(resourceEntryAttrTypes) })
		}, "", nil},
		{"instance_type", func(m *computeQuotaModel) {
			editEntry(m, 0, func(o types.Object) attr.Value { return withAttr(o, "instance_type", us) })
		}, "", entry0Computed},
		{"count", func(m *computeQuotaModel) {
			editEntry(m, 0, func(o types.Object) attr.Value { return withAttr(o, "count", types.Int64Unknown()) })
		}, "", entry0Computed},
		{"configured vcpu", func(m *computeQuotaModel) {
			editEntry(m, 1, func(o types.Object) attr.Value { return withAttr(o, "vcpu", types.Float64Unknown()) })
		}, "", []string{"resources.1.accelerators", "resources.1.efa", "resources.1.memory_in_gib"}},
		{"accelerator_partition", func(m *computeQuotaModel) {
			editEntry(m, 2, func(o types.Object) attr.Value {
				return withAttr(o, "accelerator_partition", types.ObjectUnknown(partitionAttrTypes))
			})
		}, "", entry2Computed},
		{"accelerator_partition.count", func(m *computeQuotaModel) {
			editEntry(m, 2, func(o types.Object) attr.Value {
				return withAttr(o, "accelerator_partition", types.ObjectValueMust(partitionAttrTypes, map[string]attr.Value{
					"type": types.StringValue("mig-1g.5gb"), "count": types.Int64Unknown()}))
			})
		}, "", entry2Computed},
		{"provider instance_types entry of the type", func(*computeQuotaModel) {}, "ml.g5.12xlarge", entry0Computed},
		{"null resource_sharing values", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListNull(limitType))
		}, "", nil},
		{"empty absolute_borrow_limits", func(m *computeQuotaModel) {
			m.ResourceSharing = sharing(types.StringNull(), types.Int64Null(), types.ListValueMust(limitType, []attr.Value{}))
		}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			config := baseQuotaConfig()
			c.edit(&config)
			cfg := quotaConfigFromModel(config)
			for i, e := range cfg.Resources {
				if e.InstanceType == c.pendingType && c.pendingType != "" {
					cfg.MarkUnknown("resources", fmt.Sprint(i), "capacity")
				}
			}
			rc, problems := quota.Plan(catalog.Builtin(), cfg)
			if len(problems) > 0 {
				t.Fatalf("plan: %v", problems)
			}
			planned, diags := plannedQuotaModel(config, rc)
			if diags.HasError() {
				t.Fatalf("plan: %v", diags)
			}
			got, want := modelValues(planned), modelValues(config)
			var unknown []string
			for path, v := range got {
				cv, inConfig := want[path]
				_, isObject := cv.(types.Object)
				_, isList := cv.(types.List)
				leaf := inConfig && !isObject && !isList
				switch {
				case (leaf || cv != nil && cv.IsUnknown()) && !cv.IsNull() && !cv.Equal(v):
					t.Errorf("%s: configured %s, planned %s", path, cv, v)
				case isList && !cv.IsNull() && !cv.IsUnknown() &&
					(v.IsNull() || v.IsUnknown() || len(v.(types.List).Elements()) != len(cv.(types.List).Elements())):
					t.Errorf("%s: configured list %s, planned %s", path, cv, v) // an empty list stays empty, never null
				case v.IsUnknown() && (!inConfig || !cv.IsUnknown()):
					unknown = append(unknown, path)
				}
			}
			for path, cv := range want {
				if _, ok := got[path]; !ok && !cv.IsNull() {
					t.Errorf("%s: configured %s, missing from the plan", path, cv)
				}
			}
			sort.Strings(unknown)
			expected := slices.Clone(c.unknown)
			sort.Strings(expected)
			if !slices.Equal(unknown, expected) {
				t.Errorf("planned unknown %q, want %q", unknown, expected)
			}
			// The plan is a fixed point: planning it again gives the same values (the two plan
			// passes of Terraform agree).
			again, _ := plannedQuotaModel(planned, rc)
			for path, v := range modelValues(again) {
				if !v.Equal(got[path]) {
					t.Errorf("second pass: %s is %s, first pass %s", path, v, got[path])
				}
			}
		})
	}
}

// Every field of an absolute borrow limit reaches the state and is read back from it as
// configured: the state of a read or an import holds what the user set.
func TestQuotaModelFromResolved_absoluteBorrowLimits(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	limits := []quota.AbsoluteBorrowLimit{
		{InstanceType: "ml.g5.12xlarge", Count: i(2), MemoryGiB: big.NewRat(201, 2)},
		{InstanceType: "ml.p4d.24xlarge", Partition: &quota.Partition{Type: "mig-1g.5gb", Count: 3}, VCPU: big.NewRat(3, 2)},
		{InstanceType: "ml.c5.4xlarge", Accelerators: i(0), VCPU: big.NewRat(1, 1)},
	}
	cfg := quotaConfigFromModel(baseQuotaConfig())
	cfg.Sharing.AbsoluteBorrowLimits = limits
	rc, problems := quota.Plan(catalog.Builtin(), cfg)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	m, diags := quotaModelFromResolved(rc)
	if diags.HasError() {
		t.Fatal(diags)
	}
	got := quotaConfigFromModel(m).Sharing.AbsoluteBorrowLimits
	if len(got) != len(limits) {
		t.Fatalf("read back %d limits, want %d", len(got), len(limits))
	}
	for j, want := range limits {
		g := got[j]
		if g.InstanceType != want.InstanceType || !reflect.DeepEqual(g.Count, want.Count) || !reflect.DeepEqual(g.Accelerators, want.Accelerators) ||
			!reflect.DeepEqual(g.Partition, want.Partition) || !ratsEqual(g.VCPU, want.VCPU) || !ratsEqual(g.MemoryGiB, want.MemoryGiB) {
			t.Errorf("limit %d read back %+v, want %+v", j, g, want)
		}
	}
}

func ratsEqual(a, b *big.Rat) bool { return (a == nil) == (b == nil) && (a == nil || a.Cmp(b) == 0) }
