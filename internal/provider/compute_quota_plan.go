package provider

import (
	"context"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// ModifyPlan validates the quota and computes every default from the configuration, so the plan
// shows concrete numbers. It needs no API call. Values that depend on something unknown (an
// instance type, a partition, a provider instance_types entry) are planned unknown, and only
// those.
func (r *computeQuotaResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy, or the provider is not configured yet (validation)
	}
	var config, plan computeQuotaModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		refuseForeignOwner(ctx, req.Private, quotaResourceKind, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}

	cfg := quotaConfigFromModel(config)
	for i, e := range cfg.Resources {
		k := []string{"resources", strconv.Itoa(i)}
		if !cfg.IsUnknown(append(k, "instance_type")...) && r.data.capacityPending(e.InstanceType) {
			cfg.MarkUnknown(append(k, "capacity")...)
		}
	}
	if problems := quota.Validate(r.data.catalog, cfg); len(problems) > 0 {
		addProblems(&resp.Diagnostics, problems)
		return
	}
	rc, problems := quota.Defaults(r.data.catalog, cfg)
	if len(problems) > 0 {
		addProblems(&resp.Diagnostics, problems)
		return
	}
	addProblems(&resp.Diagnostics, quota.CheckRanges(rc))
	if resp.Diagnostics.HasError() {
		return
	}
	planned, diags := plannedQuotaModel(config, rc)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	planned.Timeouts = plan.Timeouts
	planned.OwnerID = plan.OwnerID
	if !req.State.Raw.IsNull() && (plan.OwnerID.IsNull() || isTakeover(ctx, req.Private, &resp.Diagnostics)) {
		// Imported, or written before owner identities: this apply records a new one.
		planned.OwnerID = types.StringUnknown()
	}
	// After apply the cluster matches the configuration: whatever drift the last refresh found
	// is what this plan repairs.
	planned.Drift = types.ListValueMust(types.StringType, nil)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &planned)...)
}
