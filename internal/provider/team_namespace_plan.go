package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// ModifyPlan derives id, namespace, local_queue_name and cluster_queue_name from team, so they
// are known at plan time (no API call) and differ from state when Read saw drift. The plan is
// written back once: each SetAttribute would rebuild the whole value.
func (r *teamNamespaceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if !req.State.Raw.IsNull() {
		refuseForeignOwner(ctx, req.Private, teamNamespaceResourceKind, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	var plan teamNamespaceModel
	resp.Diagnostics.Append(getModel(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// After apply the objects match the configuration: the drift of the last refresh is repaired.
	plan.Drift = noDrift()
	if !req.State.Raw.IsNull() && (plan.OwnerID.IsNull() || isTakeover(ctx, req.Private, &resp.Diagnostics)) {
		// Imported, or written before owner identities: this apply records a new one.
		plan.OwnerID = types.StringUnknown()
	}
	if t := plan.Team; !t.IsUnknown() && !t.IsNull() {
		plan.ID = t
		plan.Namespace = types.StringValue(quota.NamespaceName(t.ValueString()))
		plan.LocalQueueName = types.StringValue(quota.LocalQueueName(t.ValueString()))
		plan.ClusterQueueName = types.StringValue(quota.ClusterQueueName(t.ValueString()))
	}
	resp.Diagnostics.Append(setModel(ctx, &resp.Plan, &plan)...)
}

const teamNamespaceResourceKind = "hyperpod_team_namespace"
