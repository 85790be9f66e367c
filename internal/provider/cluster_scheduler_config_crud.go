package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// policy is where the resource reads and writes the cluster's scheduling policy.
func (r *clusterSchedulerConfigResource) policy() backend.SchedulerPolicy {
	return r.data.backend.Scheduler
}

func (r *clusterSchedulerConfigResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterSchedulerConfigModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	run := r.data.startCreate(ctx, schedulerConfigResourceKind, "create priority classes", plan.Timeouts.Create,
		defaultSchedulerConfigTimeout, &resp.Diagnostics)
	if run == nil {
		return
	}
	defer run.end()
	p := r.wanted(&plan)
	w, err := r.policy().Create(run.ctx, p, run.owner)
	warnWritten(w, &resp.Diagnostics)
	save := func() {
		plan.setStored(w.Stored)
		plan.OwnerID = types.StringValue(w.Stored.OwnerID)
		resp.Diagnostics.Append(resp.State.Set(run.ctx, &plan)...)
		setConfigIdentity(run.ctx, resp.Identity, plan.ID, &resp.Diagnostics)
		run.handOver(w.Objects...)
	}
	if err == nil {
		save()
		return
	}
	addPolicyError(err, p.PriorityClasses, &resp.Diagnostics)
	if run.undoIfGone(w.Touched...) || w.Stored == nil {
		return
	}
	// Saved tainted: what the create wrote and what it may have, so none is left without state;
	// the next refresh drops what does not exist.
	run.saveTainted = save
	if w.NotWritten != nil {
		run.partlyCreated(w.Objects, w.NotWritten)
		return
	}
	save()
}

func (r *clusterSchedulerConfigResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := stateOf[clusterSchedulerConfigModel](ctx, req.State, &resp.Diagnostics)
	if !ok || !r.data.configured(&resp.Diagnostics) {
		return
	}
	// Every read that does not fail returns the identity (state written before identities
	// existed gets one here).
	setConfigIdentity(ctx, resp.Identity, state.ID, &resp.Diagnostics)
	if len(r.data.pendingConfig) > 0 {
		warnNotRefreshed(r.data, &resp.Diagnostics)
		return
	}
	if r.data.storePathChanged(state.ConfigID, &resp.Diagnostics) {
		return
	}
	stored, err := r.policy().Read(ctx, state.policyState(ctx, req.Private, &resp.Diagnostics))
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return
	}
	if stored == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	var conflict *ownerConflict
	if c := stored.Conflict; c != nil {
		conflict = &ownerConflict{Object: fmt.Sprintf("%s %q", c.Kind, c.Name), Owner: c.Owner.Description}
	}
	recordConflict(ctx, resp.Private, conflict, &resp.Diagnostics)
	state.setStored(stored)
	state.tagsModel = r.data.refreshed(state.tagsModel, stored.Policy.Tags)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	setConfigIdentity(ctx, resp.Identity, state.ID, &resp.Diagnostics)
}

func (r *clusterSchedulerConfigResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, prior, _ := updateModels[clusterSchedulerConfigModel](ctx, req, &resp.Diagnostics)
	ctx, cancel, _, ok := r.data.begin(ctx, "update priority classes", plan.Timeouts.Update, defaultSchedulerConfigTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	p := r.wanted(&plan)
	w, err := r.policy().Update(ctx, p, ownerToRecord(plan.OwnerID), prior.policyState(ctx, req.Private, &resp.Diagnostics))
	warnWritten(w, &resp.Diagnostics)
	if errors.Is(err, backend.ErrChanged) {
		changedOutside("Cluster scheduler config changed outside Terraform", err, prior.record(prior.ConfigID)).addTo(&resp.Diagnostics)
		return
	}
	if err != nil {
		addPolicyError(err, p.PriorityClasses, &resp.Diagnostics)
		return
	}
	plan.setStored(w.Stored)
	plan.OwnerID = types.StringValue(w.Stored.OwnerID)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setConfigIdentity(ctx, resp.Identity, plan.ID, &resp.Diagnostics)
	clearOwnershipMarks(ctx, resp.Private, &resp.Diagnostics)
}

// Delete deletes what this resource owns of the policy. Workloads that took a class's value
// keep it.
func (r *clusterSchedulerConfigResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, _ := stateOf[clusterSchedulerConfigModel](ctx, req.State, &resp.Diagnostics)
	ctx, cancel, timeout, ok := r.data.begin(ctx, "delete priority classes", state.Timeouts.Delete, defaultSchedulerConfigTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok || r.data.storePathChanged(state.ConfigID, &resp.Diagnostics) {
		return
	}
	w, err := r.policy().Delete(ctx, state.policyState(ctx, req.Private, &resp.Diagnostics), timeout)
	warnWritten(w, &resp.Diagnostics)
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
	}
}

// ImportState imports the policy the ID names (on a store with one object per class, the
// classes "inference,training", each of which must exist). The first apply afterwards records
// this resource as their owner.
func (r *clusterSchedulerConfigResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !r.data.ready("import the cluster scheduler config", &resp.Diagnostics) {
		return
	}
	stored, err := r.policy().Import(ctx, importedName[schedulerConfigIdentityModel](ctx, req, &resp.Diagnostics))
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return
	}
	// A store that records owners has them taken over by the first apply.
	markTakeover(ctx, resp.Private, !stored.Owner.Intrinsic, &resp.Diagnostics)
	m := importedConfig(stored)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	setConfigIdentity(ctx, resp.Identity, m.ID, &resp.Diagnostics)
}

// wanted is the policy the plan m asks for, with its tags (recorded in m.TagsAll).
func (r *clusterSchedulerConfigResource) wanted(m *clusterSchedulerConfigModel) quota.SchedulerPolicy {
	p := quota.SchedulerPolicy{PriorityClasses: priorityClassesOf(m.PriorityClasses),
		FairShare: m.FairShare.ValueString(), IdleResourceSharing: m.IdleResourceSharing.ValueString()}
	p.Tags = r.data.tagsAll(m.Tags)
	m.TagsAll = tagsValue(p.Tags)
	return p
}

// policyState is what the state m holds of the policy; p holds the import's takeover mark.
func (m clusterSchedulerConfigModel) policyState(ctx context.Context, p privateGetter, diags *diag.Diagnostics) backend.PolicyState {
	s := backend.PolicyState{Policy: quota.SchedulerPolicy{PriorityClasses: priorityClassesOf(m.PriorityClasses),
		FairShare: m.FairShare.ValueString(), IdleResourceSharing: m.IdleResourceSharing.ValueString()},
		Owner: m.OwnerID.ValueString(), Takeover: isTakeover(ctx, p, diags), ReadTags: readsTags(m.tagsModel)}
	if rec := m.record(m.ConfigID); rec != nil {
		s.Record = *rec
	}
	s.Tags = knownStringMap(m.TagsAll)
	return s
}

// setStored records the stored policy s in m.
func (m *clusterSchedulerConfigModel) setStored(s *backend.StoredPolicy) {
	m.ID = types.StringValue(schedulerConfigID(s.Policy.PriorityClasses))
	m.PriorityClasses = priorityClassList(s.Policy.PriorityClasses)
	m.FairShare, m.IdleResourceSharing = stringOrNull(s.Policy.FairShare), stringOrNull(s.Policy.IdleResourceSharing)
	m.ConfigID, m.storeRecordModel = storeRecordOf(s.Record)
	m.Drift = driftList(s.Drift)
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// importedConfig is the state an import of s saves.
func importedConfig(s *backend.StoredPolicy) clusterSchedulerConfigModel {
	var m clusterSchedulerConfigModel
	m.setStored(s)
	m.OwnerID = stringOrNull(s.OwnerID)
	// Tags null: the Read that follows reads them (tags_all unknown to it).
	m.Tags, m.TagsAll = types.MapNull(types.StringType), types.MapNull(types.StringType)
	m.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)} // not configured: null, so import plans empty
	return m
}

// warnWritten warns of what a write took over from an interrupted run and of what it left in
// place because another manager owns it.
func warnWritten(w backend.PolicyWritten, diags *diag.Diagnostics) {
	for _, r := range w.Adopted {
		warnAdopted(diags, backend.ObjectRef{Kind: r.Kind, Name: r.Name}, r.Unconfirmed)
	}
	for _, r := range w.Left {
		leftInPlace(diags, backend.ObjectRef{Kind: r.Kind, Name: r.Name}, r.Owner.Description, "it was not deleted.")
	}
}

// addPolicyError adds the error of a write of the policy of classes: at the class it concerns,
// if any.
func addPolicyError(err error, classes []quota.PriorityClass, diags *diag.Diagnostics) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		if _, request := err.(*backend.RequestError); !request {
			for _, e := range joined.Unwrap() {
				addPolicyError(e, classes, diags)
			}
			return
		}
	}
	ce, ok := err.(*backend.ClassError)
	if !ok {
		storeError(err).addTo(diags)
		return
	}
	at := classAttr(ce.Class)
	owned, ok := ce.Err.(*backend.OwnedError)
	switch {
	case !ok:
		storeError(ce.Err).addAt(diags, at)
	case owned.Managed:
		refuseOwned(diags, at, backend.ObjectRef{Kind: owned.Kind, Name: owned.Name}, owned.Owner.Description)
	default:
		diags.AddAttributeError(at, owned.Kind+" already exists", fmt.Sprintf(
			"%s %q already exists and is managed by %s, so this resource will not take it "+
				"over. Remove priority class %q from this resource, or import it (with this resource's other "+
				"classes) to take it over explicitly.", owned.Kind, owned.Name, owned.Owner.Description, classes[ce.Class].Name))
	}
}
