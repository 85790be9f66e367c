package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// What a resource plans and saves differently by what its store can do (backend.Traits), in one
// place: the resources ask these and never read the traits themselves.

// planQuota runs the quota pipeline on cfg for the provider's store: what the store cannot hold
// is refused at its attribute (quota.PlanOn).
func (pd *providerData) planQuota(cfg quota.Config) (quota.ResolvedConfig, []quota.Problem) {
	return quota.PlanOn(pd.catalog, cfg, pd.backend.Traits.StoreLimits)
}

// unsupported says why the store cannot hold the attribute attr; ok is false when it can.
// checkStore is what the store refuses of the configuration (and of its resolved quota).
func (pd *providerData) checkStore(cfg quota.Config, rc quota.ResolvedConfig) []quota.Problem {
	return quota.CheckStore(cfg, rc, pd.backend.Traits.StoreLimits)
}

func (pd *providerData) unsupported(attr string) (why string, ok bool) {
	why, ok = pd.backend.Traits.Unsupported[attr]
	return why, ok
}

// withoutUnsupported plans (and stores) null for the computed attributes of m the store cannot
// hold.
func (pd *providerData) withoutUnsupported(m *computeQuotaModel, diags *diag.Diagnostics) {
	if _, ok := pd.unsupported("cohort"); ok {
		m.Cohort = types.StringNull()
	}
	if _, ok := pd.unsupported("resources.efa"); !ok || m.Resources.IsNull() || m.Resources.IsUnknown() {
		return
	}
	for _, e := range m.Resources.Elements() {
		if e.IsUnknown() || e.IsNull() {
			return // an entry not known yet: its efa is planned unknown
		}
	}
	entries := elementsOf[resourceEntryModel](m.Resources)
	for i := range entries {
		entries[i].EFA = types.Int64Null()
	}
	list, d := listFrom(entries)
	diags.Append(d...)
	m.Resources = list
}

// plannedStoreRecord plans the store's record of an object (its id, and its ARN, version and
// status): null on a store that keeps none, unknown until a create has run, and the state's
// (id and prior) while no update changes it (planNewVersion).
func (pd *providerData) plannedStoreRecord(creating bool, id types.String, prior storeRecordModel) (types.String, storeRecordModel) {
	switch {
	case !pd.backend.Traits.AssignsIDs:
		return storeRecordOf(backend.Record{})
	case creating:
		return types.StringUnknown(), storeRecordModel{ARN: types.StringUnknown(), Version: types.Int64Unknown(), Status: types.StringUnknown()}
	}
	return id, prior
}

// planNewVersion plans a new version and status for an update of an object of a store that
// assigns ids, once the rest of the plan is set.
func (pd *providerData) planNewVersion(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !pd.backend.Traits.AssignsIDs || req.State.Raw.IsNull() || resp.Diagnostics.HasError() || sameValues(resp.Plan.Raw, req.State.Raw) {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(tagOf[storeRecordModel]("Version")), types.Int64Unknown())...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(tagOf[storeRecordModel]("Status")), types.StringUnknown())...)
}

// storePathChanged refuses a refresh of a resource whose state records a store id (quota_id,
// config_id) when the backend answering assigns none: the object is held by another store, so
// read here it would be dropped from state, and a destroy would leave it behind there.
func (pd *providerData) storePathChanged(storeID types.String, diags *diag.Diagnostics) bool {
	if storeID.IsNull() || storeID.IsUnknown() || pd.backend.Traits.AssignsIDs {
		return false
	}
	storeDiag(pd.backend.Words.ForeignID(storeID.ValueString())).addTo(diags)
	return true
}
