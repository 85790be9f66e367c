package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const quotaResourceKind = "hyperpod_compute_quota"

func (r *computeQuotaResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config computeQuotaModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || r.data.client("create a ClusterQueue", &resp.Diagnostics) == nil {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultQuotaTimeout)
	resp.Diagnostics.Append(diags...)
	run := r.data.startCreate(ctx, quotaResourceKind, timeout, &resp.Diagnostics)
	defer run.end()

	team := plan.Team.ValueString()
	claimed := clusterQueueKind.object("", quota.ClusterQueueName(team))
	save := func(drift types.List) {
		plan.OwnerID = types.StringValue(run.owner)
		plan.Drift = drift
		resp.Diagnostics.Append(resp.State.Set(run.ctx, &plan)...)
		setTeamIdentity(run.ctx, resp.Identity, team, &resp.Diagnostics)
		run.handOver(claimed)
	}
	run.saveTainted = func() {
		save(driftList([]string{"the create stopped before it finished: the next refresh reads the ClusterQueue"}))
	}
	if _, claim := r.claim(run.ctx, team, run.owner, &resp.Diagnostics); run.claimStopped(claim, claimed) {
		return
	}
	flavors, ok := r.write(run.ctx, config, run.owner, &resp.Diagnostics)
	if !ok {
		if run.undoIfGone(claimed) {
			run.cleanUp(func(ctx context.Context) { r.removeUnusedFlavors(ctx, flavors, &resp.Diagnostics) })
			return
		}
		notWritten := fmt.Sprintf("the quotas of ClusterQueue %q (it holds only the provider's labels and owner annotation)", claimed.name)
		if len(flavors) > 0 {
			// Flavors are shared by every quota of their type, not this resource's: named, not saved.
			notWritten += fmt.Sprintf(". The ResourceFlavors %s were created for it (or may have been); they are "+
				"shared by every quota of their instance type and deleted with the last one that uses them", strings.Join(flavors, ", "))
		}
		run.partlyCreated([]kubeObject{claimed}, []string{notWritten})
		return
	}
	save(noDrift())
}

// claim creates the team's ClusterQueue with only its identity (labels and the owner
// annotation): a POST, so that of two resources creating the same team only one succeeds. An
// existing queue is refused with its owner named; one being deleted is waited for.
func (r *computeQuotaResource) claim(ctx context.Context, team, owner string, diags *diag.Diagnostics) (uid string, result claimResult) {
	name := quota.ClusterQueueName(team)
	var existing kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &existing)
	if err != nil {
		e := clusterQueueKind.object("", name).readFailed(err)
		diags.AddError(e.summary, fmt.Sprintf("%s ClusterQueue %q was not created.", e.detail, name))
		return "", claimFailed
	}
	if found && existing.DeletionTimestamp != nil {
		tflog.Info(ctx, "ClusterQueue is being deleted; waiting before creating it again", map[string]any{"name": name})
		if err := r.data.kube.WaitGone(ctx, kueue.ClusterQueues, "", name, deletePoll); err != nil {
			summary, detail := existingObjectError(quotaResourceKind, "ClusterQueue", name, existing.ObjectMeta, team)
			diags.AddAttributeError(path.Root("team"), summary, detail)
			return "", claimFailed
		}
		found = false
	}
	if found && quota.Unconfirmed(existing.ObjectMeta) {
		o := clusterQueueKind.object("", name)
		if !adoptUnconfirmed(ctx, r.data.kube, o, existing.ObjectMeta, diags) {
			return "", claimFailed
		}
		return string(existing.UID), claimOK
	}
	if found {
		summary, detail := existingObjectError(quotaResourceKind, "ClusterQueue", name, existing.ObjectMeta, team)
		diags.AddAttributeError(path.Root("team"), summary, detail)
		return "", claimFailed
	}
	claim := kueue.ClusterQueue{
		TypeMeta: metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindClusterQueue},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{quota.LabelManagedBy: quota.ManagedByValue, quota.LabelQuotaAllocationID: team},
			Annotations: map[string]string{quota.AnnotationOwner: owner},
		},
	}
	err = r.data.kube.Create(ctx, kueue.ClusterQueues, quota.FieldManager, &claim)
	if errors.Is(err, kube.ErrAlreadyExists) {
		// Another resource created it between the read and the POST.
		if found, _ := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &existing); found {
			summary, detail := existingObjectError(quotaResourceKind, "ClusterQueue", name, existing.ObjectMeta, team)
			diags.AddAttributeError(path.Root("team"), summary, detail)
			return "", claimFailed
		}
	}
	if err != nil {
		clusterQueueKind.object("", name).createFailed(err).addTo(diags)
		if errors.Is(err, kube.ErrCreateOutcomeUnknown) || ctx.Err() != nil {
			// Cut off mid-request (an interrupt, the timeout): the POST may have been handled.
			return "", claimMaybe
		}
		return "", claimFailed
	}
	var created kueue.ClusterQueue
	if found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &created); err == nil && found {
		uid = string(created.UID)
	}
	return uid, claimOK
}

func (r *computeQuotaResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior, config computeQuotaModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || r.data.client("update a ClusterQueue", &resp.Diagnostics) == nil {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultQuotaTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	team := prior.Team.ValueString()
	name := quota.ClusterQueueName(team)
	owner := prior.OwnerID.ValueString()
	takeover := isTakeover(ctx, req.Private, &resp.Diagnostics)
	var current kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &current)
	if err != nil {
		clusterQueueKind.object("", name).readFailed(err).addTo(&resp.Diagnostics)
		return
	}
	if found && !takeover && !quota.Owns(current.ObjectMeta, owner) {
		clusterQueueKind.object("", name).refused(&resp.Diagnostics, path.Root("team"), current.ObjectMeta)
		return
	}
	owner = ownerToRecord(plan.OwnerID)
	if _, ok := r.write(ctx, config, owner, &resp.Diagnostics); !ok {
		return
	}
	plan.OwnerID = types.StringValue(owner)
	plan.Drift = noDrift()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setTeamIdentity(ctx, resp.Identity, plan.Team.ValueString(), &resp.Diagnostics)
	clearOwnershipMarks(ctx, resp.Private, &resp.Diagnostics)
	r.removeUnusedFlavors(ctx, removedTypes(prior, plan), &resp.Diagnostics)
}

// write ensures the flavors and server-side applies the ClusterQueue with the owner identity.
// It resolves from the configuration (all known at apply time), not the plan, so the annotation
// records which attributes the user set and import can reproduce them; the values equal the
// plan's.
//
// createdFlavors are the ResourceFlavors it created, even when it fails.
func (r *computeQuotaResource) write(ctx context.Context, config computeQuotaModel, owner string, diags *diag.Diagnostics) (createdFlavors []string, ok bool) {
	cfg := quotaConfigFromModel(config)
	rc, problems := quota.Defaults(r.data.catalog, cfg)
	if len(problems) > 0 {
		addProblems(diags, problems)
		return nil, false
	}
	cq, err := renderOwnedClusterQueue(r, rc, owner)
	if err != nil {
		diags.AddError("Cannot render the ClusterQueue", err.Error())
		return nil, false
	}
	for _, e := range rc.Resources {
		created, ok := r.ensureFlavor(ctx, e.Configured.InstanceType, diags)
		if created {
			createdFlavors = append(createdFlavors, e.Configured.InstanceType)
		}
		if !ok {
			return createdFlavors, false
		}
	}
	if err := r.data.kube.Apply(ctx, kueue.ClusterQueues, quota.FieldManager, &cq, nil); err != nil {
		clusterQueueKind.object("", cq.Name).applyFailed(err).addTo(diags)
		return createdFlavors, false
	}
	tflog.Info(ctx, "applied ClusterQueue", map[string]any{"name": cq.Name})
	return createdFlavors, true
}

// renderOwnedClusterQueue renders the queue with the owner annotation ("" leaves it out).
func renderOwnedClusterQueue(r *computeQuotaResource, rc quota.ResolvedConfig, owner string) (kueue.ClusterQueue, error) {
	cq, err := quota.RenderClusterQueue(r.data.catalog, rc)
	if err == nil && owner != "" {
		cq.Annotations[quota.AnnotationOwner] = owner
	}
	return cq, err
}

// ensureFlavor creates the ResourceFlavor of an instance type when it is missing. A flavor that
// exists, whoever made it, is left alone.
func (r *computeQuotaResource) ensureFlavor(ctx context.Context, instanceType string, diags *diag.Diagnostics) (created, ok bool) {
	var rf kueue.ResourceFlavor
	found, err := r.data.kube.Get(ctx, kueue.ResourceFlavors, "", instanceType, &rf)
	if err != nil {
		resourceFlavorKind.object("", instanceType).readFailed(err).addTo(diags)
		return false, false
	}
	if found && rf.DeletionTimestamp == nil {
		return false, true
	}
	if found {
		// Deleted by the last quota that used it, in this run or another: wait, then create it again.
		if err := r.data.kube.WaitGone(ctx, kueue.ResourceFlavors, "", instanceType, deletePoll); err != nil {
			diags.AddError("ResourceFlavor is being deleted", fmt.Sprintf(
				"ResourceFlavor %q is being deleted and was not gone within the timeout: %s. Apply again once it is gone.", instanceType, err))
			return false, false
		}
	}
	want := quota.RenderResourceFlavor(instanceType)
	if err := r.data.kube.Apply(ctx, kueue.ResourceFlavors, quota.FieldManager, &want, nil); err != nil {
		resourceFlavorKind.object("", instanceType).createFailed(err).addTo(diags)
		// A server-side apply may have created it before its response was lost.
		return true, false
	}
	tflog.Info(ctx, "created ResourceFlavor", map[string]any{"name": instanceType})
	return true, true
}

// removeUnusedFlavors deletes the flavors of the given types that this provider created and that
// no ClusterQueue uses any more. Failures are warnings: the quota itself is already correct.
func (r *computeQuotaResource) removeUnusedFlavors(ctx context.Context, instanceTypes []string, diags *diag.Diagnostics) {
	for _, t := range instanceTypes {
		used, err := r.data.kube.FlavorInUse(ctx, t)
		if err != nil {
			diags.AddWarning("ResourceFlavors not cleaned up", err.Error())
			return
		}
		if used {
			continue
		}
		var rf kueue.ResourceFlavor
		found, err := r.data.kube.Get(ctx, kueue.ResourceFlavors, "", t, &rf)
		if err != nil || !found || rf.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
			continue
		}
		if err := r.data.kube.DeleteAndWait(ctx, kueue.ResourceFlavors, "", t, deletePoll, kube.OnlyUID(string(rf.UID))); err != nil {
			diags.AddWarning("ResourceFlavor not deleted", fmt.Sprintf("ResourceFlavor %q is no longer used but could not be deleted: %s", t, err))
		}
	}
}

func (r *computeQuotaResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior computeQuotaModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
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
	name := quota.ClusterQueueName(team)
	var cq kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &cq)
	if err != nil {
		clusterQueueKind.object("", name).readFailed(err).addTo(&resp.Diagnostics)
		return
	}
	if found && cq.DeletionTimestamp != nil && quota.Owns(cq.ObjectMeta, prior.OwnerID.ValueString()) {
		// Still this resource's, held by finalizers (Kueue's while workloads are admitted). Keep
		// it in state, so a destroy deletes it (waiting, and naming what holds it) and cleans up
		// the flavors; a plan that keeps the quota replaces it (see ModifyPlan).
		tflog.Info(ctx, "ClusterQueue is being deleted; keeping the quota in state", map[string]any{"name": name, "finalizers": cq.Finalizers})
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateTerminating, []byte(`true`))...)
		prior.Drift = driftList([]string{fmt.Sprintf("ClusterQueue %q is being deleted, held by finalizers %v", name, cq.Finalizers)})
		resp.Diagnostics.Append(resp.State.Set(ctx, &prior)...)
		return
	}
	if !found || cq.DeletionTimestamp != nil {
		tflog.Info(ctx, "ClusterQueue is gone; removing the quota from state", map[string]any{"name": name})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateTerminating, nil)...)
	_, rc, err := quota.FromClusterQueue(r.data.catalog, cq)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the ClusterQueue", err.Error()+". Fix or delete the queue in the cluster, or remove the quota from state.")
		return
	}
	// Identity comes from state: the team addressed the queue, and the name is the state's
	// (an edited name annotation is drift to repair, not a rename that would replace the quota).
	rc.Config.Team = team
	if n := prior.Name.ValueString(); n != "" {
		rc.Config.Name = n
	}
	var unnamed []byte
	if cq.Annotations[quota.AnnotationName] == "" {
		unnamed = []byte(`true`)
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateUnnamed, unnamed)...)
	state, diags := quotaModelFromResolved(rc)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}

	drift, ok := r.refreshDrift(ctx, req, resp, cq, rc, prior.OwnerID.ValueString())
	if !ok {
		return
	}
	state.ID, state.Team = prior.ID, prior.Team
	if state.ID.IsNull() {
		state.ID = types.StringValue(team)
	}
	if state.Team.IsNull() {
		state.Team = types.StringValue(team)
	}
	state.OwnerID = prior.OwnerID
	state.Drift = driftList(drift)
	state.Timeouts = prior.Timeouts
	if state.Timeouts.IsNull() {
		state.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// refreshDrift lists what differs in the cluster that the attributes cannot show, for a queue
// read back as rc, and records in private state the ownership conflict and the usage it found.
// ok is false when a read failed.
func (r *computeQuotaResource) refreshDrift(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse,
	cq kueue.ClusterQueue, rc quota.ResolvedConfig, owner string) (drift []string, ok bool) {
	name := cq.Name
	takeover := isTakeover(ctx, req.Private, &resp.Diagnostics)
	var conflict *ownerConflict
	switch {
	case takeover:
		if recorded := cq.Annotations[quota.AnnotationOwner]; recorded != "" {
			drift = append(drift, fmt.Sprintf("imported: the queue records owner_id %q; the next apply records this resource's", recorded))
		} else {
			drift = append(drift, "imported: the next apply records this resource's owner_id on the queue")
		}
	case !quota.Owns(cq.ObjectMeta, owner):
		conflict = &ownerConflict{Object: fmt.Sprintf("ClusterQueue %q", name), Owner: quota.DescribeOwner(cq.ObjectMeta)}
		drift = append(drift, "the queue is managed by "+conflict.Owner)
	}
	recordConflict(ctx, resp.Private, conflict, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateUsage, usageForPrivate(quota.UsageOf(cq)))...)

	// What the attributes cannot show: compare the queue with what they render to.
	if want, err := renderOwnedClusterQueue(r, rc, owner); err != nil {
		drift = append(drift, "the queue cannot be rendered from what was read: "+err.Error())
	} else if conflict == nil && !takeover {
		drift = append(drift, quota.SpecDrift(want.Spec, cq.Spec)...)
		drift = append(drift, quota.MetadataDrift(want.ObjectMeta, cq.ObjectMeta)...)
	}
	// A flavor deleted out of band leaves the queue unable to admit anything. One GET per
	// flavor, as for every object the quota relies on.
	for _, e := range rc.Resources {
		var rf kueue.ResourceFlavor
		found, err := r.data.kube.Get(ctx, kueue.ResourceFlavors, "", e.Configured.InstanceType, &rf)
		if err != nil {
			resourceFlavorKind.object("", e.Configured.InstanceType).readFailed(err).addTo(&resp.Diagnostics)
			return nil, false
		}
		if !found {
			drift = append(drift, fmt.Sprintf("ResourceFlavor %q is missing", e.Configured.InstanceType))
		}
	}
	if len(drift) > 0 {
		tflog.Info(ctx, "ClusterQueue differs from its configuration", map[string]any{"name": name, "drift": strings.Join(drift, "; ")})
	}
	return drift, true
}

func (r *computeQuotaResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state computeQuotaModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.data.client("delete a ClusterQueue", &resp.Diagnostics) == nil {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultQuotaTimeout)
	resp.Diagnostics.Append(diags...)
	rpcCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	name := quota.ClusterQueueName(state.Team.ValueString())
	var cq kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &cq)
	if err != nil {
		clusterQueueKind.object("", name).readFailed(err).addTo(&resp.Diagnostics)
		return
	}
	if found && !quota.Owns(cq.ObjectMeta, state.OwnerID.ValueString()) {
		clusterQueueKind.object("", name).leftInPlace(&resp.Diagnostics, cq.ObjectMeta,
			"destroying this resource did not delete it. It was removed from this state only.")
		return
	}
	if found {
		if err := r.data.kube.DeleteAndWait(ctx, kueue.ClusterQueues, "", name, deletePoll, kube.OnlyUID(string(cq.UID))); err != nil {
			detail := fmt.Sprintf("Deleting ClusterQueue %q failed: %s", name, err)
			if errors.Is(err, kube.ErrStillExists) {
				detail = r.stillHeld(rpcCtx, name, timeout)
			}
			resp.Diagnostics.AddError("ClusterQueue not deleted", detail)
			return
		}
	}
	r.removeUnusedFlavors(ctx, instanceTypesOf(state), &resp.Diagnostics)
}

// stillHeld explains a ClusterQueue that outlived the delete timeout: the finalizers holding it
// and, for Kueue's, the workloads still admitted to it (one LIST, made only now).
func (r *computeQuotaResource) stillHeld(rpcCtx context.Context, name string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(rpcCtx), 15*time.Second)
	defer cancel()
	var cq kueue.ClusterQueue
	finalizers := "its finalizers"
	if found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &cq); err == nil && found && len(cq.Finalizers) > 0 {
		finalizers = fmt.Sprintf("finalizers %v", cq.Finalizers)
	}
	detail := fmt.Sprintf("Deleting ClusterQueue %q did not finish within timeouts.delete (%s): it is held by %s. "+
		"Kueue removes its finalizer (%s) once no workload is admitted to the queue any more.", name, timeout, finalizers, kueueInUseFinalizer)
	workloads, err := r.admittedWorkloads(ctx, name)
	switch {
	case err != nil:
		detail += fmt.Sprintf(" The workloads still admitted could not be listed: %s.", err)
	case len(workloads) > 0:
		detail += " Workloads still admitted to it: " + strings.Join(workloads, ", ") + "."
	default:
		detail += " No workload is admitted to it now, so Kueue should release it shortly."
	}
	return detail + " To proceed: wait for the workloads to finish, or delete them (for a Job, kubectl delete job -n <namespace> <job>), " +
		"or raise timeouts.delete; then run destroy again. Removing the finalizer by hand would leave running workloads without a queue."
}

// kueueInUseFinalizer is the finalizer Kueue puts on ClusterQueues with admitted workloads.
const kueueInUseFinalizer = "kueue.x-k8s.io/resource-in-use"

// admittedWorkloads lists the workloads admitted to the ClusterQueue, as namespace/name with
// the Job (or other object) that owns each.
func (r *computeQuotaResource) admittedWorkloads(ctx context.Context, clusterQueue string) ([]string, error) {
	dc, err := r.data.kube.Dynamic(ctx)
	if err != nil {
		return nil, err
	}
	list, err := dc.Resource(kueue.Workloads).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing workloads.kueue.x-k8s.io: %w", err)
	}
	var out []string
	for _, wl := range list.Items {
		cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
		if cq != clusterQueue {
			continue
		}
		item := wl.GetNamespace() + "/" + wl.GetName()
		for _, ref := range wl.GetOwnerReferences() {
			item += fmt.Sprintf(" (%s %s/%s)", ref.Kind, wl.GetNamespace(), ref.Name)
			break
		}
		out = append(out, item)
	}
	sort.Strings(out)
	return out, nil
}

func (r *computeQuotaResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importTeam(ctx, req, resp, "hyperpod_compute_quota.example")
	if resp.Diagnostics.HasError() || r.data == nil || r.data.client("import a compute quota", &resp.Diagnostics) == nil {
		return
	}
	// One GET, which the Read after the import reuses: a missing queue is an error here, with
	// the team named, rather than an import that finds nothing.
	var team types.String
	resp.Diagnostics.Append(resp.State.GetAttribute(ctx, path.Root("team"), &team)...)
	name := quota.ClusterQueueName(team.ValueString())
	var cq kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &cq)
	switch {
	case err != nil:
		e := clusterQueueKind.object("", name).readFailed(err)
		resp.Diagnostics.AddError("Cannot import compute quota", e.detail)
	case !found || cq.DeletionTimestamp != nil:
		resp.Diagnostics.AddError("Cannot import compute quota", fmt.Sprintf("ClusterQueue %q does not exist (or is being "+
			"deleted), so there is nothing to import for team %q. Check the team name, or remove the import and let "+
			"terraform apply create the quota.", name, team.ValueString()))
	}
}
