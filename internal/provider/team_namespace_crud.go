package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/kueuebackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// teamNamespaceObjects are the team's objects as found in the cluster; nil when absent.
type teamNamespaceObjects struct {
	namespace  *corev1.Namespace
	localQueue *kueue.LocalQueue
}

// get reads the Namespace and, when it exists, the LocalQueue: one GET each, no list.
func (r *teamNamespaceResource) get(ctx context.Context, team string) (teamNamespaceObjects, diag.Diagnostics) {
	var diags diag.Diagnostics
	var objs teamNamespaceObjects
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)

	var ns corev1.Namespace
	found, err := r.data.kube.Get(ctx, kube.Namespaces, "", nsName, &ns)
	if err != nil {
		namespaceKind.object("", nsName).readFailed(err).addTo(&diags)
		return objs, diags
	}
	if !found {
		return objs, diags
	}
	objs.namespace = &ns

	var lq kueue.LocalQueue
	found, err = r.data.kube.Get(ctx, kueue.LocalQueues, nsName, lqName, &lq)
	if err != nil {
		localQueueKind.object(nsName, lqName).readFailed(err).addTo(&diags)
		return objs, diags
	}
	if found {
		objs.localQueue = &lq
	}
	return objs, diags
}

func (r *teamNamespaceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan teamNamespaceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !r.data.ready("create a Namespace", &resp.Diagnostics) {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, teamNamespaceCreateTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	run := r.data.startCreate(ctx, teamNamespaceResourceKind, timeout, &resp.Diagnostics)
	defer run.end()

	team := plan.Team.ValueString()
	ctx = tflog.SetField(run.ctx, "team", team)
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)
	ns := namespaceKind.object("", nsName)
	lq := localQueueKind.object(nsName, lqName)
	save := func(drift types.List) {
		saveTeamState(ctx, &resp.State, resp.Identity, &plan, team, run.owner, drift, &resp.Diagnostics)
		run.handOver(ns)
	}
	run.saveTainted = func() {
		save(driftList([]string{"the create stopped before it finished: the next refresh reads the Namespace and LocalQueue"}))
	}
	claim, existing := r.claim(ctx, team, run.owner, &resp.Diagnostics)
	if run.claimStopped(claim, ns) {
		return
	}
	tflog.Debug(ctx, "creating team namespace", map[string]any{"namespace": nsName})
	d, stage := r.apply(ctx, &plan, existing, run.owner)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		if run.undoIfGone(ns, lq) {
			return
		}
		notWritten := []string{lq.String()}
		if stage == stageNamespace {
			notWritten = append([]string{fmt.Sprintf("the labels and annotations of Namespace %q", nsName)}, notWritten...)
		}
		run.partlyCreated([]kubeObject{ns}, notWritten)
		return
	}
	save(noDrift())
}

// claim creates the team's Namespace with only its identity (the provider's labels and the
// owner annotation) with a POST, so that of two resources creating the same team only one
// succeeds. An existing Namespace is refused with its owner named; one being deleted is waited
// for.
func (r *teamNamespaceResource) claim(ctx context.Context, team, owner string, diags *diag.Diagnostics) (claimResult, teamNamespaceObjects) {
	nsName := quota.NamespaceName(team)
	refuse := func(ns *corev1.Namespace) (claimResult, teamNamespaceObjects) {
		summary, detail := existingObjectError(teamNamespaceResourceKind, "Namespace", nsName, kueuebackend.RecordOf("Namespace", ns.ObjectMeta), team)
		diags.AddAttributeError(path.Root("team"), summary, detail)
		return claimFailed, teamNamespaceObjects{}
	}
	objs, d := r.get(ctx, team)
	diags.Append(notCreated(d, namespaceKind.object("", nsName))...)
	if diags.HasError() {
		return claimFailed, teamNamespaceObjects{}
	}
	if ns := objs.namespace; ns != nil {
		if ns.DeletionTimestamp == nil && quota.Unconfirmed(ns.ObjectMeta) {
			unmark := func() error {
				return r.data.kube.Annotate(ctx, kube.Namespaces, "", nsName, string(ns.UID), quota.FieldManager,
					map[string]*string{quota.AnnotationUnconfirmed: nil})
			}
			if !adoptUnconfirmed(namespaceKind.object("", nsName), ns.Annotations[quota.AnnotationUnconfirmed], unmark, diags) {
				return claimFailed, teamNamespaceObjects{}
			}
			return claimOK, objs
		}
		if ns.DeletionTimestamp == nil {
			return refuse(ns)
		}
		tflog.Info(ctx, "Namespace is being deleted; waiting before creating it again", map[string]any{"namespace": nsName})
		if err := r.data.kube.WaitGone(ctx, kube.Namespaces, "", nsName, teamNamespacePollInterval); err != nil {
			return refuse(ns)
		}
	}
	claim := quota.RenderNamespace(team, nil, nil, owner)
	err := r.data.kube.Create(ctx, kube.Namespaces, quota.FieldManager, &claim)
	if errors.Is(err, kube.ErrAlreadyExists) {
		if objs, d := r.get(ctx, team); !d.HasError() && objs.namespace != nil {
			return refuse(objs.namespace)
		}
	}
	if err != nil {
		namespaceKind.object("", nsName).createFailed(err).addTo(diags)
		if errors.Is(err, kube.ErrCreateOutcomeUnknown) || ctx.Err() != nil {
			// Cut off mid-request (an interrupt, the timeout): the POST may have been handled.
			return claimMaybe, teamNamespaceObjects{}
		}
		return claimFailed, teamNamespaceObjects{}
	}
	return claimOK, teamNamespaceObjects{}
}

// lookUp names the team in ctx's logs and reads its objects; present is false when the
// Namespace is gone or being deleted.
func (r *teamNamespaceResource) lookUp(ctx context.Context, team string, diags *diag.Diagnostics) (context.Context, teamNamespaceObjects, bool) {
	ctx = tflog.SetField(ctx, "team", team)
	objs, d := r.get(ctx, team)
	diags.Append(d...)
	return ctx, objs, objs.namespace != nil && objs.namespace.DeletionTimestamp == nil
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
	ctx, objs, present := r.lookUp(ctx, team, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !present {
		tflog.Info(ctx, "team namespace is gone or terminating; removing it from state so the next plan creates it",
			map[string]any{"namespace": quota.NamespaceName(team)})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(teamNamespaceState(ctx, &state, team, objs, false)...)
	owner := state.OwnerID.ValueString()
	var drift []string
	var conflict *ownerConflict
	switch {
	case isTakeover(ctx, req.Private, &resp.Diagnostics):
		drift = append(drift, "imported: the next apply records this resource's owner_id on the Namespace and LocalQueue")
	case !quota.Owns(objs.namespace.ObjectMeta, owner):
		conflict = &ownerConflict{Object: fmt.Sprintf("Namespace %q", objs.namespace.Name), Owner: quota.DescribeOwner(objs.namespace.ObjectMeta)}
		drift = append(drift, "the Namespace is managed by "+conflict.Owner)
	default:
		drift = quota.TeamNamespaceDrift(team, owner, objs.namespace.ObjectMeta, objs.localQueue)
	}
	recordConflict(ctx, resp.Private, conflict, &resp.Diagnostics)
	state.Drift = driftList(drift)
	tflog.Debug(ctx, "read team namespace", map[string]any{"drift": strings.Join(drift, "; "),
		"namespace_state": state.Namespace.ValueString(), "local_queue_state": state.LocalQueueName.ValueString(),
		"cluster_queue_state": state.ClusterQueueName.ValueString(),
	})
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *teamNamespaceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, prior, _ := updateModels[teamNamespaceModel](ctx, req, &resp.Diagnostics)
	team := plan.Team.ValueString()
	ctx, cancel, _, objs := r.begin(ctx, "update a Namespace", team, plan.Timeouts.Update, teamNamespaceCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	if ns := objs.namespace; ns != nil && !isTakeover(ctx, req.Private, &resp.Diagnostics) && !quota.Owns(ns.ObjectMeta, prior.OwnerID.ValueString()) {
		namespaceKind.object("", ns.Name).refused(&resp.Diagnostics, path.Root("team"), quota.DescribeOwner(ns.ObjectMeta))
		return
	}
	owner := ownerToRecord(plan.OwnerID)
	tflog.Debug(ctx, "updating team namespace", map[string]any{"namespace": quota.NamespaceName(team)})
	d, _ := r.apply(ctx, &plan, objs, owner)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	saveTeamState(ctx, &resp.State, resp.Identity, &plan, team, owner, noDrift(), &resp.Diagnostics)
	clearOwnershipMarks(ctx, resp.Private, &resp.Diagnostics)
}

// begin starts an update or delete (what): unless reading the request failed or the provider
// cannot reach the cluster, it bounds ctx by the timeout the timeouts attribute gives (timeout,
// with its default), names the team in its logs and reads the team's objects; it reads nothing
// when the timeout is invalid. The caller returns when diags has an error.
func (r *teamNamespaceResource) begin(ctx context.Context, what, team string, timeout func(context.Context, time.Duration) (time.Duration, diag.Diagnostics),
	defaultTimeout time.Duration, diags *diag.Diagnostics) (context.Context, context.CancelFunc, time.Duration, teamNamespaceObjects) {
	if diags.HasError() || !r.data.ready(what, diags) {
		return ctx, func() {}, 0, teamNamespaceObjects{}
	}
	limit, d := timeout(ctx, defaultTimeout)
	diags.Append(d...)
	if diags.HasError() {
		return ctx, func() {}, limit, teamNamespaceObjects{}
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	ctx = tflog.SetField(ctx, "team", team)
	objs, d := r.get(ctx, team)
	diags.Append(d...)
	return ctx, cancel, limit, objs
}

func (m *teamNamespaceModel) recordOwner(owner string, drift types.List) {
	m.OwnerID, m.Drift = types.StringValue(owner), drift
}

// apply server-side applies the Namespace and the LocalQueue as planned. A LocalQueue that is
// terminating or points at another ClusterQueue (spec.clusterQueue is immutable) is deleted
// and recreated.
// applyStage names the step of apply that failed.
type applyStage int

const (
	stageNone applyStage = iota
	stageNamespace
	stageLocalQueue
)

func (r *teamNamespaceResource) apply(ctx context.Context, plan *teamNamespaceModel, objs teamNamespaceObjects, owner string) (diag.Diagnostics, applyStage) {
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
	ns := quota.RenderNamespace(team, labels, annotations, owner)
	if err := r.data.kube.Apply(ctx, kube.Namespaces, quota.FieldManager, &ns, nil); err != nil {
		e := namespaceKind.object("", nsName).applyFailed(err)
		diags.AddError(e.summary, e.detail+" Check the labels and annotations.")
		return diags, stageNamespace
	}

	if lq := objs.localQueue; lq != nil && (lq.DeletionTimestamp != nil || lq.Spec.ClusterQueue != cqName) {
		tflog.Info(ctx, "recreating LocalQueue: spec.clusterQueue is immutable", map[string]any{
			"local_queue": lqName, "cluster_queue_found": lq.Spec.ClusterQueue, "cluster_queue_wanted": cqName,
		})
		if err := r.data.kube.DeleteAndWait(ctx, kueue.LocalQueues, nsName, lqName, teamNamespacePollInterval); err != nil {
			diags.AddAttributeError(path.Root("cluster_queue_name"), "Cannot recreate LocalQueue",
				fmt.Sprintf("LocalQueue %q in namespace %q points at ClusterQueue %q, not %q, and spec.clusterQueue cannot "+
					"be changed, so it has to be deleted and recreated; deleting it failed: %s. Delete it yourself "+
					"(kubectl delete localqueue -n %s %s) and apply again, or raise timeouts.create.",
					lqName, nsName, lq.Spec.ClusterQueue, cqName, err, nsName, lqName))
			return diags, stageLocalQueue
		}
	}
	lq := quota.RenderLocalQueue(team, owner)
	if err := r.data.kube.Apply(ctx, kueue.LocalQueues, quota.FieldManager, &lq, nil); err != nil {
		// A transient error gets no permission hint: kubeErrorDetail adds one only when refused.
		localQueueKind.object(nsName, lqName).applyFailed(err).addTo(&diags)
		return diags, stageLocalQueue
	}
	return diags, stageNone
}

func (r *teamNamespaceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, _ := stateOf[teamNamespaceModel](ctx, req.State, &resp.Diagnostics)
	team := state.Team.ValueString()
	ctx, cancel, timeout, objs := r.begin(ctx, "delete a Namespace", team, state.Timeouts.Delete, teamNamespaceDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)
	if objs.namespace == nil {
		return
	}
	if !quota.Owns(objs.namespace.ObjectMeta, state.OwnerID.ValueString()) {
		namespaceKind.object("", nsName).leftInPlace(&resp.Diagnostics, quota.DescribeOwner(objs.namespace.ObjectMeta),
			"destroying this resource did not delete it or its LocalQueue. It was removed from this state only.")
		return
	}

	if !state.ForceDestroy.ValueBool() {
		pods, workloads, err := r.countWork(ctx, nsName)
		if err != nil {
			resp.Diagnostics.AddError("Cannot check the namespace before deleting it", err.Error())
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
	for _, o := range []kubeObject{localQueueKind.object(nsName, lqName), namespaceKind.object("", nsName)} {
		if err := r.data.kube.DeleteAndWait(ctx, o.kind.gvr, o.namespace, o.name, teamNamespacePollInterval); err != nil {
			detail := fmt.Sprintf("Deleting %s %q failed: %s.", o.kind.name, o.name, err)
			if errors.Is(err, kube.ErrStillExists) {
				detail = fmt.Sprintf("%s %q was not gone within the delete timeout (%s): %s. A namespace is removed only "+
					"after everything in it is deleted; check what is left (kubectl get all -n %s) and its finalizers, "+
					"then destroy again, or raise timeouts.delete.", o.kind.name, o.name, timeout, err, nsName)
			}
			resp.Diagnostics.AddError("Cannot delete "+o.kind.name, detail)
			return
		}
	}
}

// countWork counts the Pods that have not finished and the Kueue Workloads in namespace: one
// LIST each. Completed Pods (Succeeded, Failed) are not work in progress and do not block a
// destroy. A cluster without the Workload CRD has no Workloads.
func (r *teamNamespaceResource) countWork(ctx context.Context, namespace string) (pods, workloads int, err error) {
	cs, err := r.data.kube.Clientset(ctx)
	if err != nil {
		return 0, 0, err
	}
	podList, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "status.phase!=Succeeded,status.phase!=Failed",
	})
	if err != nil {
		return 0, 0, fmt.Errorf("listing Pods in namespace %q failed: %w. The provider's credentials need list "+
			"permission on pods, or set force_destroy = true to skip this check", namespace, err)
	}
	dc, err := r.data.kube.Dynamic(ctx)
	if err != nil {
		return 0, 0, err
	}
	wlList, err := dc.Resource(kueue.Workloads).Namespace(namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return len(podList.Items), 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("listing %s Workloads in namespace %q failed: %w. The provider's credentials need list "+
			"permission on workloads.kueue.x-k8s.io, or set force_destroy = true to skip this check", kueue.GroupVersion, namespace, err)
	}
	return len(podList.Items), len(wlList.Items), nil
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
	team := importedTeam(ctx, req, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !validImportTeam(team, "hyperpod_team_namespace.example", &resp.Diagnostics) {
		return
	}
	if !r.data.ready("import a team namespace", &resp.Diagnostics) {
		return
	}
	ctx, objs, present := r.lookUp(ctx, team, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !present {
		resp.Diagnostics.AddError("Cannot import team namespace", fmt.Sprintf("Namespace %q does not exist (or is being "+
			"deleted), so there is nothing to import for team %q. Check the team name, or remove the import and let "+
			"terraform apply create the namespace.", quota.NamespaceName(team), team))
		return
	}
	var m teamNamespaceModel
	resp.Diagnostics.Append(teamNamespaceState(ctx, &m, team, objs, true)...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Debug(ctx, "imported team namespace", map[string]any{"namespace": objs.namespace.Name})
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
