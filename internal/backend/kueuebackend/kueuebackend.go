// Package kueuebackend stores quotas as Kueue objects through Kubernetes: a team's quota is its
// ClusterQueue (with a ResourceFlavor per instance type), a priority class a
// WorkloadPriorityClass, a team's namespace a Namespace with a LocalQueue in it.
package kueuebackend

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// pollInterval is how often a delete or a wait for a deletion looks again.
const pollInterval = 500 * time.Millisecond

// deletedFlavorSlice is how long a create waits for a deleted ResourceFlavor to go before it
// looks again whether a queue uses it (awaitDeletedFlavor).
const deletedFlavorSlice = 10 * time.Second

// New returns the Kueue backend over client, resolving instance types with cat. Its writes are
// refused on a cluster that runs HyperPod's task-governance add-on.
func New(client *kube.Client, cat *catalog.Catalog) backend.Backend {
	return newBackend(client, cat, addonGuard{kube: client})
}

// AddonStore is the Kueue backend as HyperPod's task-governance add-on writes, with the priority
// classes it writes one by one.
type AddonStore struct {
	backend.Backend
	PriorityClasses *PriorityClasses
}

// AsAddon is the Kueue backend as HyperPod's task-governance add-on writes: nothing is refused.
// The test harness's stand-in for the add-on writes through it.
func AsAddon(client *kube.Client, cat *catalog.Catalog) AddonStore {
	guard := addonGuard{off: true}
	return AddonStore{Backend: newBackend(client, cat, guard), PriorityClasses: &PriorityClasses{kube: client, guard: guard}}
}

func newBackend(client *kube.Client, cat *catalog.Catalog, guard addonGuard) backend.Backend {
	quotas := &teamQuotas{kube: client, catalog: cat, guard: guard}
	namespaces := &teamNamespaces{kube: client, guard: guard}
	return backend.Backend{
		Quotas:       quotas,
		QuotaDetails: quotas,
		Scheduler:    schedulerPolicy{classes: &PriorityClasses{kube: client, guard: guard}},
		Capacity:     &clusterCapacity{kube: client},
		Usage:        quotas,
		Kueue:        kueueState{kube: client, grant: GrantPreviewReads},
		Traits: backend.Traits{StoreLimits: quota.StoreLimits{Unsupported: map[string]string{
			"fair_share": "on a cluster that runs its own Kueue, fair sharing is Kueue's configuration " +
				"(fairSharing in the Kueue manager's config), not an object this provider writes",
			"idle_resource_sharing": "on a cluster that runs its own Kueue, lending idle capacity is set per quota " +
				"(resource_sharing), not for the whole cluster",
		}}},
		Claims:           &claims{kube: client},
		Namespaces:       namespaces,
		NamespaceDetails: namespaces,
		Words:            words{quotas: quotas},
		Ready:            readiness{},

		QuotaList:     quotas,
		NamespaceList: namespaces,
	}
}

// kueueState lists the cluster's Kueue objects and Workloads, and places quotas as the store
// writes them; grant says what grants the reads.
type kueueState struct {
	queuePlacement
	kube  *kube.Client
	grant string
}

// GrantPreviewReads says what grants the admission preview's reads on a cluster that runs its
// own Kueue.
const GrantPreviewReads = "The ClusterRole hyperpod-provider in examples/rbac/clusterrole.yaml grants every read " +
	"the provider makes: apply it and bind it to the identity the provider authenticates as, or turn previews off " +
	"with admission_preview = false in the provider block (or HYPERPOD_ADMISSION_PREVIEW=false). A job that only " +
	"plans, such as a pull request's review, needs only the read-only ClusterRole hyperpod-plan-review in " +
	"examples/rbac/plan-review-clusterrole.yaml."

// KueueStateBesideAddon is the Kueue reads of client, on a cluster whose Kueue objects the
// task-governance add-on writes (quotas placed as PlacementBesideAddon places them); refusals
// name grant as what grants the reads.
func KueueStateBesideAddon(client *kube.Client, grant string) backend.KueueState {
	return kueueState{queuePlacement: queuePlacement{addonQueues: true}, kube: client, grant: grant}
}

func (k kueueState) Snapshot(ctx context.Context) (backend.KueueSnapshot, error) {
	o, err := kube.ListKueue(ctx, k.kube)
	if refused, ok := errors.AsType[*kube.ReadsRefusedError](err); ok {
		return backend.KueueSnapshot{}, k.refused(refused.Reads)
	}
	if err != nil {
		return backend.KueueSnapshot{}, err
	}
	s := snapshotOf(o)
	out := backend.KueueSnapshot{Cluster: s.Cluster, Version: s.versionText()}
	if len(o.Refused) > 0 {
		out.Refused = k.refused(o.Refused)
	}
	return out, nil
}

func (k kueueState) refused(reads []kube.RefusedRead) *backend.ReadsRefused {
	r := &backend.ReadsRefused{Grant: k.grant}
	for _, read := range reads {
		r.Reads = append(r.Reads, read.String())
	}
	return r
}

// RecordOf is what the provider records on a Kubernetes object besides its content.
func RecordOf(kind string, meta metav1.ObjectMeta) backend.Record {
	r := backend.Record{
		Kind: kind, Name: meta.Name, Version: string(meta.UID),
		Terminating: meta.DeletionTimestamp != nil, HeldBy: meta.Finalizers,
		Owner: backend.Ownership{
			Recorded:    meta.Annotations[quota.AnnotationOwner],
			Description: quota.DescribeOwner(meta),
			Owns:        func(owner string) bool { return quota.Owns(meta, owner) },
		},
	}
	if quota.Unconfirmed(meta) {
		r.Unconfirmed = meta.Annotations[quota.AnnotationUnconfirmed]
	}
	if r.Terminating {
		r.Holding = fmt.Sprintf("Kubernetes keeps it while finalizers %v remain", meta.Finalizers)
		if kind == kindClusterQueue {
			r.Holding += " (Kueue keeps a queue while admitted workloads still use it)"
		}
	}
	return r
}

// native is the Kubernetes object T a record r carries as its Native. A record another store
// read (or of another kind) is an error rather than a panic: it names what was handed over.
func native[T any](v any, r backend.Record) (T, error) {
	obj, ok := v.(T)
	if !ok {
		return obj, backend.Problem{Summary: "Record of another store", Detail: fmt.Sprintf(
			"%s %q was handed to the Kubernetes backend as a %T, which it does not hold (it reads %T). This is a bug in "+
				"the provider; please report it.", r.Kind, r.Name, v, obj)}
	}
	return obj, nil
}

// read GETs the object name (in namespace, "" for a cluster-scoped one) into T; a failed
// request is a requestError.
func read[T any](ctx context.Context, c *kube.Client, gvr schema.GroupVersionResource, kind, namespace, name string) (obj T, found bool, err error) {
	found, err = c.Get(ctx, gvr, namespace, name, &obj)
	if err != nil {
		return obj, false, requestError(backend.OpRead, kind, namespace, name, err)
	}
	return obj, found, nil
}

// requestError wraps a failed request on one object with what it means, worded.
func requestError(op backend.Op, kind, namespace, name string, err error) error {
	e := &backend.RequestError{Op: op, Kind: kind, Namespace: namespace, Name: name, Err: err,
		Problem: wordRequest(op, kind, namespace, name, err)}
	switch {
	case errors.Is(err, kube.ErrAlreadyExists):
		e.Outcome = backend.ErrExists
	case errors.Is(err, kube.ErrCreateOutcomeUnknown):
		e.Outcome = backend.ErrOutcomeUnknown
		e.Problem.Detail += " " + wordOutcomeUnknown(backend.ObjectRef{Kind: kind, Namespace: namespace, Name: name})
	case errors.Is(err, kube.ErrStillExists):
		e.Outcome = backend.ErrStillExists
	}
	return e
}

// unmark removes the mark of an interrupted run from an object.
func unmark(ctx context.Context, k *kube.Client, kind string, gvr schema.GroupVersionResource, r backend.Record) error {
	err := k.Annotate(ctx, gvr, "", r.Name, r.Version, quota.FieldManager, map[string]*string{quota.AnnotationUnconfirmed: nil})
	if err != nil {
		return unmarkError(kind, r.Name, err)
	}
	return nil
}

// unmarkError is a failed removal of the mark of an interrupted run.
func unmarkError(kind, name string, err error) error {
	e := requestError(backend.OpApply, kind, "", name, err).(*backend.RequestError)
	e.Problem = wordAdopt(kind, name, err)
	return e
}

type clusterCapacity struct{ kube *kube.Client }

// Nodes lists the Nodes labelled with the instance type: one LIST.
func (c *clusterCapacity) Nodes(ctx context.Context, instanceType string) ([]capacity.Node, error) {
	cs, err := c.kube.Clientset(ctx)
	if err != nil {
		return nil, backend.Problem{Summary: "Cannot configure the Kubernetes client", Detail: err.Error()}
	}
	selector := labels.SelectorFromSet(labels.Set{capacity.InstanceTypeLabel: instanceType}).String()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, backend.Problem{Summary: "Cannot list Nodes", Detail: fmt.Sprintf(
			"Listing Nodes labelled %s failed: %s. The provider's credentials need list permission on nodes.", selector, err)}
	}
	out := make([]capacity.Node, len(nodes.Items))
	for i, n := range nodes.Items {
		out[i] = capacity.NodeOf(n)
	}
	return out, nil
}

// Allocations reads every ClusterQueue in one LIST (the data source sums their quotas only;
// refreshing a resource never lists) and takes the nominal quotas of the instance type's flavor.
func (c *clusterCapacity) Allocations(ctx context.Context, instanceType string) ([]capacity.Allocation, error) {
	dc, err := c.kube.Dynamic(ctx)
	if err != nil {
		return nil, err
	}
	list, err := dc.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) { // a LIST 404s only when the API is not served
		return nil, fmt.Errorf("the cluster does not serve %s ClusterQueues: install Kueue %s or newer before using this provider", kueue.GroupVersion, kube.MinKueue)
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s ClusterQueues failed: %w. The provider's credentials need list permission on clusterqueues.kueue.x-k8s.io", kueue.GroupVersion, err)
	}
	queues := make([]kueue.ClusterQueue, 0, len(list.Items))
	for _, item := range list.Items {
		var cq kueue.ClusterQueue
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &cq); err != nil {
			return nil, fmt.Errorf("ClusterQueue %q cannot be read: %w", item.GetName(), err)
		}
		queues = append(queues, cq)
	}
	return capacity.AllocationsOf(queues, instanceType), nil
}
