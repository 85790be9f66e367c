package provider

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// Schemas name each attribute and block once, in the tfsdk tag of its model field. A schema
// lists the fields of a model value by address, each with its attribute or block:
//
//	var m teamUsageModel
//	attributesOf(&m, []fieldSchema[schema.Attribute]{{&m.Team, schema.StringAttribute{...}}, ...})
//
// Building it checks that each address is a tagged field of the model (embedded models
// included), that no field is listed twice, that each attribute or block has the field's
// attribute type (fieldAttrType) and that every tagged field is listed. A mistake panics:
// TestEverySchemaBuilds finds it.

// fieldSchema is the attribute or block of one model field.
type fieldSchema[S any] struct {
	field  any // the field's address, e.g. &m.Team
	schema S
}

// schemaAttribute and schemaBlock are what the schema packages' attributes and blocks share.
type schemaAttribute interface{ GetType() attr.Type }

type schemaBlock interface{ Type() attr.Type }

// attributesOf is the attribute map of a schema without blocks; model is a pointer to the
// model value whose fields attrs lists.
func attributesOf[A schemaAttribute](model any, attrs []fieldSchema[A]) map[string]A {
	out, _ := attributesAndBlocksOf[A, schemaBlock](model, attrs, nil)
	return out
}

// attributesAndBlocksOf is the attribute and block maps of a schema: together they list every
// tagged field of the model.
func attributesAndBlocksOf[A schemaAttribute, B schemaBlock](model any, attrs []fieldSchema[A], blocks []fieldSchema[B]) (map[string]A, map[string]B) {
	fields := modelFieldsOf(model)
	attrMap := make(map[string]A, len(attrs))
	for _, a := range attrs {
		attrMap[fields.take(a.field, a.schema.GetType())] = a.schema
	}
	var blockMap map[string]B
	if len(blocks) > 0 {
		blockMap = make(map[string]B, len(blocks))
	}
	for _, b := range blocks {
		blockMap[fields.take(b.field, b.schema.Type())] = b.schema
	}
	fields.requireAllTaken()
	return attrMap, blockMap
}

// modelFields are the tagged fields of one model value, with their addresses. The value is on
// the heap (it escapes through model any), where Go does not move it.
type modelFields struct {
	model  reflect.Type
	fields []modelField
}

type modelField struct {
	addr  uintptr
	owner reflect.Type // the model or embedded model that declares the field
	field reflect.StructField
	taken bool
}

func modelFieldsOf(model any) *modelFields {
	v := reflect.ValueOf(model)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("schema model %T is not a pointer to a model value", model))
	}
	fs := &modelFields{model: v.Elem().Type()}
	fs.add(v.Elem(), map[string]bool{})
	return fs
}

// add collects the tagged fields of struct value v, and those of the models it embeds.
func (fs *modelFields) add(v reflect.Value, names map[string]bool) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous {
			fs.add(v.Field(i), names)
			continue
		}
		name := f.Tag.Get("tfsdk")
		if name == "" || name == "-" {
			continue
		}
		if names[name] {
			panic(fmt.Sprintf("%s: two fields are tagged %q", fs.model, name))
		}
		names[name] = true
		fs.fields = append(fs.fields, modelField{addr: v.Field(i).UnsafeAddr(), owner: v.Type(), field: f})
	}
}

// take marks the field at address ptr as listed, with an attribute or block of type got, and
// returns its name. Address and type together identify the field: a model embedded first
// shares its address with its own first field.
func (fs *modelFields) take(ptr any, got attr.Type) string {
	p := reflect.ValueOf(ptr)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		panic(fmt.Sprintf("%s: a schema lists %T, not the address of a field", fs.model, ptr))
	}
	for i := range fs.fields {
		f := &fs.fields[i]
		if f.addr != p.Pointer() || f.field.Type != p.Type().Elem() {
			continue
		}
		name := f.field.Tag.Get("tfsdk")
		if f.taken {
			panic(fmt.Sprintf("%s.%s: the schema lists %q twice", f.owner, f.field.Name, name))
		}
		f.taken = true
		if want := fieldAttrType(f.owner, f.field); !sameAttrType(want, got, f.field.Type) {
			panic(fmt.Sprintf("%s.%s: the schema gives attribute %q the type %s, the model %s", f.owner, f.field.Name, name, got, want))
		}
		return name
	}
	panic(fmt.Sprintf("%s: a schema lists a %s that is not a tagged field of this model value", fs.model, p.Type().Elem()))
}

func (fs *modelFields) requireAllTaken() {
	for _, f := range fs.fields {
		if !f.taken {
			panic(fmt.Sprintf("%s.%s: the schema has no attribute or block %q", f.owner, f.field.Name, f.field.Tag.Get("tfsdk")))
		}
	}
}

// sameAttrType reports whether a schema's type is the model field's. A field of a custom value
// type (the timeouts block's) has its own attribute type, compared by the value Terraform sees.
func sameAttrType(want, got attr.Type, field reflect.Type) bool {
	if want.Equal(got) {
		return true
	}
	ctx := context.Background()
	return !isFrameworkValue(field) && want.TerraformType(ctx).Equal(got.TerraformType(ctx))
}

// isFrameworkValue reports whether a model field holds one of the framework's own values
// (types.String, types.List, ...) rather than a custom one.
func isFrameworkValue(t reflect.Type) bool {
	return t.PkgPath() == reflect.TypeFor[basetypes.ObjectValue]().PkgPath()
}
