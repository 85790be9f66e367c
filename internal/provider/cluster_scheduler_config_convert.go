package provider

import (
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// priorityClassAttrTypes is the object type of one priority_classes element.
var priorityClassAttrTypes = map[string]attr.Type{
	"name":                types.StringType,
	"weight":              types.Int64Type,
	"priority_class_name": types.StringType,
}

// priorityClassElements reads a priority_classes value element by element. An unknown name is
// "" and an unknown weight 0; known reports, per element, whether both are known.
func priorityClassElements(list types.List) (classes []quota.PriorityClass, known []bool) {
	if list.IsNull() || list.IsUnknown() {
		return nil, nil
	}
	for _, e := range list.Elements() {
		var c quota.PriorityClass
		ok := false
		if o, isObj := e.(types.Object); isObj && !o.IsNull() && !o.IsUnknown() {
			attrs := o.Attributes()
			name, _ := attrs["name"].(types.String)
			weight, _ := attrs["weight"].(types.Int64)
			if !name.IsUnknown() && !name.IsNull() {
				c.Name = name.ValueString()
			}
			if !weight.IsUnknown() && !weight.IsNull() {
				c.Weight = weight.ValueInt64()
			}
			ok = c.Name != "" && !weight.IsUnknown() && !weight.IsNull()
		}
		classes = append(classes, c)
		known = append(known, ok)
	}
	return classes, known
}

// priorityClassList is the priority_classes value of known classes.
func priorityClassList(classes []quota.PriorityClass) types.List {
	elems := make([]attr.Value, 0, len(classes))
	for _, c := range classes {
		elems = append(elems, types.ObjectValueMust(priorityClassAttrTypes, map[string]attr.Value{
			"name":                types.StringValue(c.Name),
			"weight":              types.Int64Value(c.Weight),
			"priority_class_name": types.StringValue(quota.PriorityClassObjectName(c.Name)),
		}))
	}
	return types.ListValueMust(types.ObjectType{AttrTypes: priorityClassAttrTypes}, elems)
}

// schedulerConfigID is the id of a set of classes: their names joined by commas.
func schedulerConfigID(classes []quota.PriorityClass) string {
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

// classesOf reads the classes of a plan or state, which are known at apply and refresh.
func classesOf(list types.List) []quota.PriorityClass {
	classes, _ := priorityClassElements(list)
	return classes
}

// classObjects names the WorkloadPriorityClasses of classes.
func classObjects(classes []quota.PriorityClass) []kubeObject {
	out := make([]kubeObject, len(classes))
	for i, c := range classes {
		out[i] = priorityClassKind.object("", quota.PriorityClassObjectName(c.Name))
	}
	return out
}

func classAttr(i int) path.Path { return path.Root("priority_classes").AtListIndex(i).AtName("name") }
