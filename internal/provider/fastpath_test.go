package provider

import (
	"context"
	"fmt"
	"math/big"
	"math/rand"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The fast path (fastServer) must answer exactly as the framework does. These tests send the
// same requests to the framework's server and to the fast path and require the same answers:
// planned state (the same bytes), RequiresReplace, private state, identity and diagnostics
// (with paths and texts, in any order: the framework's own order follows map iteration). They
// also require that the fast path answered most valid requests itself, or they would prove
// nothing.

// delegationCounter counts the requests the fast path hands to the framework.
type delegationCounter struct {
	tfprotov6.ProviderServer
	validates, plans, reads, upgrades *atomic.Int64
}

func (c delegationCounter) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	c.upgrades.Add(1)
	return c.ProviderServer.UpgradeResourceState(ctx, req)
}

func (c delegationCounter) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	c.reads.Add(1)
	return c.ProviderServer.ReadResource(ctx, req)
}

func (c delegationCounter) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	c.validates.Add(1)
	return c.ProviderServer.ValidateResourceConfig(ctx, req)
}

func (c delegationCounter) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	c.plans.Add(1)
	return c.ProviderServer.PlanResourceChange(ctx, req)
}

// differential is a framework server and a fast path beside it, configured alike.
type differential struct {
	framework tfprotov6.ProviderServer
	fast      *fastServer
	// The delegated counters count what the fast path handed on.
	delegatedValidates, delegatedPlans, delegatedReads, delegatedUpgrades atomic.Int64
	schemas                                                               map[string]*tfprotov6.Schema
}

func newDifferential(t *testing.T, providerAttrs func(tftypes.Object) map[string]tftypes.Value) *differential {
	t.Helper()
	return newProbedDifferential(t, providerAttrs, providerserver.NewProtocol6WithError)
}

// newProbedDifferential is newDifferential with the fast path's probe served by serve.
func newProbedDifferential(t *testing.T, providerAttrs func(tftypes.Object) map[string]tftypes.Value, serve frameworkServe) *differential {
	t.Helper()
	ctx := context.Background()
	d := &differential{}
	fw, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	d.framework = fw
	p := New("test")().(*hyperpodProvider)
	inner, err := providerserver.NewProtocol6WithError(p)()
	if err != nil {
		t.Fatal(err)
	}
	d.fast = newProbedFastServer(ctx, p, delegationCounter{inner, &d.delegatedValidates, &d.delegatedPlans, &d.delegatedReads, &d.delegatedUpgrades}, serve)
	for typeName := range fastTypes {
		if d.fast.resources[typeName] == nil {
			t.Fatalf("the fast path does not serve %s", typeName)
		}
	}
	schemas, err := fw.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, schemas.Diagnostics)
	}
	d.schemas = schemas.ResourceSchemas
	if providerAttrs != nil {
		providerType := schemas.Provider.ValueType().(tftypes.Object)
		cfg := dynamicValue(t, providerType, objectOf(providerType, providerAttrs(providerType)))
		for _, s := range []tfprotov6.ProviderServer{d.framework, d.fast} {
			resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &cfg})
			if err != nil || len(resp.Diagnostics) > 0 {
				t.Fatalf("ConfigureProvider: %v %v", err, resp.Diagnostics)
			}
		}
	}
	return d
}

// diagText is a diagnostic as one comparable line.
func diagText(d *tfprotov6.Diagnostic) string {
	at := ""
	if d.Attribute != nil {
		at = d.Attribute.String()
	}
	return fmt.Sprintf("%v|%s|%s|%s", d.Severity, at, d.Summary, d.Detail)
}

func diagTexts(ds []*tfprotov6.Diagnostic) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, diagText(d))
	}
	sort.Strings(out)
	return out
}

func sameStrings(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// validate sends req to both and fails when the answers differ.
func (d *differential) validate(t *testing.T, label string, req *tfprotov6.ValidateResourceConfigRequest) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	want, err1 := d.framework.ValidateResourceConfig(ctx, req)
	before := d.delegatedValidates.Load()
	got, err2 := d.fast.ValidateResourceConfig(ctx, req)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: errors %v %v", label, err1, err2)
	}
	if d.delegatedValidates.Load() != before {
		// The framework answered both, and the checks after a first error follow its map order.
		return want.Diagnostics
	}
	if w, g := diagTexts(want.Diagnostics), diagTexts(got.Diagnostics); !sameStrings(w, g) {
		t.Errorf("%s: validation diagnostics differ\nframework: %q\nfast path: %q", label, w, g)
	}
	return want.Diagnostics
}

// plan sends req to both and fails when the answers differ.
func (d *differential) plan(t *testing.T, label string, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	ctx := context.Background()
	want, err1 := d.framework.PlanResourceChange(ctx, req)
	before := d.delegatedPlans.Load()
	got, err2 := d.fast.PlanResourceChange(ctx, req)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: errors %v %v", label, err1, err2)
	}
	if d.delegatedPlans.Load() != before && hasError(want.Diagnostics) {
		return want // the framework answered both, and stops at a first error in map order
	}
	if w, g := diagTexts(want.Diagnostics), diagTexts(got.Diagnostics); !sameStrings(w, g) {
		t.Errorf("%s: plan diagnostics differ\nframework: %q\nfast path: %q", label, w, g)
		return want
	}
	if hasError(want.Diagnostics) {
		return want // Terraform reads no plan beside an error
	}
	if !sameDynamic(d.schemas[req.TypeName].ValueType(), want.PlannedState, got.PlannedState) {
		t.Errorf("%s: planned states differ\nframework: %s\nfast path: %s", label, decoded(d, req.TypeName, want.PlannedState), decoded(d, req.TypeName, got.PlannedState))
	}
	if w, g := fmt.Sprint(want.RequiresReplace), fmt.Sprint(got.RequiresReplace); w != g {
		t.Errorf("%s: RequiresReplace differs\nframework: %s\nfast path: %s", label, w, g)
	}
	if string(want.PlannedPrivate) != string(got.PlannedPrivate) {
		t.Errorf("%s: planned private state differs\nframework: %s\nfast path: %s", label, want.PlannedPrivate, got.PlannedPrivate)
	}
	if (want.PlannedIdentity == nil) != (got.PlannedIdentity == nil) ||
		want.PlannedIdentity != nil && !sameDynamic(identityType, want.PlannedIdentity.IdentityData, got.PlannedIdentity.IdentityData) {
		t.Errorf("%s: planned identity differs: %v, %v", label, want.PlannedIdentity, got.PlannedIdentity)
	}
	if (want.Deferred == nil) != (got.Deferred == nil) {
		t.Errorf("%s: deferral differs: %v, %v", label, want.Deferred, got.Deferred)
	}
	return want
}

var identityType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"team": tftypes.String}}

func decoded(d *differential, typeName string, v *tfprotov6.DynamicValue) string {
	if v == nil {
		return "<nil>"
	}
	val, err := v.Unmarshal(d.schemas[typeName].ValueType())
	if err != nil {
		return err.Error()
	}
	return val.String()
}

// valueGen generates values of a resource schema: configurations as a user may write them
// (valid or not, with nulls and unknowns at every level) and states as a refresh stores them.
type valueGen struct {
	rnd *rand.Rand
}

// strings per attribute name: valid ones first, then ones a check refuses.
var genStrings = map[string][]string{
	"name":               {"ml-research", "team-a", "q1", "Bad Name!", ""},
	"team":               {"ml-research", "team-a", "t1", "Bad_Team", "", strings.Repeat("a", 41)},
	"instance_type":      {"ml.p5.48xlarge", "ml.c5.4xlarge", "ml.trn1.32xlarge", "ml.g5.8xlarge", "ml.p4d.24xlarge", "ml.nope"},
	"activation_state":   {"Enabled", "Disabled", "enabled"},
	"preempt_team_tasks": {"LowerPriority", "Never", "Always"},
	"strategy":           {"LendAndBorrow", "Lend", "DontLend", "Borrow"},
	"cohort":             {"shared", "other"},
	"description":        {"training", "", strings.Repeat("d", 1100)},
	"type":               {"mig-1g.10gb", "mig-3g.40gb", "mig-7g.80gb", "mig-nope"},
	"create":             {"10m", "1h", "soon"},
	"update":             {"5m", "2x"},
	"delete":             {"20m", "-"},
	"owner_id":           {"5c3a5a52-3b0e-4c38-8f0a-6b1d5f7e2a11"},
	"id":                 {"ml-research", "team-a"},
}

var genKeys = []string{"env", "team", "app.kubernetes.io/managed-by", "hyperpod.quotaworks.io/x", "aws:bad", "Bad Key", "cost-center"}

func (g *valueGen) pick(n int) int { return g.rnd.Intn(n) }

// value is a value of type t for the attribute name; known says no unknown anywhere.
func (g *valueGen) value(name string, t tftypes.Type, known bool) tftypes.Value {
	if !known && g.pick(12) == 0 {
		return tftypes.NewValue(t, tftypes.UnknownValue)
	}
	switch {
	case t.Is(tftypes.String):
		pool := genStrings[name]
		if len(pool) == 0 {
			pool = []string{"x", "value"}
		}
		return tftypes.NewValue(t, pool[g.pick(len(pool))])
	case t.Is(tftypes.Number):
		nums := []float64{0, 1, 2, 8, 50, 100, 0.5, 1.45, 2.9, 96, -1, 101, 20000, 1.5}
		return tftypes.NewValue(t, new(big.Float).SetFloat64(nums[g.pick(len(nums))]))
	case t.Is(tftypes.Bool):
		return tftypes.NewValue(t, g.pick(2) == 0)
	case t.Is(tftypes.Map{}):
		elems := map[string]tftypes.Value{}
		for range g.pick(4) {
			elems[genKeys[g.pick(len(genKeys))]] = g.maybeNull("", t.(tftypes.Map).ElementType, known, 10)
		}
		return tftypes.NewValue(t, elems)
	case t.Is(tftypes.List{}):
		var elems []tftypes.Value
		for range g.pick(3) {
			elems = append(elems, g.maybeNull("drift", t.(tftypes.List).ElementType, known, 10))
		}
		return tftypes.NewValue(t, elems)
	}
	panic(fmt.Sprintf("no generator for %s", t))
}

// maybeNull is null one time in oneIn, else a value.
func (g *valueGen) maybeNull(name string, t tftypes.Type, known bool, oneIn int) tftypes.Value {
	if g.pick(oneIn) == 0 {
		return tftypes.NewValue(t, nil)
	}
	return g.value(name, t, known)
}

// block is a value of schema block b: a configuration as a user writes it (config), or a state
// as a refresh stores it.
func (g *valueGen) block(b *tfprotov6.SchemaBlock, config bool) tftypes.Value {
	t := b.ValueType().(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for _, a := range b.Attributes {
		vals[a.Name] = g.attribute(a, t.AttributeTypes[a.Name], config)
	}
	for _, nb := range b.BlockTypes {
		bt := t.AttributeTypes[nb.TypeName]
		vals[nb.TypeName] = tftypes.NewValue(bt, nil)
		if g.pick(2) == 0 {
			vals[nb.TypeName] = g.block(nb.Block, config)
		}
	}
	return tftypes.NewValue(t, vals)
}

func (g *valueGen) attribute(a *tfprotov6.SchemaAttribute, t tftypes.Type, config bool) tftypes.Value {
	null := tftypes.NewValue(t, nil)
	switch {
	case config && a.Computed && !a.Optional && g.pick(25) != 0:
		return null // a read-only attribute, set only to see it refused
	case config && !a.Required && g.pick(3) == 0, config && a.Required && g.pick(30) == 0, !config && !a.Required && g.pick(8) == 0:
		return null
	case config && g.pick(20) == 0:
		return tftypes.NewValue(t, tftypes.UnknownValue)
	}
	if a.NestedType == nil {
		return g.value(a.Name, t, !config)
	}
	if a.NestedType.Nesting == tfprotov6.SchemaObjectNestingModeSingle {
		return g.object(a.NestedType.Attributes, t.(tftypes.Object), config)
	}
	et := t.(tftypes.List).ElementType.(tftypes.Object)
	var elems []tftypes.Value
	for range g.pick(4) {
		switch {
		case config && g.pick(25) == 0:
			elems = append(elems, tftypes.NewValue(et, nil))
		case config && g.pick(25) == 0:
			elems = append(elems, tftypes.NewValue(et, tftypes.UnknownValue))
		default:
			elems = append(elems, g.object(a.NestedType.Attributes, et, config))
		}
	}
	return tftypes.NewValue(t, elems)
}

func (g *valueGen) object(attrs []*tfprotov6.SchemaAttribute, t tftypes.Object, config bool) tftypes.Value {
	vals := map[string]tftypes.Value{}
	for _, a := range attrs {
		vals[a.Name] = g.attribute(a, t.AttributeTypes[a.Name], config)
	}
	return tftypes.NewValue(t, vals)
}

// proposedBySchema is Terraform's proposed new state, simplified: the configuration, with the prior
// value of each computed attribute the configuration leaves null, nested objects alike.
func proposedBySchema(attrs []*tfprotov6.SchemaAttribute, blocks []*tfprotov6.SchemaNestedBlock, prior, config tftypes.Value) tftypes.Value {
	if !config.IsKnown() || config.IsNull() {
		return config
	}
	pa, ca := objectAttributes(prior), objectAttributes(config)
	out := map[string]tftypes.Value{}
	for _, a := range attrs {
		c, p := ca[a.Name], pa[a.Name]
		if p.Type() == nil {
			p = tftypes.NewValue(c.Type(), nil)
		}
		switch {
		case a.Computed && c.IsNull():
			out[a.Name] = p
		case a.NestedType != nil && a.NestedType.Nesting == tfprotov6.SchemaObjectNestingModeSingle:
			out[a.Name] = proposedBySchema(a.NestedType.Attributes, nil, p, c)
		case a.NestedType != nil:
			ce, pe := listElements(c), listElements(p)
			if ce == nil {
				out[a.Name] = c
				continue
			}
			for i := range ce {
				prior := tftypes.NewValue(ce[i].Type(), nil)
				if i < len(pe) {
					prior = pe[i]
				}
				ce[i] = proposedBySchema(a.NestedType.Attributes, nil, prior, ce[i])
			}
			out[a.Name] = tftypes.NewValue(c.Type(), ce)
		default:
			out[a.Name] = c
		}
	}
	for _, b := range blocks {
		out[b.TypeName] = proposedBySchema(b.Block.Attributes, nil, pa[b.TypeName], ca[b.TypeName])
	}
	return tftypes.NewValue(config.Type(), out)
}

// genPrivates are prior private states: none, the provider's keys, the framework's own, and one
// the framework cannot read (the fast path hands that to the framework).
var genPrivates = []string{"", "", "", `{}`, `{"takeover":"dHJ1ZQ=="}`, `{"unnamed":"dHJ1ZQ=="}`, `{"terminating":"dHJ1ZQ=="}`,
	`{"owner_conflict":"eyJvYmplY3QiOiJDbHVzdGVyUXVldWUgeCIsIm93bmVyIjoic3RhdGUgeSJ9"}`,
	`{"usage":"eyJhZG1pdHRlZCI6MiwicmVzb3VyY2VzIjpbeyJpbnN0YW5jZV90eXBlIjoibWwucDUuNDh4bGFyZ2UiLCJyZXNvdXJjZSI6Im52aWRpYS5jb20vZ3B1IiwicmVzZXJ2ZWQiOiI0In1dfQ=="}`,
	`{".import_before_read":"dHJ1ZQ=="}`, `not json`}

// request builds a plan request of typeName: a create without prior, an update of a random
// state, an import (state holding only id and team) or a plan whose configuration is the
// state's own.
func (d *differential) request(t *testing.T, g *valueGen, typeName string) (string, *tfprotov6.PlanResourceChangeRequest) {
	s := d.schemas[typeName]
	ty := s.ValueType()
	config := g.block(s.Block, true)
	prior := tftypes.NewValue(ty, nil)
	kind := []string{"create", "update", "import", "unchanged"}[g.pick(4)]
	switch kind {
	case "update":
		prior = g.block(s.Block, false)
	case "import":
		state := g.block(s.Block, false)
		attrs := objectAttributes(state)
		prior = objectOf(ty.(tftypes.Object), map[string]tftypes.Value{"id": attrs["id"], "team": attrs["team"]})
	case "unchanged":
		prior = g.block(s.Block, false)
		config = configOf(s.Block, prior)
	}
	proposed := proposedBySchema(s.Block.Attributes, s.Block.BlockTypes, prior, config)
	req := &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, PriorPrivate: []byte(genPrivates[g.pick(len(genPrivates))])}
	cfg, prop, pri := dynamicValue(t, ty, config), dynamicValue(t, ty, proposed), dynamicValue(t, ty, prior)
	req.Config, req.ProposedNewState, req.PriorState = &cfg, &prop, &pri
	if kind != "create" && g.pick(3) != 0 {
		id := dynamicValue(t, identityType, tftypes.NewValue(identityType, map[string]tftypes.Value{"team": objectAttributes(prior)["team"]}))
		req.PriorIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &id}
	}
	if g.pick(2) == 0 {
		req.ClientCapabilities = &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: true}
	}
	if g.pick(4) == 0 { // the provider declares no provider_meta: both ignore it
		meta := dynamicValue(t, tftypes.Object{}, tftypes.NewValue(tftypes.Object{}, nil))
		req.ProviderMeta = &meta
	}
	return kind, req
}

// configOf is the configuration that wrote state: its values, without the read-only ones.
func configOf(b *tfprotov6.SchemaBlock, state tftypes.Value) tftypes.Value {
	attrs := objectAttributes(state)
	for _, a := range b.Attributes {
		if a.Computed && !a.Optional {
			attrs[a.Name] = tftypes.NewValue(attrs[a.Name].Type(), nil)
		}
	}
	return tftypes.NewValue(state.Type(), attrs)
}

// delegates reports whether the fast path must hand a plan to the framework whatever it holds.
func delegates(req *tfprotov6.PlanResourceChangeRequest) bool {
	return string(req.PriorPrivate) == "not json"
}

var differentialPaths = map[string]func(tftypes.Object) map[string]tftypes.Value{
	"unconfigured": nil,
	"kubernetes": func(tftypes.Object) map[string]tftypes.Value {
		return map[string]tftypes.Value{"host": tftypes.NewValue(tftypes.String, "http://127.0.0.1:1")}
	},
	"sagemaker": sagemakerDifferentialConfig(false),
	// Without a Kubernetes connection every previewed change warns that no preview was made,
	// which sends its plan to the framework: the same answer, slower.
	"sagemaker, previews on": sagemakerDifferentialConfig(true),
}

// sagemakerDifferentialConfig is a provider on the SageMaker path, with admission previews on
// or off.
func sagemakerDifferentialConfig(previews bool) func(tftypes.Object) map[string]tftypes.Value {
	return func(pt tftypes.Object) map[string]tftypes.Value {
		tg := pt.AttributeTypes["task_governance"].(tftypes.Object)
		s := func(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
		dt := tg.AttributeTypes["default_tags"].(tftypes.Object)
		return map[string]tftypes.Value{"admission_preview": tftypes.NewValue(tftypes.Bool, previews), "task_governance": objectOf(tg, map[string]tftypes.Value{
			"cluster_arn": s("arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdefghijkl"),
			"endpoint":    s("http://127.0.0.1:1"), "access_key": s("test"), "secret_key": s("test"),
			"default_tags": objectOf(dt, map[string]tftypes.Value{"tags": tftypes.NewValue(dt.AttributeTypes["tags"],
				map[string]tftypes.Value{"cost-center": s("42")})}),
		})}
	}
}

// TestFastPathAnswersAsTheFramework sends seeded random validations and plans of both resource
// types, on each provider configuration, to the framework and to the fast path.
func TestFastPathAnswersAsTheFramework(t *testing.T) {
	for name, attrs := range differentialPaths {
		t.Run(name, func(t *testing.T) {
			d := newDifferential(t, attrs)
			var answered, clean int
			d.plans(t, rand.New(rand.NewSource(int64(len(name)))), 400, func(label string, req *tfprotov6.PlanResourceChangeRequest, resp *tfprotov6.PlanResourceChangeResponse, fast bool) {
				if len(resp.Diagnostics) == 0 && !delegates(req) {
					clean++
					if fast {
						answered++
					} else {
						t.Errorf("%s: the framework found nothing, yet the fast path handed it on", label)
					}
				}
			})
			if clean < 100 {
				t.Errorf("only %d of the plans were valid: the generator proves too little", clean)
			}
			t.Logf("%d plans without diagnostics, %d answered by the fast path", clean, answered)
		})
	}
}

// plans sends d n seeded random validations and plans of each resource type, requires the
// framework's answers, and tells seen each plan (with a label), the framework's answer and
// whether the fast path answered. A validation the framework finds nothing in must be the fast
// path's answer.
func (d *differential) plans(t *testing.T, rnd *rand.Rand, n int, seen func(string, *tfprotov6.PlanResourceChangeRequest, *tfprotov6.PlanResourceChangeResponse, bool)) {
	g := &valueGen{rnd: rnd}
	for i := range n {
		for typeName := range fastTypes {
			s := d.schemas[typeName]
			config := g.block(s.Block, true)
			cfg := dynamicValue(t, s.ValueType(), config)
			before := d.delegatedValidates.Load()
			diags := d.validate(t, fmt.Sprintf("%s validate %d %s", typeName, i, config), &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &cfg})
			if len(diags) == 0 && d.delegatedValidates.Load() != before {
				t.Errorf("%s validate %d: the framework found nothing, yet the fast path handed it on: %s", typeName, i, config)
			}
			kind, req := d.request(t, g, typeName)
			label := fmt.Sprintf("%s %s %d", typeName, kind, i)
			before = d.delegatedPlans.Load()
			resp := d.plan(t, label, req)
			seen(label, req, resp, d.delegatedPlans.Load() == before)
		}
		if t.Failed() {
			return
		}
	}
}

// TestFastPathEdgeCases sends chosen requests to the framework and to the fast path: empty,
// null and unknown lists and list elements, defaults, replacement, import, private state of
// the framework's own, destroy. fast says whether the fast path must answer itself.
func TestFastPathEdgeCases(t *testing.T) {
	d := newDifferential(t, differentialPaths["sagemaker"])
	quota := d.schemas["hyperpod_compute_quota"].ValueType().(tftypes.Object)
	namespace := d.schemas["hyperpod_team_namespace"].ValueType().(tftypes.Object)
	str := func(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
	num := func(v float64) tftypes.Value { return tftypes.NewValue(tftypes.Number, big.NewFloat(v)) }
	resourcesType := quota.AttributeTypes["resources"].(tftypes.List)
	entryType := resourcesType.ElementType.(tftypes.Object)
	entry := objectOf(entryType, map[string]tftypes.Value{"instance_type": str("ml.p5.48xlarge"), "accelerators": num(1)})
	sharingType := quota.AttributeTypes["resource_sharing"].(tftypes.Object)
	limitsType := sharingType.AttributeTypes["absolute_borrow_limits"]
	quotaConfig := func(resources tftypes.Value, more map[string]tftypes.Value) tftypes.Value {
		attrs := map[string]tftypes.Value{"name": str("team-a"), "team": str("team-a"), "resources": resources}
		for k, v := range more {
			attrs[k] = v
		}
		return objectOf(quota, attrs)
	}
	listOf := func(elems ...tftypes.Value) tftypes.Value { return tftypes.NewValue(resourcesType, elems) }
	unknown := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }
	// state is what a create of config stores: its plan with every unknown known.
	priorOf := func(typeName string, config tftypes.Value) tftypes.Value {
		resp := d.plan(t, "prior of "+typeName, d.planRequest(t, typeName, config, tftypes.Value{}, ""))
		v, err := resp.PlannedState.Unmarshal(d.schemas[typeName].ValueType())
		if err != nil {
			t.Fatal(err)
		}
		known, _ := tftypes.Transform(v, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
			if v.IsKnown() {
				return v, nil
			}
			if v.Type().Is(tftypes.Number) {
				return num(3), nil
			}
			return str("known after apply"), nil
		})
		return known
	}
	bench := quotaConfig(listOf(entry, objectOf(entryType, map[string]tftypes.Value{"instance_type": str("ml.c5.4xlarge"), "vcpu": num(1)})), nil)
	benchState := priorOf("hyperpod_compute_quota", bench)
	renamed := quotaConfig(listOf(entry, objectOf(entryType, map[string]tftypes.Value{"instance_type": str("ml.c5.4xlarge"), "vcpu": num(1)})),
		map[string]tftypes.Value{"name": str("team-b")})
	nsConfig := objectOf(namespace, map[string]tftypes.Value{"team": str("team-a")})
	nsState := priorOf("hyperpod_team_namespace", nsConfig)
	imported := objectOf(quota, map[string]tftypes.Value{"id": str("team-a"), "team": str("team-a")})
	cases := []struct {
		name, typeName string
		config, prior  tftypes.Value
		private        string
		fast           bool
	}{
		{"bench quota", "hyperpod_compute_quota", bench, tftypes.Value{}, "", true},
		{"no resources", "hyperpod_compute_quota", quotaConfig(listOf(), nil), tftypes.Value{}, "", false},
		{"null resources", "hyperpod_compute_quota", quotaConfig(tftypes.NewValue(resourcesType, nil), nil), tftypes.Value{}, "", false},
		{"unknown resources", "hyperpod_compute_quota", quotaConfig(unknown(resourcesType), nil), tftypes.Value{}, "", true},
		{"unknown entry", "hyperpod_compute_quota", quotaConfig(listOf(unknown(entryType)), nil), tftypes.Value{}, "", false},
		{"null entry", "hyperpod_compute_quota", quotaConfig(listOf(tftypes.NewValue(entryType, nil)), nil), tftypes.Value{}, "", false},
		{"unknown instance type", "hyperpod_compute_quota", quotaConfig(listOf(objectOf(entryType, map[string]tftypes.Value{
			"instance_type": unknown(tftypes.String), "accelerators": num(1)})), nil), tftypes.Value{}, "", true},
		{"fractional accelerators", "hyperpod_compute_quota", quotaConfig(listOf(objectOf(entryType, map[string]tftypes.Value{
			"instance_type": str("ml.p5.48xlarge"), "accelerators": num(1.5)})), nil), tftypes.Value{}, "", false},
		{"empty borrow limits", "hyperpod_compute_quota", quotaConfig(listOf(entry), map[string]tftypes.Value{"resource_sharing": objectOf(sharingType,
			map[string]tftypes.Value{"absolute_borrow_limits": tftypes.NewValue(limitsType, []tftypes.Value{})})}), tftypes.Value{}, "", true},
		{"unknown sharing", "hyperpod_compute_quota", quotaConfig(listOf(entry), map[string]tftypes.Value{"resource_sharing": unknown(sharingType)}),
			tftypes.Value{}, "", true},
		{"unchanged", "hyperpod_compute_quota", bench, benchState, "", true},
		{"renamed", "hyperpod_compute_quota", renamed, benchState, "", true},
		{"renamed, unnamed in the store", "hyperpod_compute_quota", renamed, benchState, `{"unnamed":"dHJ1ZQ=="}`, true},
		{"other team", "hyperpod_compute_quota", quotaConfig(listOf(entry), map[string]tftypes.Value{"team": str("team-b")}), benchState, "", true},
		{"owned elsewhere", "hyperpod_compute_quota", bench, benchState, `{"owner_conflict":"eyJvYmplY3QiOiJ4Iiwib3duZXIiOiJ5In0="}`, false},
		{"imported", "hyperpod_compute_quota", bench, imported, `{"takeover":"dHJ1ZQ=="}`, true},
		{"framework private", "hyperpod_compute_quota", bench, benchState, `{".import_before_read":"dHJ1ZQ=="}`, true},
		{"unreadable private", "hyperpod_compute_quota", bench, benchState, `{"takeover":"bm90IGpzb24="}`, false},
		{"destroy", "hyperpod_compute_quota", tftypes.NewValue(quota, nil), benchState, "", false},
		{"namespace", "hyperpod_team_namespace", nsConfig, tftypes.Value{}, "", true},
		{"namespace unchanged", "hyperpod_team_namespace", nsConfig, nsState, "", true},
		{"namespace reserved label", "hyperpod_team_namespace", objectOf(namespace, map[string]tftypes.Value{"team": str("team-a"),
			"labels": tftypes.NewValue(namespace.AttributeTypes["labels"], map[string]tftypes.Value{"app.kubernetes.io/managed-by": str("x")})}),
			tftypes.Value{}, "", true}, // ValidateConfig refuses it; the plan does not
		{"namespace timeouts", "hyperpod_team_namespace", objectOf(namespace, map[string]tftypes.Value{"team": str("team-a"),
			"timeouts": objectOf(namespace.AttributeTypes["timeouts"].(tftypes.Object), map[string]tftypes.Value{"create": str("1m")})}),
			tftypes.Value{}, "", true},
	}
	for _, c := range cases {
		req := d.planRequest(t, c.typeName, c.config, c.prior, c.private)
		before := d.delegatedPlans.Load()
		resp := d.plan(t, c.name, req)
		if answered := d.delegatedPlans.Load() == before; answered != c.fast {
			t.Errorf("%s: answered by the fast path %v, want %v (%q)", c.name, answered, c.fast, diagTexts(resp.Diagnostics))
		}
		if !c.config.IsNull() {
			cfg := dynamicValue(t, c.config.Type(), c.config)
			d.validate(t, c.name, &tfprotov6.ValidateResourceConfigRequest{TypeName: c.typeName, Config: &cfg})
		}
	}
}

// planRequest is the plan Terraform sends for config over prior (no prior when zero).
func (d *differential) planRequest(t *testing.T, typeName string, config, prior tftypes.Value, private string) *tfprotov6.PlanResourceChangeRequest {
	s := d.schemas[typeName]
	ty := s.ValueType()
	if prior.Type() == nil {
		prior = tftypes.NewValue(ty, nil)
	}
	proposed := proposedBySchema(s.Block.Attributes, s.Block.BlockTypes, prior, config)
	cfg, prop, pri := dynamicValue(t, ty, config), dynamicValue(t, ty, proposed), dynamicValue(t, ty, prior)
	return &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, Config: &cfg, ProposedNewState: &prop, PriorState: &pri,
		PriorPrivate: []byte(private)}
}
