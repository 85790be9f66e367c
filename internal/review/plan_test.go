package review

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// planJSON is a saved plan as `terraform show -json` prints it: the hyperpod provider block's
// instance_types expression (nil: the block sets none) and one new quota per instance type.
func planJSON(t *testing.T, instanceTypes any, quotaTypes ...string) string {
	t.Helper()
	plan := map[string]any{"format_version": "1.2"}
	if instanceTypes != nil {
		plan["configuration"] = map[string]any{"provider_config": map[string]any{
			"hyperpod": map[string]any{"name": "hyperpod", "full_name": "registry.terraform.io/quotaworks/hyperpod",
				"expressions": map[string]any{"instance_types": instanceTypes}},
		}}
	}
	var changes []any
	for i, typ := range quotaTypes {
		team := "team" + string(rune('a'+i))
		changes = append(changes, map[string]any{
			"address": "hyperpod_compute_quota." + team, "mode": "managed", "type": "hyperpod_compute_quota",
			"change": map[string]any{"actions": []string{"create"}, "before": nil, "after": map[string]any{
				"name": team, "team": team, "resources": []any{map[string]any{"instance_type": typ, "count": 1}},
			}},
		})
	}
	plan["resource_changes"] = changes
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadPlanInstanceTypes(t *testing.T) {
	const (
		custom  = "ml.custom.xlarge"
		builtin = "ml.g5.12xlarge"
	)
	customGPUs, overriddenVCPU := int64(6), 40.0
	constant := map[string]any{"constant_value": map[string]any{
		custom:  map[string]any{"accelerators": customGPUs, "vcpu": 48, "memory_in_gib": 384},
		builtin: map[string]any{"vcpu": overriddenVCPU},
	}}
	references := map[string]any{"references": []string{"var.types"}}
	tests := []struct {
		name          string
		instanceTypes any
		quotaTypes    []string
		// notPredicted are the quota types whose changes are not predicted.
		notPredicted []string
		wantUnknown  string
		wantErr      string
	}{
		{name: "constant: a type defined only there and an override", instanceTypes: constant, quotaTypes: []string{custom, builtin}},
		{name: "references: the built-in figures, said so; a type only the provider knows is not predicted",
			instanceTypes: references, quotaTypes: []string{custom, builtin}, notPredicted: []string{custom}, wantUnknown: "var.types"},
		{name: "an expression terraform show does not evaluate", instanceTypes: map[string]any{},
			quotaTypes: []string{builtin}, wantUnknown: "does not include"},
		{name: "no provider block: the built-in catalog", quotaTypes: []string{builtin}},
		{name: "an invalid override is the provider's error", quotaTypes: []string{builtin},
			instanceTypes: map[string]any{"constant_value": map[string]any{custom: map[string]any{"accelerators": 2}}},
			wantErr:       custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPlan(strings.NewReader(planJSON(t, tt.instanceTypes, tt.quotaTypes...)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "instance_types") {
					t.Fatalf("want an error on instance_types naming %s, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tt.wantUnknown == "") != (got.InstanceTypesUnknown == "") || !strings.Contains(got.InstanceTypesUnknown, tt.wantUnknown) {
				t.Errorf("InstanceTypesUnknown: got %q, want one with %q", got.InstanceTypesUnknown, tt.wantUnknown)
			}
			if len(got.Changes) != len(tt.quotaTypes) {
				t.Fatalf("got %d changes, want %d", len(got.Changes), len(tt.quotaTypes))
			}
			for i, c := range got.Changes {
				typ := tt.quotaTypes[i]
				wantNotPredicted := false
				for _, n := range tt.notPredicted {
					wantNotPredicted = wantNotPredicted || n == typ
				}
				if wantNotPredicted {
					if c.Planned != nil || !strings.Contains(c.NotPredicted, typ) || !strings.Contains(c.NotPredicted, tt.wantUnknown) {
						t.Errorf("%s: want not predicted, naming %s and why, got %q (Planned %v)", c.Address, typ, c.NotPredicted, c.Planned)
					}
					continue
				}
				if c.NotPredicted != "" || c.Planned == nil {
					t.Fatalf("%s: want predicted, got not predicted: %q", c.Address, c.NotPredicted)
				}
				it, ok := got.Catalog.Lookup(typ)
				if !ok {
					t.Fatalf("the review's catalog lacks %s", typ)
				}
				// One instance of the type: its accelerators are the catalog's figure.
				r := c.Planned.Resources[0]
				if r.Configured.InstanceType != typ || r.Accelerators != it.Accelerators {
					t.Errorf("%s: %d accelerators of %s, want %d of %s", c.Address, r.Accelerators, r.Configured.InstanceType, it.Accelerators, typ)
				}
			}
			customIt, hasCustom := got.Catalog.Lookup(custom)
			builtinIt, _ := got.Catalog.Lookup(builtin)
			base, _ := catalog.Builtin().Lookup(builtin)
			if tt.instanceTypes != nil && tt.wantUnknown == "" {
				if !hasCustom || customIt.Accelerators != customGPUs || builtinIt.VCPU != overriddenVCPU {
					t.Errorf("the catalog is not the provider block's: %s %+v, %s %+v", custom, customIt, builtin, builtinIt)
				}
			} else if hasCustom || builtinIt.VCPU != base.VCPU {
				t.Errorf("without the provider block's instance_types the catalog must be the built-in one: %s %v, %s %+v",
					custom, hasCustom, builtin, builtinIt)
			}
		})
	}
}

// A plan holds the accelerators that count or accelerator_partition computed; the review plans
// the quota again without them, as a configuration that sets count alone.
func TestPlannedQuotaLeavesComputedAcceleratorsOut(t *testing.T) {
	cfg, err := PlannedQuota(json.RawMessage(`{"name": "a", "team": "a", "resources": [
		{"instance_type": "ml.g5.12xlarge", "count": 2, "accelerators": 8, "vcpu": 96},
		{"instance_type": "ml.p4d.24xlarge", "accelerator_partition": {"type": "mig-1g.5gb", "count": 2}, "accelerators": 2},
		{"instance_type": "ml.g5.48xlarge", "accelerators": 3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Resources; got[0].Accelerators != nil || got[1].Accelerators != nil || got[0].VCPU == nil ||
		got[2].Accelerators == nil || *got[2].Accelerators != 3 {
		t.Errorf("accelerators beside count or a partition must be left out, others kept: %+v", got)
	}
	if none, err := PlannedQuota(json.RawMessage(`null`)); none != nil || err != nil {
		t.Errorf("null: %+v, %v; want no quota", none, err)
	}
}
