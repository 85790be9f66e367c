package provider

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The fast path's view of a resource schema: each attribute and block compiled once into a
// tree, so a request walks the schema and its values together in one pass instead of looking
// every path up in the schema again (what the framework does, copying the schema's attribute
// map at each step). compileSchema refuses what the fast path does not implement; such a
// resource type is served by the framework alone.

// nesting is how a node holds its children.
type nesting int

const (
	nestingNone   nesting = iota
	nestingSingle         // a single nested attribute or block: one object
	nestingList           // a list nested attribute: a list of objects
)

// fastNode is one attribute or block.
type fastNode struct {
	name     string
	attrType attr.Type
	tfType   tftypes.Type
	// null and unknown are the attribute's null and unknown framework values.
	null, unknown attr.Value
	// modified says whether the node or one below it has plan modifiers.
	modified bool
	// typeCheck is the framework's own check of its type's values (an int64 must be a whole
	// number), which it runs on every value it reads at a path; nil for a type without one.
	typeCheck func(context.Context, tftypes.Value, path.Path) diag.Diagnostics
	// fallible says whether a value of the node or of one below it can fail typeCheck.
	fallible bool
	block    bool
	required bool
	optional bool
	computed bool
	// defaultValue is the schema default of a top-level attribute; nil without one.
	defaultValue func(ctx context.Context, at path.Path) (attr.Value, diag.Diagnostics)
	validate     validateFunc // nil without validators
	modify       modifyFunc   // nil without plan modifiers
	nesting      nesting
	children     []*fastNode // the attributes of the nested object, by name
	// objectType is the framework type of the nested object (of each element of a list).
	objectType types.ObjectType
}

// validateFunc runs an attribute's validators on its configuration value.
type validateFunc func(ctx context.Context, r *fastValidation, value attr.Value, at path.Path)

// modifyFunc runs an attribute's plan modifiers on m's values and leaves the planned one in m.
type modifyFunc func(ctx context.Context, m *fastModify)

// finish sets what every node derives from its type and children.
func (n *fastNode) finish(ctx context.Context) error {
	n.tfType = n.attrType.TerraformType(ctx)
	var err error
	if n.null, err = n.attrType.ValueFromTerraform(ctx, tftypes.NewValue(n.tfType, nil)); err != nil {
		return err
	}
	if n.unknown, err = n.attrType.ValueFromTerraform(ctx, tftypes.NewValue(n.tfType, tftypes.UnknownValue)); err != nil {
		return err
	}
	n.modified = n.modify != nil
	//nolint:staticcheck // xattr.TypeWithValidate is deprecated, but the framework still runs it.
	if tv, ok := n.attrType.(xattr.TypeWithValidate); ok {
		n.typeCheck, n.fallible = tv.Validate, true
	}
	for _, c := range n.children {
		n.modified = n.modified || c.modified
		n.fallible = n.fallible || c.fallible
	}
	return nil
}

// compileSchema compiles the attributes and blocks of s, or says what it does not implement.
func compileSchema(ctx context.Context, s schema.Schema) ([]*fastNode, error) {
	if s.DeprecationMessage != "" {
		return nil, fmt.Errorf("deprecated schema")
	}
	nodes, err := compileAttributes(ctx, s.Attributes, true)
	if err != nil {
		return nil, err
	}
	for name, b := range s.Blocks {
		n, err := compileBlock(ctx, name, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		nodes = append(nodes, n)
	}
	sortNodes(nodes)
	return nodes, nil
}

func sortNodes(nodes []*fastNode) {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].name < nodes[j].name })
}

func compileAttributes(ctx context.Context, attrs map[string]schema.Attribute, root bool) ([]*fastNode, error) {
	nodes := make([]*fastNode, 0, len(attrs))
	for name, a := range attrs {
		n, err := compileAttribute(ctx, name, a, root)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		nodes = append(nodes, n)
	}
	sortNodes(nodes)
	return nodes, nil
}

// compileAttribute compiles one attribute; root says whether it is a top-level one, the only
// place where the fast path applies defaults.
func compileAttribute(ctx context.Context, name string, a schema.Attribute, root bool) (*fastNode, error) {
	if a.IsWriteOnly() || a.GetDeprecationMessage() != "" || !a.IsRequired() && !a.IsOptional() && !a.IsComputed() {
		return nil, fmt.Errorf("write-only, deprecated or undefined attribute")
	}
	n := &fastNode{name: name, attrType: a.GetType(), required: a.IsRequired(), optional: a.IsOptional(), computed: a.IsComputed()}
	if err := checkPlainType(ctx, n.attrType); err != nil {
		return nil, err
	}
	var err error
	switch a := a.(type) {
	case schema.StringAttribute:
		err = n.compileLeaf(a.CustomType == nil, a.Default != nil, root, stringValidators(a.Validators), stringModifiers(a.PlanModifiers))
		n.defaultValue = stringDefault(a.Default)
	case schema.Int64Attribute:
		err = n.compileLeaf(a.CustomType == nil, a.Default != nil, root, int64Validators(a.Validators), int64Modifiers(a.PlanModifiers))
		n.defaultValue = int64Default(a.Default)
	case schema.Float64Attribute:
		err = n.compileLeaf(a.CustomType == nil, a.Default != nil, root, float64Validators(a.Validators), float64Modifiers(a.PlanModifiers))
		n.defaultValue = float64Default(a.Default)
	case schema.BoolAttribute:
		err = n.compileLeaf(a.CustomType == nil, a.Default != nil, root, boolValidators(a.Validators), boolModifiers(a.PlanModifiers))
		n.defaultValue = boolDefault(a.Default)
	case schema.MapAttribute:
		err = n.compileLeaf(a.CustomType == nil, a.Default != nil, false, mapValidators(a.Validators), nil)
		if len(a.PlanModifiers) > 0 {
			err = fmt.Errorf("map plan modifiers")
		}
	case schema.ListAttribute:
		err = n.compileLeaf(a.CustomType == nil, a.Default != nil, false, listValidators(a.Validators), nil)
		if len(a.PlanModifiers) > 0 {
			err = fmt.Errorf("list plan modifiers")
		}
	case schema.SingleNestedAttribute:
		err = n.compileNested(ctx, nestingSingle, a.CustomType == nil && a.Default == nil && len(a.PlanModifiers) == 0,
			objectValidators(a.Validators), a.Attributes)
	case schema.ListNestedAttribute:
		o := a.NestedObject
		err = n.compileNested(ctx, nestingList, a.CustomType == nil && a.Default == nil && len(a.PlanModifiers) == 0 &&
			o.CustomType == nil && len(o.Validators) == 0 && len(o.PlanModifiers) == 0, listValidators(a.Validators), o.Attributes)
	default:
		err = fmt.Errorf("attribute kind %T", a)
	}
	if err != nil {
		return nil, err
	}
	return n, n.finish(ctx)
}

// compileLeaf sets an attribute's validators and plan modifiers; plain says it has the
// framework's own type, and a default is taken only where root allows it.
func (n *fastNode) compileLeaf(plain, hasDefault, root bool, v validateFunc, m modifyFunc) error {
	if !plain || hasDefault && !root {
		return fmt.Errorf("custom type or nested default")
	}
	n.validate, n.modify = v, m
	return nil
}

// compileNested compiles a nested attribute whose object has attrs; plain says it has no
// custom type, default or plan modifier of its own.
func (n *fastNode) compileNested(ctx context.Context, mode nesting, plain bool, v validateFunc, attrs map[string]schema.Attribute) error {
	if !plain {
		return fmt.Errorf("custom type, default or plan modifier on a nested attribute")
	}
	children, err := compileAttributes(ctx, attrs, false)
	if err != nil {
		return err
	}
	n.nesting, n.validate, n.children = mode, v, children
	n.objectType = nestedObjectType(children)
	return nil
}

// compileBlock compiles a single nested block without validators or plan modifiers of its own,
// such as the timeouts block (whose custom type changes no value it holds).
func compileBlock(ctx context.Context, name string, b schema.Block) (*fastNode, error) {
	sb, ok := b.(schema.SingleNestedBlock)
	if !ok || len(sb.Validators) > 0 || len(sb.PlanModifiers) > 0 || len(sb.Blocks) > 0 || sb.DeprecationMessage != "" {
		return nil, fmt.Errorf("block kind %T with validators, plan modifiers or blocks", b)
	}
	children, err := compileAttributes(ctx, sb.Attributes, false)
	if err != nil {
		return nil, err
	}
	n := &fastNode{name: name, attrType: sb.Type(), block: true, nesting: nestingSingle, children: children,
		objectType: nestedObjectType(children)}
	return n, n.finish(ctx)
}

func nestedObjectType(children []*fastNode) types.ObjectType {
	t := types.ObjectType{AttrTypes: make(map[string]attr.Type, len(children))}
	for _, c := range children {
		t.AttrTypes[c.name] = c.attrType
	}
	return t
}

// checkPlainType refuses types whose values validate themselves other than the framework's
// own (typeCheck runs those where the framework does).
func checkPlainType(ctx context.Context, t attr.Type) error {
	//nolint:staticcheck // xattr.TypeWithValidate is deprecated, but the framework still runs it.
	if _, ok := t.(xattr.TypeWithValidate); ok && reflect.TypeOf(t).PkgPath() != reflect.TypeFor[basetypes.Int64Type]().PkgPath() {
		return fmt.Errorf("type %s validates values", t)
	}
	v, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), nil))
	if err != nil {
		return err
	}
	if _, ok := v.(xattr.ValidateableAttribute); ok {
		return fmt.Errorf("value of %s validates itself", t)
	}
	return nil
}

// Defaults, as the framework calls them: with the attribute's path.

func stringDefault(d defaults.String) func(context.Context, path.Path) (attr.Value, diag.Diagnostics) {
	if d == nil {
		return nil
	}
	return func(ctx context.Context, at path.Path) (attr.Value, diag.Diagnostics) {
		resp := defaults.StringResponse{}
		d.DefaultString(ctx, defaults.StringRequest{Path: at}, &resp)
		return resp.PlanValue, resp.Diagnostics
	}
}

func int64Default(d defaults.Int64) func(context.Context, path.Path) (attr.Value, diag.Diagnostics) {
	if d == nil {
		return nil
	}
	return func(ctx context.Context, at path.Path) (attr.Value, diag.Diagnostics) {
		resp := defaults.Int64Response{}
		d.DefaultInt64(ctx, defaults.Int64Request{Path: at}, &resp)
		return resp.PlanValue, resp.Diagnostics
	}
}

func float64Default(d defaults.Float64) func(context.Context, path.Path) (attr.Value, diag.Diagnostics) {
	if d == nil {
		return nil
	}
	return func(ctx context.Context, at path.Path) (attr.Value, diag.Diagnostics) {
		resp := defaults.Float64Response{}
		d.DefaultFloat64(ctx, defaults.Float64Request{Path: at}, &resp)
		return resp.PlanValue, resp.Diagnostics
	}
}

func boolDefault(d defaults.Bool) func(context.Context, path.Path) (attr.Value, diag.Diagnostics) {
	if d == nil {
		return nil
	}
	return func(ctx context.Context, at path.Path) (attr.Value, diag.Diagnostics) {
		resp := defaults.BoolResponse{}
		d.DefaultBool(ctx, defaults.BoolRequest{Path: at}, &resp)
		return resp.PlanValue, resp.Diagnostics
	}
}

// Validators of each kind, called as the framework calls them: one response each, with the
// attribute's path and the whole configuration.

// validatorsOf runs vs on a configuration value of framework type V.
func validatorsOf[V attr.Value, X any](vs []X, run func(context.Context, X, V, validatorRequest) diag.Diagnostics) validateFunc {
	if len(vs) == 0 {
		return nil
	}
	return func(ctx context.Context, r *fastValidation, value attr.Value, at path.Path) {
		v, ok := value.(V)
		if !ok {
			r.diags.AddAttributeError(at, "Unexpected value type", fmt.Sprintf("%T", value)) // the framework answers
			return
		}
		req := validatorRequest{r: r, path: at, expr: at.Expression()}
		for _, x := range vs {
			r.diags.Append(run(ctx, x, v, req)...)
		}
	}
}

// validatorRequest is what every kind's validator request holds besides the value.
type validatorRequest struct {
	r    *fastValidation
	path path.Path
	expr path.Expression
}

func stringValidators(vs []validator.String) validateFunc {
	return validatorsOf(vs, func(ctx context.Context, x validator.String, v types.String, q validatorRequest) diag.Diagnostics {
		resp := &validator.StringResponse{}
		x.ValidateString(ctx, validator.StringRequest{ClientCapabilities: q.r.caps, Config: q.r.config, ConfigValue: v, Path: q.path, PathExpression: q.expr}, resp)
		return resp.Diagnostics
	})
}

func int64Validators(vs []validator.Int64) validateFunc {
	return validatorsOf(vs, func(ctx context.Context, x validator.Int64, v types.Int64, q validatorRequest) diag.Diagnostics {
		resp := &validator.Int64Response{}
		x.ValidateInt64(ctx, validator.Int64Request{ClientCapabilities: q.r.caps, Config: q.r.config, ConfigValue: v, Path: q.path, PathExpression: q.expr}, resp)
		return resp.Diagnostics
	})
}

func float64Validators(vs []validator.Float64) validateFunc {
	return validatorsOf(vs, func(ctx context.Context, x validator.Float64, v types.Float64, q validatorRequest) diag.Diagnostics {
		resp := &validator.Float64Response{}
		x.ValidateFloat64(ctx, validator.Float64Request{ClientCapabilities: q.r.caps, Config: q.r.config, ConfigValue: v, Path: q.path, PathExpression: q.expr}, resp)
		return resp.Diagnostics
	})
}

func boolValidators(vs []validator.Bool) validateFunc {
	return validatorsOf(vs, func(ctx context.Context, x validator.Bool, v types.Bool, q validatorRequest) diag.Diagnostics {
		resp := &validator.BoolResponse{}
		x.ValidateBool(ctx, validator.BoolRequest{ClientCapabilities: q.r.caps, Config: q.r.config, ConfigValue: v, Path: q.path, PathExpression: q.expr}, resp)
		return resp.Diagnostics
	})
}

func mapValidators(vs []validator.Map) validateFunc {
	return validatorsOf(vs, func(ctx context.Context, x validator.Map, v types.Map, q validatorRequest) diag.Diagnostics {
		resp := &validator.MapResponse{}
		x.ValidateMap(ctx, validator.MapRequest{ClientCapabilities: q.r.caps, Config: q.r.config, ConfigValue: v, Path: q.path, PathExpression: q.expr}, resp)
		return resp.Diagnostics
	})
}

func listValidators(vs []validator.List) validateFunc {
	return validatorsOf(vs, func(ctx context.Context, x validator.List, v types.List, q validatorRequest) diag.Diagnostics {
		resp := &validator.ListResponse{}
		x.ValidateList(ctx, validator.ListRequest{ClientCapabilities: q.r.caps, Config: q.r.config, ConfigValue: v, Path: q.path, PathExpression: q.expr}, resp)
		return resp.Diagnostics
	})
}

func objectValidators(vs []validator.Object) validateFunc {
	return validatorsOf(vs, func(ctx context.Context, x validator.Object, v types.Object, q validatorRequest) diag.Diagnostics {
		resp := &validator.ObjectResponse{}
		x.ValidateObject(ctx, validator.ObjectRequest{ClientCapabilities: q.r.caps, Config: q.r.config, ConfigValue: v, Path: q.path, PathExpression: q.expr}, resp)
		return resp.Diagnostics
	})
}

// Plan modifiers of each kind, called in order as the framework calls them: each sees the plan
// value the one before it left.

// modifiersOf runs ms on values of framework type V; run returns the new plan value and whether
// the change requires replacement.
func modifiersOf[V attr.Value, X any](ms []X, run func(context.Context, X, *fastModify, V, V, V) (V, bool, diag.Diagnostics)) modifyFunc {
	if len(ms) == 0 {
		return nil
	}
	return func(ctx context.Context, m *fastModify) {
		config, cok := m.config.(V)
		plan, pok := m.plan.(V)
		state, sok := m.state.(V)
		if !cok || !pok || !sok {
			m.diags.AddAttributeError(m.path, "Unexpected value type", fmt.Sprintf("%T", m.plan)) // the framework answers
			return
		}
		for _, x := range ms {
			next, replace, diags := run(ctx, x, m, config, plan, state)
			m.diags.Append(diags...)
			if replace {
				m.replace = append(m.replace, m.path)
			}
			if diags.HasError() {
				return
			}
			plan = next
			m.plan = next
		}
	}
}

func stringModifiers(ms []planmodifier.String) modifyFunc {
	return modifiersOf(ms, func(ctx context.Context, x planmodifier.String, m *fastModify, config, plan, state types.String) (types.String, bool, diag.Diagnostics) {
		resp := &planmodifier.StringResponse{PlanValue: plan, Private: m.private.Private}
		x.PlanModifyString(ctx, planmodifier.StringRequest{Config: m.req.Config, ConfigValue: config, Path: m.path,
			PathExpression: m.path.Expression(), Plan: m.req.Plan, PlanValue: plan, Private: m.req.Private, State: m.req.State, StateValue: state}, resp)
		m.private.Private = resp.Private
		return resp.PlanValue, resp.RequiresReplace, resp.Diagnostics
	})
}

func int64Modifiers(ms []planmodifier.Int64) modifyFunc {
	return modifiersOf(ms, func(ctx context.Context, x planmodifier.Int64, m *fastModify, config, plan, state types.Int64) (types.Int64, bool, diag.Diagnostics) {
		resp := &planmodifier.Int64Response{PlanValue: plan, Private: m.private.Private}
		x.PlanModifyInt64(ctx, planmodifier.Int64Request{Config: m.req.Config, ConfigValue: config, Path: m.path,
			PathExpression: m.path.Expression(), Plan: m.req.Plan, PlanValue: plan, Private: m.req.Private, State: m.req.State, StateValue: state}, resp)
		m.private.Private = resp.Private
		return resp.PlanValue, resp.RequiresReplace, resp.Diagnostics
	})
}

func float64Modifiers(ms []planmodifier.Float64) modifyFunc {
	return modifiersOf(ms, func(ctx context.Context, x planmodifier.Float64, m *fastModify, config, plan, state types.Float64) (types.Float64, bool, diag.Diagnostics) {
		resp := &planmodifier.Float64Response{PlanValue: plan, Private: m.private.Private}
		x.PlanModifyFloat64(ctx, planmodifier.Float64Request{Config: m.req.Config, ConfigValue: config, Path: m.path,
			PathExpression: m.path.Expression(), Plan: m.req.Plan, PlanValue: plan, Private: m.req.Private, State: m.req.State, StateValue: state}, resp)
		m.private.Private = resp.Private
		return resp.PlanValue, resp.RequiresReplace, resp.Diagnostics
	})
}

func boolModifiers(ms []planmodifier.Bool) modifyFunc {
	return modifiersOf(ms, func(ctx context.Context, x planmodifier.Bool, m *fastModify, config, plan, state types.Bool) (types.Bool, bool, diag.Diagnostics) {
		resp := &planmodifier.BoolResponse{PlanValue: plan, Private: m.private.Private}
		x.PlanModifyBool(ctx, planmodifier.BoolRequest{Config: m.req.Config, ConfigValue: config, Path: m.path,
			PathExpression: m.path.Expression(), Plan: m.req.Plan, PlanValue: plan, Private: m.req.Private, State: m.req.State, StateValue: state}, resp)
		m.private.Private = resp.Private
		return resp.PlanValue, resp.RequiresReplace, resp.Diagnostics
	})
}
