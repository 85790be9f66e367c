package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	team := plan.Team.ValueString()
	owner := newOwnerID()
	uid, ok := r.claim(ctx, team, owner, &resp.Diagnostics)
	if !ok {
		return
	}
	if !r.write(ctx, config, owner, &resp.Diagnostics) {
		// Release the name, so that fixing the cause and applying again needs no import.
		if err := r.data.kube.DeleteAndWait(ctx, kueue.ClusterQueues, "", quota.ClusterQueueName(team), deletePoll, kube.OnlyUID(uid)); err != nil {
			resp.Diagnostics.AddWarning("Claimed ClusterQueue left behind", fmt.Sprintf(
				"The create failed after claiming ClusterQueue %q, and deleting the claim failed too: %s. Delete it "+
					"(kubectl delete clusterqueue %s) before applying again.", quota.ClusterQueueName(team), err, quota.ClusterQueueName(team)))
		}
		return
	}
	plan.OwnerID = types.StringValue(owner)
	plan.Drift = noDrift()
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setTeamIdentity(ctx, resp.Identity, plan.Team.ValueString(), &resp.Diagnostics)
}

// claim creates the team's ClusterQueue with only its identity (labels and the owner
// annotation): a POST, so that of two resources creating the same team only one succeeds. An
// existing queue is refused with its owner named; one being deleted is waited for.
func (r *computeQuotaResource) claim(ctx context.Context, team, owner string, diags *diag.Diagnostics) (uid string, ok bool) {
	name := quota.ClusterQueueName(team)
	var existing kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &existing)
	if err != nil {
		diags.AddError("Cannot read the ClusterQueue", kubeErrorDetail(fmt.Sprintf("Reading ClusterQueue %q", name), "get", "clusterqueues.kueue.x-k8s.io", err))
		return "", false
	}
	if found && existing.DeletionTimestamp != nil {
		tflog.Info(ctx, "ClusterQueue is being deleted; waiting before creating it again", map[string]any{"name": name})
		if err := r.data.kube.WaitGone(ctx, kueue.ClusterQueues, "", name, deletePoll); err != nil {
			summary, detail := existingObjectError(quotaResourceKind, "ClusterQueue", name, existing.ObjectMeta, team)
			diags.AddAttributeError(path.Root("team"), summary, detail)
			return "", false
		}
		found = false
	}
	if found {
		summary, detail := existingObjectError(quotaResourceKind, "ClusterQueue", name, existing.ObjectMeta, team)
		diags.AddAttributeError(path.Root("team"), summary, detail)
		return "", false
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
			return "", false
		}
	}
	if err != nil {
		diags.AddError("Cannot create the ClusterQueue", kubeErrorDetail(fmt.Sprintf("Creating ClusterQueue %q", name), "create", "clusterqueues.kueue.x-k8s.io", err))
		return "", false
	}
	var created kueue.ClusterQueue
	if found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &created); err == nil && found {
		uid = string(created.UID)
	}
	return uid, true
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
		resp.Diagnostics.AddError("Cannot read the ClusterQueue", kubeErrorDetail(fmt.Sprintf("Reading ClusterQueue %q", name), "get", "clusterqueues.kueue.x-k8s.io", err))
		return
	}
	if found && !takeover && !quota.Owns(current.ObjectMeta, owner) {
		foreignOwnerError(&resp.Diagnostics, path.Root("team"), "ClusterQueue", name, current.ObjectMeta)
		return
	}
	owner = ownerToRecord(plan.OwnerID)
	if !r.write(ctx, config, owner, &resp.Diagnostics) {
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
func (r *computeQuotaResource) write(ctx context.Context, config computeQuotaModel, owner string, diags *diag.Diagnostics) bool {
	cfg := quotaConfigFromModel(config)
	rc, problems := quota.Defaults(r.data.catalog, cfg)
	if len(problems) > 0 {
		addProblems(diags, problems)
		return false
	}
	cq, err := renderOwnedClusterQueue(r, rc, owner)
	if err != nil {
		diags.AddError("Cannot render the ClusterQueue", err.Error())
		return false
	}
	for _, e := range rc.Resources {
		if !r.ensureFlavor(ctx, e.Configured.InstanceType, diags) {
			return false
		}
	}
	if err := r.data.kube.Apply(ctx, kueue.ClusterQueues, quota.FieldManager, &cq, nil); err != nil {
		diags.AddError("Cannot apply the ClusterQueue", kubeErrorDetail(fmt.Sprintf("Server-side apply of ClusterQueue %q", cq.Name), "patch", "clusterqueues.kueue.x-k8s.io", err))
		return false
	}
	tflog.Info(ctx, "applied ClusterQueue", map[string]any{"name": cq.Name})
	return true
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
func (r *computeQuotaResource) ensureFlavor(ctx context.Context, instanceType string, diags *diag.Diagnostics) bool {
	var rf kueue.ResourceFlavor
	found, err := r.data.kube.Get(ctx, kueue.ResourceFlavors, "", instanceType, &rf)
	if err != nil {
		diags.AddError("Cannot read the ResourceFlavor", kubeErrorDetail(fmt.Sprintf("Reading ResourceFlavor %q", instanceType), "get", "resourceflavors.kueue.x-k8s.io", err))
		return false
	}
	if found && rf.DeletionTimestamp == nil {
		return true
	}
	if found {
		// Deleted by the last quota that used it, in this run or another: wait, then create it again.
		if err := r.data.kube.WaitGone(ctx, kueue.ResourceFlavors, "", instanceType, deletePoll); err != nil {
			diags.AddError("ResourceFlavor is being deleted", fmt.Sprintf(
				"ResourceFlavor %q is being deleted and was not gone within the timeout: %s. Apply again once it is gone.", instanceType, err))
			return false
		}
	}
	want := quota.RenderResourceFlavor(instanceType)
	if err := r.data.kube.Apply(ctx, kueue.ResourceFlavors, quota.FieldManager, &want, nil); err != nil {
		diags.AddError("Cannot create the ResourceFlavor", kubeErrorDetail(fmt.Sprintf("Creating ResourceFlavor %q", instanceType), "create and patch", "resourceflavors.kueue.x-k8s.io", err))
		return false
	}
	tflog.Info(ctx, "created ResourceFlavor", map[string]any{"name": instanceType})
	return true
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
		resp.Diagnostics.AddError("Cannot read the ClusterQueue", kubeErrorDetail(fmt.Sprintf("Reading ClusterQueue %q", name), "get", "clusterqueues.kueue.x-k8s.io", err))
		return
	}
	if !found || cq.DeletionTimestamp != nil {
		tflog.Info(ctx, "ClusterQueue is gone; removing the quota from state", map[string]any{"name": name})
		resp.State.RemoveResource(ctx)
		return
	}
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

	owner := prior.OwnerID.ValueString()
	takeover := isTakeover(ctx, req.Private, &resp.Diagnostics)
	var drift []string
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
			resp.Diagnostics.AddError("Cannot read the ResourceFlavor", kubeErrorDetail(fmt.Sprintf("Reading ResourceFlavor %q", e.Configured.InstanceType), "get", "resourceflavors.kueue.x-k8s.io", err))
			return
		}
		if !found {
			drift = append(drift, fmt.Sprintf("ResourceFlavor %q is missing", e.Configured.InstanceType))
		}
	}
	if len(drift) > 0 {
		tflog.Info(ctx, "ClusterQueue differs from its configuration", map[string]any{"name": name, "drift": strings.Join(drift, "; ")})
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

func (r *computeQuotaResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state computeQuotaModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.data.client("delete a ClusterQueue", &resp.Diagnostics) == nil {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultQuotaTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	name := quota.ClusterQueueName(state.Team.ValueString())
	var cq kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &cq)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the ClusterQueue", kubeErrorDetail(fmt.Sprintf("Reading ClusterQueue %q", name), "get", "clusterqueues.kueue.x-k8s.io", err))
		return
	}
	if found && !quota.Owns(cq.ObjectMeta, state.OwnerID.ValueString()) {
		resp.Diagnostics.AddWarning("ClusterQueue left in place", fmt.Sprintf(
			"ClusterQueue %q is managed by %s, not by this resource, so destroying this resource did not delete it. "+
				"It was removed from this state only.", name, quota.DescribeOwner(cq.ObjectMeta)))
		return
	}
	if found {
		if err := r.data.kube.DeleteAndWait(ctx, kueue.ClusterQueues, "", name, deletePoll, kube.OnlyUID(string(cq.UID))); err != nil {
			detail := fmt.Sprintf("Deleting ClusterQueue %q failed: %s", name, err)
			if errors.Is(err, kube.ErrStillExists) {
				detail += ". Kueue keeps a ClusterQueue while admitted workloads still run in it: wait for them to finish " +
					"or delete them, or raise timeouts.delete, then destroy again."
			}
			resp.Diagnostics.AddError("ClusterQueue not deleted", detail)
			return
		}
	}
	r.removeUnusedFlavors(ctx, instanceTypesOf(state), &resp.Diagnostics)
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
		resp.Diagnostics.AddError("Cannot import compute quota", kubeErrorDetail(fmt.Sprintf("Reading ClusterQueue %q", name), "get", "clusterqueues.kueue.x-k8s.io", err))
	case !found || cq.DeletionTimestamp != nil:
		resp.Diagnostics.AddError("Cannot import compute quota", fmt.Sprintf("ClusterQueue %q does not exist (or is being "+
			"deleted), so there is nothing to import for team %q. Check the team name, or remove the import and let "+
			"terraform apply create the quota.", name, team.ValueString()))
	}
}

// warnNotRefreshed explains why a resource kept its prior state during a plan whose provider
// configuration is not known yet. The text is the same for every resource, so Terraform shows
// it once with a count.
func warnNotRefreshed(pd *providerData, diags *diag.Diagnostics) {
	diags.AddWarning("Resources not refreshed", fmt.Sprintf(
		"The hyperpod provider's %s depend on values known only after apply, so existing quotas and namespaces "+
			"were not read from the cluster during this plan: the plan compares the configuration with the last "+
			"known state, and changes made outside Terraform since then are not shown. Apply writes the full "+
			"configuration, which repairs them.", strings.Join(pd.pendingConfig, ", ")))
}

// noDrift is the drift attribute of a resource in sync with the cluster.
func noDrift() types.List { return types.ListValueMust(types.StringType, []attr.Value{}) }

func driftList(reasons []string) types.List {
	elems := make([]attr.Value, 0, len(reasons))
	for _, r := range reasons {
		elems = append(elems, types.StringValue(r))
	}
	return types.ListValueMust(types.StringType, elems)
}
