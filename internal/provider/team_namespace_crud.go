package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

func (r *teamNamespaceResource) namespaces() backend.TeamNamespaces { return r.data.backend.Namespaces }

// details is where it reads what runs in a namespace and what its attributes do not show.
func (r *teamNamespaceResource) details() backend.NamespaceDetails {
	return r.data.backend.NamespaceDetails
}

// get reads the team's Namespace and, when it exists, its LocalQueue; nil when the Namespace
// does not exist.
func (r *teamNamespaceResource) get(ctx context.Context, team string) (*backend.TeamNamespace, diag.Diagnostics) {
	return storeGet(ctx, r.namespaces().Get, team)
}

func (r *teamNamespaceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan teamNamespaceModel
	run, team := r.data.startTeamCreate(ctx, req, &plan, teamNamespaceResourceKind, "create a Namespace", teamNamespaceCreateTimeout, &resp.Diagnostics)
	if run == nil {
		return
	}
	defer run.end()

	ctx = tflog.SetField(run.ctx, "team", team)
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)
	ns := namespaceRef(nsName)
	lq := backend.ObjectRef{Kind: "LocalQueue", Namespace: nsName, Name: lqName}
	run.savesTeamState(resp, &plan, team, ns, "the Namespace and LocalQueue")
	claim, adopted := r.claim(ctx, team, run.owner, &resp.Diagnostics)
	if run.claimStopped(claim, ns) {
		return
	}
	tflog.Debug(ctx, "creating team namespace", map[string]any{"namespace": nsName})
	d, stage := r.apply(ctx, &plan, adopted, run.owner)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		if run.undoIfGone(ns, lq) {
			return
		}
		notWritten := []string{lq.String()}
		if stage == stageNamespace {
			notWritten = append([]string{fmt.Sprintf("the labels and annotations of Namespace %q", nsName)}, notWritten...)
		}
		run.partlyCreated([]backend.ObjectRef{ns}, notWritten)
		return
	}
	run.saveState(noDrift())
}

// claim creates the team's Namespace with only its identity (the provider's labels and the
// owner annotation) with a POST, so that of two resources creating the same team only one
// succeeds. An existing Namespace is refused with its owner named; one being deleted is waited
// for.
func (r *teamNamespaceResource) claim(ctx context.Context, team, owner string, diags *diag.Diagnostics) (claimResult, *backend.TeamNamespace) {
	nsName := quota.NamespaceName(team)
	refuse := func(ns *backend.TeamNamespace) (claimResult, *backend.TeamNamespace) {
		refuseExisting(diags, teamNamespaceResourceKind, "Namespace", nsName, ns.Record, team)
		return claimFailed, nil
	}
	ns, d := r.get(ctx, team)
	diags.Append(notCreated(d, namespaceRef(nsName))...)
	if diags.HasError() {
		return claimFailed, nil
	}
	if ns != nil {
		if !ns.Terminating && ns.Unconfirmed != "" {
			unmark := func() error { return r.namespaces().Adopt(ctx, ns) }
			if !adoptUnconfirmed(namespaceRef(nsName), ns.Unconfirmed, unmark, diags) {
				return claimFailed, nil
			}
			return claimOK, ns
		}
		if !ns.Terminating {
			return refuse(ns)
		}
		tflog.Info(ctx, "Namespace is being deleted; waiting before creating it again", map[string]any{"namespace": nsName})
		if err := r.namespaces().WaitGone(ctx, team); err != nil {
			return refuse(ns)
		}
	}
	err := r.namespaces().Claim(ctx, team, owner)
	if errors.Is(err, backend.ErrExists) {
		if ns, err := r.namespaces().Get(ctx, team); err == nil && ns != nil {
			return refuse(ns)
		}
	}
	if err != nil {
		storeError(err).addTo(diags)
		return failedClaim(ctx, err), nil
	}
	return claimOK, nil
}

// lookUp names the team in ctx's logs and reads its objects; present is false when the
// Namespace is gone or being deleted.
func (r *teamNamespaceResource) lookUp(ctx context.Context, team string, diags *diag.Diagnostics) (context.Context, *backend.TeamNamespace, bool) {
	ctx = tflog.SetField(ctx, "team", team)
	ns, d := r.get(ctx, team)
	diags.Append(d...)
	return ctx, ns, ns != nil && !ns.Terminating
}

func (r *teamNamespaceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := stateOf[teamNamespaceModel](ctx, req.State, &resp.Diagnostics)
	if !ok || !r.data.configured(&resp.Diagnostics) {
		return
	}
	team := state.Team.ValueString()
	// Every read that does not fail returns the identity, whatever it finds.
	setTeamIdentity(ctx, resp.Identity, team, &resp.Diagnostics)
	if len(r.data.pendingConfig) > 0 {
		warnNotRefreshed(r.data, &resp.Diagnostics)
		return
	}
	ctx, ns, present := r.lookUp(ctx, team, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !present {
		tflog.Info(ctx, "team namespace is gone or terminating; removing it from state so the next plan creates it",
			map[string]any{"namespace": quota.NamespaceName(team)})
		resp.State.RemoveResource(ctx)
		return
	}
	conflict, d := r.readState(ctx, &state, team, ns, isTakeover(ctx, req.Private, &resp.Diagnostics))
	resp.Diagnostics.Append(d...)
	recordConflict(ctx, resp.Private, conflict, &resp.Diagnostics)
	resp.Diagnostics.Append(setModel(ctx, &resp.State, &state)...)
}

// readState refreshes state from ns, the team's namespace as stored (not being deleted), and
// returns the ownership conflict found; takeover is set after an import. A refresh and a list of
// namespaces (`terraform query`) both read the state here.
func (r *teamNamespaceResource) readState(ctx context.Context, state *teamNamespaceModel, team string, ns *backend.TeamNamespace,
	takeover bool) (*ownerConflict, diag.Diagnostics) {
	diags := teamNamespaceState(ctx, state, team, ns)
	owner := state.OwnerID.ValueString()
	var drift []string
	var conflict *ownerConflict
	switch {
	case takeover:
		drift = append(drift, "imported: the next apply records this resource's owner_id on the Namespace and LocalQueue")
	case !ns.Owner.Owns(owner):
		conflict = &ownerConflict{Object: fmt.Sprintf("Namespace %q", ns.Name), Owner: ns.Owner.Description}
		drift = append(drift, "the Namespace is managed by "+conflict.Owner)
	default:
		var err error
		if drift, err = r.details().Drift(ns, team, owner); err != nil {
			storeError(err).addTo(&diags)
		}
	}
	state.Drift = driftList(drift)
	tflog.Debug(ctx, "read team namespace", map[string]any{"drift": strings.Join(drift, "; "),
		"namespace_state": state.Namespace.ValueString(), "local_queue_state": state.LocalQueueName.ValueString(),
		"cluster_queue_state": state.ClusterQueueName.ValueString(),
	})
	return conflict, diags
}

func (r *teamNamespaceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, prior, _ := updateModels[teamNamespaceModel](ctx, req, &resp.Diagnostics)
	team := plan.Team.ValueString()
	ctx, cancel, _, ns := r.begin(ctx, "update a Namespace", team, plan.Timeouts.Update, teamNamespaceCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	if ns != nil && ownedElsewhere(namespaceRef(ns.Name), ns.Owner, prior.OwnerID, isTakeover(ctx, req.Private, &resp.Diagnostics), &resp.Diagnostics) {
		return
	}
	owner := ownerToRecord(plan.OwnerID)
	tflog.Debug(ctx, "updating team namespace", map[string]any{"namespace": quota.NamespaceName(team)})
	d, _ := r.apply(ctx, &plan, ns, owner)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	saveTeamState(ctx, &resp.State, resp.Identity, &plan, team, owner, noDrift(), &resp.Diagnostics)
	clearOwnershipMarks(ctx, resp.Private, &resp.Diagnostics)
}

// begin starts an update or delete as providerData.begin does, then names the team in its logs
// and reads the team's objects; it reads nothing when the write cannot start. The caller
// returns when diags has an error.
func (r *teamNamespaceResource) begin(ctx context.Context, what, team string, get timeoutGetter,
	defaultTimeout time.Duration, diags *diag.Diagnostics) (context.Context, context.CancelFunc, time.Duration, *backend.TeamNamespace) {
	ctx, cancel, limit, ok := r.data.begin(ctx, what, get, defaultTimeout, diags)
	if !ok {
		return ctx, cancel, limit, nil
	}
	ctx = tflog.SetField(ctx, "team", team)
	ns, d := r.get(ctx, team)
	diags.Append(d...)
	return ctx, cancel, limit, ns
}

// applyStage names the step of apply that failed.
type applyStage int

const (
	stageNone applyStage = iota
	stageNamespace
	stageLocalQueue
)

// apply writes the Namespace and the LocalQueue as planned over current, the team's objects as
// last read (nil when there were none). A LocalQueue that is terminating or points at another
// ClusterQueue (spec.clusterQueue is immutable) is deleted and recreated.
func (r *teamNamespaceResource) apply(ctx context.Context, plan *teamNamespaceModel, current *backend.TeamNamespace, owner string) (diag.Diagnostics, applyStage) {
	var diags diag.Diagnostics
	team := plan.Team.ValueString()
	nsName, lqName, cqName := quota.NamespaceName(team), quota.LocalQueueName(team), quota.ClusterQueueName(team)

	var labels, annotations map[string]string
	if !plan.Labels.IsNull() {
		diags.Append(plan.Labels.ElementsAs(ctx, &labels, false)...)
	}
	if !plan.Annotations.IsNull() {
		diags.Append(plan.Annotations.ElementsAs(ctx, &annotations, false)...)
	}
	if diags.HasError() {
		return diags, stageNamespace
	}
	// Reserved keys were rejected by ValidateConfig.
	err := r.namespaces().Put(ctx, team, labels, annotations, owner, current)
	var re *backend.RequestError
	switch {
	case err == nil:
		return diags, stageNone
	case errors.As(err, &re) && re.Kind == namespaceRef("").Kind:
		e := storeError(err)
		diags.AddError(e.Summary, e.Detail+" Check the labels and annotations.")
		return diags, stageNamespace
	case re != nil && re.Op == backend.OpDelete && current != nil && current.Queue != nil:
		diags.AddAttributeError(path.Root("cluster_queue_name"), "Cannot recreate LocalQueue",
			fmt.Sprintf("LocalQueue %q in namespace %q points at ClusterQueue %q, not %q, and spec.clusterQueue cannot "+
				"be changed, so it has to be deleted and recreated; deleting it failed: %s. Delete it yourself "+
				"(kubectl delete localqueue -n %s %s) and apply again, or raise timeouts.create.",
				lqName, nsName, current.Queue.ClusterQueue, cqName, re.Err, nsName, lqName))
	default:
		// A transient error gets no permission hint: the backend adds one only when refused.
		storeError(err).addTo(&diags)
	}
	return diags, stageLocalQueue
}

func (r *teamNamespaceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, _ := stateOf[teamNamespaceModel](ctx, req.State, &resp.Diagnostics)
	team := state.Team.ValueString()
	ctx, cancel, timeout, ns := r.begin(ctx, "delete a Namespace", team, state.Timeouts.Delete, teamNamespaceDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	nsName := quota.NamespaceName(team)
	if ns == nil {
		return
	}
	if !ns.Owner.Owns(state.OwnerID.ValueString()) {
		leftInPlace(&resp.Diagnostics, namespaceRef(nsName), ns.Owner.Description,
			"destroying this resource did not delete it or its LocalQueue. It was removed from this state only.")
		return
	}

	if !state.ForceDestroy.ValueBool() {
		pods, workloads, err := r.details().Work(ctx, team)
		if err != nil {
			resp.Diagnostics.AddError("Cannot check the namespace before deleting it", err.Error()+", or set force_destroy = true to skip this check")
			return
		}
		if pods > 0 || workloads > 0 {
			resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "Namespace is not empty",
				fmt.Sprintf("namespace %q still holds %s and %s; delete them, or set force_destroy = true and apply "+
					"before destroying", nsName, teamNamespacePlural(pods, "Pod"), teamNamespacePlural(workloads, "Kueue Workload")))
			return
		}
	}

	tflog.Debug(ctx, "deleting team namespace", map[string]any{"namespace": nsName, "force_destroy": state.ForceDestroy.ValueBool()})
	err := r.namespaces().Delete(ctx, team)
	var re *backend.RequestError
	switch {
	case err == nil:
	case !errors.As(err, &re):
		storeError(err).addTo(&resp.Diagnostics)
	default:
		detail := fmt.Sprintf("Deleting %s %q failed: %s.", re.Kind, re.Name, re.Err)
		if errors.Is(err, backend.ErrStillExists) {
			detail = fmt.Sprintf("%s %q was not gone within the delete timeout (%s): %s. A namespace is removed only "+
				"after everything in it is deleted; check what is left (kubectl get all -n %s) and its finalizers, "+
				"then destroy again, or raise timeouts.delete.", re.Kind, re.Name, timeout, re.Err, nsName)
		}
		resp.Diagnostics.AddError("Cannot delete "+re.Kind, detail)
	}
}

func teamNamespacePlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ImportState imports by team: it validates the team, reads the objects and builds the whole
// state (force_destroy false, no timeouts; labels and annotations per
// quota.ImportedNamespaceMetadata).
func (r *teamNamespaceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	team := importedName[teamIdentityModel](ctx, req, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !validImportTeam(team, "hyperpod_team_namespace.example", &resp.Diagnostics) {
		return
	}
	if !r.data.ready("import a team namespace", &resp.Diagnostics) {
		return
	}
	ctx, ns, present := r.lookUp(ctx, team, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !present {
		resp.Diagnostics.AddError("Cannot import team namespace", fmt.Sprintf("Namespace %q does not exist (or is being "+
			"deleted), so there is nothing to import for team %q. Check the team name, or remove the import and let "+
			"terraform apply create the namespace.", quota.NamespaceName(team), team))
		return
	}
	m, d := r.importedState(ctx, team, ns)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Debug(ctx, "imported team namespace", map[string]any{"namespace": ns.Name})
	markTakeover(ctx, resp.Private, true, &resp.Diagnostics)
	setTeamIdentity(ctx, resp.Identity, team, &resp.Diagnostics)
	// Attribute by attribute, so that timeouts stays null.
	for name, v := range map[string]attr.Value{
		"id": m.ID, "team": m.Team, "labels": m.Labels, "annotations": m.Annotations, "force_destroy": m.ForceDestroy,
		"namespace": m.Namespace, "local_queue_name": m.LocalQueueName, "cluster_queue_name": m.ClusterQueueName,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// importedState is the state an import of the team's namespace ns saves, with the timeouts null
// (an import sets the other attributes only).
func (r *teamNamespaceResource) importedState(ctx context.Context, team string, ns *backend.TeamNamespace) (teamNamespaceModel, diag.Diagnostics) {
	m := teamNamespaceModel{Timeouts: timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)}}
	diags := teamNamespaceState(ctx, &m, team, ns)
	labels, annotations, err := r.details().Imported(ns)
	if err != nil {
		storeError(err).addTo(&diags)
		return m, diags
	}
	diags.Append(teamNamespaceImported(ctx, &m, labels, annotations)...)
	return m, diags
}

// namespaceRef names a team's Namespace.
func namespaceRef(name string) backend.ObjectRef {
	return backend.ObjectRef{Kind: "Namespace", Name: name}
}
