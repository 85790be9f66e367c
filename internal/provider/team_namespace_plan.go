package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// ModifyPlan derives id, namespace, local_queue_name and cluster_queue_name from team, so they
// are known at plan time (no API call) and differ from state when Read saw drift.
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
	// After apply the objects match the configuration: the drift of the last refresh is repaired.
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("drift"), noDrift())...)
	if !req.State.Raw.IsNull() {
		var owner types.String
		resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("owner_id"), &owner)...)
		if owner.IsNull() || isTakeover(ctx, req.Private, &resp.Diagnostics) {
			// Imported, or written before owner identities: this apply records a new one.
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("owner_id"), types.StringUnknown())...)
		}
	}
	var team types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("team"), &team)...)
	if resp.Diagnostics.HasError() || team.IsUnknown() || team.IsNull() {
		return
	}
	t := team.ValueString()
	for attr, v := range map[string]string{
		"id":                 t,
		"namespace":          quota.NamespaceName(t),
		"local_queue_name":   quota.LocalQueueName(t),
		"cluster_queue_name": quota.ClusterQueueName(t),
	} {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(attr), types.StringValue(v))...)
	}
}

const teamNamespaceResourceKind = "hyperpod_team_namespace"
