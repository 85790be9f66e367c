package provider

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
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

func TestQuotaChangesOfPlanInstanceTypes(t *testing.T) {
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
			got, err := QuotaChangesOfPlan(context.Background(), strings.NewReader(planJSON(t, tt.instanceTypes, tt.quotaTypes...)))
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
					if c.After != nil || !strings.Contains(c.NotPredicted, typ) || !strings.Contains(c.NotPredicted, tt.wantUnknown) {
						t.Errorf("%s: want not predicted, naming %s and why, got %q (After %v)", c.Address, typ, c.NotPredicted, c.After)
					}
					continue
				}
				if c.NotPredicted != "" || c.After == nil {
					t.Fatalf("%s: want predicted, got not predicted: %q", c.Address, c.NotPredicted)
				}
				it, ok := got.Catalog.Lookup(typ)
				if !ok {
					t.Fatalf("the review's catalog lacks %s", typ)
				}
				// One instance of the type: its flavor's GPU quota is the catalog's figure.
				flavors := c.After.Spec.ResourceGroups[0].Flavors
				if flavors[0].Name != typ {
					t.Fatalf("%s: flavor %s, want %s", c.Address, flavors[0].Name, typ)
				}
				for _, r := range flavors[0].Resources {
					if r.Name == "nvidia.com/gpu" && r.NominalQuota.Value() != it.Accelerators {
						t.Errorf("%s: %s GPUs, want %d", c.Address, r.NominalQuota.String(), it.Accelerators)
					}
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

// A plan whose provider block writes through the SageMaker API is reviewed with the quotas
// placed as the task-governance add-on writes them: a new team's quota comes with its
// LocalQueue, so a job already waiting in the team's namespace starts.
func TestQuotaChangesOfPlanStore(t *testing.T) {
	const team = "newteam"
	for _, tc := range []struct {
		name        string
		expressions map[string]any
		wantQueue   bool
	}{
		{"kubernetes", map[string]any{"config_path": map[string]any{"constant_value": "~/.kube/config"}}, false},
		{"task governance", map[string]any{"task_governance": []any{map[string]any{}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := map[string]any{"format_version": "1.2", "configuration": map[string]any{"provider_config": map[string]any{
				"hyperpod": map[string]any{"name": "hyperpod", "full_name": "registry.terraform.io/quotaworks/hyperpod",
					"expressions": tc.expressions}}}}
			raw, err := json.Marshal(plan)
			if err != nil {
				t.Fatal(err)
			}
			review, err := QuotaChangesOfPlan(context.Background(), strings.NewReader(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			var c admission.Cluster
			c = review.Store.WithQuota(c, team, &kueue.ClusterQueue{})
			got := slices.ContainsFunc(c.LocalQueues, func(lq kueue.LocalQueue) bool {
				return lq.Namespace == quota.NamespaceName(team) && lq.Name == quota.LocalQueueName(team) &&
					lq.Spec.ClusterQueue == quota.ClusterQueueName(team)
			})
			if got != tc.wantQueue {
				t.Errorf("the team's LocalQueue placed with its quota: %v, want %v (%+v)", got, tc.wantQueue, c.LocalQueues)
			}
		})
	}
}
