package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// priorityClassAttrTypes is the object type of one priority_classes element.
var priorityClassAttrTypes = attrTypesOf[priorityClassModel]()

// priorityClassesOf reads a priority_classes value element by element. An unknown or null
// name is "" and an unknown or null weight 0.
func priorityClassesOf(list types.List) []quota.PriorityClass {
	var classes []quota.PriorityClass
	for _, m := range elementsOf[priorityClassModel](list) {
		classes = append(classes, quota.PriorityClass{Name: m.Name.ValueString(), Weight: m.Weight.ValueInt64()})
	}
	return classes
}

// priorityClassList is the priority_classes value of known classes.
func priorityClassList(classes []quota.PriorityClass) types.List {
	models := make([]priorityClassModel, 0, len(classes))
	for _, c := range classes {
		models = append(models, priorityClassModel{Name: types.StringValue(c.Name), Weight: types.Int64Value(c.Weight),
			PriorityClassName: types.StringValue(quota.PriorityClassObjectName(c.Name))})
	}
	list, d := types.ListValueFrom(context.Background(), types.ObjectType{AttrTypes: priorityClassAttrTypes}, models)
	if d.HasError() {
		panic(fmt.Sprintf("priority_classes value: %v", d)) // the models are the element type by construction
	}
	return list
}

// schedulerConfigID is the id of a set of classes: their names joined by commas.
func schedulerConfigID(classes []quota.PriorityClass) string {
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

func classAttr(i int) path.Path { return path.Root("priority_classes").AtListIndex(i).AtName("name") }
