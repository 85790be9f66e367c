package provider

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Embedded models contribute their attributes: the instance_type function's result has the
// capacity data source's per-instance attributes, with the same types.
func TestEmbeddedModelAttributes(t *testing.T) {
	ctx := context.Background()
	var capacitySchema datasource.SchemaResponse
	(&instanceTypeCapacityDataSource{}).Schema(ctx, datasource.SchemaRequest{}, &capacitySchema)
	wantTags := []string{"accelerator_type", "accelerators", "accelerator_resource", "vcpu", "memory_in_gib", "efa", "mig_profiles"}
	if got := tagsOf[instanceTypeFiguresModel](); !slices.Equal(got, wantTags) {
		t.Errorf("tags %v, want %v", got, wantTags)
	}
	figures := attrTypesOf[instanceTypeFiguresModel]()
	if len(figures) != len(wantTags) {
		t.Errorf("%d attribute types, want %d: %v", len(figures), len(wantTags), figures)
	}
	for name, want := range figures {
		got, d := capacitySchema.Schema.TypeAtPath(ctx, path.Root(name))
		if d.HasError() || !got.Equal(want) {
			t.Errorf("%s: schema type %v (%v), model type %s", name, got, d, want)
		}
	}
	var marked []string
	m := instanceTypeFiguresModel{AcceleratorType: types.StringUnknown()}
	m.EFA = types.Int64Unknown()
	modelUnknownPaths(m, path.Empty(), func(p path.Path) { marked = append(marked, p.String()) })
	if !slices.Equal(marked, []string{"accelerator_type", "efa"}) {
		t.Errorf("unknown paths %v, want accelerator_type and efa", marked)
	}
}

// unknownPaths finds every unknown value at any depth, and nothing in null or known values.
func TestUnknownPaths(t *testing.T) {
	limitType := objectTypeOf[limitModel]()
	limit := func(it types.String) attr.Value {
		return types.ObjectValueMust(limitType.AttrTypes, map[string]attr.Value{
			"instance_type": it, "count": types.Int64Null(), "accelerators": types.Int64Null(), "accelerator_partition": types.ObjectNull(partitionAttrTypes),
			"vcpu": types.Float64Unknown(), "memory_in_gib": types.Float64Value(1),
		})
	}
	sharing, _ := objectFrom(sharingModel{
		Strategy: types.StringUnknown(), BorrowLimit: types.Int64Null(),
		AbsoluteBorrowLimits: types.ListValueMust(limitType, []attr.Value{limit(types.StringValue("a")), types.ObjectUnknown(limitType.AttrTypes), types.ObjectNull(limitType.AttrTypes)}),
	})
	env := types.MapValueMust(types.StringType, map[string]attr.Value{"A": types.StringUnknown(), "B": types.StringValue("b")})
	m := struct {
		Sharing  types.Object `tfsdk:"resource_sharing"`
		Env      types.Map    `tfsdk:"env"`
		Name     types.String `tfsdk:"name"`
		Team     types.String `tfsdk:"team"`
		Untagged types.String
	}{sharing, env, types.StringNull(), types.StringUnknown(), types.StringUnknown()}
	var got []string
	modelUnknownPaths(m, path.Empty(), func(p path.Path) { got = append(got, p.String()) })
	want := []string{
		`resource_sharing.absolute_borrow_limits[0].vcpu`, `resource_sharing.absolute_borrow_limits[1]`,
		`resource_sharing.strategy`, `env["A"]`, `team`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("unknown paths %q, want %q", got, want)
	}
	if steps := pathSteps(path.Root("resources").AtListIndex(2).AtName("vcpu")); !slices.Equal(steps, []string{"resources", "2", "vcpu"}) {
		t.Errorf("steps %q", steps)
	}
}

// The codec reads and writes models exactly as the framework's reflection does: objects of
// nested models both ways, and a resource's whole plan, with null, unknown and known values at
// every depth, timeouts block included.
func TestModelCodecMatchesFramework(t *testing.T) {
	ctx := context.Background()
	entryType := objectTypeOf[resourceEntryModel]()
	partition, _ := objectFrom(partitionModel{Type: types.StringValue("mig-1g.10gb"), Count: types.Int64Value(2)})
	entries := []resourceEntryModel{
		{limitModel{InstanceType: types.StringValue("ml.p5.48xlarge"), Count: types.Int64Null(), Accelerators: types.Int64Value(8),
			Partition: types.ObjectNull(partitionAttrTypes), VCPU: types.Float64Value(2.9), MemoryInGiB: types.Float64Unknown()}, types.Int64Value(0)},
		{limitModel{InstanceType: types.StringUnknown(), Count: types.Int64Value(1), Accelerators: types.Int64Unknown(),
			Partition: partition, VCPU: types.Float64Null(), MemoryInGiB: types.Float64Value(0.5)}, types.Int64Unknown()},
	}
	var entryValues []attr.Value
	for _, e := range entries {
		want, d := types.ObjectValueFrom(ctx, entryType.AttrTypes, e)
		got, gd := objectFrom(e)
		if d.HasError() || gd.HasError() || !got.Equal(want) {
			t.Fatalf("objectFrom(%v) = %v (%v), the framework's %v (%v)", e, got, gd, want, d)
		}
		var wantModel resourceEntryModel
		if d := want.As(ctx, &wantModel, basetypes.ObjectAsOptions{}); d.HasError() {
			t.Fatal(d)
		}
		gotModel, ok := modelOf[resourceEntryModel](want)
		if back, _ := objectFrom(gotModel); !ok || !back.Equal(want) || !reflect.DeepEqual(gotModel, wantModel) {
			t.Errorf("modelOf(%v) = %+v, the framework's %+v", want, gotModel, wantModel)
		}
		entryValues = append(entryValues, want)
	}
	for _, ms := range [][]resourceEntryModel{entries, {}, nil} {
		want, d := types.ListValueFrom(ctx, entryType, ms)
		got, gd := listFrom(ms)
		if d.HasError() || gd.HasError() || !got.Equal(want) {
			t.Errorf("listFrom(%v) = %v (%v), the framework's %v (%v)", ms, got, gd, want, d)
		}
	}
	if m, ok := modelOf[resourceEntryModel](types.ObjectUnknown(entryType.AttrTypes)); ok || !reflect.DeepEqual(m, resourceEntryModel{}) {
		t.Errorf("modelOf(unknown) = %+v, %v", m, ok)
	}

	var sch resource.SchemaResponse
	(&computeQuotaResource{}).Schema(ctx, resource.SchemaRequest{}, &sch)
	timeoutsType := sch.Schema.Blocks["timeouts"].Type().(attr.TypeWithAttributeTypes).AttributeTypes()
	for _, tm := range []timeouts.Value{
		{Object: types.ObjectNull(timeoutsType)},
		{Object: types.ObjectValueMust(timeoutsType, map[string]attr.Value{
			"create": types.StringValue("5m"), "update": types.StringNull(), "delete": types.StringUnknown()})},
	} {
		m := computeQuotaModel{
			ID: types.StringUnknown(), Name: types.StringValue("ml"), Description: types.StringNull(), Team: types.StringValue("ml"),
			ActivationState: types.StringValue("Enabled"), PreemptTeamTasks: types.StringUnknown(), FairShareWeight: types.Int64Value(3),
			Cohort: types.StringNull(), ResourceSharing: types.ObjectUnknown(resourceSharingAttrTypes),
			Resources:        types.ListValueMust(entryType, entryValues),
			ClusterQueueName: types.StringValue("hyperpod-ns-ml-clusterqueue"), QuotaID: types.StringNull(),
			tagsModel: tagsModel{Tags: types.MapValueMust(types.StringType, map[string]attr.Value{"team": types.StringValue("ml")}),
				TagsAll: types.MapUnknown(types.StringType)},
			storeRecordModel: storeRecordModel{ARN: types.StringUnknown(), Version: types.Int64Null(), Status: types.StringValue("Created")},
			OwnerID:          types.StringUnknown(), Drift: types.ListValueMust(types.StringType, nil), Timeouts: tm,
		}
		want := tfsdk.Plan{Schema: sch.Schema}
		if d := want.Set(ctx, &m); d.HasError() {
			t.Fatal(d)
		}
		got := tfsdk.Plan{Schema: sch.Schema}
		if d := setModel(ctx, &got, &m); d.HasError() || !got.Raw.Equal(want.Raw) {
			t.Fatalf("setModel wrote %v (%v), the framework %v", got.Raw, d, want.Raw)
		}
		var read, wantRead computeQuotaModel
		if d := want.Get(ctx, &wantRead); d.HasError() {
			t.Fatal(d)
		}
		if d := getModel(ctx, want, &read); d.HasError() || !reflect.DeepEqual(read, wantRead) {
			t.Errorf("getModel read %+v (%v), the framework %+v", read, d, wantRead)
		}
	}
	// A null plan is the framework's error, not an empty model.
	var m computeQuotaModel
	if d := getModel(ctx, tfsdk.Plan{Schema: sch.Schema, Raw: tftypes.NewValue(sch.Schema.Type().TerraformType(ctx), nil)}, &m); !d.HasError() {
		t.Error("getModel read a null plan without an error")
	}
}
