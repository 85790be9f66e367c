package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// ModifyPlan validates the quota and computes every default from the configuration, so the plan
// shows concrete numbers. It needs no API call. Values that depend on something unknown (an
// instance type, a partition, a provider instance_types entry) are planned unknown, and only
// those.
func (r *computeQuotaResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return // the provider is not configured yet (validation)
	}
	if req.Plan.Raw.IsNull() {
		r.previewDeletion(ctx, req, resp)
		return
	}
	var config, plan computeQuotaModel
	resp.Diagnostics.Append(getModel(ctx, req.Config, &config)...)
	resp.Diagnostics.Append(getModel(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		refuseForeignOwner(ctx, req.Private, quotaResourceKind, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}

	tagsAll := r.data.planTagsAll(config.Tags, &resp.Diagnostics)
	cfg := quotaConfigFromModel(config)
	for i, e := range cfg.Resources {
		k := []string{"resources", strconv.Itoa(i)}
		if !cfg.IsUnknown(append(k, "instance_type")...) && r.data.capacityPending(e.InstanceType) {
			cfg.MarkUnknown(append(k, "capacity")...)
		}
	}
	for j, a := range cfg.Sharing.AbsoluteBorrowLimits {
		k := []string{"resource_sharing", "absolute_borrow_limits", strconv.Itoa(j)}
		if !cfg.IsUnknown(append(k, "instance_type")...) && r.data.capacityPending(a.InstanceType) {
			cfg.MarkUnknown(append(k, "capacity")...)
		}
	}
	rc, problems := r.data.planQuota(cfg)
	if len(problems) > 0 {
		addProblems(&resp.Diagnostics, problems)
		return
	}
	planned, diags := plannedQuotaModel(config, rc)
	resp.Diagnostics.Append(diags...)
	r.data.withoutUnsupported(&planned, &resp.Diagnostics)
	var prior computeQuotaModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(getModel(ctx, req.State, &prior)...)
		if !resp.Diagnostics.HasError() && !r.previewChange(ctx, &prior, &planned, &rc, &resp.Diagnostics) {
			warnImpact(ctx, req.Private, r.data.catalog, rc, &resp.Diagnostics)
		}
	} else if !resp.Diagnostics.HasError() {
		// A new quota moves jobs too: its team's pending Workloads, and borrowers of the
		// cohort it lends to.
		r.previewChange(ctx, nil, &planned, &rc, &resp.Diagnostics)
	}
	planned.QuotaID, planned.storeRecordModel = r.data.plannedStoreRecord(req.State.Raw.IsNull(), prior.QuotaID, prior.storeRecordModel)
	if resp.Diagnostics.HasError() {
		return
	}
	planned.Timeouts = plan.Timeouts
	planned.TagsAll = tagsAll
	planned.OwnerID = plan.OwnerID
	if !req.State.Raw.IsNull() && (plan.OwnerID.IsNull() || isTakeover(ctx, req.Private, &resp.Diagnostics)) {
		// Imported, or written before owner identities: this apply records a new one.
		planned.OwnerID = types.StringUnknown()
	}
	// After apply the cluster matches the configuration: whatever drift the last refresh found
	// is what this plan repairs.
	planned.Drift = types.ListValueMust(types.StringType, nil)
	resp.Diagnostics.Append(setModel(ctx, &resp.Plan, &planned)...)
	r.data.planNewVersion(ctx, req, resp)
	if !req.State.Raw.IsNull() {
		// A queue being deleted cannot be updated back: delete it (waiting for what holds it)
		// and create it again. Terraform replaces only for a path that changes: drift does.
		if terminating, d := req.Private.GetKey(ctx, privateTerminating); len(terminating) > 0 && !d.HasError() {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("drift"))
		}
	}
}

// previewDeletion previews what deleting the quota in state does to jobs.
func (r *computeQuotaResource) previewDeletion(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var prior computeQuotaModel
	if req.State.Raw.IsNull() || getModel(ctx, req.State, &prior).HasError() {
		return
	}
	r.previewChange(ctx, &prior, nil, nil, &resp.Diagnostics)
}

// previewChange warns with what replacing the quota prior (nil: none yet) with planned, resolved
// as rc (both nil: deleting it), does to jobs, and reports whether it made a preview. A plan that
// changes nothing Kueue admits by reads nothing; values not known until apply cannot be previewed.
func (r *computeQuotaResource) previewChange(ctx context.Context, prior, planned *computeQuotaModel, rc *quota.ResolvedConfig, diags *diag.Diagnostics) bool {
	if planned == nil {
		return r.data.preview.warnQuotaChange(ctx, path.Root("resources"), r.data.catalog, prior.Team.ValueString(), nil, diags)
	}
	if prior != nil && admitsAlike(*prior, *planned) {
		return false
	}
	if !rc.Known() {
		return false
	}
	return r.data.preview.warnQuotaChange(ctx, path.Root("resources"), r.data.catalog, planned.Team.ValueString(), rc, diags)
}

// admitsAlike reports whether two quotas give Kueue the same ClusterQueue to admit by.
func admitsAlike(a, b computeQuotaModel) bool {
	return a.Team.Equal(b.Team) && a.ActivationState.Equal(b.ActivationState) && a.PreemptTeamTasks.Equal(b.PreemptTeamTasks) &&
		a.FairShareWeight.Equal(b.FairShareWeight) && a.Cohort.Equal(b.Cohort) && a.ResourceSharing.Equal(b.ResourceSharing) &&
		a.Resources.Equal(b.Resources)
}

// storedUsage is what a refresh saw the team's workloads hold, kept in private state.
type storedUsage struct {
	Admitted  int64                 `json:"admitted"`
	Resources []storedResourceUsage `json:"resources"`
}

type storedResourceUsage struct {
	InstanceType string `json:"instance_type"`
	Resource     string `json:"resource"`
	Reserved     string `json:"reserved"` // exact decimal in the attribute units
}

func usageForPrivate(u quota.Usage) []byte {
	s := storedUsage{Admitted: u.AdmittedWorkloads}
	for _, r := range u.Resources {
		if r.Reserved != nil && r.Reserved.Sign() > 0 {
			s.Resources = append(s.Resources, storedResourceUsage{r.InstanceType, r.Resource, quota.RatString(r.Reserved)})
		}
	}
	if len(s.Resources) == 0 {
		return nil // nothing held: nothing to warn about
	}
	raw, _ := json.Marshal(s)
	return raw
}

// warnImpact warns when the plan lowers a limit below what the team's workloads held at the
// last refresh: Kueue may then preempt them. It uses the status that refresh read.
func warnImpact(ctx context.Context, p privateGetter, cat *catalog.Catalog, rc quota.ResolvedConfig, diags *diag.Diagnostics) {
	raw, d := p.GetKey(ctx, privateUsage)
	diags.Append(d...)
	var s storedUsage
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return
	}
	for _, e := range rc.Resources {
		if e.Unknown {
			return // the plan is not known enough to compare
		}
	}
	want, err := quota.RenderClusterQueue(cat, rc)
	if err != nil {
		return
	}
	now := quota.Usage{AdmittedWorkloads: s.Admitted}
	for _, r := range s.Resources {
		v, ok := new(big.Rat).SetString(r.Reserved)
		if !ok {
			return
		}
		now.Resources = append(now.Resources, quota.ResourceUsage{InstanceType: r.InstanceType, Resource: r.Resource, Reserved: v})
	}
	for _, i := range quota.ImpactOf(now, want.Spec) {
		diags.AddAttributeWarning(path.Root("resources"), "Quota below current usage", fmt.Sprintf(
			"This plan lowers the limit of %s on %s to %s (nominal quota plus borrowing limit), but the team's workloads "+
				"hold %s of it now. Kueue may preempt some of the %d admitted workloads to fit. Amounts are in vCPU for cpu, "+
				"GiB for memory and devices otherwise.",
			i.Resource, i.InstanceType, quota.RatString(i.Limit), quota.RatString(i.Reserved), i.Workloads))
	}
}
