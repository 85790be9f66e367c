package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// KueueObjects is what the admission preview reads of a cluster: the Kueue objects and
// Workloads of the whole cluster, the Namespaces' labels, the manager's Deployment and its
// configuration, and the reads that were refused.
type KueueObjects struct {
	ClusterQueues           []kueue.ClusterQueue
	LocalQueues             []kueue.LocalQueue
	ResourceFlavors         []kueue.ResourceFlavor
	WorkloadPriorityClasses []kueue.WorkloadPriorityClass
	Cohorts                 []kueue.Cohort
	Workloads               []kueue.Workload
	// NamespaceLabels are the labels of the cluster's namespaces by name; nil when they could
	// not be read.
	NamespaceLabels map[string]map[string]string
	// ManagerContainers are the containers of the manager's Deployment; ManagerFound is false
	// when it could not be read.
	ManagerContainers []ManagerContainer
	ManagerFound      bool
	// ManagerConfig is the manager's configuration (its ConfigMap's kueue.ManagerConfigKey);
	// ConfigFound is false when it could not be read.
	ManagerConfig string
	ConfigFound   bool
	// Refused are the reads the cluster refused that the preview can do without: it is made
	// without what they would have told.
	Refused []RefusedRead
}

// ManagerContainer is a container of the manager's Deployment: its image and arguments.
type ManagerContainer struct {
	Image string
	Args  []string
}

// RefusedRead is a request the API server refused (403 Forbidden): the RBAC verb and resource
// the credentials lack.
type RefusedRead struct {
	Verb string
	GVR  schema.GroupVersionResource
	// Namespace and Name narrow a GET to one object.
	Namespace, Name string
}

// String is the permission as an RBAC rule names it: "list workloads.kueue.x-k8s.io",
// "get deployments.apps kueue-system/kueue-controller-manager".
func (r RefusedRead) String() string {
	s := r.Verb + " " + r.GVR.Resource
	if r.GVR.Group != "" {
		s += "." + r.GVR.Group
	}
	if r.Name != "" {
		s += " " + r.Namespace + "/" + r.Name
	}
	return s
}

// ReadsRefusedError is a snapshot that cannot be made because the cluster refused reads it needs.
type ReadsRefusedError struct {
	Reads []RefusedRead
}

func (e *ReadsRefusedError) Error() string {
	reads := make([]string, len(e.Reads))
	for i, r := range e.Reads {
		reads[i] = r.String()
	}
	return "the cluster refused " + strings.Join(reads, ", ")
}

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// namespaceLabels is the part of a Namespace the preview reads.
type namespaceLabels struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

// ListKueue lists, once each and each request sent once, the ClusterQueues, LocalQueues,
// ResourceFlavors, WorkloadPriorityClasses and Workloads of the whole cluster (the reads the
// preview needs), and the Cohorts, the Namespaces' labels, the manager's Deployment and its
// configuration (the reads it can do without: one that is refused is reported in Refused, one
// that fails otherwise leaves what it would have told unknown).
func ListKueue(ctx context.Context, c *Client) (KueueObjects, error) {
	r := &kueueReads{}
	if err := r.run(WithoutRetries(ctx), c); err != nil {
		return KueueObjects{}, err
	}
	return r.objects(), nil
}

// kueueReads are the admission preview's reads and what they found.
type kueueReads struct {
	s                         KueueObjects
	namespaces                []namespaceLabels
	manager                   appsv1.Deployment
	config                    corev1.ConfigMap
	managerFound, configFound bool
	// failed are the optional reads that failed: what they would have told is not known.
	failed map[schema.GroupVersionResource]bool
}

// kueueRead is one request of the preview: the permission it needs, whether the preview can do
// without it, and the request.
type kueueRead struct {
	read     RefusedRead
	optional bool
	do       func() error
}

// run sends the first read, then every other at once. A refused read that the preview needs fails the snapshot with
// every other refused one; a refused optional read is reported beside it.
func (r *kueueReads) run(ctx context.Context, c *Client) error {
	s := &r.s
	list := func(gvr schema.GroupVersionResource, out func() error) kueueRead {
		return kueueRead{RefusedRead{Verb: "list", GVR: gvr}, false, out}
	}
	get := func(gvr schema.GroupVersionResource, name string, found *bool, out any) kueueRead {
		return kueueRead{RefusedRead{Verb: "get", GVR: gvr, Namespace: kueue.ManagerNamespace, Name: name}, true,
			func() (err error) {
				*found, err = c.Get(ctx, gvr, kueue.ManagerNamespace, name, out)
				return err
			}}
	}
	reads := []kueueRead{
		list(kueue.ClusterQueues, func() error { return listLeanPrimed(ctx, c, kueue.ClusterQueues, &s.ClusterQueues) }),
		list(kueue.LocalQueues, func() error { return listLeanPrimed(ctx, c, kueue.LocalQueues, &s.LocalQueues) }),
		list(kueue.ResourceFlavors, func() error { return listLean(ctx, c, kueue.ResourceFlavors, &s.ResourceFlavors) }),
		list(kueue.WorkloadPriorityClasses, func() error {
			return listLean(ctx, c, kueue.WorkloadPriorityClasses, &s.WorkloadPriorityClasses)
		}),
		list(kueue.Workloads, func() error { return listLean(ctx, c, kueue.Workloads, &s.Workloads) }),
		{RefusedRead{Verb: "list", GVR: kueue.Cohorts}, true, func() error {
			// A Kueue that does not serve Cohorts has none.
			if err := listLean(ctx, c, kueue.Cohorts, &s.Cohorts); !apierrors.IsNotFound(err) {
				return err
			}
			return nil
		}},
		{RefusedRead{Verb: "list", GVR: namespaces}, true, func() error { return List(ctx, c, namespaces, &r.namespaces) }},
		get(deployments, kueue.ManagerDeployment, &r.managerFound, &r.manager),
		get(configMaps, kueue.ManagerConfigMap, &r.configFound, &r.config),
	}
	errs := make([]error, len(reads))
	// The first read goes alone: a cluster that cannot be reached, or credentials that cannot be
	// had (an exec plugin that fails, each request running it again), fail it, and the others
	// are not sent to fail the same way one after another.
	if errs[0] = reads[0].do(); errs[0] != nil && !apierrors.IsForbidden(errs[0]) {
		return errs[0]
	}
	var wg sync.WaitGroup
	for i, read := range reads[1:] {
		wg.Go(func() { errs[i+1] = read.do() })
	}
	wg.Wait()
	var refused []RefusedRead
	r.failed = map[schema.GroupVersionResource]bool{}
	for i, err := range errs {
		switch {
		case err == nil:
		case apierrors.IsForbidden(err) && reads[i].optional:
			s.Refused = append(s.Refused, reads[i].read)
			r.failed[reads[i].read.GVR] = true
		case apierrors.IsForbidden(err):
			refused = append(refused, reads[i].read)
		case reads[i].optional:
			// What it would have told is not known: the preview must not fail for it.
			r.failed[reads[i].read.GVR] = true
		}
	}
	if len(refused) > 0 {
		return &ReadsRefusedError{Reads: refused}
	}
	for i, err := range errs {
		if err != nil && !reads[i].optional {
			return err
		}
	}
	return nil
}

// listLean lists every object of gvr into *out as List does, each made lean.
func listLean[T any, PT interface {
	*T
	SetManagedFields([]metav1.ManagedFieldsEntry)
}](ctx context.Context, c *Client, gvr schema.GroupVersionResource, out *[]T) error {
	if err := c.init(ctx); err != nil {
		return err
	}
	*out = nil
	return pagesOf(ctx, c, gvr, "", true, func(page []T) error {
		for i := range page {
			lean(PT(&page[i]))
		}
		*out = append(*out, page...)
		return nil
	})
}

// listLeanPrimed lists every object of gvr into *out as listLean does, but takes from the read
// cache the objects that this run's priming LIST of gvr read (see primedObjects) and lists only
// those it left out: a plan that refreshed a thousand teams has read their queues once already,
// and a second LIST of them would cost the API server and this process as much again, while the
// plan waits. Without such a LIST it lists every object.
func listLeanPrimed[T any, PT interface {
	*T
	SetManagedFields([]metav1.ManagedFieldsEntry)
	GetName() string
	GetNamespace() string
}](ctx context.Context, c *Client, gvr schema.GroupVersionResource, out *[]T) error {
	if err := c.init(ctx); err != nil {
		return err
	}
	cached, others, ok := c.primedObjects(ctx, gvr)
	if !ok {
		return listLean[T, PT](ctx, c, gvr, out)
	}
	*out = nil
	listed := map[string]bool{}
	err := pagesOf(ctx, c, gvr, others, true, func(page []T) error {
		for i := range page {
			lean(PT(&page[i]))
			listed[PT(&page[i]).GetNamespace()+"/"+PT(&page[i]).GetName()] = true
		}
		*out = append(*out, page...)
		return nil
	})
	if err != nil {
		return err
	}
	for _, raw := range cached {
		var obj T
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("decoding a cached %s: %w", gvr.Resource, err)
		}
		// An object listed now is newer than the cache's copy (its label went since).
		if !listed[PT(&obj).GetNamespace()+"/"+PT(&obj).GetName()] {
			lean(PT(&obj))
			*out = append(*out, obj)
		}
	}
	// In the order a LIST gives: by namespace, then name.
	slices.SortFunc(*out, func(a, b T) int {
		return cmp.Or(cmp.Compare(PT(&a).GetNamespace(), PT(&b).GetNamespace()), cmp.Compare(PT(&a).GetName(), PT(&b).GetName()))
	})
	return nil
}

// lean drops from obj what the preview does not model. The snapshot of a large cluster is held
// for the whole plan: of a thousand teams' Workloads and ClusterQueues, as decoded, about 35 MB,
// and with that much more live heap a provider near its soft memory limit spent more of the
// plan collecting garbage than simulating. Of every object it drops the managed fields, most
// of its size as served; of a Workload and a ClusterQueue, see leanWorkload and
// leanClusterQueue.
func lean(obj interface {
	SetManagedFields([]metav1.ManagedFieldsEntry)
}) {
	obj.SetManagedFields(nil)
	switch o := obj.(type) {
	case *kueue.Workload:
		leanWorkload(o)
	case *kueue.ClusterQueue:
		// Kueue's usage figures: the preview counts usage from the Workloads. Whether the status
		// reports fair sharing tells the snapshot that the manager runs with it.
		if o.Status != nil {
			o.Status = &kueue.ClusterQueueStatus{FairSharing: o.Status.FairSharing}
		}
		o.Labels, o.Annotations = nil, nil
	}
}

// leanWorkload keeps of a Workload what admission reads: its name, namespace, UID, creation and
// deletion, its conditions without their messages, and of each pod set's pod template what
// decides the pod's requests and the nodes it may run on (containers' and init containers'
// names, resources and restart policies, the overhead, the node selector and the affinity).
func leanWorkload(w *kueue.Workload) {
	w.ObjectMeta = metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace, UID: w.UID,
		CreationTimestamp: w.CreationTimestamp, DeletionTimestamp: w.DeletionTimestamp}
	for i := range w.Status.Conditions {
		w.Status.Conditions[i].Message = ""
	}
	for i := range w.Spec.PodSets {
		t := &w.Spec.PodSets[i].Template
		t.ObjectMeta = metav1.ObjectMeta{}
		t.Spec = corev1.PodSpec{Containers: leanContainers(t.Spec.Containers), InitContainers: leanContainers(t.Spec.InitContainers),
			Overhead: t.Spec.Overhead, NodeSelector: t.Spec.NodeSelector, Affinity: t.Spec.Affinity}
	}
}

// leanContainers are containers with only their names, resources and restart policies.
func leanContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
	}
	return out
}

// objects is what the reads found.
func (r *kueueReads) objects() KueueObjects {
	s := r.s
	if !r.failed[namespaces] {
		s.NamespaceLabels = make(map[string]map[string]string, len(r.namespaces))
		for _, ns := range r.namespaces {
			s.NamespaceLabels[ns.Metadata.Name] = ns.Metadata.Labels
		}
	}
	if s.ManagerFound = r.managerFound && !r.failed[deployments]; s.ManagerFound {
		for _, c := range r.manager.Spec.Template.Spec.Containers {
			s.ManagerContainers = append(s.ManagerContainers, ManagerContainer{Image: c.Image, Args: c.Args})
		}
	}
	if s.ConfigFound = r.configFound && !r.failed[configMaps]; s.ConfigFound {
		s.ManagerConfig = r.config.Data[kueue.ManagerConfigKey]
	}
	return s
}
