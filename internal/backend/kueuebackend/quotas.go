package kueuebackend

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const (
	kindClusterQueue   = "ClusterQueue"
	kindResourceFlavor = "ResourceFlavor"
)

// teamQuotas stores a team's quota as its ClusterQueue, and a ResourceFlavor per instance type
// the quota uses (shared by every quota of that type).
type teamQuotas struct {
	kube    *kube.Client
	catalog *catalog.Catalog
	guard   addonGuard
}

// Get reads the team's ClusterQueue: one GET.
func (s *teamQuotas) Get(ctx context.Context, team string, _ *backend.Quota) (*backend.Quota, error) {
	name := quota.ClusterQueueName(team)
	cq, found, err := read[kueue.ClusterQueue](ctx, s.kube, kueue.ClusterQueues, kindClusterQueue, "", name)
	if err != nil || !found {
		return nil, err
	}
	return s.quotaOf(cq), nil
}

// quotaOf is the team's quota that cq holds.
func (s *teamQuotas) quotaOf(cq kueue.ClusterQueue) *backend.Quota {
	q := &backend.Quota{
		Record: RecordOf(kindClusterQueue, cq.ObjectMeta),
		Named:  cq.Annotations[quota.AnnotationName] != "",
		Usage:  quota.UsageOf(cq),
		Native: cq,
	}
	if !q.Terminating {
		_, q.Config, q.ConfigErr = quota.FromClusterQueue(s.catalog, cq)
	}
	return q
}

// Tags are those Get read from the ClusterQueue's tags annotation.
func (s *teamQuotas) Tags(_ context.Context, q *backend.Quota) (map[string]string, error) {
	return q.Config.Config.Tags, nil
}

// TeamOf: a ClusterQueue is named after its team; Kubernetes assigns no quota ids.
func (s *teamQuotas) TeamOf(context.Context, string) (string, bool, error) { return "", false, nil }

// Usage reads the team's ClusterQueue status: one GET, as it is now. Kueue changes the status
// on its own, so what this process read or wrote of the queue before is no answer (a
// configuration of `terraform test` configures the provider once for all its runs).
func (s *teamQuotas) Usage(ctx context.Context, team string) (*quota.Usage, error) {
	var cq kueue.ClusterQueue
	found, err := s.kube.GetNow(ctx, kueue.ClusterQueues, "", quota.ClusterQueueName(team), &cq)
	if err != nil {
		return nil, requestError(backend.OpRead, kindClusterQueue, "", quota.ClusterQueueName(team), err)
	}
	if !found {
		return nil, nil
	}
	u := quota.UsageOf(cq)
	return &u, nil
}

// Claim creates the ClusterQueue with only its identity (labels and the owner annotation): a
// POST. A claim that succeeds is read back, so the cache knows the queue.
func (s *teamQuotas) Claim(ctx context.Context, team, owner string) (version string, err error) {
	if err := s.guard.refuse(ctx); err != nil {
		return "", err
	}
	name := quota.ClusterQueueName(team)
	claim := kueue.ClusterQueue{
		TypeMeta: kueue.TypeMeta(kueue.KindClusterQueue),
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{quota.LabelManagedBy: quota.ManagedByValue, quota.LabelQuotaAllocationID: team},
			Annotations: map[string]string{quota.AnnotationOwner: owner},
		},
	}
	if err := s.kube.Create(ctx, kueue.ClusterQueues, quota.FieldManager, &claim); err != nil {
		return "", requestError(backend.OpCreate, kindClusterQueue, "", name, err)
	}
	var created kueue.ClusterQueue
	if found, err := s.kube.Get(ctx, kueue.ClusterQueues, "", name, &created); err == nil && found {
		version = string(created.UID)
	}
	return version, nil
}

func (s *teamQuotas) WaitGone(ctx context.Context, team string) error {
	backend.Waiting(backend.Wait{Kind: backend.WaitQuotaGone, Team: team})
	return s.kube.WaitGone(ctx, kueue.ClusterQueues, "", quota.ClusterQueueName(team), pollInterval)
}

func (s *teamQuotas) Adopt(ctx context.Context, q *backend.Quota) error {
	return unmark(ctx, s.kube, kindClusterQueue, kueue.ClusterQueues, q.Record)
}

// Put ensures the flavors and server-side applies the ClusterQueue with the owner identity. A
// server-side apply needs no version: the field manager's ownership guards the fields.
func (s *teamQuotas) Put(ctx context.Context, rc quota.ResolvedConfig, owner string, _ *backend.Record) (written backend.Record, createdFlavors []string, err error) {
	if err := s.guard.refuse(ctx); err != nil {
		return written, nil, err
	}
	cq, err := s.render(rc, owner)
	if err != nil {
		return written, nil, backend.Problem{Summary: "Cannot render the ClusterQueue", Detail: err.Error()}
	}
	for _, e := range rc.Resources {
		created, err := s.ensureFlavor(ctx, e.Configured.InstanceType)
		if created {
			createdFlavors = append(createdFlavors, e.Configured.InstanceType)
		}
		if err != nil {
			return written, createdFlavors, err
		}
	}
	var applied kueue.ClusterQueue
	if err := s.kube.Apply(ctx, kueue.ClusterQueues, quota.FieldManager, &cq, &applied); err != nil {
		return written, createdFlavors, requestError(backend.OpApply, kindClusterQueue, "", cq.Name, err)
	}
	tflog.Info(ctx, "applied ClusterQueue", map[string]any{"name": cq.Name})
	for _, e := range rc.Resources {
		created, err := s.confirmFlavor(ctx, e.Configured.InstanceType)
		if created {
			createdFlavors = append(createdFlavors, e.Configured.InstanceType)
		}
		if err != nil {
			return RecordOf(kindClusterQueue, applied.ObjectMeta), createdFlavors, err
		}
	}
	if lost := quota.SpecDrift(cq.Spec, applied.Spec); len(lost) > 0 {
		return RecordOf(kindClusterQueue, applied.ObjectMeta), createdFlavors, notKept(cq.Name, lost)
	}
	return RecordOf(kindClusterQueue, cq.ObjectMeta), createdFlavors, nil
}

// notKept is the error for a ClusterQueue the API server stored without some of what was
// written. The one known cause: Kueue v0.15 stores v1beta1, and without Kueue's conversion
// webhook the API server converts by rewriting apiVersion, dropping fields renamed in v1beta2.
func notKept(name string, lost []string) error {
	return backend.Problem{Summary: "The cluster did not keep the ClusterQueue as written", Detail: fmt.Sprintf(
		"ClusterQueue %q was written, but the API server answered with %s. This happens when Kueue's CRDs "+
			"store kueue.x-k8s.io/v1beta1 (Kueue v0.15) and Kueue's conversion webhook is not registered, for "+
			"example when only the CRDs are installed: the API server then drops fields renamed in v1beta2, such as "+
			"cohortName. Run Kueue's controller manager with its webhooks, or upgrade Kueue to v0.16 or newer "+
			"(which stores v1beta2), then apply again.", name, strings.Join(lost, "; "))}
}

// render renders the queue with the owner annotation ("" leaves it out).
func (s *teamQuotas) render(rc quota.ResolvedConfig, owner string) (kueue.ClusterQueue, error) {
	cq, err := quota.RenderClusterQueue(s.catalog, rc)
	if err == nil && owner != "" {
		cq.Annotations[quota.AnnotationOwner] = owner
	}
	return cq, err
}

// ensureFlavor creates the ResourceFlavor of an instance type when it is missing. A flavor that
// exists, whoever made it, is left alone.
func (s *teamQuotas) ensureFlavor(ctx context.Context, instanceType string) (created bool, err error) {
	rf, found, err := read[kueue.ResourceFlavor](ctx, s.kube, kueue.ResourceFlavors, kindResourceFlavor, "", instanceType)
	if err != nil {
		return false, err
	}
	if found && rf.DeletionTimestamp == nil {
		return false, nil
	}
	if found {
		if kept, err := s.awaitDeletedFlavor(ctx, instanceType); err != nil || kept {
			return false, err
		}
	}
	want := quota.RenderResourceFlavor(instanceType)
	if err := s.kube.Apply(ctx, kueue.ResourceFlavors, quota.FieldManager, &want, nil); err != nil {
		// A server-side apply may have created it before its response was lost.
		return true, requestError(backend.OpCreate, kindResourceFlavor, "", instanceType, err)
	}
	tflog.Info(ctx, "created ResourceFlavor", map[string]any{"name": instanceType})
	return true, nil
}

// confirmFlavor makes sure a flavor the queue just written uses still exists. What this process
// read of it may be older than a delete by another run that found no queue using it: that
// run's second look, after its delete, sees this queue only if it was written by then, and
// Kueue keeps a flavor a queue uses only if the queue exists before the delete. A read that
// starts after the queue was written closes the gap: it finds the flavor, or this run gives it
// back.
func (s *teamQuotas) confirmFlavor(ctx context.Context, instanceType string) (created bool, err error) {
	var rf kueue.ResourceFlavor
	found, err := s.kube.GetNow(ctx, kueue.ResourceFlavors, "", instanceType, &rf)
	if err != nil {
		return false, requestError(backend.OpRead, kindResourceFlavor, "", instanceType, err)
	}
	if found && rf.DeletionTimestamp == nil {
		return false, nil
	}
	return s.ensureFlavor(ctx, instanceType)
}

// awaitDeletedFlavor handles a flavor being deleted, by the last quota that used it in this run
// or another. Kueue keeps a flavor a queue uses (its resource-in-use finalizer) and treats it as
// any other until the last of them goes: when a queue uses it, another run deleted it as unused
// while queues that use it were being written, and waiting would never end, so it is used as it
// is (kept) and goes with the last quota that uses it, as any flavor does. Otherwise it waits
// until the flavor is gone, for it to be created again.
func (s *teamQuotas) awaitDeletedFlavor(ctx context.Context, instanceType string) (kept bool, err error) {
	for {
		used, err := s.kube.FlavorInUse(ctx, instanceType)
		if err != nil {
			return false, err
		}
		if used {
			tflog.Info(ctx, "using a ResourceFlavor being deleted that queues still use", map[string]any{"name": instanceType})
			return true, nil
		}
		slice, cancel := context.WithTimeout(ctx, deletedFlavorSlice)
		err = s.kube.WaitGone(slice, kueue.ResourceFlavors, "", instanceType, pollInterval)
		cancel()
		if err == nil {
			return false, nil
		}
		if ctx.Err() != nil || !errors.Is(err, kube.ErrStillExists) {
			return false, backend.Problem{Summary: "ResourceFlavor is being deleted", Detail: fmt.Sprintf(
				"ResourceFlavor %q is being deleted and was not gone within the timeout: %s. Apply again once it is gone.", instanceType, err)}
		}
	}
}

// Drift compares the queue with what rc renders to, and reads each flavor it uses: a flavor
// deleted out of band leaves the queue unable to admit anything. One GET per flavor, as for
// every object the quota relies on.
func (s *teamQuotas) Drift(ctx context.Context, q *backend.Quota, rc quota.ResolvedConfig, owner string, compare bool) ([]string, error) {
	cq, err := native[kueue.ClusterQueue](q.Native, q.Record)
	if err != nil {
		return nil, err
	}
	var drift []string
	if want, err := s.render(rc, owner); err != nil {
		drift = append(drift, "the queue cannot be rendered from what was read: "+err.Error())
	} else if compare {
		drift = append(drift, quota.SpecDrift(want.Spec, cq.Spec)...)
		drift = append(drift, quota.MetadataDrift(want.ObjectMeta, cq.ObjectMeta)...)
	}
	for _, e := range rc.Resources {
		_, found, err := read[kueue.ResourceFlavor](ctx, s.kube, kueue.ResourceFlavors, kindResourceFlavor, "", e.Configured.InstanceType)
		if err != nil {
			return drift, err
		}
		if !found {
			drift = append(drift, fmt.Sprintf("ResourceFlavor %q is missing", e.Configured.InstanceType))
		}
	}
	return drift, nil
}

// RemoveUnusedInputs deletes the flavors of the given types that this provider created and
// that no ClusterQueue uses any more.
func (s *teamQuotas) RemoveUnusedInputs(ctx context.Context, instanceTypes []string) []backend.Problem {
	used, err := s.kube.FlavorsInUse(ctx, instanceTypes)
	if err != nil {
		return []backend.Problem{{Summary: "ResourceFlavors not cleaned up", Detail: err.Error()}}
	}
	var warnings []backend.Problem
	for _, t := range instanceTypes {
		if used[t] {
			continue
		}
		var rf kueue.ResourceFlavor
		found, err := s.kube.Get(ctx, kueue.ResourceFlavors, "", t, &rf)
		if err != nil || !found || rf.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
			continue
		}
		kept, err := s.deleteFlavor(ctx, rf)
		if err != nil {
			warnings = append(warnings, backend.Problem{Summary: "ResourceFlavor not deleted",
				Detail: fmt.Sprintf("ResourceFlavor %q is no longer used but could not be deleted: %s", t, err)})
			continue
		}
		// A concurrent create that found the flavor just before the delete may have written its
		// queue since: where Kueue runs, it keeps the flavor for that queue (kept); elsewhere the
		// flavor is gone, so look once more (one LIST) and give it back if a queue uses it.
		if used, err := s.kube.FlavorInUse(ctx, t); err == nil && used && !kept {
			if _, err := s.ensureFlavor(ctx, t); err != nil {
				warnings = append(warnings, backend.Problem{Summary: "ResourceFlavor not recreated", Detail: fmt.Sprintf(
					"ResourceFlavor %q was deleted as unused while another run wrote a ClusterQueue that uses it, and "+
						"recreating it failed: %s. Apply that quota again to recreate it.", t, err)})
			}
		}
	}
	return warnings
}

// deleteFlavor deletes the flavor, only the incarnation rf, and waits until it is gone or, where
// a queue written meanwhile uses it, until Kueue keeps it for that queue (kept).
func (s *teamQuotas) deleteFlavor(ctx context.Context, rf kueue.ResourceFlavor) (kept bool, err error) {
	slice, cancel := context.WithTimeout(ctx, deletedFlavorSlice)
	err = s.kube.DeleteAndWait(slice, kueue.ResourceFlavors, "", rf.Name, pollInterval, kube.OnlyUID(string(rf.UID)))
	cancel()
	if errors.Is(err, kube.ErrStillExists) && ctx.Err() == nil {
		return s.awaitDeletedFlavor(ctx, rf.Name)
	}
	return false, err
}

// Delete deletes the ClusterQueue, only the incarnation q read, and waits until it is gone.
func (s *teamQuotas) Delete(ctx context.Context, q *backend.Quota) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	if err := s.kube.DeleteAndWait(ctx, kueue.ClusterQueues, "", q.Name, pollInterval, kube.OnlyUID(q.Version)); err != nil {
		return requestError(backend.OpDelete, kindClusterQueue, "", q.Name, err)
	}
	return nil
}

// Ref is the team's ClusterQueue, named after the team.
func (s *teamQuotas) Ref(team, _ string) backend.ObjectRef {
	return backend.ObjectRef{Kind: kindClusterQueue, Name: quota.ClusterQueueName(team)}
}

// holders reads the ClusterQueue's finalizers and lists the workloads admitted to it (one LIST),
// as namespace/name with the Job (or other object) that owns each.
func (s *teamQuotas) holders(ctx context.Context, name string) (finalizers, workloads []string, listErr error) {
	var cq kueue.ClusterQueue
	if found, err := s.kube.Get(ctx, kueue.ClusterQueues, "", name, &cq); err == nil && found {
		finalizers = cq.Finalizers
	}
	dc, err := s.kube.Dynamic(ctx)
	if err != nil {
		return finalizers, nil, err
	}
	list, err := dc.Resource(kueue.Workloads).List(ctx, metav1.ListOptions{})
	if err != nil {
		return finalizers, nil, fmt.Errorf("listing workloads.kueue.x-k8s.io: %w", err)
	}
	for _, wl := range list.Items {
		admittedTo, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
		if admittedTo != name {
			continue
		}
		item := wl.GetNamespace() + "/" + wl.GetName()
		for _, ref := range wl.GetOwnerReferences() {
			item += fmt.Sprintf(" (%s %s/%s)", ref.Kind, wl.GetNamespace(), ref.Name)
			break
		}
		workloads = append(workloads, item)
	}
	sort.Strings(workloads)
	return finalizers, workloads, nil
}
