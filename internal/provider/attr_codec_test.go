package provider

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
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
			"instance_type": it, "accelerators": types.Int64Null(), "vcpu": types.Float64Unknown(), "memory_in_gib": types.Float64Value(1),
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
