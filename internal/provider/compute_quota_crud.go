package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const quotaResourceKind = "hyperpod_compute_quota"

func (r *computeQuotaResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config computeQuotaModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	run, team := r.data.startTeamCreate(ctx, req, &plan, quotaResourceKind, "create a compute quota", defaultQuotaTimeout, &resp.Diagnostics)
	if run == nil {
		return
	}
	defer run.end()

	plan.TagsAll = tagsValue(r.data.tagsAll(config.Tags))
	claimed := r.quotas().Ref(team, plan.Name.ValueString())
	run.savesTeamState(resp, &plan, team, claimed, "the "+claimed.Kind)
	claim, version := r.claim(run.ctx, team, plan.Name.ValueString(), run.owner, &resp.Diagnostics)
	if run.claimStopped(claim, claimed) {
		return
	}
	if r.data.backend.Traits.CreatesWithContent {
		r.createInOneRequest(run, config, &plan)
		return
	}
	var over *backend.Record
	if version != "" { // the claim holds the quota's identity
		over = &backend.Record{Version: version}
	}
	_, flavors, err := r.write(run.ctx, config, run.owner, over, &resp.Diagnostics)
	if err != nil {
		if run.undoIfGone(claimed) {
			run.cleanUp(func(ctx context.Context) { r.removeUnusedFlavors(ctx, flavors, &resp.Diagnostics) })
			return
		}
		notWritten := fmt.Sprintf("the quotas of %s (it holds only the provider's labels and owner annotation)", claimed)
		if len(flavors) > 0 {
			// Flavors are shared by every quota of their type, not this resource's: named, not saved.
			notWritten += fmt.Sprintf(". The ResourceFlavors %s were created for it (or may have been); they are "+
				"shared by every quota of their instance type and deleted with the last one that uses them", strings.Join(flavors, ", "))
		}
		run.partlyCreated([]backend.ObjectRef{claimed}, []string{notWritten})
		return
	}
	run.saveState(noDrift())
}

// createInOneRequest is the create on a store that creates the quota with its content in one
// request and then applies it asynchronously: once the quota exists it is saved, tainted when
// its creation failed, so it is never left without state.
func (r *computeQuotaResource) createInOneRequest(run *createRun, config computeQuotaModel, plan *computeQuotaModel) {
	written, _, err := r.write(run.ctx, config, run.owner, nil, run.diags)
	plan.QuotaID, plan.storeRecordModel = storeRecordOf(written)
	if written.Owner.Intrinsic && written.Owner.Recorded != "" {
		run.owner = written.Owner.Recorded // the store records no owner: the quota's id is its identity
	}
	switch {
	case err == nil:
		run.saveState(noDrift())
	case written.ID != "":
		drift := []string{fmt.Sprintf("the create stopped before %s finished: the next refresh reads its status", written.Kind)}
		if written.Failure != "" {
			drift = []string{fmt.Sprintf("the quota's status is %s: %s", written.Status, written.Failure)}
		}
		run.saveState(driftList(drift))
	case errors.Is(err, backend.ErrOutcomeUnknown):
		createOutcomeUnknown(run.diags, run.resourceKind, r.quotas().Ref(plan.Team.ValueString(), plan.Name.ValueString()))
		run.saveTainted()
	}
}

// claim creates the team's quota with only its identity, so that of two resources creating the
// same team only one succeeds. An existing quota is refused with its owner named; one being
// deleted is waited for. version is the claimed quota's, for the write that follows.
func (r *computeQuotaResource) claim(ctx context.Context, team, name, owner string, diags *diag.Diagnostics) (claimResult, string) {
	o := r.quotas().Ref(team, name)
	refuse := func(q *backend.Quota) (claimResult, string) {
		refuseExisting(diags, quotaResourceKind, q.Kind, q.Name, q.Record, team)
		return claimFailed, ""
	}
	existing, err := r.quotas().Get(ctx, team, nil)
	if err != nil {
		e := storeError(err)
		diags.AddError(e.Summary, fmt.Sprintf("%s %s was not created.", e.Detail, o))
		return claimFailed, ""
	}
	if existing != nil && existing.Terminating {
		tflog.Info(ctx, "the team's quota is being deleted; waiting before creating it again", map[string]any{"object": o.String()})
		if err := r.quotas().WaitGone(ctx, team); err != nil {
			return refuse(existing)
		}
		existing = nil
	}
	if existing != nil && existing.Unconfirmed != "" {
		if !adoptUnconfirmed(o, existing.Unconfirmed, func() error { return r.quotas().Adopt(ctx, existing) }, diags) {
			return claimFailed, ""
		}
		return claimOK, existing.Version
	}
	if existing != nil {
		return refuse(existing)
	}
	version, err := r.quotas().Claim(ctx, team, owner)
	if errors.Is(err, backend.ErrExists) {
		// Another resource created it between the read and the POST.
		if q, _ := r.quotas().Get(ctx, team, nil); q != nil {
			return refuse(q)
		}
	}
	if err != nil {
		storeError(err).addTo(diags)
		return failedClaim(ctx, err), ""
	}
	return claimOK, version
}

func (r *computeQuotaResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, prior, _ := updateModels[computeQuotaModel](ctx, req, &resp.Diagnostics)
	var config computeQuotaModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	ctx, cancel, _, ok := r.data.begin(ctx, "update a compute quota", plan.Timeouts.Update, defaultQuotaTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}

	team := prior.Team.ValueString()
	takeover := isTakeover(ctx, req.Private, &resp.Diagnostics)
	current, err := r.quotas().Get(ctx, team, nil)
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return
	}
	if current != nil && ownedElsewhere(backend.ObjectRef{Kind: current.Kind, Name: current.Name}, current.Owner, prior.OwnerID, takeover, &resp.Diagnostics) {
		return
	}
	owner := ownerToRecord(plan.OwnerID)
	// The version the state last saw, where it records one: a change made since is refused,
	// not overwritten.
	over := prior.record(prior.QuotaID)
	if over == nil && current != nil {
		over = &current.Record
	}
	if over != nil {
		over.Tags = knownStringMap(prior.TagsAll)
	}
	plan.TagsAll = tagsValue(r.data.tagsAll(config.Tags))
	written, _, err := r.write(ctx, config, owner, over, &resp.Diagnostics)
	if err != nil {
		return
	}
	plan.QuotaID, plan.storeRecordModel = storeRecordOf(written)
	saveTeamState(ctx, &resp.State, resp.Identity, &plan, plan.Team.ValueString(), owner, noDrift(), &resp.Diagnostics)
	clearOwnershipMarks(ctx, resp.Private, &resp.Diagnostics)
	r.removeUnusedFlavors(ctx, removedTypes(prior, plan), &resp.Diagnostics)
}

// write runs the plan's pipeline once on the configuration and writes the result with the owner
// identity over the record last seen. It starts from the configuration (all known at apply
// time), not the plan, so the store records which attributes the user set and import can
// reproduce them; the values equal the plan's.
//
// written is the store's record once the quota exists, and createdFlavors the ResourceFlavors
// it created, even when it fails; a failure (err) is in diags already.
func (r *computeQuotaResource) write(ctx context.Context, config computeQuotaModel, owner string, over *backend.Record, diags *diag.Diagnostics) (written backend.Record, createdFlavors []string, err error) {
	cfg := quotaConfigFromModel(config)
	rc, problems := r.data.planQuota(cfg)
	if len(problems) > 0 {
		addProblems(diags, problems)
		return written, nil, problems[0]
	}
	rc.Config.Tags = r.data.tagsAll(config.Tags)
	written, createdFlavors, err = r.quotas().Put(ctx, rc, owner, over)
	if err != nil {
		if errors.Is(err, backend.ErrChanged) {
			changedOutside("Compute quota changed outside Terraform", err, over).addTo(diags)
			return written, createdFlavors, err
		}
		storeError(err).addTo(diags)
	}
	return written, createdFlavors, err
}

// removeUnusedFlavors deletes the flavors of the given types that this provider created and that
// no quota uses any more. Failures are warnings: the quota itself is already correct.
func (r *computeQuotaResource) removeUnusedFlavors(ctx context.Context, instanceTypes []string, diags *diag.Diagnostics) {
	for _, w := range r.details().RemoveUnusedInputs(ctx, instanceTypes) {
		diags.AddWarning(w.Summary, w.Detail)
	}
}

func (r *computeQuotaResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	prior, ok := stateOf[computeQuotaModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	team := prior.Team.ValueString()
	if team == "" {
		team = prior.ID.ValueString()
	}
	// Every read that does not fail returns the identity, whatever it finds (state written before
	// identities existed gets one here).
	setTeamIdentity(ctx, resp.Identity, team, &resp.Diagnostics)
	if len(r.data.pendingConfig) > 0 {
		warnNotRefreshed(r.data, &resp.Diagnostics)
		return
	}
	if r.data.storePathChanged(prior.QuotaID, &resp.Diagnostics) {
		return
	}
	q, keep := r.readStored(ctx, prior, team, resp)
	if q == nil || keep {
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateTerminating, nil)...)
	takeover := isTakeover(ctx, req.Private, &resp.Diagnostics)
	state, marks, ok := r.storedState(ctx, prior, team, q, takeover, &resp.Diagnostics)
	if !ok {
		return
	}
	marks.record(ctx, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(setModel(ctx, &resp.State, &state)...)
}

// quotaMarks is what a read of a quota records in private state; noTakeover clears the
// takeover mark (the store records no owner, so an import takes nothing over).
type quotaMarks struct {
	unnamed    bool
	conflict   *ownerConflict
	usage      []byte
	noTakeover bool
}

func (m quotaMarks) record(ctx context.Context, p privateSetter, diags *diag.Diagnostics) {
	var unnamed []byte
	if m.unnamed {
		unnamed = []byte(`true`)
	}
	diags.Append(p.SetKey(ctx, privateUnnamed, unnamed)...)
	recordConflict(ctx, p, m.conflict, diags)
	diags.Append(p.SetKey(ctx, privateUsage, m.usage)...)
	if m.noTakeover {
		markTakeover(ctx, p, false, diags)
	}
}

// storedState is the state a read saves for q, the team's quota as stored (not being deleted),
// over prior (after an import: only the team, with takeover set), and what it records in
// private state. ok is false, with the reason in diags, when q cannot be read into the state.
// A refresh and a list of quotas (`terraform query`) both build the state here.
func (r *computeQuotaResource) storedState(ctx context.Context, prior computeQuotaModel, team string, q *backend.Quota,
	takeover bool, diags *diag.Diagnostics) (state computeQuotaModel, marks quotaMarks, ok bool) {
	rc := q.Config
	if q.ConfigErr != nil {
		diags.AddError("Cannot read the "+q.Kind, fmt.Sprintf("%s %q: %s. Fix or delete it, or remove the quota from state.", q.Kind, q.Name, q.ConfigErr))
		return state, marks, false
	}
	stored := rc.Config.Tags
	if readsTags(prior.tagsModel) {
		var err error
		if stored, err = r.details().Tags(ctx, q); err != nil {
			storeError(err).addTo(diags)
			return state, marks, false
		}
	}
	// Identity comes from state: the team addressed the queue, and the name is the state's
	// (an edited name annotation is drift to repair, not a rename that would replace the quota).
	rc.Config.Team = team
	if n := prior.Name.ValueString(); n != "" {
		rc.Config.Name = n
	}
	marks.unnamed = !q.Named
	state, d := quotaModelFromResolved(rc)
	diags.Append(d...)
	if diags.HasError() {
		return state, marks, false
	}
	drift, conflict, err := r.refreshDrift(ctx, q, rc, prior.OwnerID.ValueString(), takeover)
	if err != nil {
		storeError(err).addTo(diags)
		return state, marks, false
	}
	marks.conflict, marks.usage = conflict, usageForPrivate(q.Usage)
	state.keepTerraformsOwn(prior, team)
	if q.Owner.Intrinsic {
		// The store records no owner: a quota's identity is its id, which import and create
		// both take, so an imported quota plans empty.
		state.OwnerID = types.StringValue(q.Owner.Recorded)
		marks.conflict, marks.noTakeover = nil, true
	}
	state.QuotaID, state.storeRecordModel = storeRecordOf(q.Record)
	state.tagsModel = r.data.refreshed(prior.tagsModel, stored)
	r.data.withoutUnsupported(&state, diags)
	state.Drift = driftList(drift)
	return state, marks, true
}

// keepTerraformsOwn carries over from prior what only Terraform holds, which a read of the
// store cannot return: the id and team (state written before they existed takes the team's
// name), the owner and the timeouts.
func (m *computeQuotaModel) keepTerraformsOwn(prior computeQuotaModel, team string) {
	m.ID, m.Team, m.OwnerID, m.Timeouts = prior.ID, prior.Team, prior.OwnerID, prior.Timeouts
	if m.ID.IsNull() {
		m.ID = types.StringValue(team)
	}
	if m.Team.IsNull() {
		m.Team = types.StringValue(team)
	}
	if m.Timeouts.IsNull() {
		m.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)}
	}
}

// readStored reads the team's quota for a refresh. It returns nil, having removed the resource
// from state, when the quota is gone or was replaced outside Terraform; keep reports that it
// kept the state as it was (a quota being deleted that is still this resource's).
func (r *computeQuotaResource) readStored(ctx context.Context, prior computeQuotaModel, team string, resp *resource.ReadResponse) (q *backend.Quota, keep bool) {
	q, err := r.quotas().Get(ctx, team, prior.lastSeen())
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return nil, false
	}
	if q != nil && !prior.QuotaID.IsNull() && q.ID != prior.QuotaID.ValueString() {
		tflog.Info(ctx, "the team's quota was replaced outside Terraform; removing it from state", map[string]any{"was": prior.QuotaID.ValueString(), "now": q.ID})
		q = nil
	}
	if q != nil && q.Terminating && q.Owner.Owns(prior.OwnerID.ValueString()) {
		// Still this resource's, held while being deleted. Keep it in state, so a destroy deletes
		// it (waiting, and naming what holds it) and cleans up the inputs; a plan that keeps the
		// quota replaces it (see ModifyPlan).
		tflog.Info(ctx, "quota is being deleted; keeping it in state", map[string]any{"kind": q.Kind, "name": q.Name, "held_by": q.HeldBy})
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateTerminating, []byte(`true`))...)
		prior.Drift = driftList([]string{fmt.Sprintf("%s %q is being deleted: %s", q.Kind, q.Name, q.Holding)})
		resp.Diagnostics.Append(resp.State.Set(ctx, &prior)...)
		return q, true
	}
	if q == nil || q.Terminating {
		tflog.Info(ctx, "quota is gone; removing it from state", map[string]any{"team": team})
		resp.State.RemoveResource(ctx)
		return nil, false
	}
	return q, false
}

// refreshDrift lists what differs in the store that the attributes cannot show, for a quota
// read back as rc, and the ownership conflict it found; takeover is set after an import.
func (r *computeQuotaResource) refreshDrift(ctx context.Context, q *backend.Quota, rc quota.ResolvedConfig, owner string,
	takeover bool) (drift []string, conflict *ownerConflict, err error) {
	takeover = takeover && !q.Owner.Intrinsic
	switch {
	case takeover:
		if recorded := q.Owner.Recorded; recorded != "" {
			drift = append(drift, fmt.Sprintf("imported: the queue records owner_id %q; the next apply records this resource's", recorded))
		} else {
			drift = append(drift, "imported: the next apply records this resource's owner_id on the queue")
		}
	case !q.Owner.Owns(owner):
		conflict = &ownerConflict{Object: fmt.Sprintf("%s %q", q.Kind, q.Name), Owner: q.Owner.Description}
		drift = append(drift, "the queue is managed by "+conflict.Owner)
	}

	// What the attributes cannot show: compare the quota with what they render to.
	more, err := r.details().Drift(ctx, q, rc, owner, conflict == nil && !takeover)
	if err != nil {
		return nil, nil, err
	}
	drift = append(drift, more...)
	if len(drift) > 0 {
		tflog.Info(ctx, "quota differs from its configuration", map[string]any{"kind": q.Kind, "name": q.Name, "drift": strings.Join(drift, "; ")})
	}
	return drift, conflict, nil
}

func (r *computeQuotaResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, _ := stateOf[computeQuotaModel](ctx, req.State, &resp.Diagnostics)
	rpcCtx := ctx
	ctx, cancel, timeout, ok := r.data.begin(ctx, "delete a compute quota", state.Timeouts.Delete, defaultQuotaTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok || r.data.storePathChanged(state.QuotaID, &resp.Diagnostics) {
		return
	}

	q, ok := r.deleteTarget(ctx, state, &resp.Diagnostics)
	if !ok {
		return
	}
	if q != nil {
		if err := r.quotas().Delete(ctx, q); err != nil {
			notDeleted(rpcCtx, r.data.backend, err, timeout).addTo(&resp.Diagnostics)
			return
		}
	}
	r.removeUnusedFlavors(ctx, instanceTypesOf(state), &resp.Diagnostics)
}

// deleteTarget is the stored quota a delete removes, nil when there is none, and false when it
// must not be deleted. Where the state records the store's id of the quota, that id addresses
// this resource's quota and no read is needed: one already gone is deleted all the same, and a
// quota someone else created for the team since has another id. Elsewhere the team's object is
// read, and kept when another owner has taken it.
func (r *computeQuotaResource) deleteTarget(ctx context.Context, state computeQuotaModel, diags *diag.Diagnostics) (*backend.Quota, bool) {
	team := state.Team.ValueString()
	if rec := state.record(state.QuotaID); rec != nil {
		q := &backend.Quota{Record: *rec}
		q.Config.Config.Team = team
		return q, true
	}
	q, err := r.quotas().Get(ctx, team, nil)
	if err != nil {
		storeError(err).addTo(diags)
		return nil, false
	}
	if q != nil && !q.Owner.Owns(state.OwnerID.ValueString()) {
		leftInPlace(diags, backend.ObjectRef{Kind: q.Kind, Name: q.Name}, q.Owner.Description,
			"destroying this resource did not delete it. It was removed from this state only.")
		return nil, false
	}
	return q, true
}

func (r *computeQuotaResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r.data != nil && r.data.backend.Quotas != nil && len(r.data.pendingConfig) == 0 {
		// An id the store gave a quota: import the team it targets.
		team, ok, err := r.quotas().TeamOf(ctx, req.ID)
		if err != nil {
			resp.Diagnostics.AddError("Cannot import compute quota", storeError(err).Detail)
			return
		}
		if ok {
			req.ID = team
		}
	}
	team := importTeam(ctx, req, resp, "hyperpod_compute_quota.example")
	if resp.Diagnostics.HasError() || r.data == nil || r.data.client("import a compute quota", &resp.Diagnostics) == nil {
		return
	}
	// One read, which the Read after the import reuses: a missing quota is an error here, with
	// the team named, rather than an import that finds nothing.
	q, err := r.quotas().Get(ctx, team, nil)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot import compute quota", storeError(err).Detail)
	case q == nil || q.Terminating:
		storeDiag(r.data.backend.Words.NoQuotaToImport(team)).addTo(&resp.Diagnostics)
	}
}

// quotas is where the resource reads and writes teams' quotas.
func (r *computeQuotaResource) quotas() backend.TeamQuotas { return r.data.backend.Quotas }

// details is where it reads what a quota carries besides its content.
func (r *computeQuotaResource) details() backend.QuotaDetails { return r.data.backend.QuotaDetails }
