package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
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
	defaultValue defaultFunc
	validate     validateFunc // nil without validators
	modify       modifyFunc   // nil without plan modifiers
	nesting      nesting
	children     []*fastNode // the attributes of the nested object, by name
	// objectType is the framework type of the nested object (of each element of a list).
	objectType types.ObjectType
}

// defaultFunc is an attribute's schema default at the attribute's path.
type defaultFunc func(ctx context.Context, at path.Path) (attr.Value, diag.Diagnostics)

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
		err = n.compileLeaf(a.CustomType == nil, root, defaultOf(a.Default, defaults.String.DefaultString), validatorsOf(a.Validators, validator.String.ValidateString), modifiersOf(a.PlanModifiers, planmodifier.String.PlanModifyString))
	case schema.Int64Attribute:
		err = n.compileLeaf(a.CustomType == nil, root, defaultOf(a.Default, defaults.Int64.DefaultInt64), validatorsOf(a.Validators, validator.Int64.ValidateInt64), modifiersOf(a.PlanModifiers, planmodifier.Int64.PlanModifyInt64))
	case schema.Float64Attribute:
		err = n.compileLeaf(a.CustomType == nil, root, defaultOf(a.Default, defaults.Float64.DefaultFloat64), validatorsOf(a.Validators, validator.Float64.ValidateFloat64), modifiersOf(a.PlanModifiers, planmodifier.Float64.PlanModifyFloat64))
	case schema.BoolAttribute:
		err = n.compileLeaf(a.CustomType == nil, root, defaultOf(a.Default, defaults.Bool.DefaultBool), validatorsOf(a.Validators, validator.Bool.ValidateBool), modifiersOf(a.PlanModifiers, planmodifier.Bool.PlanModifyBool))
	case schema.MapAttribute:
		err = n.compileLeaf(a.CustomType == nil, false, defaultOf(a.Default, defaults.Map.DefaultMap), validatorsOf(a.Validators, validator.Map.ValidateMap), nil)
		if len(a.PlanModifiers) > 0 {
			err = fmt.Errorf("map plan modifiers")
		}
	case schema.ListAttribute:
		err = n.compileLeaf(a.CustomType == nil, false, defaultOf(a.Default, defaults.List.DefaultList), validatorsOf(a.Validators, validator.List.ValidateList), nil)
		if len(a.PlanModifiers) > 0 {
			err = fmt.Errorf("list plan modifiers")
		}
	case schema.SingleNestedAttribute:
		err = n.compileNested(ctx, nestingSingle, a.CustomType == nil && a.Default == nil && len(a.PlanModifiers) == 0,
			validatorsOf(a.Validators, validator.Object.ValidateObject), a.Attributes)
	case schema.ListNestedAttribute:
		o := a.NestedObject
		err = n.compileNested(ctx, nestingList, a.CustomType == nil && a.Default == nil && len(a.PlanModifiers) == 0 &&
			o.CustomType == nil && len(o.Validators) == 0 && len(o.PlanModifiers) == 0, validatorsOf(a.Validators, validator.List.ValidateList), o.Attributes)
	default:
		err = fmt.Errorf("attribute kind %T", a)
	}
	if err != nil {
		return nil, err
	}
	return n, n.finish(ctx)
}

// compileLeaf sets an attribute's default, validators and plan modifiers; plain says it has the
// framework's own type, and a default is taken only where root allows it.
func (n *fastNode) compileLeaf(plain, root bool, d defaultFunc, v validateFunc, m modifyFunc) error {
	if !plain || d != nil && !root {
		return fmt.Errorf("custom type or nested default")
	}
	n.defaultValue, n.validate, n.modify = d, v, m
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
	switch t.(type) {
	case basetypes.Int64Type, basetypes.Float64Type, basetypes.ListType, basetypes.MapType, basetypes.SetType:
	default:
		//nolint:staticcheck // xattr.TypeWithValidate is deprecated, but the framework still runs it.
		if _, ok := t.(xattr.TypeWithValidate); ok {
			return fmt.Errorf("type %s validates values", t)
		}
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

// The framework's defaults, validators and plan modifiers have one request and response type
// per kind of value, alike but for the value's type. Each generic caller below serves every kind:
// it builds the request as the struct all kinds' requests convert to, and takes the kind's
// method (such as validator.String.ValidateString) to call.

// Defaults, as the framework calls them: with the attribute's path.

// defaultResponseOf is a default's response for values of type V.
type defaultResponseOf[V any] = struct {
	Diagnostics diag.Diagnostics
	PlanValue   V
}

// defaultOf calls d, a default of any kind, or is nil when there is none.
func defaultOf[V attr.Value, D any, Req ~struct{ Path path.Path }, Resp ~defaultResponseOf[V]](d D, call func(D, context.Context, Req, *Resp)) defaultFunc {
	if any(d) == nil {
		return nil
	}
	return func(ctx context.Context, at path.Path) (attr.Value, diag.Diagnostics) {
		var resp Resp
		call(d, ctx, Req{Path: at}, &resp)
		out := defaultResponseOf[V](resp)
		return out.PlanValue, out.Diagnostics
	}
}

// Validators, as the framework calls them: one response each, with the attribute's path and the
// whole configuration.

// validatorRequestOf is a validator's request for values of type V.
type validatorRequestOf[V any] = struct {
	Path               path.Path
	PathExpression     path.Expression
	Config             tfsdk.Config
	ConfigValue        V
	ClientCapabilities validator.ValidateSchemaClientCapabilities
}

// validatorsOf runs vs, validators of any kind, on a configuration value of framework type V.
func validatorsOf[V attr.Value, X any, Req ~validatorRequestOf[V], Resp ~struct{ Diagnostics diag.Diagnostics }](vs []X, call func(X, context.Context, Req, *Resp)) validateFunc {
	if len(vs) == 0 {
		return nil
	}
	return func(ctx context.Context, r *fastValidation, value attr.Value, at path.Path) {
		v, ok := value.(V)
		if !ok {
			r.diags.AddAttributeError(at, "Unexpected value type", fmt.Sprintf("%T", value)) // the framework answers
			return
		}
		req := Req(validatorRequestOf[V]{Path: at, PathExpression: at.Expression(), Config: r.config, ConfigValue: v, ClientCapabilities: r.caps})
		for _, x := range vs {
			var resp Resp
			call(x, ctx, req, &resp)
			r.diags.Append(struct{ Diagnostics diag.Diagnostics }(resp).Diagnostics...)
		}
	}
}

// Plan modifiers, called in order as the framework calls them: each sees the plan value the one
// before it left.

// modifierRequestOf is a plan modifier's request for values of type V; P is the framework's
// private state type, which it does not export.
type modifierRequestOf[V, P any] = struct {
	Path           path.Path
	PathExpression path.Expression
	Config         tfsdk.Config
	ConfigValue    V
	Plan           tfsdk.Plan
	PlanValue      V
	State          tfsdk.State
	StateValue     V
	Private        P
}

// modifierResponseOf is a plan modifier's response for values of type V.
type modifierResponseOf[V, P any] = struct {
	PlanValue       V
	RequiresReplace bool
	Private         P
	Diagnostics     diag.Diagnostics
}

// modifiersOf runs ms, plan modifiers of any kind, on values of framework type V.
func modifiersOf[V attr.Value, P any, X any, Req ~modifierRequestOf[V, P], Resp ~modifierResponseOf[V, P]](ms []X, call func(X, context.Context, Req, *Resp)) modifyFunc {
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
			var reqPrivate, private P
			assignAs(&reqPrivate, m.req.Private)
			assignAs(&private, m.private.Private)
			req := modifierRequestOf[V, P]{Config: m.req.Config, ConfigValue: config, Path: m.path, PathExpression: m.path.Expression(),
				Plan: m.req.Plan, PlanValue: plan, Private: reqPrivate, State: m.req.State, StateValue: state}
			resp := Resp(modifierResponseOf[V, P]{PlanValue: plan, Private: private})
			call(x, ctx, Req(req), &resp)
			out := modifierResponseOf[V, P](resp)
			assignAs(&m.private.Private, out.Private)
			m.diags.Append(out.Diagnostics...)
			if out.RequiresReplace {
				m.replace = append(m.replace, m.path)
			}
			if out.Diagnostics.HasError() {
				return
			}
			plan = out.PlanValue
			m.plan = plan
		}
	}
}

// assignAs sets *dst to v, which holds a T: it passes the framework's private state between
// its own type, which it does not export, and a type parameter.
func assignAs[T any](dst *T, v any) {
	*dst, _ = v.(T)
}
