package provider

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The configuration `terraform query -generate-config-out` writes for each listed object is the
// provider's answer to one GenerateResourceConfig per object, asked one after another. The
// framework's answer walks the schema once per value of the state (about a millisecond for a
// compute quota, a second of a 1000-quota query spent waiting); configGenerator gives the same
// answer from rules compiled once per attribute of the schema.

// configRule is what the framework's GenerateResourceConfig does to a non-null value at one
// schema position.
type configRule uint8

const (
	// keepValue keeps the value as the state holds it.
	keepValue configRule = iota
	// nullValue writes null: a read-only or deprecated attribute, a deprecated block, the id
	// an SDKv2 resource adds.
	nullValue
	// nullIfEmpty writes null for an empty string of an optional attribute.
	nullIfEmpty
	// notCompiled is a position the generator does not decide: the framework answers.
	notCompiled
)

// errNotCompiled ends a generation that met a notCompiled position.
var errNotCompiled = errors.New("position not compiled")

// configGenerator answers GenerateResourceConfig for one resource type as the framework does
// (fwserver.GenerateResourceConfig of terraform-plugin-framework v1.19.0): a read-only or
// deprecated attribute, a deprecated block and an optional empty string become null, every
// other value stays. The rule of each position (its path with element keys left out) is the
// framework's reading of the schema, computed once.
type configGenerator struct {
	schema schema.Schema
	ty     tftypes.Type
	// compiled is false for a schema with collection blocks, which the framework's
	// conversions change beside the rules (null blocks read as empty, and back).
	compiled bool

	mu    sync.Mutex
	rules map[string]configRule
}

func newConfigGenerator(s schema.Schema) *configGenerator {
	g := &configGenerator{schema: s, ty: s.Type().TerraformType(context.Background()), rules: map[string]configRule{}, compiled: true}
	for _, b := range s.Blocks {
		if _, single := b.(schema.SingleNestedBlock); !single || len(b.(schema.SingleNestedBlock).Blocks) > 0 {
			g.compiled = false
		}
	}
	return g
}

// generate is the configuration of state; false when the framework must answer.
func (g *configGenerator) generate(state *tfprotov6.DynamicValue) (tftypes.Value, bool) {
	if !g.compiled || state == nil {
		return tftypes.Value{}, false
	}
	v, err := state.Unmarshal(g.ty)
	if err != nil {
		return tftypes.Value{}, false
	}
	config, err := tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsNull() || len(p.Steps()) == 0 {
			return v, nil
		}
		switch g.rule(p) {
		case nullValue:
			return tftypes.NewValue(v.Type(), nil), nil
		case nullIfEmpty:
			var s string
			if !v.Type().Is(tftypes.String) {
				return v, nil
			}
			if !v.IsKnown() || v.As(&s) != nil {
				return v, errNotCompiled // the framework reports it
			}
			if s == "" {
				return tftypes.NewValue(v.Type(), nil), nil
			}
		case notCompiled:
			return v, errNotCompiled
		}
		return v, nil
	})
	return config, err == nil
}

// rule is the rule of p's position, from the cache or the schema.
func (g *configGenerator) rule(p *tftypes.AttributePath) configRule {
	var key strings.Builder
	for _, step := range p.Steps() {
		if name, ok := step.(tftypes.AttributeName); ok {
			key.WriteString("." + string(name))
		} else {
			key.WriteString("[]")
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.rules[key.String()]
	if !ok {
		r = g.ruleOf(p)
		g.rules[key.String()] = r
	}
	return r
}

// ruleOf reads the schema at p as the framework's generation does.
func (g *configGenerator) ruleOf(p *tftypes.AttributePath) configRule {
	found, _, err := tftypes.WalkAttributePath(g.schema, p)
	if err != nil {
		return notCompiled
	}
	switch at := found.(type) {
	case schema.Attribute:
		switch {
		case at.GetDeprecationMessage() != "", at.IsComputed() && !at.IsOptional():
			return nullValue
		case p.Equal(tftypes.NewAttributePath().WithAttributeName("id")) && at.IsComputed() && at.IsOptional():
			return nullValue
		case at.IsOptional():
			return nullIfEmpty
		}
		return keepValue
	case schema.Block:
		if at.GetDeprecationMessage() != "" {
			return nullValue
		}
		return keepValue
	case attr.Type, schema.NestedAttributeObject, schema.NestedBlockObject:
		return keepValue
	}
	return notCompiled
}
