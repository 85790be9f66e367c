package kueuebackend

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const (
	kindNamespace  = "Namespace"
	kindLocalQueue = "LocalQueue"
)

// teamNamespaces stores a team's namespace as the Namespace hyperpod-ns-<team> and the
// LocalQueue in it that feeds the team's ClusterQueue. With addonQueues the LocalQueue is
// another's (the task-governance add-on creates it with the team's quota): it is read, never
// written, and not compared.
type teamNamespaces struct {
	kube        *kube.Client
	addonQueues bool
	guard       addonGuard
}

// Namespaces is the team namespaces' concerns, answered by one store.
type Namespaces struct {
	backend.TeamNamespaces
	backend.NamespaceDetails
	backend.NamespaceList
}

// NamespacesBesideAddon is the team namespaces of a cluster whose LocalQueues the
// task-governance add-on creates: only the Namespace is written.
func NamespacesBesideAddon(client *kube.Client) Namespaces {
	ns := &teamNamespaces{kube: client, addonQueues: true, guard: addonGuard{off: true}}
	return Namespaces{TeamNamespaces: ns, NamespaceDetails: ns, NamespaceList: ns}
}

// Get reads the Namespace and, when it exists, the LocalQueue: one GET each, no list.
func (s *teamNamespaces) Get(ctx context.Context, team string) (*backend.TeamNamespace, error) {
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)
	ns, found, err := read[corev1.Namespace](ctx, s.kube, kube.Namespaces, kindNamespace, "", nsName)
	if err != nil || !found {
		return nil, err
	}
	lq, found, err := read[kueue.LocalQueue](ctx, s.kube, kueue.LocalQueues, kindLocalQueue, nsName, lqName)
	if err != nil {
		return nil, err
	}
	var q *kueue.LocalQueue
	if found {
		q = &lq
	}
	return s.namespaceOf(team, ns, q), nil
}

// teamNamespaceOf is what the provider records of a team's Namespace and its LocalQueue (nil
// when missing).
func teamNamespaceOf(ns corev1.Namespace, lq *kueue.LocalQueue) *backend.TeamNamespace {
	out := &backend.TeamNamespace{
		Record: RecordOf(kindNamespace, ns.ObjectMeta),
		Labels: ns.Labels, Annotations: ns.Annotations,
		Native: ns,
	}
	if lq != nil {
		out.Queue = &backend.TeamQueue{Record: RecordOf(kindLocalQueue, lq.ObjectMeta), ClusterQueue: lq.Spec.ClusterQueue, Native: *lq}
	}
	return out
}

// namespaceOf is teamNamespaceOf with the names of the team's queue the namespace records:
// its LocalQueue's, or, beside the add-on, the names the add-on gives the team's queues.
func (s *teamNamespaces) namespaceOf(team string, ns corev1.Namespace, lq *kueue.LocalQueue) *backend.TeamNamespace {
	out := teamNamespaceOf(ns, lq)
	switch q := out.Queue; {
	case s.addonQueues:
		out.LocalQueueName, out.ClusterQueueName = quota.LocalQueueName(team), quota.ClusterQueueName(team)
	case q != nil && !q.Terminating:
		out.LocalQueueName, out.ClusterQueueName = q.Name, q.ClusterQueue
	}
	return out
}

// Claim creates the Namespace with only its identity (the provider's labels and the owner
// annotation) with a POST.
func (s *teamNamespaces) Claim(ctx context.Context, team, owner string) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	claim := quota.RenderNamespace(team, nil, nil, owner)
	if err := s.kube.Create(ctx, kube.Namespaces, quota.FieldManager, &claim); err != nil {
		return requestError(backend.OpCreate, kindNamespace, "", claim.Name, err)
	}
	return nil
}

func (s *teamNamespaces) WaitGone(ctx context.Context, team string) error {
	backend.Waiting(backend.Wait{Kind: backend.WaitNamespaceGone, Team: team})
	return s.kube.WaitGone(ctx, kube.Namespaces, "", quota.NamespaceName(team), pollInterval)
}

func (s *teamNamespaces) Adopt(ctx context.Context, ns *backend.TeamNamespace) error {
	return unmark(ctx, s.kube, kindNamespace, kube.Namespaces, ns.Record)
}

// Put server-side applies the Namespace and the LocalQueue. A LocalQueue that is terminating or
// points at another ClusterQueue (spec.clusterQueue is immutable) is deleted and recreated.
func (s *teamNamespaces) Put(ctx context.Context, team string, labels, annotations map[string]string, owner string, current *backend.TeamNamespace) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	ns := quota.RenderNamespace(team, labels, annotations, owner)
	if err := s.kube.Apply(ctx, kube.Namespaces, quota.FieldManager, &ns, nil); err != nil {
		return requestError(backend.OpApply, kindNamespace, "", ns.Name, err)
	}
	if s.addonQueues {
		return nil
	}
	lq := quota.RenderLocalQueue(team, owner)
	if current != nil && mustRecreate(current.Queue, lq.Spec.ClusterQueue) {
		tflog.Info(ctx, "recreating LocalQueue: spec.clusterQueue is immutable", map[string]any{
			"local_queue": lq.Name, "cluster_queue_found": current.Queue.ClusterQueue, "cluster_queue_wanted": lq.Spec.ClusterQueue,
		})
		if err := s.kube.DeleteAndWait(ctx, kueue.LocalQueues, lq.Namespace, lq.Name, pollInterval); err != nil {
			return requestError(backend.OpDelete, kindLocalQueue, lq.Namespace, lq.Name, err)
		}
	}
	if err := s.kube.Apply(ctx, kueue.LocalQueues, quota.FieldManager, &lq, nil); err != nil {
		return requestError(backend.OpApply, kindLocalQueue, lq.Namespace, lq.Name, err)
	}
	return nil
}

// mustRecreate reports whether an existing LocalQueue (nil when missing) has to be deleted
// before the one feeding clusterQueue can be applied.
func mustRecreate(q *backend.TeamQueue, clusterQueue string) bool {
	return q != nil && (q.Terminating || q.ClusterQueue != clusterQueue)
}

// Delete deletes the LocalQueue, then the Namespace, and waits until each is gone.
func (s *teamNamespaces) Delete(ctx context.Context, team string) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)
	if !s.addonQueues {
		if err := s.kube.DeleteAndWait(ctx, kueue.LocalQueues, nsName, lqName, pollInterval); err != nil {
			return requestError(backend.OpDelete, kindLocalQueue, nsName, lqName, err)
		}
	}
	if err := s.kube.DeleteAndWait(ctx, kube.Namespaces, "", nsName, pollInterval); err != nil {
		return requestError(backend.OpDelete, kindNamespace, "", nsName, err)
	}
	return nil
}

// Work counts the Pods that have not finished and the Kueue Workloads in the namespace: one
// LIST each. Completed Pods (Succeeded, Failed) are not work in progress. A cluster without
// the Workload CRD has no Workloads.
func (s *teamNamespaces) Work(ctx context.Context, team string) (pods, workloads int, err error) {
	namespace := quota.NamespaceName(team)
	cs, err := s.kube.Clientset(ctx)
	if err != nil {
		return 0, 0, err
	}
	podList, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "status.phase!=Succeeded,status.phase!=Failed",
	})
	if err != nil {
		return 0, 0, fmt.Errorf("listing Pods in namespace %q failed: %w. The provider's credentials need list "+
			"permission on pods", namespace, err)
	}
	dc, err := s.kube.Dynamic(ctx)
	if err != nil {
		return 0, 0, err
	}
	wlList, err := dc.Resource(kueue.Workloads).Namespace(namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return len(podList.Items), 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("listing %s Workloads in namespace %q failed: %w. The provider's credentials need list "+
			"permission on workloads.kueue.x-k8s.io", kueue.GroupVersion, namespace, err)
	}
	return len(podList.Items), len(wlList.Items), nil
}

func (s *teamNamespaces) Drift(ns *backend.TeamNamespace, team, owner string) ([]string, error) {
	n, err := native[corev1.Namespace](ns.Native, ns.Record)
	if err != nil {
		return nil, err
	}
	if s.addonQueues {
		return quota.NamespaceDrift(team, owner, n.ObjectMeta), nil
	}
	var lq *kueue.LocalQueue
	if ns.Queue != nil {
		q, err := native[kueue.LocalQueue](ns.Queue.Native, ns.Queue.Record)
		if err != nil {
			return nil, err
		}
		lq = &q
	}
	return quota.TeamNamespaceDrift(team, owner, n.ObjectMeta, lq), nil
}

func (s *teamNamespaces) Imported(ns *backend.TeamNamespace) (labels, annotations map[string]string, err error) {
	n, err := native[corev1.Namespace](ns.Native, ns.Record)
	if err != nil {
		return nil, nil, err
	}
	labels, annotations = quota.ImportedNamespaceMetadata(n.ObjectMeta)
	return labels, annotations, nil
}
