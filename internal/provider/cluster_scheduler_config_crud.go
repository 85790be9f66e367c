package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// get reads one class's WorkloadPriorityClass: one GET, nil when it does not exist.
func (r *clusterSchedulerConfigResource) get(ctx context.Context, class string) (*backend.StoredPriorityClass, diag.Diagnostics) {
	return storeGet(ctx, r.classes().Get, class)
}

// classes is where the resource reads and writes priority classes.
func (r *clusterSchedulerConfigResource) classes() backend.PriorityClasses {
	return r.data.backend.PriorityClasses
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
	if r.data.backend.SchedulerConfig != nil {
		r.createConfig(run.ctx, plan, resp)
		return
	}

	classes := priorityClassesOf(plan.PriorityClasses)
	tags := r.data.tagsAll(plan.Tags)
	plan.TagsAll = tagsValue(tags)
	var created []quota.PriorityClass
	save := func(written []quota.PriorityClass) {
		plan.ID = types.StringValue(schedulerConfigID(written))
		plan.PriorityClasses = priorityClassList(written)
		plan.OwnerID = types.StringValue(run.owner)
		plan.Drift = noDrift()
		resp.Diagnostics.Append(resp.State.Set(run.ctx, &plan)...)
		setConfigIdentity(run.ctx, resp.Identity, plan.ID, &resp.Diagnostics)
		run.handOver(classObjects(r.classes(), written)...)
	}
	// Saved tainted: the classes written and the one that may have been, so none is left without
	// state; the next refresh drops those that do not exist.
	run.saveTainted = func() { save(created) }
	for i, c := range classes {
		result := r.create(run.ctx, i, c, tags, run.owner, &resp.Diagnostics)
		if result == claimOK {
			created = append(created, c)
			continue
		}
		// The last POST may have reached the server before the context ended.
		if run.undoIfGone(classObjects(r.classes(), append(created, c))...) {
			return
		}
		if result == claimMaybe {
			created = append(created, c)
		}
		if len(created) == 0 {
			return
		}
		notWritten := []string{"nothing else"}
		if rest := classObjects(r.classes(), classes[len(created):]); len(rest) > 0 {
			notWritten = make([]string, len(rest))
			for j, o := range rest {
				notWritten[j] = o.String()
			}
		}
		run.partlyCreated(classObjects(r.classes(), created), notWritten)
		return
	}
	save(classes)
}

// create claims a class's WorkloadPriorityClass with a POST, so that of two resources declaring
// the same class only one succeeds; an existing one is refused with its owner named.
func (r *clusterSchedulerConfigResource) create(ctx context.Context, i int, c quota.PriorityClass, tags map[string]string, owner string, diags *diag.Diagnostics) claimResult {
	o := r.classes().Ref(c.Name)
	err := r.classes().Create(ctx, c, tags, owner)
	if errors.Is(err, backend.ErrExists) {
		existing, d := r.get(ctx, c.Name)
		diags.Append(d...)
		if existing != nil && !existing.Terminating && existing.Unconfirmed != "" {
			if !adoptUnconfirmed(o, existing.Unconfirmed, func() error { return r.classes().Adopt(ctx, existing) }, diags) {
				return claimFailed
			}
			if err := r.classes().Put(ctx, c, tags, owner); err != nil {
				storeError(err).addAt(diags, classAttr(i))
				return claimFailed
			}
			return claimOK
		}
		if existing != nil {
			p := r.classes().OwnedElsewhere(existing, c.Name, fmt.Sprintf("terraform import %s.<name> %s", schedulerConfigResourceKind, c.Name))
			diags.AddAttributeError(classAttr(i), p.Summary, p.Detail)
			return claimFailed
		}
	}
	if err != nil {
		storeError(err).addAt(diags, classAttr(i))
		return failedClaim(ctx, err)
	}
	return claimOK
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
	if storePathChanged(state.ConfigID, r.data.backend, &resp.Diagnostics) {
		return
	}
	if r.data.backend.SchedulerConfig != nil {
		r.readConfig(ctx, state, resp)
		return
	}
	conflict, ok := r.readClasses(ctx, &state, isTakeover(ctx, req.Private, &resp.Diagnostics), r.get, &resp.Diagnostics)
	if !ok {
		return
	}
	recordConflict(ctx, resp.Private, conflict, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	setConfigIdentity(ctx, resp.Identity, state.ID, &resp.Diagnostics)
}

// readClasses refreshes state from the classes get reads, one WorkloadPriorityClass each, and
// returns the ownership conflict found; takeover is set after an import. ok is false when a read
// failed. A refresh and a list of the classes (`terraform query`) both read the state here.
func (r *clusterSchedulerConfigResource) readClasses(ctx context.Context, state *clusterSchedulerConfigModel, takeover bool,
	get func(context.Context, string) (*backend.StoredPriorityClass, diag.Diagnostics), diags *diag.Diagnostics) (*ownerConflict, bool) {
	owner := state.OwnerID.ValueString()
	var (
		kept     []quota.PriorityClass
		drift    []string
		conflict *ownerConflict
		// stored is the tags the classes carry: the state's unless a class carries others.
		stored = knownStringMap(state.TagsAll)
	)
	if takeover {
		drift = append(drift, "imported: the next apply records this resource's owner_id on the WorkloadPriorityClasses")
	}
	for _, c := range priorityClassesOf(state.PriorityClasses) {
		wpc, d := get(ctx, c.Name)
		diags.Append(d...)
		if diags.HasError() {
			return nil, false
		}
		if wpc == nil || wpc.Terminating {
			tflog.Info(ctx, "WorkloadPriorityClass is gone; the next plan creates it", map[string]any{"class": c.Name})
			continue
		}
		kept = append(kept, quota.PriorityClass{Name: c.Name, Weight: wpc.Weight})
		if !maps.Equal(wpc.Tags, knownStringMap(state.TagsAll)) {
			stored = wpc.Tags
		}
		switch {
		case takeover:
		case !wpc.Owner.Owns(owner):
			by := wpc.Owner.Description
			if conflict == nil {
				conflict = &ownerConflict{Object: fmt.Sprintf("%s %q", wpc.Kind, wpc.Name), Owner: by}
			}
			drift = append(drift, fmt.Sprintf("%s %q is managed by %s", wpc.Kind, wpc.Name, by))
		default:
			drift = append(drift, r.classes().Drift(wpc, c.Name, owner)...)
		}
	}
	state.tagsModel = r.data.refreshed(state.tagsModel, stored)
	state.PriorityClasses = priorityClassList(kept)
	state.Drift = driftList(drift)
	tflog.Debug(ctx, "read cluster scheduler config", map[string]any{"classes": len(kept), "drift": strings.Join(drift, "; ")})
	return conflict, true
}

func (r *clusterSchedulerConfigResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, prior, _ := updateModels[clusterSchedulerConfigModel](ctx, req, &resp.Diagnostics)
	ctx, cancel, _, ok := r.data.begin(ctx, "update priority classes", plan.Timeouts.Update, defaultSchedulerConfigTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	if r.data.backend.SchedulerConfig != nil {
		r.updateConfig(ctx, plan, prior, resp)
		return
	}

	priorOwner := prior.OwnerID.ValueString()
	takeover := isTakeover(ctx, req.Private, &resp.Diagnostics)
	owner := ownerToRecord(plan.OwnerID)
	classes := priorityClassesOf(plan.PriorityClasses)
	tags := r.data.tagsAll(plan.Tags)
	plan.TagsAll = tagsValue(tags)
	priorNames := map[string]bool{}
	for _, c := range priorityClassesOf(prior.PriorityClasses) {
		priorNames[c.Name] = true
	}

	// Check every class before writing any, so a refused update changes nothing.
	existing := make([]*backend.StoredPriorityClass, len(classes))
	for i, c := range classes {
		wpc, d := r.get(ctx, c.Name)
		resp.Diagnostics.Append(d...)
		if resp.Diagnostics.HasError() {
			return
		}
		if wpc != nil && !wpc.Owner.Owns(priorOwner) && (!takeover || !priorNames[c.Name]) {
			if priorNames[c.Name] {
				refuseOwned(&resp.Diagnostics, classAttr(i), r.classes().Ref(c.Name), wpc.Owner.Description)
			} else {
				resp.Diagnostics.AddAttributeError(classAttr(i), wpc.Kind+" already exists", fmt.Sprintf(
					"%s %q already exists and is managed by %s, so this resource will not take it "+
						"over. Remove priority class %q from this resource, or import it (with this resource's other "+
						"classes) to take it over explicitly.", wpc.Kind, wpc.Name, wpc.Owner.Description, c.Name))
			}
			return
		}
		existing[i] = wpc
	}
	for i, c := range classes {
		if existing[i] == nil {
			// A class created here carries the resource's owner identity, so if a later step
			// fails, the next apply finds it as this resource's own.
			if r.create(ctx, i, c, tags, owner, &resp.Diagnostics) != claimOK {
				return
			}
			continue
		}
		if err := r.classes().Put(ctx, c, tags, owner); err != nil {
			storeError(err).addAt(&resp.Diagnostics, classAttr(i))
			return
		}
	}
	for name := range priorNames {
		if slices.ContainsFunc(classes, func(c quota.PriorityClass) bool { return c.Name == name }) {
			continue
		}
		r.deleteClass(ctx, name, priorOwner, takeover, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	plan.ID = types.StringValue(schedulerConfigID(classes))
	plan.PriorityClasses = priorityClassList(classes)
	plan.OwnerID = types.StringValue(owner)
	plan.Drift = noDrift()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setConfigIdentity(ctx, resp.Identity, plan.ID, &resp.Diagnostics)
	clearOwnershipMarks(ctx, resp.Private, &resp.Diagnostics)
}

// deleteClass deletes a class's WorkloadPriorityClass when this resource owns it (or took it
// over by import); one another owner records is left in place with a warning.
func (r *clusterSchedulerConfigResource) deleteClass(ctx context.Context, class, owner string, takeover bool, diags *diag.Diagnostics) {
	wpc, d := r.get(ctx, class)
	diags.Append(d...)
	if wpc == nil {
		return
	}
	if !takeover && !wpc.Owner.Owns(owner) {
		leftInPlace(diags, r.classes().Ref(class), wpc.Owner.Description, "it was not deleted.")
		return
	}
	if err := r.classes().Delete(ctx, wpc); err != nil {
		storeError(err).addTo(diags)
	}
}

// Delete deletes the classes this resource owns. Workloads that took a class's value keep it.
func (r *clusterSchedulerConfigResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, _ := stateOf[clusterSchedulerConfigModel](ctx, req.State, &resp.Diagnostics)
	ctx, cancel, timeout, ok := r.data.begin(ctx, "delete priority classes", state.Timeouts.Delete, defaultSchedulerConfigTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok || storePathChanged(state.ConfigID, r.data.backend, &resp.Diagnostics) {
		return
	}
	if r.data.backend.SchedulerConfig != nil {
		r.deleteConfig(ctx, state, timeout, resp)
		return
	}
	takeover := isTakeover(ctx, req.Private, &resp.Diagnostics)
	for _, c := range priorityClassesOf(state.PriorityClasses) {
		r.deleteClass(ctx, c.Name, state.OwnerID.ValueString(), takeover, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}
}

// ImportState imports the classes named by the ID ("inference,training"): each must exist. The
// first apply afterwards records this resource as their owner.
func (r *clusterSchedulerConfigResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r.data != nil && r.data.backend.SchedulerConfig != nil && r.data.ready("import the cluster scheduler config", &resp.Diagnostics) {
		r.importConfig(ctx, resp)
		return
	}
	id := importedConfigID(ctx, req, &resp.Diagnostics)
	var classes []quota.PriorityClass
	for _, name := range strings.Split(id, ",") {
		classes = append(classes, quota.PriorityClass{Name: strings.TrimSpace(name)})
	}
	for _, p := range quota.ValidatePriorityClasses(classes) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("The import ID is the priority class names joined by "+
			"commas, e.g. `terraform import %s.example inference,training`; got %q. %s", schedulerConfigResourceKind, id, p.Detail))
		return
	}
	for _, c := range classes {
		if c.Name == "" {
			resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("The import ID is the priority class names "+
				"joined by commas, e.g. `inference,training`; got %q, which has an empty name.", id))
			return
		}
	}
	if !r.data.ready("import priority classes", &resp.Diagnostics) {
		return
	}
	var missing []string
	for i, c := range classes {
		wpc, d := r.get(ctx, c.Name)
		resp.Diagnostics.Append(d...)
		if resp.Diagnostics.HasError() {
			return
		}
		if wpc == nil {
			missing = append(missing, quota.PriorityClassObjectName(c.Name))
			continue
		}
		classes[i].Weight = wpc.Weight
	}
	if len(missing) > 0 {
		resp.Diagnostics.AddError("Cannot import priority classes", fmt.Sprintf("WorkloadPriorityClass %s does not "+
			"exist, so there is nothing to import for it. Check the names (the import ID names classes without the "+
			"-priority suffix), or leave the class out of the import and let terraform apply create it.",
			strings.Join(missing, ", ")))
		return
	}
	markTakeover(ctx, resp.Private, true, &resp.Diagnostics)
	// tags_all stays null: the Read that follows takes the classes' tags.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), schedulerConfigID(classes))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("priority_classes"), priorityClassList(classes))...)
	setConfigIdentity(ctx, resp.Identity, types.StringValue(schedulerConfigID(classes)), &resp.Diagnostics)
}

// The resource on a store that holds the cluster's policy as one object (the SageMaker API's
// cluster scheduler config, one per cluster).

// policyOf is the policy the plan or state asks for.
func policyOf(m clusterSchedulerConfigModel) quota.SchedulerPolicy {
	return quota.SchedulerPolicy{PriorityClasses: priorityClassesOf(m.PriorityClasses),
		FairShare: m.FairShare.ValueString(), IdleResourceSharing: m.IdleResourceSharing.ValueString()}
}

// setPolicy records a stored config in m.
func (m *clusterSchedulerConfigModel) setPolicy(c *backend.SchedulerConfig, drift []string) {
	m.ID = types.StringValue(schedulerConfigID(c.Policy.PriorityClasses))
	m.PriorityClasses = priorityClassList(c.Policy.PriorityClasses)
	m.FairShare, m.IdleResourceSharing = stringOrNull(c.Policy.FairShare), stringOrNull(c.Policy.IdleResourceSharing)
	m.ConfigID, m.storeRecordModel = storeRecordOf(c.Record)
	m.Drift = driftList(drift)
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// configDrift is what the attributes cannot show: a change the store could not apply.
func configDrift(r backend.Record) []string {
	if r.ChangeFailed {
		return []string{fmt.Sprintf("the config's status is %s: %s", r.Status, r.Failure)}
	}
	return nil
}

// createConfig runs within the create's timeout (ctx).
func (r *clusterSchedulerConfigResource) createConfig(ctx context.Context, plan clusterSchedulerConfigModel, resp *resource.CreateResponse) {
	store := r.data.backend.SchedulerConfig
	existing, err := store.Get(ctx)
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return
	}
	if existing != nil {
		resp.Diagnostics.AddError("Cluster scheduler config already exists", fmt.Sprintf(
			"The cluster already has %s %q (id %s), and a cluster holds one at most, so this resource will not create "+
				"another. To manage it here, import it:\n\n  terraform import %s.<name> %s",
			existing.Kind, existing.Name, existing.ID, schedulerConfigResourceKind, existing.ID))
		return
	}
	policy := policyOf(plan)
	policy.Tags = r.data.tagsAll(plan.Tags)
	plan.TagsAll = tagsValue(policy.Tags)
	written, err := store.Put(ctx, policy, nil)
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		if written.ID == "" {
			return
		}
	}
	// Once the config exists it is saved, tainted when its creation failed.
	plan.ConfigID, plan.storeRecordModel = storeRecordOf(written)
	plan.OwnerID = types.StringValue(written.ID)
	plan.Drift = driftList(configDrift(written))
	if plan.IdleResourceSharing.IsUnknown() {
		if c, err := store.Get(ctx); err == nil && c != nil {
			plan.IdleResourceSharing = stringOrNull(c.Policy.IdleResourceSharing)
		}
	}
	if plan.IdleResourceSharing.IsUnknown() {
		plan.IdleResourceSharing = types.StringNull()
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setConfigIdentity(ctx, resp.Identity, plan.ID, &resp.Diagnostics)
}

func (r *clusterSchedulerConfigResource) readConfig(ctx context.Context, prior clusterSchedulerConfigModel, resp *resource.ReadResponse) {
	c, err := r.data.backend.SchedulerConfig.Get(ctx)
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return
	}
	if c == nil || c.Terminating || (!prior.ConfigID.IsNull() && c.ID != prior.ConfigID.ValueString()) {
		resp.State.RemoveResource(ctx)
		return
	}
	state, ok := r.configState(ctx, prior, c, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	setConfigIdentity(ctx, resp.Identity, state.ID, &resp.Diagnostics)
}

// configState is the state a read saves for c, the cluster's config as stored, over prior (after
// an import, what importedConfig holds); ok is false when its tags could not be read. A refresh
// and a list of the config (`terraform query`) both read the state here.
func (r *clusterSchedulerConfigResource) configState(ctx context.Context, prior clusterSchedulerConfigModel, c *backend.SchedulerConfig,
	diags *diag.Diagnostics) (clusterSchedulerConfigModel, bool) {
	var stored map[string]string
	if readsTags(prior.tagsModel) {
		var err error
		if stored, err = r.data.backend.SchedulerConfig.Tags(ctx, c); err != nil {
			storeError(err).addTo(diags)
			return prior, false
		}
	}
	state := prior
	state.setPolicy(c, configDrift(c.Record))
	state.tagsModel = r.data.refreshed(prior.tagsModel, stored)
	return state, true
}

// updateConfig runs within the update's timeout (ctx).
func (r *clusterSchedulerConfigResource) updateConfig(ctx context.Context, plan, prior clusterSchedulerConfigModel, resp *resource.UpdateResponse) {
	over := prior.record(prior.ConfigID)
	if over != nil {
		over.Tags = knownStringMap(prior.TagsAll)
	}
	policy := policyOf(plan)
	policy.Tags = r.data.tagsAll(plan.Tags)
	plan.TagsAll = tagsValue(policy.Tags)
	written, err := r.data.backend.SchedulerConfig.Put(ctx, policy, over)
	if errors.Is(err, backend.ErrChanged) {
		changedOutside("Cluster scheduler config changed outside Terraform", err, over).addTo(&resp.Diagnostics)
		return
	}
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return
	}
	plan.ConfigID, plan.storeRecordModel = storeRecordOf(written)
	plan.Drift = noDrift()
	if plan.IdleResourceSharing.IsUnknown() {
		plan.IdleResourceSharing = prior.IdleResourceSharing
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setConfigIdentity(ctx, resp.Identity, plan.ID, &resp.Diagnostics)
}

// deleteConfig runs within the delete's timeout (ctx).
func (r *clusterSchedulerConfigResource) deleteConfig(ctx context.Context, state clusterSchedulerConfigModel, timeout time.Duration, resp *resource.DeleteResponse) {
	// The id in state names this resource's config, so one created since in its place (the
	// cluster holds one) is not deleted, even by a destroy that did not refresh. A state without
	// an id wrote no config through the API: there is nothing of its own to delete.
	rec := state.record(state.ConfigID)
	if rec == nil {
		return
	}
	err := r.data.backend.SchedulerConfig.Delete(ctx, &backend.SchedulerConfig{Record: *rec})
	if err != nil {
		notDeleted(ctx, r.data.backend, err, timeout).addTo(&resp.Diagnostics)
	}
}

// importConfig imports the cluster's one config, whatever the ID names (its id, or its classes).
func (r *clusterSchedulerConfigResource) importConfig(ctx context.Context, resp *resource.ImportStateResponse) {
	c, err := r.data.backend.SchedulerConfig.Get(ctx)
	if err != nil {
		storeError(err).addTo(&resp.Diagnostics)
		return
	}
	if c == nil {
		resp.Diagnostics.AddError("Cannot import the cluster scheduler config", "The cluster has no cluster scheduler "+
			"config, so there is nothing to import. Remove the import and let terraform apply create it.")
		return
	}
	m := importedConfig(c)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	setConfigIdentity(ctx, resp.Identity, m.ID, &resp.Diagnostics)
}

// importedConfig is the state an import of c saves.
func importedConfig(c *backend.SchedulerConfig) clusterSchedulerConfigModel {
	var m clusterSchedulerConfigModel
	m.setPolicy(c, nil)
	m.OwnerID = types.StringValue(c.ID)
	// Tags null: the Read that follows reads them (tags_all unknown to it).
	m.Tags, m.TagsAll = types.MapNull(types.StringType), types.MapNull(types.StringType)
	m.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)} // not configured: null, so import plans empty
	return m
}
