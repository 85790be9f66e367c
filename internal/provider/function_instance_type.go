package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

type instanceTypeFunction struct{ functionBase }

// functionsSeeNoOverrides says why both functions read only the built-in catalog.
const functionsSeeNoOverrides = "provider functions receive no provider configuration, so the provider's " +
	"`instance_types` overrides and additions are not applied"

var instanceTypeReturnAttrTypes = attrTypesOf[instanceTypeFiguresModel]()

var instanceTypeDefinition = function.Definition{
	Summary: "Per-instance capacity of an instance type in the built-in catalog",
	MarkdownDescription: "Returns the figures of one instance of a type in the provider's built-in catalog: " +
		"`accelerators`, `accelerator_type`, `accelerator_resource`, `vcpu`, `memory_in_gib`, `efa` and " +
		"`mig_profiles`, as the `hyperpod_instance_type_capacity` data source reports them, without reading the cluster. " +
		"The function uses the built-in catalog only: " + functionsSeeNoOverrides + " (the data source applies them).",
	Parameters: []function.Parameter{
		function.StringParameter{
			Name:                "name",
			MarkdownDescription: "Instance type, e.g. `ml.g5.12xlarge`. An unknown name is an error that names the closest known types and lists every known one.",
		},
	},
	Return: function.ObjectReturn{AttributeTypes: instanceTypeReturnAttrTypes},
}

func (f *instanceTypeFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var name string
	resp.Error = req.Arguments.Get(ctx, &name)
	if resp.Error != nil {
		return
	}
	out, funcErr := instanceTypeValue(ctx, catalog.Builtin(), name)
	setResult(ctx, resp, out, funcErr)
}

func instanceTypeValue(ctx context.Context, cat *catalog.Catalog, name string) (types.Object, *function.FuncError) {
	it, ok := cat.Lookup(name)
	if !ok {
		return types.Object{}, function.NewArgumentFuncError(0, "Unknown instance type: "+quota.UnknownBuiltinTypeDetail(cat, name))
	}
	figures, diags := figuresOf(ctx, it)
	out, d := objectFrom(figures)
	diags.Append(d...)
	return out, function.FuncErrorFromDiags(ctx, diags)
}

// figuresOf are the per-instance figures of a catalog instance type, as both the instance_type
// function and the capacity data source report them: mig_profiles is an empty list, not null,
// for types without MIG.
func figuresOf(ctx context.Context, it catalog.InstanceType) (instanceTypeFiguresModel, diag.Diagnostics) {
	profiles, diags := types.ListValueFrom(ctx, types.StringType, nonNil(it.MIGProfiles))
	return instanceTypeFiguresModel{
		AcceleratorType: types.StringValue(it.AcceleratorType),
		instanceTypeOverrideModel: instanceTypeOverrideModel{
			Accelerators:        types.Int64Value(it.Accelerators),
			AcceleratorResource: types.StringValue(it.AcceleratorResource),
			VCPU:                types.Float64Value(it.VCPU),
			MemoryInGiB:         types.Float64Value(it.MemoryGiB),
			EFA:                 types.Int64Value(it.EFA),
			MIGProfiles:         profiles,
		},
	}, diags
}
