package localcluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// namespaceFinalizer stands in for kube-controller-manager's namespace controller, which
// does not run here: without it a deleted Namespace stays Terminating forever. For every
// Namespace that is being deleted and still carries the "kubernetes" finalizer, it deletes
// everything in it (grace period 0, there is no kubelet) and, once the namespace is empty,
// removes the finalizer so the API server deletes the Namespace.
//
// It watches Namespaces (an informer, which re-lists when a watch expires or fails) and
// queues the name of each one that is Terminating; a few workers empty and finalize them.
// A namespace that cannot be emptied yet (objects with finalizers of their own) is retried
// with an exponential backoff. Unlike the real controller it does not wait 5 s before
// acting on a deletion.
type namespaceFinalizer struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface
	// workers namespaces are emptied at a time, each listing parallelLists resources at a
	// time.
	workers, parallelLists int
	// Retry backoff of a namespace that could not be emptied or finalized.
	retryBase, retryMax time.Duration
	// Discovery is cached for up to discoveryMaxAge, so CRDs installed later are covered
	// after at most that long. When a namespace cannot be emptied the cache is refreshed
	// early, but not when it is younger than discoveryMinAge.
	discoveryMaxAge, discoveryMinAge time.Duration

	// A cluster-wide check that found no objects of a resource is trusted for namespaces
	// that were Terminating when it began; one that found some is repeated, for the
	// namespaces that need it, once it is recheckOccupied old.
	recheckOccupied time.Duration

	mu         sync.Mutex // guards the fields below; held while discovery runs
	resources  []schema.GroupVersionResource
	discovered time.Time
	stale      bool

	seen   sync.Map // namespace name -> seenAt
	checks sync.Map // schema.GroupVersionResource -> *resourceCheck
	// held counts, per namespace name, the syncs that left it Terminating (*atomic.Int64):
	// what a test waits on to know the finalizer has decided, not how long it has had.
	held sync.Map
}

// heldSyncs returns how many syncs have left the namespace name Terminating so far.
func (f *namespaceFinalizer) heldSyncs(name string) int64 {
	if n, ok := f.held.Load(name); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// seenAt is when a namespace was first seen Terminating.
type seenAt struct {
	uid types.UID // tells a namespace from a later one of the same name
	at  time.Time
}

// resourceCheck is the last cluster-wide check for objects of one resource.
type resourceCheck struct {
	mu      sync.Mutex
	done    bool          // a check has completed
	started time.Time     // when the last completed check began
	empty   bool          // whether it found no objects
	running chan struct{} // closed when the check in flight ends; nil when none
}

// namespaceFinalizerFor is a namespaceFinalizer with the clients of cfg.
func namespaceFinalizerFor(cfg *rest.Config) (*namespaceFinalizer, error) {
	cs, csErr := kubernetes.NewForConfig(cfg)
	dyn, dynErr := dynamic.NewForConfig(cfg)
	if err := errors.Join(csErr, dynErr); err != nil {
		return nil, err
	}
	return newNamespaceFinalizer(cs, dyn), nil
}

func newNamespaceFinalizer(cs kubernetes.Interface, dyn dynamic.Interface) *namespaceFinalizer {
	return &namespaceFinalizer{
		cs:              cs,
		dyn:             dyn,
		workers:         4,
		parallelLists:   4,
		retryBase:       50 * time.Millisecond,
		retryMax:        time.Second,
		discoveryMaxAge: 3 * time.Second,
		discoveryMinAge: 500 * time.Millisecond,
		recheckOccupied: time.Second,
	}
}

// run finalizes Terminating namespaces until ctx is cancelled and returns once every
// goroutine it started has ended.
func (f *namespaceFinalizer) run(ctx context.Context) {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](f.retryBase, f.retryMax),
		workqueue.TypedRateLimitingQueueConfig[string]{}, // unnamed: no metrics
	)
	defer queue.ShutDown()

	namespaces := f.cs.CoreV1().Namespaces()
	informer := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return namespaces.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return namespaces.Watch(ctx, o)
		},
	}, f.cs), &corev1.Namespace{}, 0, cache.Indexers{})
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && terminating(ns) {
			if s, ok := f.seen.Load(ns.Name); !ok || s.(seenAt).uid != ns.UID {
				f.seen.Store(ns.Name, seenAt{uid: ns.UID, at: time.Now()})
			}
			queue.Add(ns.Name)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { informer.RunWithContext(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		queue.ShutDown() // wakes the workers waiting in Get
	})
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return
	}
	store := informer.GetStore()
	for range f.workers {
		wg.Go(func() {
			for {
				name, shutdown := queue.Get()
				if shutdown {
					return
				}
				done, err := f.sync(ctx, store, name)
				if !done {
					n, _ := f.held.LoadOrStore(name, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				}
				switch {
				case ctx.Err() != nil:
				case err != nil || !done:
					queue.AddRateLimited(name)
				default:
					queue.Forget(name)
				}
				queue.Done(name)
			}
		})
	}
}

// terminating reports whether ns is being deleted and waits for this stand-in.
func terminating(ns *corev1.Namespace) bool {
	return ns.DeletionTimestamp != nil && slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

// sync empties and finalizes the namespace name (as the informer last saw it) and reports
// whether there is nothing left to do for it.
func (f *namespaceFinalizer) sync(ctx context.Context, store cache.Store, name string) (done bool, err error) {
	defer func() {
		if done {
			f.seen.Delete(name)
		}
	}()
	obj, exists, err := store.GetByKey(name)
	if err != nil || !exists {
		return err == nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok || !terminating(ns) {
		return true, nil
	}
	resources, err := f.namespacedResources(ctx)
	if err != nil {
		return false, err
	}
	since := time.Now()
	if s, ok := f.seen.Load(name); ok && s.(seenAt).uid == ns.UID {
		since = s.(seenAt).at
	}
	if empty, err := f.emptyNamespace(ctx, ns, since, resources); !empty || err != nil {
		f.invalidateDiscovery()
		return false, err
	}
	return f.finalize(ctx, ns)
}

// finalize removes the "kubernetes" finalizer from ns, reading the namespace again once
// should the informer's copy be out of date.
func (f *namespaceFinalizer) finalize(ctx context.Context, ns *corev1.Namespace) (bool, error) {
	namespaces := f.cs.CoreV1().Namespaces()
	for attempt := 0; ; attempt++ {
		ns = ns.DeepCopy()
		ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(s corev1.FinalizerName) bool {
			return s == corev1.FinalizerKubernetes
		})
		_, err := namespaces.Finalize(ctx, ns, metav1.UpdateOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			return true, nil
		}
		if !apierrors.IsConflict(err) || attempt > 0 {
			return false, err
		}
		if ns, err = namespaces.Get(ctx, ns.Name, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}
		if !terminating(ns) {
			return true, nil
		}
	}
}

// namespacedResources returns the namespaced resources (preferred versions) that can be
// listed and deleted, from a cache refreshed at most every discoveryMaxAge or, after
// invalidateDiscovery, once it is discoveryMinAge old.
func (f *namespaceFinalizer) namespacedResources(ctx context.Context) ([]schema.GroupVersionResource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resources != nil {
		age := time.Since(f.discovered)
		if age < f.discoveryMaxAge && (!f.stale || age < f.discoveryMinAge) {
			return f.resources, nil
		}
	}
	lists, err := discovery.ServerPreferredNamespacedResourcesWithContext(ctx, discovery.ToDiscoveryInterfaceWithContext(f.cs.Discovery()))
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	out := []schema.GroupVersionResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	f.resources, f.discovered, f.stale = out, time.Now(), false
	return out, nil
}

// invalidateDiscovery makes the next namespacedResources read discovery again, unless the
// cache is younger than discoveryMinAge.
func (f *namespaceFinalizer) invalidateDiscovery() {
	f.mu.Lock()
	f.stale = true
	f.mu.Unlock()
}

// emptyNamespace deletes what is left in ns, Terminating since before since, and reports
// whether nothing is left. Objects without finalizers are gone at once (grace period 0),
// so the resources that had any are listed a second time right away; an object that is
// still being finalized keeps the namespace.
//
// Nothing can be created in a Terminating namespace, which the first pass relies on
// twice: it skips the resources that a cluster-wide check begun after since found no
// objects of (one check serves every namespace deleted before it), and it reads the API
// server's watch cache as of ns's resourceVersion or later, which costs no etcd round
// trip. The second pass must see the deletions and reads the latest state.
func (f *namespaceFinalizer) emptyNamespace(ctx context.Context, ns *corev1.Namespace, since time.Time, resources []schema.GroupVersionResource) (bool, error) {
	deleted, pending, err := f.deleteContent(ctx, ns.Name, since, resources, metav1.ListOptions{
		ResourceVersion:      ns.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil || pending {
		return false, err
	}
	if len(deleted) == 0 {
		return true, nil
	}
	again, pending, err := f.deleteContent(ctx, ns.Name, time.Time{}, deleted, metav1.ListOptions{})
	return err == nil && !pending && len(again) == 0, err
}

// deleteContent lists resources in ns, a few at a time, and deletes every object found;
// unless since is zero, it skips those known to have no objects anywhere since then. It
// returns the resources in which it deleted objects and whether objects already being
// deleted (waiting for their finalizers) are left.
func (f *namespaceFinalizer) deleteContent(ctx context.Context, ns string, since time.Time, resources []schema.GroupVersionResource, opts metav1.ListOptions) (deleted []schema.GroupVersionResource, pending bool, err error) {
	type result struct {
		found, pending bool
		err            error
	}
	results := make([]result, len(resources))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(f.parallelLists, len(resources)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(resources); i = int(next.Add(1)) - 1 {
				if !since.IsZero() && f.emptyEverywhere(ctx, resources[i], since) {
					continue
				}
				r := &results[i]
				r.found, r.pending, r.err = f.deleteResource(ctx, ns, resources[i], opts)
			}
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.found {
			deleted = append(deleted, resources[i])
		}
		pending = pending || r.pending
		if err == nil {
			err = r.err
		}
	}
	return deleted, pending, err
}

// deleteResource lists the objects of one resource in ns and deletes those not being
// deleted yet. It reports whether it found any to delete and whether any are being deleted.
func (f *namespaceFinalizer) deleteResource(ctx context.Context, ns string, gvr schema.GroupVersionResource, opts metav1.ListOptions) (found, pending bool, err error) {
	ri := f.dyn.Resource(gvr).Namespace(ns)
	items, err := ri.List(ctx, opts)
	switch {
	case apierrors.IsNotFound(err):
		f.invalidateDiscovery() // the resource went away (its CRD was deleted)
		return false, false, nil
	case apierrors.IsMethodNotSupported(err):
		return false, false, nil
	case err != nil:
		return false, false, err
	}
	zero := int64(0)
	background := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background}
	for _, it := range items.Items {
		if it.GetDeletionTimestamp() != nil {
			pending = true
			continue
		}
		found = true
		if derr := ri.Delete(ctx, it.GetName(), del); derr != nil && !apierrors.IsNotFound(derr) && err == nil {
			err = derr
		}
	}
	return found, pending, err
}

// emptyEverywhere reports whether a cluster-wide check of gvr begun after since found no
// objects, running such a check when none has (one at a time per resource, shared by the
// workers), unless the last one found objects less than recheckOccupied ago.
func (f *namespaceFinalizer) emptyEverywhere(ctx context.Context, gvr schema.GroupVersionResource, since time.Time) bool {
	v, _ := f.checks.LoadOrStore(gvr, &resourceCheck{})
	c := v.(*resourceCheck)
	c.mu.Lock()
	for {
		switch {
		case c.done && c.started.After(since):
			empty := c.empty
			c.mu.Unlock()
			return empty
		case c.running != nil:
			running := c.running
			c.mu.Unlock()
			select {
			case <-running:
			case <-ctx.Done():
				return false
			}
			c.mu.Lock()
			continue
		case c.done && !c.empty && time.Since(c.started) < f.recheckOccupied:
			c.mu.Unlock()
			return false
		}
		running := make(chan struct{})
		c.running = running
		started := time.Now()
		c.mu.Unlock()
		list, err := f.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		c.mu.Lock()
		c.running = nil
		close(running)
		if err != nil {
			c.mu.Unlock()
			return false
		}
		c.done, c.started, c.empty = true, started, len(list.Items) == 0
	}
}
