package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type fieldsTestFigures struct {
	Count types.Int64 `tfsdk:"count"`
}

type fieldsTestModel struct {
	Name types.String `tfsdk:"name"`
	fieldsTestFigures
	Tags      types.List     `tfsdk:"tags" elem:"string"`
	Partition types.Object   `tfsdk:"partition" model:"partitionModel"`
	Timeouts  timeouts.Value `tfsdk:"timeouts" model:"timeoutsModel"`
	Untagged  types.String
	Skipped   types.String `tfsdk:"-"`
}

type fieldsTestTwoNames struct {
	Name types.String `tfsdk:"name"`
	fieldsTestFigures
	Size types.Int64 `tfsdk:"count"`
}

func TestAttributesAndBlocksOf(t *testing.T) {
	ctx := context.Background()
	var (
		m     fieldsTestModel
		other fieldsTestModel
		p     partitionModel
		limit limitModel
		part  partitionModel
	)
	partition := schema.SingleNestedAttribute{Optional: true, Attributes: attributesOf(&p, []fieldSchema[schema.Attribute]{
		{&p.Type, schema.StringAttribute{Required: true}},
		{&p.Count, schema.Int64Attribute{Required: true}},
	})}
	timeoutsBlock := timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	base := func() []fieldSchema[schema.Attribute] {
		return []fieldSchema[schema.Attribute]{
			{&m.Name, schema.StringAttribute{Required: true}},
			{&m.Count, schema.Int64Attribute{Optional: true}}, // promoted from the embedded model
			{&m.Tags, schema.ListAttribute{ElementType: types.StringType, Optional: true}},
			{&m.Partition, partition},
		}
	}
	replaced := func(i int, with fieldSchema[schema.Attribute]) []fieldSchema[schema.Attribute] {
		attrs := base()
		attrs[i] = with
		return attrs
	}
	plus := func(extra fieldSchema[schema.Attribute]) []fieldSchema[schema.Attribute] {
		return append(base(), extra)
	}
	withTimeouts := []fieldSchema[schema.Block]{{&m.Timeouts, timeoutsBlock}}

	for _, c := range []struct {
		name      string
		attrs     []fieldSchema[schema.Attribute]
		blocks    []fieldSchema[schema.Block]
		want      []string
		wantPanic string
	}{
		{name: "every field, an embedded one and a block", attrs: base(), blocks: withTimeouts,
			want: []string{"count", "name", "partition", "tags", "block timeouts"}},
		{name: "a nested object as a block", attrs: base()[:3],
			blocks: []fieldSchema[schema.Block]{{&m.Partition, schema.SingleNestedBlock{Attributes: partition.Attributes}}, {&m.Timeouts, timeoutsBlock}},
			want:   []string{"count", "name", "tags", "block partition", "block timeouts"}},
		{name: "a string as a block", attrs: base()[1:],
			blocks:    []fieldSchema[schema.Block]{{&m.Name, schema.SingleNestedBlock{}}, {&m.Timeouts, timeoutsBlock}},
			wantPanic: `fieldsTestModel.Name: the schema gives attribute "name" the type types.ObjectType[], the model basetypes.StringType`},
		{name: "a field left out", attrs: base()[:3], blocks: withTimeouts,
			wantPanic: `fieldsTestModel.Partition: the schema has no attribute or block "partition"`},
		{name: "a block left out", attrs: base(),
			wantPanic: `fieldsTestModel.Timeouts: the schema has no attribute or block "timeouts"`},
		{name: "a field twice", attrs: replaced(1, fieldSchema[schema.Attribute]{&m.Name, schema.StringAttribute{}}), blocks: withTimeouts,
			wantPanic: `fieldsTestModel.Name: the schema lists "name" twice`},
		{name: "a field as attribute and block", attrs: base(),
			blocks:    []fieldSchema[schema.Block]{{&m.Timeouts, timeoutsBlock}, {&m.Partition, schema.SingleNestedBlock{Attributes: partition.Attributes}}},
			wantPanic: `fieldsTestModel.Partition: the schema lists "partition" twice`},
		{name: "a field of another value", attrs: replaced(0, fieldSchema[schema.Attribute]{&other.Name, schema.StringAttribute{}}), blocks: withTimeouts,
			wantPanic: "fieldsTestModel: a schema lists a basetypes.StringValue that is not a tagged field of this model value"},
		{name: "the embedded model, at its first field's address", attrs: replaced(1, fieldSchema[schema.Attribute]{&m.fieldsTestFigures, schema.Int64Attribute{}}),
			blocks: withTimeouts, wantPanic: "a schema lists a provider.fieldsTestFigures that is not a tagged field"},
		{name: "an untagged field", attrs: plus(fieldSchema[schema.Attribute]{&m.Untagged, schema.StringAttribute{}}), blocks: withTimeouts,
			wantPanic: "a schema lists a basetypes.StringValue that is not a tagged field"},
		{name: "a field tagged -", attrs: plus(fieldSchema[schema.Attribute]{&m.Skipped, schema.StringAttribute{}}), blocks: withTimeouts,
			wantPanic: "a schema lists a basetypes.StringValue that is not a tagged field"},
		{name: "a value, not an address", attrs: replaced(0, fieldSchema[schema.Attribute]{m.Name, schema.StringAttribute{}}), blocks: withTimeouts,
			wantPanic: "fieldsTestModel: a schema lists basetypes.StringValue, not the address of a field"},
		{name: "an attribute of another type", attrs: replaced(1, fieldSchema[schema.Attribute]{&m.Count, schema.Float64Attribute{}}), blocks: withTimeouts,
			wantPanic: `fieldsTestFigures.Count: the schema gives attribute "count" the type basetypes.Float64Type, the model basetypes.Int64Type`},
		{name: "a list of another element type", attrs: replaced(2, fieldSchema[schema.Attribute]{&m.Tags, schema.ListAttribute{ElementType: types.Int64Type}}), blocks: withTimeouts,
			wantPanic: `fieldsTestModel.Tags: the schema gives attribute "tags" the type types.ListType[basetypes.Int64Type]`},
		{name: "a nested object of another model", blocks: withTimeouts,
			attrs: replaced(3, fieldSchema[schema.Attribute]{&m.Partition, schema.SingleNestedAttribute{Attributes: attributesOf(&limit, []fieldSchema[schema.Attribute]{
				{&limit.InstanceType, schema.StringAttribute{}}, {&limit.Count, schema.Int64Attribute{}}, {&limit.Accelerators, schema.Int64Attribute{}},
				{&limit.Partition, schema.SingleNestedAttribute{Attributes: attributesOf(&part, []fieldSchema[schema.Attribute]{
					{&part.Type, schema.StringAttribute{}}, {&part.Count, schema.Int64Attribute{}},
				})}},
				{&limit.VCPU, schema.Float64Attribute{}}, {&limit.MemoryInGiB, schema.Float64Attribute{}},
			})}}),
			wantPanic: `fieldsTestModel.Partition: the schema gives attribute "partition" the type types.ObjectType[`},
		{name: "a block of a custom type with other attributes", attrs: base(),
			blocks:    []fieldSchema[schema.Block]{{&m.Timeouts, timeouts.Block(ctx, timeouts.Opts{Create: true})}},
			wantPanic: `fieldsTestModel.Timeouts: the schema gives attribute "timeouts" the type`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, panicked := catchPanic(func() []string {
				attrs, blocks := attributesAndBlocksOf(&m, c.attrs, c.blocks)
				names := slices.Sorted(maps.Keys(attrs))
				for _, name := range slices.Sorted(maps.Keys(blocks)) {
					names = append(names, "block "+name)
				}
				return names
			})
			switch {
			case c.wantPanic == "" && panicked != "":
				t.Fatalf("panic: %s", panicked)
			case c.wantPanic != "" && !strings.Contains(panicked, c.wantPanic):
				t.Fatalf("panic %q, want one containing %q", panicked, c.wantPanic)
			case c.wantPanic == "" && !slices.Equal(got, c.want):
				t.Errorf("names %q, want %q", got, c.want)
			}
		})
	}
}

// A model is a pointer to a struct, and no two of its fields, embedded ones included, share a name.
func TestModelFieldsOf(t *testing.T) {
	for _, c := range []struct {
		name      string
		model     any
		wantPanic string
	}{
		{"a model value", &fieldsTestModel{}, ""},
		{"a struct, not its address", fieldsTestModel{}, "schema model provider.fieldsTestModel is not a pointer to a model value"},
		{"a nil model", (*fieldsTestModel)(nil), "schema model *provider.fieldsTestModel is not a pointer to a model value"},
		{"an embedded field of the same name", &fieldsTestTwoNames{}, `provider.fieldsTestTwoNames: two fields are tagged "count"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, panicked := catchPanic(func() *modelFields { return modelFieldsOf(c.model) })
			if panicked != c.wantPanic {
				t.Errorf("panic %q, want %q", panicked, c.wantPanic)
			}
		})
	}
}

// Every schema of the provider builds: each lists every tagged field of its model once, with an
// attribute or block of the field's type.
func TestEverySchemaBuilds(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	build := func(name string, f func()) {
		if _, panicked := catchPanic(func() bool { f(); return true }); panicked != "" {
			t.Errorf("%s: %s", name, panicked)
		}
	}
	build("provider", func() { p.Schema(ctx, provider.SchemaRequest{}, &provider.SchemaResponse{}) })
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		build(fmt.Sprintf("%T", r), func() {
			r.Schema(ctx, resource.SchemaRequest{}, &resource.SchemaResponse{})
			if withIdentity, ok := r.(resource.ResourceWithIdentity); ok {
				withIdentity.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &resource.IdentitySchemaResponse{})
			}
		})
	}
	for _, newDataSource := range p.DataSources(ctx) {
		d := newDataSource()
		build(fmt.Sprintf("%T", d), func() { d.Schema(ctx, datasource.SchemaRequest{}, &datasource.SchemaResponse{}) })
	}
	for _, newFunction := range p.(provider.ProviderWithFunctions).Functions(ctx) {
		f := newFunction()
		build(fmt.Sprintf("%T", f), func() { f.Definition(ctx, function.DefinitionRequest{}, &function.DefinitionResponse{}) })
	}
	for _, newList := range p.(provider.ProviderWithListResources).ListResources(ctx) {
		l := newList()
		build(fmt.Sprintf("%T", l), func() {
			l.ListResourceConfigSchema(ctx, list.ListResourceSchemaRequest{}, &list.ListResourceSchemaResponse{})
		})
	}
}

// catchPanic is f's result, or the message it panicked with.
func catchPanic[T any](f func() T) (out T, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprint(r)
		}
	}()
	return f(), ""
}
