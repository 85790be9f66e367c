package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

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

// QuotaChangesOfPlan reads the compute quota changes of a saved plan from `terraform show -json`
// (see QuotaChangesOf).
func QuotaChangesOfPlan(ctx context.Context, r io.Reader, cat *catalog.Catalog) ([]review.Change, error) {
	var plan struct {
		FormatVersion   string                  `json:"format_version"`
		ResourceChanges []PlannedResourceChange `json:"resource_changes"`
	}
	if err := json.NewDecoder(r).Decode(&plan); err != nil {
		return nil, fmt.Errorf("reading the plan (the output of terraform show -json of a saved plan): %w", err)
	}
	if plan.FormatVersion == "" {
		return nil, errors.New("the input has no format_version: give it the output of terraform show -json <saved plan>")
	}
	return QuotaChangesOf(ctx, plan.ResourceChanges, cat)
}

// QuotaChangesOf turns the hyperpod_compute_quota changes of a saved plan into the ClusterQueues
// they leave, rendered as the provider writes them (and as the task-governance add-on maps a
// SageMaker compute quota), with the instance types of cat. The plan's amounts are the ones it
// computed; a change whose amounts are not known until apply is an error naming it.
func QuotaChangesOf(ctx context.Context, changes []PlannedResourceChange, cat *catalog.Catalog) ([]review.Change, error) {
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
			rc, problems := quota.Plan(cat, quotaConfigFromModel(*after))
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
