package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The fast path's passes over a request's values, each the framework's in effect (its
// internal/fwserver and internal/fwschemadata) in one walk of the compiled schema. A
// diagnostic of any pass sends the whole request to the framework, so the texts here only
// need to say that something is wrong: the framework words the answer.

// objectAttributes are the attributes of an object value; nil when it is null or unknown.
func objectAttributes(v tftypes.Value) map[string]tftypes.Value {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	var attrs map[string]tftypes.Value
	if v.As(&attrs) != nil {
		return nil
	}
	return attrs
}

// listElements are the elements of a list value; nil when it is null or unknown.
func listElements(v tftypes.Value) []tftypes.Value {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	var elems []tftypes.Value
	if v.As(&elems) != nil {
		return nil
	}
	return elems
}

// fastValidation is the schema validation of one configuration (the framework's
// SchemaValidate): attribute flags, value conversions and validators.
type fastValidation struct {
	config tfsdk.Config
	caps   validator.ValidateSchemaClientCapabilities
	diags  diag.Diagnostics
}

// object validates the attributes nodes of object value v at at. The value of an attribute
// under a null or unknown object is null, as the framework reads it.
func (r *fastValidation) object(ctx context.Context, nodes []*fastNode, v tftypes.Value, at path.Path) {
	attrs := objectAttributes(v)
	for _, n := range nodes {
		nv, ok := attrs[n.name]
		if !ok {
			nv = tftypes.NewValue(n.tfType, nil)
		}
		r.node(ctx, n, nv, at.AtName(n.name))
	}
}

func (r *fastValidation) node(ctx context.Context, n *fastNode, v tftypes.Value, at path.Path) {
	if !n.block {
		if n.computed && !n.optional && !v.IsNull() {
			r.diags.AddAttributeError(at, "Invalid Configuration for Read-Only Attribute", "")
		}
		if n.required && v.IsNull() {
			r.diags.AddAttributeError(at, "Missing Configuration for Required Attribute", "")
		}
	}
	// The framework reads every value it validates; a number that is not an int64 fails here.
	av := n.read(ctx, v, at, &r.diags)
	if av == nil {
		return
	}
	if n.validate != nil {
		n.validate(ctx, r, av, at)
	}
	switch {
	case n.nesting == nestingList:
		for i, e := range listElements(v) {
			r.object(ctx, n.children, e, at.AtListIndex(i))
		}
	case n.nesting == nestingSingle && (n.block || v.IsKnown() && !v.IsNull()):
		// A block's attributes are validated even when it is absent, an attribute's are not.
		r.object(ctx, n.children, v, at)
	}
}

// read is v as the framework reads a value at a path: converted to the attribute's type and
// checked by it; nil after a diagnostic.
func (n *fastNode) read(ctx context.Context, v tftypes.Value, at path.Path, diags *diag.Diagnostics) attr.Value {
	av, err := n.attrType.ValueFromTerraform(ctx, v)
	if err != nil {
		diags.AddAttributeError(at, "Value Read Error", err.Error())
		return nil
	}
	if n.typeCheck != nil {
		d := n.typeCheck(ctx, v, at)
		diags.Append(d...)
		if d.HasError() {
			return nil
		}
	}
	return av
}

// readConfig reads the configuration at each attribute path of planned, as the framework's
// TransformDefaults does before it looks for a default: only the reading can fail, so only the
// attributes whose values can fail their type's check are read.
func readConfig(ctx context.Context, nodes []*fastNode, planned, config tftypes.Value, at path.Path, diags *diag.Diagnostics) {
	attrs, configAttrs := objectAttributes(planned), objectAttributes(config)
	for _, n := range nodes {
		pv, ok := attrs[n.name]
		if !ok || !n.fallible {
			continue
		}
		cv, ok := configAttrs[n.name]
		if !ok {
			cv = tftypes.NewValue(n.tfType, nil)
		}
		n.readConfig(ctx, pv, cv, at.AtName(n.name), diags)
	}
}

func (n *fastNode) readConfig(ctx context.Context, planned, config tftypes.Value, at path.Path, diags *diag.Diagnostics) {
	if !n.block {
		n.read(ctx, config, at, diags)
	}
	switch n.nesting {
	case nestingSingle:
		readConfig(ctx, n.children, planned, config, at, diags)
	case nestingList:
		configElems := listElements(config)
		for i, e := range listElements(planned) {
			c := tftypes.NewValue(e.Type(), nil)
			if i < len(configElems) {
				c = configElems[i]
			}
			readConfig(ctx, n.children, e, c, at.AtListIndex(i), diags)
		}
	}
}

// applyDefaults applies the defaults of top-level attributes whose configuration is null (the
// framework's TransformDefaults; compileSchema takes defaults only there).
func applyDefaults(ctx context.Context, nodes []*fastNode, planned, config tftypes.Value, diags *diag.Diagnostics) tftypes.Value {
	var attrs, configAttrs map[string]tftypes.Value
	for _, n := range nodes {
		if n.defaultValue == nil {
			continue
		}
		if attrs == nil {
			attrs, configAttrs = objectAttributes(planned), objectAttributes(config)
		}
		if c, ok := configAttrs[n.name]; ok && !c.IsNull() {
			continue
		}
		v, d := n.defaultValue(ctx, path.Root(n.name))
		diags.Append(d...)
		if d.HasError() {
			return planned
		}
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			diags.AddAttributeError(path.Root(n.name), "Default Error", err.Error())
			return planned
		}
		attrs[n.name] = tv
	}
	if attrs == nil {
		return planned
	}
	return tftypes.NewValue(planned.Type(), attrs)
}

// markUnknown plans unknown every computed attribute without a default whose configuration is
// null (the framework's MarkComputedNilsAsUnknown), children before their parents. config is
// the configuration at the same place, or its nearest null or unknown ancestor.
func markUnknown(nodes []*fastNode, planned, config tftypes.Value) tftypes.Value {
	attrs := objectAttributes(planned)
	if attrs == nil {
		return planned
	}
	configAttrs := objectAttributes(config)
	for _, n := range nodes {
		pv, ok := attrs[n.name]
		if !ok {
			continue
		}
		cv := config
		if configAttrs != nil {
			cv, ok = configAttrs[n.name]
			if !ok {
				cv = config
			}
		}
		attrs[n.name] = n.markUnknown(pv, cv)
	}
	return tftypes.NewValue(planned.Type(), attrs)
}

func (n *fastNode) markUnknown(planned, config tftypes.Value) tftypes.Value {
	switch n.nesting {
	case nestingSingle:
		planned = markUnknown(n.children, planned, config)
	case nestingList:
		if elems := listElements(planned); len(elems) > 0 {
			configElems := listElements(config)
			for i, e := range elems {
				c := config // past the configuration's elements, or under a null or unknown list
				if i < len(configElems) {
					c = configElems[i]
				}
				elems[i] = markUnknown(n.children, e, c)
			}
			planned = tftypes.NewValue(planned.Type(), elems)
		}
	}
	if n.block || !config.IsNull() || !n.computed || n.defaultValue != nil {
		return planned
	}
	return tftypes.NewValue(planned.Type(), tftypes.UnknownValue)
}

// fastPlanning is the schema plan modification of one plan (the framework's SchemaModifyPlan).
type fastPlanning struct {
	req resource.ModifyPlanRequest // configuration, plan and state as the modifiers see them
	// private holds, in its Private, the private state as the modifiers leave it.
	private resource.ModifyPlanResponse
	diags   diag.Diagnostics
	replace path.Paths
}

// fastModify is one attribute's values while its plan modifiers run.
type fastModify struct {
	*fastPlanning
	path                path.Path
	config, plan, state attr.Value
}

// root runs the plan modifiers of the top-level attributes and blocks and returns the plan.
// Attributes without plan modifiers at or under them keep their planned value, which the
// framework's conversion there and back would not change.
func (pl *fastPlanning) root(ctx context.Context, nodes []*fastNode) tftypes.Value {
	planned := pl.req.Plan.Raw
	attrs := objectAttributes(planned)
	configAttrs, stateAttrs := objectAttributes(pl.req.Config.Raw), objectAttributes(pl.req.State.Raw)
	for _, n := range nodes {
		values := [3]attr.Value{}
		for i, raw := range []map[string]tftypes.Value{configAttrs, attrs, stateAttrs} {
			v, ok := raw[n.name]
			if !ok {
				v = tftypes.NewValue(n.tfType, nil)
			}
			if values[i] = n.read(ctx, v, path.Root(n.name), &pl.diags); values[i] == nil {
				return planned
			}
		}
		if !n.modified {
			continue
		}
		v := pl.node(ctx, n, path.Root(n.name), values[0], values[1], values[2])
		if pl.diags.HasError() {
			return planned
		}
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			pl.diags.AddAttributeError(path.Root(n.name), "Value Conversion Error", err.Error())
			return planned
		}
		attrs[n.name] = tv
	}
	return tftypes.NewValue(planned.Type(), attrs)
}

// node runs the plan modifiers of n and of the attributes under it, and returns its plan.
func (pl *fastPlanning) node(ctx context.Context, n *fastNode, at path.Path, config, plan, state attr.Value) attr.Value {
	if n.modify != nil {
		m := &fastModify{fastPlanning: pl, path: at, config: config, plan: plan, state: state}
		n.modify(ctx, m)
		if pl.diags.HasError() {
			return plan
		}
		plan = m.plan
	}
	if plan.IsNull() || plan.IsUnknown() || !n.modified || n.modify != nil && n.nesting == nestingNone {
		return plan
	}
	switch n.nesting {
	case nestingList:
		return pl.list(ctx, n, at, config, plan, state)
	case nestingSingle:
		o := pl.object(ctx, n, at, pl.toObject(ctx, at, config), pl.toObject(ctx, at, plan), pl.toObject(ctx, at, state))
		if typable, ok := n.attrType.(basetypes.ObjectTypable); ok && !pl.diags.HasError() {
			v, d := typable.ValueFromObject(ctx, o)
			pl.diags.Append(d...)
			return v
		}
		return o
	}
	return plan
}

func (pl *fastPlanning) list(ctx context.Context, n *fastNode, at path.Path, config, plan, state attr.Value) attr.Value {
	lists := [3]types.List{}
	for i, v := range []attr.Value{config, plan, state} {
		lv, ok := v.(basetypes.ListValuable)
		if !ok {
			pl.diags.AddAttributeError(at, "Unexpected value type", "")
			return plan
		}
		l, d := lv.ToListValue(ctx)
		pl.diags.Append(d...)
		lists[i] = l
	}
	elems := lists[1].Elements()
	for i, e := range elems {
		eo := pl.toObject(ctx, at, e)
		elems[i] = pl.object(ctx, n, at.AtListIndex(i), n.listElement(lists[0], i), eo, n.listElement(lists[2], i))
	}
	v, d := types.ListValue(lists[1].ElementType(ctx), elems)
	pl.diags.Append(d...)
	return v
}

// listElement is element i of l as the framework hands it to plan modifiers: null past the end
// or in a null list, unknown in an unknown one.
func (n *fastNode) listElement(l types.List, i int) types.Object {
	switch {
	case l.IsUnknown():
		return types.ObjectUnknown(n.objectType.AttrTypes)
	case l.IsNull() || i >= len(l.Elements()):
		return types.ObjectNull(n.objectType.AttrTypes)
	}
	o, _ := l.Elements()[i].(types.Object)
	return o
}

func (pl *fastPlanning) toObject(ctx context.Context, at path.Path, v attr.Value) types.Object {
	ov, ok := v.(basetypes.ObjectValuable)
	if !ok {
		pl.diags.AddAttributeError(at, "Unexpected value type", "")
		return types.ObjectNull(nil)
	}
	o, d := ov.ToObjectValue(ctx)
	pl.diags.Append(d...)
	return o
}

// object runs the plan modifiers of the attributes of a nested object. The configuration and
// state of an attribute under a null (unknown) object are null (unknown).
func (pl *fastPlanning) object(ctx context.Context, n *fastNode, at path.Path, config, plan, state types.Object) types.Object {
	if plan.IsNull() || plan.IsUnknown() || pl.diags.HasError() {
		return plan
	}
	attrs, configAttrs, stateAttrs := plan.Attributes(), config.Attributes(), state.Attributes()
	for _, c := range n.children {
		if !c.modified {
			continue
		}
		attrs[c.name] = pl.node(ctx, c, at.AtName(c.name), c.childOf(config, configAttrs), attrs[c.name], c.childOf(state, stateAttrs))
		if pl.diags.HasError() {
			return plan
		}
	}
	o, d := types.ObjectValue(plan.AttributeTypes(ctx), attrs)
	pl.diags.Append(d...)
	return o
}

func (n *fastNode) childOf(o types.Object, attrs map[string]attr.Value) attr.Value {
	switch {
	case o.IsNull():
		return n.null
	case o.IsUnknown():
		return n.unknown
	}
	return attrs[n.name]
}
