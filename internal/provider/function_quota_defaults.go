package provider

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

type quotaDefaultsFunction struct{ functionBase }

// Argument positions, for function.NewArgumentFuncError.
const (
	argInstanceType int64 = 0
	argAllocation   int64 = 1
)

var quotaDefaultsReturnAttrTypes = attrTypesOf[quotaDefaultsModel]()

// allocationAttributes are the attributes of a resources entry an allocation may set: those
// of the ratio rule, in its order, then efa. The entry's instance type is accepted too (see
// readAllocation).
var (
	entryInstanceType    = tagOf[resourceEntryModel]("InstanceType")
	allocationAttributes = slices.DeleteFunc(tagsOf[resourceEntryModel](), func(name string) bool { return name == entryInstanceType })
)

var quotaDefaultsDefinition = function.Definition{
	Summary: "Amounts hyperpod_compute_quota plans for one resources entry",
	MarkdownDescription: "Returns the `accelerators`, `vcpu`, `memory_in_gib` and `efa` that `hyperpod_compute_quota` plans " +
		"for one `resources` entry of the given instance type and allocation: the same ratio rule, the same rounding and " +
		"the same errors. Configured amounts are returned as given; `accelerator_partition` is returned as given, or null. " +
		"The function uses the built-in instance type catalog only: " + functionsSeeNoOverrides + ", and a type " +
		"defined only there is an unknown instance type.",
	Parameters: []function.Parameter{
		function.StringParameter{
			Name: "instance_type",
			MarkdownDescription: "Instance type of the built-in catalog, e.g. `ml.p5.48xlarge`. " +
				"`provider::hyperpod::instance_type` returns the figures the amounts are computed from.",
		},
		function.DynamicParameter{
			Name: "allocation",
			// null is let through so that an empty allocation gets the same "No quota size" error as the resource.
			AllowNullValue: true,
			MarkdownDescription: "An object with the attributes of one `resources` entry, all optional: `count`, " +
				"`accelerators`, `accelerator_partition` (`{ type, count }`), `vcpu`, `memory_in_gib`, `efa`, e.g. " +
				"`{ accelerators = 4 }`. The first of `count`, `accelerators`, `accelerator_partition`, `vcpu`, " +
				"`memory_in_gib` that is set sizes the entry. A whole `resources` entry may be passed too: its " +
				"`instance_type` must then equal the first argument.",
		},
	},
	Return: function.ObjectReturn{AttributeTypes: quotaDefaultsReturnAttrTypes},
}

func (f *quotaDefaultsFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var instanceType string
	var allocation types.Dynamic
	resp.Error = req.Arguments.Get(ctx, &instanceType, &allocation)
	if resp.Error != nil {
		return
	}
	result, funcErr := quotaDefaults(ctx, catalog.Builtin(), instanceType, allocation)
	setResult(ctx, resp, result, funcErr)
}

// quotaDefaults is the function's result: the resolved amounts of the entry, as the resource
// plans them (plannedQuotaModel), or unknown when part of the allocation is.
func quotaDefaults(ctx context.Context, cat *catalog.Catalog, instanceType string, allocation types.Dynamic) (types.Object, *function.FuncError) {
	if _, known := cat.Lookup(instanceType); !known {
		return types.Object{}, function.NewArgumentFuncError(argInstanceType, "Unknown instance type: "+quota.UnknownBuiltinTypeDetail(cat, instanceType))
	}
	a, funcErr := readAllocation(instanceType, allocation)
	if funcErr != nil {
		return types.Object{}, funcErr
	}
	if a.unknown {
		// Terraform does not call a function with unknown arguments unless it allows them;
		// this guards against a partly unknown object all the same.
		return types.ObjectUnknown(quotaDefaultsReturnAttrTypes), nil
	}
	r, problems := quota.PlanEntry(cat, a.entry)
	if len(problems) > 0 {
		return types.Object{}, problemsFuncError(problems)
	}

	var diags diag.Diagnostics
	partition := types.ObjectNull(partitionAttrTypes)
	if p := a.entry.Partition; p != nil {
		var d diag.Diagnostics
		partition, d = objectFrom(partitionModel{Type: types.StringValue(p.Type), Count: types.Int64Value(p.Count)})
		diags.Append(d...)
	}
	out, d := objectFrom(quotaDefaultsModel{
		Accelerators: types.Int64Value(r.Accelerators),
		VCPU:         plannedNumber(a.vcpu, r.VCPU),
		MemoryInGiB:  plannedNumber(a.memory, r.MemoryGiB),
		EFA:          types.Int64Value(r.EFA),
		Partition:    partition,
	})
	diags.Append(d...)
	return out, function.FuncErrorFromDiags(ctx, diags)
}

// plannedNumber is a decimal amount as the resource plans it: the configured value unchanged,
// or the computed one as the float64 floatOrNull hands to Terraform.
func plannedNumber(configured *big.Float, computed *big.Rat) types.Number {
	if configured != nil {
		return types.NumberValue(configured)
	}
	return types.NumberValue(big.NewFloat(floatOrNull(computed).ValueFloat64()))
}

// problemsFuncError turns entry problems into one error on the argument the first one is about.
func problemsFuncError(problems []quota.Problem) *function.FuncError {
	var out *function.FuncError
	for _, p := range problems {
		arg, where := argAllocation, "allocation"
		if len(p.Path) > 0 && p.Path[0] == entryInstanceType {
			arg, where = argInstanceType, "instance_type"
		} else if len(p.Path) > 0 {
			where += "." + strings.Join(p.Path, ".")
		}
		out = function.ConcatFuncErrors(out, function.NewArgumentFuncError(arg, fmt.Sprintf("%s: %s: %s", p.Summary, where, p.Detail)))
	}
	return out
}

// allocation is the allocation argument read into the entry the resource would build from the
// same values. vcpu and memory keep Terraform's value too (see plannedNumber).
type allocation struct {
	entry        quota.Entry
	vcpu, memory *big.Float
	unknown      bool
}

// readAllocation reads the allocation argument the way Terraform and the resource read a
// resources entry: null attributes are unset, numbers must fit the attribute's type (whole
// numbers for count, accelerators, efa and the partition count; the float64 range for vcpu and
// memory_in_gib, which then go through DecimalFromFloat as in quotaConfigFromModel), and
// numeric strings convert as Terraform converts them.
func readAllocation(instanceType string, v types.Dynamic) (allocation, *function.FuncError) {
	a := allocation{entry: quota.Entry{InstanceType: instanceType}}
	// Any unknown value makes the result unknown; a mistake in the known values is still reported.
	unknownPaths(v, path.Empty(), func(path.Path) { a.unknown = true })
	attrs, funcErr := allocationObject("allocation", "{ accelerators = 4 }", v)
	if funcErr != nil || attrs == nil {
		return a, funcErr
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		// instance_type lets a whole resources entry be passed as the allocation.
		if name != entryInstanceType && !slices.Contains(allocationAttributes, name) {
			return a, argError("allocation has no attribute %q. Its attributes are those of a hyperpod_compute_quota resources entry: %s.",
				name, strings.Join(allocationAttributes, ", "))
		}
	}

	var r allocationDecoder
	if v, ok := attrs[entryInstanceType]; ok {
		t, _, isStr := stringValue(v)
		switch {
		case !isStr:
			r.fail("allocation.%s must be a string.", entryInstanceType)
		case t != nil && *t != instanceType:
			r.fail("allocation.%s is %q but the instance_type argument is %q. Remove %s from the allocation, or pass the same type in both.",
				entryInstanceType, *t, instanceType, entryInstanceType)
		}
	}
	at := func(field string) (string, attr.Value) {
		name := tagOf[resourceEntryModel](field)
		return "allocation." + name, attrs[name]
	}
	a.entry.Count = r.whole(at("Count"))
	a.entry.Accelerators = r.whole(at("Accelerators"))
	a.entry.EFA = r.whole(at("EFA"))
	a.vcpu, a.entry.VCPU = r.decimal(at("VCPU"))
	a.memory, a.entry.MemoryGiB = r.decimal(at("MemoryInGiB"))
	if where, v := at("Partition"); v != nil {
		a.entry.Partition = r.partition(where, v)
	}
	if len(r.errs) > 0 {
		return a, function.ConcatFuncErrors(r.errs...)
	}
	return a, nil
}

// allocationDecoder decodes the known values of an allocation, whose types Terraform does not
// check (the argument is dynamic), and collects every problem, so one call reports them all.
type allocationDecoder struct {
	errs []*function.FuncError
}

func (r *allocationDecoder) fail(format string, args ...any) {
	r.errs = append(r.errs, argError(format, args...))
}

// number reads a number attribute; ok is false when it is null, unknown or not a number (a
// problem is then recorded).
func (r *allocationDecoder) number(name string, v attr.Value, example string) (n *big.Float, ok bool) {
	n, unknown, isNum := numberValue(v)
	switch {
	case unknown:
		return nil, false
	case !isNum:
		r.fail("%s must be a number, e.g. %s.", name, example)
		return nil, false
	}
	return n, n != nil
}

func (r *allocationDecoder) whole(name string, v attr.Value) *int64 {
	attrName := name[strings.LastIndexByte(name, '.')+1:]
	n, ok := r.number(name, v, attrName+" = 1")
	if !ok {
		return nil
	}
	i, acc := n.Int64()
	if !n.IsInt() || acc != big.Exact {
		r.fail("%s = %s is not a whole number (a 64-bit integer). Set a whole number, e.g. %s = 1.", name, n.Text('g', -1), attrName)
		return nil
	}
	return &i
}

// decimal returns Terraform's value and the exact decimal the resource reads from it.
func (r *allocationDecoder) decimal(name string, v attr.Value) (*big.Float, *big.Rat) {
	attrName := name[strings.LastIndexByte(name, '.')+1:]
	n, ok := r.number(name, v, attrName+" = 4")
	if !ok {
		return nil, nil
	}
	f, acc := n.Float64()
	if math.IsInf(f, 0) || (f == 0 && acc != big.Exact) {
		r.fail("%s = %s cannot be represented as a 64-bit floating point number. Set a smaller amount.", name, n.Text('g', -1))
		return nil, nil
	}
	return n, quota.DecimalFromFloat(f)
}

// partition reads { type, count } at where; both are required, as in the resource's schema.
func (r *allocationDecoder) partition(where string, v attr.Value) *quota.Partition {
	const value = `{ type = "mig-1g.10gb", count = 2 }`
	example := where[strings.LastIndexByte(where, '.')+1:] + " = " + value
	typeName, countName := tagOf[partitionModel]("Type"), tagOf[partitionModel]("Count")
	attrs, funcErr := allocationObject(where, value, types.DynamicValue(v))
	switch {
	case funcErr != nil:
		r.errs = append(r.errs, funcErr)
		return nil
	case attrs == nil:
		return nil // null or unknown: not set
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		if name != typeName && name != countName {
			r.fail("%s has no attribute %q; it takes %s and %s, e.g. %s.", where, name, typeName, countName, example)
			return nil
		}
	}
	typ, typUnknown, isStr := stringValue(attrs[typeName])
	switch {
	case typUnknown:
	case !isStr:
		r.fail("%s.%s must be a string naming a MIG profile, e.g. %s.", where, typeName, example)
	case typ == nil:
		r.fail("%s.%s is missing; set the MIG profile, e.g. %s.", where, typeName, example)
	}
	if isNull(attrs[countName]) {
		r.fail("%s.%s is missing; set the number of partitions, e.g. %s.", where, countName, example)
		return nil
	}
	count := r.whole(where+"."+countName, attrs[countName])
	if typ == nil || count == nil {
		return nil
	}
	return &quota.Partition{Type: *typ, Count: *count}
}

// allocationObject returns the attributes of an object or map value, nil for null or unknown.
// example is a valid value, for the error.
func allocationObject(what, example string, v types.Dynamic) (attrs map[string]attr.Value, funcErr *function.FuncError) {
	switch {
	case v.IsNull() || v.IsUnderlyingValueNull(), v.IsUnknown() || v.IsUnderlyingValueUnknown():
		return nil, nil
	}
	switch u := v.UnderlyingValue().(type) {
	case types.Object:
		return u.Attributes(), nil
	case types.Map:
		return u.Elements(), nil
	case types.Dynamic:
		return allocationObject(what, example, u)
	}
	return nil, argError("%s must be an object, e.g. %s, not a %s.", what, example, valueTypeName(v.UnderlyingValue()))
}

// isNull reports whether an attribute is absent or null, also inside a dynamic value.
func isNull(v attr.Value) bool {
	if d, ok := v.(types.Dynamic); ok {
		return d.IsNull() || d.IsUnderlyingValueNull()
	}
	return v == nil || v.IsNull()
}

// valueTypeName is the Terraform name of a value's type, for errors.
func valueTypeName(v attr.Value) string {
	switch v.(type) {
	case types.String:
		return "string"
	case types.Number, types.Int64, types.Float64:
		return "number"
	case types.Bool:
		return "bool"
	case types.List:
		return "list"
	case types.Tuple:
		return "tuple"
	case types.Set:
		return "set"
	}
	return v.Type(context.Background()).String()
}

// numberValue reads a number, or a string Terraform would convert to one; isNum is false for
// anything else. A nil number is null.
func numberValue(v attr.Value) (n *big.Float, unknown, isNum bool) {
	if v == nil || v.IsNull() {
		return nil, false, true
	}
	if v.IsUnknown() {
		return nil, true, true
	}
	switch x := v.(type) {
	case types.Number:
		return x.ValueBigFloat(), false, true
	case types.Int64:
		return new(big.Float).SetInt64(x.ValueInt64()), false, true
	case types.Float64:
		return big.NewFloat(x.ValueFloat64()), false, true
	case types.String:
		// The precision and rounding cty uses when it converts a string to a number.
		f, _, err := big.ParseFloat(x.ValueString(), 10, 512, big.ToNearestEven)
		if err == nil && !f.IsInf() {
			return f, false, true
		}
	case types.Dynamic:
		if x.IsUnderlyingValueNull() {
			return nil, false, true
		}
		if x.IsUnderlyingValueUnknown() {
			return nil, true, true
		}
		return numberValue(x.UnderlyingValue())
	}
	return nil, false, false
}

// stringValue reads a string; isStr is false for any other type. A nil string is null.
func stringValue(v attr.Value) (s *string, unknown, isStr bool) {
	switch x := v.(type) {
	case nil:
		return nil, false, true
	case types.Dynamic:
		if x.IsUnderlyingValueNull() || x.IsNull() {
			return nil, false, true
		}
		if x.IsUnknown() || x.IsUnderlyingValueUnknown() {
			return nil, true, true
		}
		return stringValue(x.UnderlyingValue())
	case types.String:
		if x.IsUnknown() {
			return nil, true, true
		}
		return x.ValueStringPointer(), false, true
	}
	if v.IsNull() {
		return nil, false, true
	}
	if v.IsUnknown() {
		return nil, true, true
	}
	return nil, false, false
}

func argError(format string, args ...any) *function.FuncError {
	return function.NewArgumentFuncError(argAllocation, fmt.Sprintf(format, args...))
}

// setResult is the end of every function's Run: the result, or the error that stopped it.
func setResult(ctx context.Context, resp *function.RunResponse, result types.Object, funcErr *function.FuncError) {
	if funcErr != nil {
		resp.Error = withoutFullStop(funcErr)
		return
	}
	resp.Error = resp.Result.Set(ctx, result)
}

// withoutFullStop drops the final full stop of an error: Terraform adds its own after the text.
func withoutFullStop(e *function.FuncError) *function.FuncError {
	if e != nil {
		e.Text = strings.TrimSuffix(e.Text, ".")
	}
	return e
}
