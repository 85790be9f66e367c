package provider

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The attribute codec: models name each attribute once, in their tfsdk tags, and schemas take
// the names from there (schema_fields.go). Attribute types are derived from the same fields; a
// nested object, or list or map of objects, names its element model in a model tag, and a list
// or map of strings says so in an elem tag.

// nestedModels are the models a model tag may name.
var nestedModels = modelTypes(
	partitionModel{}, limitModel{}, resourceEntryModel{}, sharingModel{}, timeoutsModel{},
	priorityClassModel{}, quotaDefaultsModel{}, execModel{}, retryModel{}, instanceTypeOverrideModel{},
	taskGovernanceModel{}, assumeRoleModel{}, defaultTagsModel{},
	teamUsageResourceModel{},
)

func modelTypes(models ...any) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, m := range models {
		t := reflect.TypeOf(m)
		out[t.Name()] = t
	}
	return out
}

// attrTypesOf is the attribute types of model T.
func attrTypesOf[T any]() map[string]attr.Type {
	return maps.Clone(codecOf(reflect.TypeFor[T]()).attrTypes)
}

// A model's attributes are read and written through a codec worked out once per model type.
// The framework's own conversions (tfsdk Get and Set, types.ObjectValueFrom, Object.As) re-read
// the struct tags on every call and compile a regular expression per field to check each name:
// in a plan of new compute quotas that was a fifth of the provider's CPU. Each attribute of a
// model is an attribute value already, so the codec only moves values between fields and
// attribute maps, and leaves type checks to the framework's values.

// modelCodec is how one model type maps to its attributes.
type modelCodec struct {
	model     reflect.Type
	attrTypes map[string]attr.Type // shared: never modified
	fields    []codecField
}

// codecField is one tagged field, embedded models' fields included.
type codecField struct {
	name  string
	index []int // for reflect.Value.FieldByIndex
}

var modelCodecs sync.Map // reflect.Type -> *modelCodec

func codecOf(t reflect.Type) *modelCodec {
	if c, ok := modelCodecs.Load(t); ok {
		return c.(*modelCodec)
	}
	c := &modelCodec{model: t, attrTypes: structAttrTypes(t)}
	c.addFields(t, nil)
	stored, _ := modelCodecs.LoadOrStore(t, c)
	return stored.(*modelCodec)
}

func (c *modelCodec) addFields(t reflect.Type, at []int) {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(slices.Clone(at), i)
		if f.Anonymous {
			c.addFields(f.Type, index)
		} else if name := f.Tag.Get("tfsdk"); name != "" && name != "-" {
			c.fields = append(c.fields, codecField{name: name, index: index})
		}
	}
}

// read sets the fields of model value rv from attrs, which has exactly the model's attributes,
// each of its field's Go type (as the framework's Get requires of the values its types make).
func (c *modelCodec) read(attrs map[string]attr.Value, rv reflect.Value) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(attrs) != len(c.fields) {
		diags.AddError("Value Conversion Error", fmt.Sprintf("%s has %d attributes, the object %d: %v", c.model, len(c.fields), len(attrs), slices.Sorted(maps.Keys(attrs))))
		return diags
	}
	for _, f := range c.fields {
		v, ok := attrs[f.name]
		if !ok {
			diags.AddError("Value Conversion Error", fmt.Sprintf("%s: the object has no attribute %q", c.model, f.name))
			return diags
		}
		fv := rv.FieldByIndex(f.index)
		if reflect.TypeOf(v) != fv.Type() {
			diags.AddAttributeError(path.Root(f.name), "Value Conversion Error", fmt.Sprintf("%s.%s is a %s, the value a %T", c.model, f.name, fv.Type(), v))
			return diags
		}
		fv.Set(reflect.ValueOf(v))
	}
	return diags
}

// object is the object value of model value rv with attribute types attrTypes: the model's
// own, or a schema's, whose custom types (the timeouts block's) the model's fields may not
// share; types.ObjectValue checks every attribute against them.
func (c *modelCodec) object(ctx context.Context, rv reflect.Value, attrTypes map[string]attr.Type) (types.Object, diag.Diagnostics) {
	vals := make(map[string]attr.Value, len(c.fields))
	for _, f := range c.fields {
		v := rv.FieldByIndex(f.index).Interface().(attr.Value)
		if want, ok := attrTypes[f.name]; ok && !want.Equal(v.Type(ctx)) {
			converted, err := convertValue(ctx, v, want)
			if err != nil {
				var diags diag.Diagnostics
				diags.AddAttributeError(path.Root(f.name), "Value Conversion Error", fmt.Sprintf("%s: %v", c.model, err))
				return types.ObjectUnknown(attrTypes), diags
			}
			v = converted
		}
		vals[f.name] = v
	}
	return types.ObjectValue(attrTypes, vals)
}

// convertValue is v as a value of type t, through its Terraform value; the two types must be
// the same Terraform type.
func convertValue(ctx context.Context, v attr.Value, t attr.Type) (attr.Value, error) {
	if !t.TerraformType(ctx).Equal(v.Type(ctx).TerraformType(ctx)) {
		return nil, fmt.Errorf("a value of type %s cannot be read as %s", v.Type(ctx), t)
	}
	tv, err := v.ToTerraformValue(ctx)
	if err != nil {
		return nil, err
	}
	return t.ValueFromTerraform(ctx, tv)
}

// getModel reads a configuration, plan or state (tfsdk.Config, Plan or State) into model m, as
// their Get does.
func getModel[T any](ctx context.Context, data interface {
	Get(context.Context, any) diag.Diagnostics
}, m *T) diag.Diagnostics {
	obj, ok := rawObject(ctx, data)
	if !ok {
		if diags := data.Get(ctx, &obj); diags.HasError() {
			return diags
		}
	}
	if obj.IsNull() || obj.IsUnknown() {
		return data.Get(ctx, m) // the framework's own error
	}
	return codecOf(reflect.TypeFor[T]()).read(obj.Attributes(), reflect.ValueOf(m).Elem())
}

// setModel writes model m to a plan, a state or a list result's resource data, as their Set does.
func setModel[T any, D *tfsdk.Plan | *tfsdk.State | *tfsdk.Resource](ctx context.Context, data D, m *T) diag.Diagnostics {
	var schemaType attr.Type
	var set func(context.Context, any) diag.Diagnostics
	switch d := any(data).(type) {
	case *tfsdk.Plan:
		schemaType, set = d.Schema.Type(), d.Set
	case *tfsdk.State:
		schemaType, set = d.Schema.Type(), d.Set
	case *tfsdk.Resource:
		schemaType, set = d.Schema.Type(), d.Set
	}
	obj, diags := codecOf(reflect.TypeFor[T]()).object(ctx, reflect.ValueOf(m).Elem(), schemaType.(attr.TypeWithAttributeTypes).AttributeTypes())
	if diags.HasError() {
		return diags
	}
	// Set takes the Terraform value as it is; given the object, it would convert it again.
	tv, err := obj.ToTerraformValue(ctx)
	if err != nil {
		return set(ctx, obj) // the framework's own error
	}
	return set(ctx, tv)
}

// rawObject is the value of a configuration, plan or state as an object, read as their Get
// reads it into one, without its reflection; ok is false for anything else or on an error
// (which the caller leaves to Get).
func rawObject(ctx context.Context, data any) (obj types.Object, ok bool) {
	var raw tftypes.Value
	var t attr.Type
	switch d := data.(type) {
	case tfsdk.Config:
		raw, t = d.Raw, d.Schema.Type()
	case tfsdk.Plan:
		raw, t = d.Raw, d.Schema.Type()
	case tfsdk.State:
		raw, t = d.Raw, d.Schema.Type()
	default:
		return obj, false
	}
	v, err := t.ValueFromTerraform(ctx, raw)
	if err != nil {
		return obj, false
	}
	obj, ok = v.(types.Object)
	return obj, ok
}

// tagsOf are the attribute names of model T, in field order.
func tagsOf[T any]() []string {
	return structTags(reflect.TypeFor[T]())
}

func structTags(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, structTags(f.Type)...)
		} else if name := f.Tag.Get("tfsdk"); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// tagOf is the attribute name of field of model T; a field without one is a mistake in the
// caller, found by the first test that runs it.
func tagOf[T any](field string) string {
	f, ok := reflect.TypeFor[T]().FieldByName(field)
	if !ok || f.Tag.Get("tfsdk") == "" {
		panic(fmt.Sprintf("%T has no attribute field %s", *new(T), field))
	}
	return f.Tag.Get("tfsdk")
}

// objectTypeOf is the object type of model T.
func objectTypeOf[T any]() types.ObjectType {
	return types.ObjectType{AttrTypes: attrTypesOf[T]()}
}

func structAttrTypes(t reflect.Type) map[string]attr.Type {
	out := map[string]attr.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			maps.Copy(out, structAttrTypes(f.Type))
		} else if name := f.Tag.Get("tfsdk"); name != "" && name != "-" {
			out[name] = fieldAttrType(t, f)
		}
	}
	return out
}

// fieldAttrType is the attribute type of one model field. An unknown field type or element
// model is a mistake in a model declaration, found by the first test that loads the package.
func fieldAttrType(model reflect.Type, f reflect.StructField) attr.Type {
	var elem attr.Type
	if m := f.Tag.Get("model"); m != "" {
		t, ok := nestedModels[m]
		if !ok {
			panic(fmt.Sprintf("%s.%s: model %q is not in nestedModels", model.Name(), f.Name, m))
		}
		elem = types.ObjectType{AttrTypes: structAttrTypes(t)}
	}
	switch f.Tag.Get("elem") {
	case "string":
		elem = types.StringType
	case "int64":
		elem = types.Int64Type
	}
	switch reflect.Zero(f.Type).Interface().(type) {
	case types.String:
		return types.StringType
	case types.Int64:
		return types.Int64Type
	case types.Float64:
		return types.Float64Type
	case types.Bool:
		return types.BoolType
	case types.Number:
		return types.NumberType
	case types.Object:
		if o, ok := elem.(types.ObjectType); ok {
			return o
		}
	case types.List:
		if elem != nil {
			return types.ListType{ElemType: elem}
		}
	case types.Map:
		if elem != nil {
			return types.MapType{ElemType: elem}
		}
	case basetypes.ObjectValuable: // a custom object value, e.g. the timeouts block's
		if o, ok := elem.(types.ObjectType); ok {
			return o
		}
	}
	panic(fmt.Sprintf("%s.%s: no attribute type for %s (a nested value needs a model or elem tag)", model.Name(), f.Name, f.Type))
}

// modelOf reads a known object into model T; ok is false, and the model all null, when the
// object is null or unknown. Attributes keep their own null and unknown states.
func modelOf[T any](v types.Object) (m T, ok bool) {
	if v.IsNull() || v.IsUnknown() {
		return m, false
	}
	if d := codecOf(reflect.TypeFor[T]()).read(v.Attributes(), reflect.ValueOf(&m).Elem()); d.HasError() {
		// The object's type is the model's by construction (schema and model tags agree).
		panic(fmt.Sprintf("reading %T: %v", m, d))
	}
	return m, true
}

// elementsOf reads each element of a known list of objects into model T; a null or unknown
// element is an all-null model. A null or unknown list has no elements.
func elementsOf[T any](v types.List) []T {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make([]T, 0, len(v.Elements()))
	for _, e := range v.Elements() {
		var m T
		if o, isObj := e.(types.Object); isObj {
			m, _ = modelOf[T](o)
		}
		out = append(out, m)
	}
	return out
}

// objectFrom is the object value of model T.
func objectFrom[T any](m T) (types.Object, diag.Diagnostics) {
	c := codecOf(reflect.TypeFor[T]())
	return c.object(context.Background(), reflect.ValueOf(m), c.attrTypes)
}

// listFrom is the list of models ms, each element an object of model T, as
// types.ListValueFrom makes it: a nil slice is a null list.
func listFrom[T any](ms []T) (types.List, diag.Diagnostics) {
	c := codecOf(reflect.TypeFor[T]())
	elemType := types.ObjectType{AttrTypes: c.attrTypes}
	if ms == nil {
		return types.ListNull(elemType), nil
	}
	var diags diag.Diagnostics
	elems := make([]attr.Value, 0, len(ms))
	for _, m := range ms {
		obj, d := c.object(context.Background(), reflect.ValueOf(m), c.attrTypes)
		if diags.Append(d...); diags.HasError() {
			return types.ListUnknown(elemType), diags
		}
		elems = append(elems, obj)
	}
	list, d := types.ListValue(elemType, elems)
	diags.Append(d...)
	return list, diags
}

// unknownPaths calls mark with the path of every unknown value in v, at any depth: an unknown
// object, list or map is one path, and a known one is searched element by element, in order.
// Null values are not unknown.
func unknownPaths(v attr.Value, at path.Path, mark func(path.Path)) {
	if v == nil || v.IsNull() {
		return
	}
	if v.IsUnknown() {
		mark(at)
		return
	}
	switch x := v.(type) {
	case types.Object:
		attrs := x.Attributes()
		for _, name := range slices.Sorted(maps.Keys(attrs)) {
			unknownPaths(attrs[name], at.AtName(name), mark)
		}
	case types.List:
		for i, e := range x.Elements() {
			unknownPaths(e, at.AtListIndex(i), mark)
		}
	case types.Map:
		elems := x.Elements()
		for _, k := range slices.Sorted(maps.Keys(elems)) {
			unknownPaths(elems[k], at.AtMapKey(k), mark)
		}
	case types.Dynamic:
		if x.IsUnderlyingValueUnknown() {
			mark(at)
			return
		}
		unknownPaths(x.UnderlyingValue(), at, mark)
	case basetypes.ObjectValuable: // custom object types, e.g. timeouts
		if o, d := x.ToObjectValue(context.Background()); !d.HasError() {
			unknownPaths(o, at, mark)
		}
	}
}

// modelUnknownPaths is unknownPaths for each attribute of model m (a struct of attribute
// values with tfsdk tags, and of embedded such structs), below at.
func modelUnknownPaths(m any, at path.Path, mark func(path.Path)) {
	structUnknownPaths(reflect.ValueOf(m), at, mark)
}

// structUnknownPaths walks values rather than interfaces: an embedded model may be unexported.
func structUnknownPaths(rv reflect.Value, at path.Path, mark func(path.Path)) {
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if f.Anonymous {
			structUnknownPaths(rv.Field(i), at, mark)
			continue
		}
		name := f.Tag.Get("tfsdk")
		if v, ok := rv.Field(i).Interface().(attr.Value); ok && name != "" && name != "-" {
			unknownPaths(v, at.AtName(name), mark)
		}
	}
}

// pathSteps is a path as quota.Config steps: attribute names, list indexes and map keys.
func pathSteps(p path.Path) []string {
	var out []string
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case path.PathStepAttributeName:
			out = append(out, string(s))
		case path.PathStepElementKeyInt:
			out = append(out, strconv.FormatInt(int64(s), 10))
		case path.PathStepElementKeyString:
			out = append(out, string(s))
		}
	}
	return out
}

// Known values, nil when null or unknown.

func knownString(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return v.ValueStringPointer()
}

func knownInt64(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return v.ValueInt64Pointer()
}

func knownFloat64(v types.Float64) *float64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return v.ValueFloat64Pointer()
}

// knownDecimal is a float attribute as the exact decimal the user wrote (see
// quota.DecimalFromFloat).
func knownDecimal(v types.Float64) *big.Rat {
	if f := knownFloat64(v); f != nil {
		return quota.DecimalFromFloat(*f)
	}
	return nil
}

func knownBool(v types.Bool) *bool {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return v.ValueBoolPointer()
}

// knownStrings are the known elements of a list of strings: nil for a null or unknown list, a
// non-nil slice for a known one, even when empty.
func knownStrings(v types.List) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := []string{}
	for _, e := range v.Elements() {
		if s, ok := e.(types.String); ok && knownString(s) != nil {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// knownStringMap is knownStrings for a map.
func knownStringMap(v types.Map) map[string]string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	for k, e := range v.Elements() {
		if s, ok := e.(types.String); ok && knownString(s) != nil {
			out[k] = s.ValueString()
		}
	}
	return out
}
