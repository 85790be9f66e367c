package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/kueuebackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/sagemakerbackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
)

// PlannedResourceChange is the part of a resource change of `terraform show -json` that
// QuotaChangesOf reads.
type PlannedResourceChange struct {
	Address string `json:"address"`
	Mode    string `json:"mode"`
	Type    string `json:"type"`
	Change  struct {
		Actions []string        `json:"actions"`
		Before  json.RawMessage `json:"before"`
		After   json.RawMessage `json:"after"`
	} `json:"change"`
}

// PlanReview is what a review takes from a saved plan: its compute quota changes, rendered with
// the instance types of the provider block the plan was made with.
type PlanReview struct {
	Changes []review.Change
	// Catalog is the built-in catalog with the provider block's instance_types applied.
	Catalog *catalog.Catalog
	// InstanceTypesUnknown says why the provider block's instance_types are not in the plan, so
	// that Catalog is the built-in one alone; "" when they are there or the block sets none.
	InstanceTypesUnknown string
	// Store places the changed quotas as the plan's store writes them.
	Store review.Placement
}

// planProviderConfig is a provider block in the configuration section of `terraform show -json`.
type planProviderConfig struct {
	FullName    string                     `json:"full_name"`
	Expressions map[string]json.RawMessage `json:"expressions"`
}

// planExpression is an attribute's expression there: its value only when it is a constant.
type planExpression struct {
	ConstantValue json.RawMessage `json:"constant_value"`
	References    []string        `json:"references"`
}

// QuotaChangesOfPlan reads a saved plan from `terraform show -json`: its compute quota changes
// (see QuotaChangesOf), with the instance types of its hyperpod provider block, read by the
// code that reads them when the provider is configured.
func QuotaChangesOfPlan(ctx context.Context, r io.Reader) (PlanReview, error) {
	var plan struct {
		FormatVersion   string                  `json:"format_version"`
		ResourceChanges []PlannedResourceChange `json:"resource_changes"`
		Configuration   struct {
			ProviderConfig map[string]planProviderConfig `json:"provider_config"`
		} `json:"configuration"`
	}
	if err := json.NewDecoder(r).Decode(&plan); err != nil {
		return PlanReview{}, fmt.Errorf("reading the plan (the output of terraform show -json of a saved plan): %w", err)
	}
	if plan.FormatVersion == "" {
		return PlanReview{}, errors.New("the input has no format_version: give it the output of terraform show -json <saved plan>")
	}
	cat, unknown, err := planCatalog(ctx, plan.Configuration.ProviderConfig)
	if err != nil {
		return PlanReview{}, err
	}
	changes, err := QuotaChangesOf(ctx, plan.ResourceChanges, cat, unknown)
	if err != nil {
		return PlanReview{}, err
	}
	return PlanReview{Changes: changes, Catalog: cat, InstanceTypesUnknown: unknown, Store: planStore(plan.Configuration.ProviderConfig)}, nil
}

// planStore is where the plan's provider block writes quotas: the SageMaker API, whose
// task-governance add-on writes the Kueue objects, when the block has task_governance.
func planStore(configs map[string]planProviderConfig) review.Placement {
	for _, c := range configs {
		if _, ok := c.Expressions["task_governance"]; ok && strings.HasSuffix(c.FullName, "/hyperpod") {
			return sagemakerbackend.AddonPlacement()
		}
	}
	return kueuebackend.QueuePlacement()
}

// planCatalog is the catalog of the plan's hyperpod provider block: the built-in one with the
// block's instance_types, or the built-in one alone, with why, when the plan holds no value of
// them (an expression with references, or one terraform show does not evaluate).
func planCatalog(ctx context.Context, configs map[string]planProviderConfig) (*catalog.Catalog, string, error) {
	keys := make([]string, 0, len(configs))
	for k, c := range configs {
		if strings.HasSuffix(c.FullName, "/hyperpod") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return catalog.Builtin(), "", nil
	}
	raw := configs[keys[0]].Expressions["instance_types"]
	for _, k := range keys[1:] {
		if !bytes.Equal(configs[k].Expressions["instance_types"], raw) {
			return nil, "", fmt.Errorf("the plan has hyperpod provider blocks %s with different instance_types: "+
				"review the plan of one provider block (one cluster) at a time", strings.Join(keys, ", "))
		}
	}
	if len(raw) == 0 {
		return catalog.Builtin(), "", nil
	}
	var e planExpression
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, "", fmt.Errorf("reading the provider block's instance_types in the plan: %w", err)
	}
	switch {
	case len(e.References) > 0:
		return catalog.Builtin(), "the provider block's `instance_types` refers to " + strings.Join(e.References, ", ") +
			", whose values `terraform show -json` does not include", nil
	case len(e.ConstantValue) == 0:
		return catalog.Builtin(), "the provider block's `instance_types` is an expression whose value " +
			"`terraform show -json` does not include", nil
	}
	var sch provider.SchemaResponse
	(&hyperpodProvider{}).Schema(ctx, provider.SchemaRequest{}, &sch)
	typ := sch.Schema.Attributes[tagOf[providerModel]("InstanceTypes")].GetType()
	tv, err := tftypes.ValueFromJSONWithOpts(e.ConstantValue, typ.TerraformType(ctx), tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true})
	if err != nil {
		return nil, "", fmt.Errorf("reading the provider block's instance_types in the plan: %w", err)
	}
	v, err := typ.ValueFromTerraform(ctx, tv)
	if err != nil {
		return nil, "", fmt.Errorf("reading the provider block's instance_types in the plan: %w", err)
	}
	m, _ := v.(types.Map)
	var diags diag.Diagnostics
	cat, _, _ := readInstanceTypes(m, &diags)
	if diags.HasError() {
		return nil, "", fmt.Errorf("the provider block's instance_types: %s", diags.Errors()[0].Detail())
	}
	return cat, "", nil
}

// QuotaChangesOf turns the hyperpod_compute_quota changes of a saved plan into the ClusterQueues
// they leave, rendered as the provider writes them (and as the task-governance add-on maps a
// SageMaker compute quota), with the instance types of cat. The plan's amounts are the ones it
// computed; a change whose amounts are not known until apply is an error naming it. When
// typesUnknown says why the provider's instance_types are not known, a change of a type cat
// does not know is returned not predicted, with that reason.
func QuotaChangesOf(ctx context.Context, changes []PlannedResourceChange, cat *catalog.Catalog, typesUnknown string) ([]review.Change, error) {
	var sch resource.SchemaResponse
	(&computeQuotaResource{}).Schema(ctx, resource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx)
	var out []review.Change
	for _, rc := range changes {
		if rc.Mode != "managed" || rc.Type != "hyperpod_compute_quota" || isNoop(rc.Change.Actions) {
			continue
		}
		c := review.Change{Address: rc.Address, Actions: rc.Change.Actions}
		before, err := quotaModelOf(ctx, sch, typ, rc.Change.Before)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rc.Address, err)
		}
		after, err := quotaModelOf(ctx, sch, typ, configuredOnly(rc.Change.After))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rc.Address, err)
		}
		switch {
		case after != nil:
			c.Team = after.Team.ValueString()
			cfg := quotaConfigFromModel(*after)
			if t, ok := typeNotIn(cat, cfg); !ok && typesUnknown != "" {
				c.NotPredicted = fmt.Sprintf("%s is not in the built-in catalog, and %s", t, typesUnknown)
				break
			}
			rc, problems := quota.Plan(cat, cfg)
			if len(problems) > 0 {
				return nil, fmt.Errorf("%s: %s", c.Address, problems[0].Detail)
			}
			for _, e := range rc.Resources {
				if e.Unknown {
					return nil, fmt.Errorf("%s: its amounts are not known until apply", c.Address)
				}
			}
			q, err := quota.RenderClusterQueue(cat, rc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Address, err)
			}
			c.After = &q
		case before != nil:
			c.Team = before.Team.ValueString()
		default:
			continue
		}
		c.ClusterQueue = quota.ClusterQueueName(c.Team)
		out = append(out, c)
	}
	return out, nil
}

// typeNotIn is the first instance type of cfg that cat does not know; ok when it knows them all.
func typeNotIn(cat *catalog.Catalog, cfg quota.Config) (_ string, ok bool) {
	var names []string
	for _, e := range cfg.Resources {
		names = append(names, e.InstanceType)
	}
	for _, l := range cfg.Sharing.AbsoluteBorrowLimits {
		names = append(names, l.InstanceType)
	}
	for _, n := range names {
		if _, known := cat.Lookup(n); !known {
			return n, false
		}
	}
	return "", true
}

func isNoop(actions []string) bool {
	return len(actions) == 0 || strings.Join(actions, ",") == "no-op" || strings.Join(actions, ",") == "read"
}

// configuredOnly turns a planned quota's values back into a configuration that plans the
// same: the plan holds the accelerators that count or accelerator_partition computed, which a
// configuration may not set beside them. Every other computed amount equals what the
// configuration's sizing resolves to, so setting it is an override that changes nothing.
func configuredOnly(raw json.RawMessage) json.RawMessage {
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return raw
	}
	entries, _ := v["resources"].([]any)
	if sharing, ok := v["resource_sharing"].(map[string]any); ok {
		limits, _ := sharing["absolute_borrow_limits"].([]any)
		entries = append(entries, limits...)
	}
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok && (m["count"] != nil || m["accelerator_partition"] != nil) {
			m["accelerators"] = nil
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// quotaModelOf decodes a plan's JSON value of a compute quota; nil for a null one.
func quotaModelOf(ctx context.Context, sch resource.SchemaResponse, typ tftypes.Type, raw json.RawMessage) (*computeQuotaModel, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	v, err := tftypes.ValueFromJSONWithOpts(raw, typ, tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true})
	if err != nil {
		return nil, fmt.Errorf("decoding the planned values: %w", err)
	}
	var m computeQuotaModel
	if d := getModel(ctx, tfsdk.State{Raw: v, Schema: sch.Schema}, &m); d.HasError() {
		return nil, fmt.Errorf("decoding the planned values: %s", d.Errors()[0].Detail())
	}
	return &m, nil
}
