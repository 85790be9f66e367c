package localcluster

import (
	"context"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestNamespaceDeletion deletes namespaces of the shared control plane through the stand-in
// for the namespace controller.
func TestNamespaceDeletion(t *testing.T) {
	ctx := t.Context()
	c := sharedCluster(t)
	cs := c.Clientset
	dyn, err := dynamic.NewForConfig(c.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("empty namespace", func(t *testing.T) {
		// How fast is for `make bench`; here only that each one goes.
		for i := range 5 {
			name := fmt.Sprintf("nsdel-empty-%d", i)
			createNamespace(t, cs, name, nil)
			deleteAndWait(t, cs, name, time.Minute)
		}
	})

	t.Run("50 namespaces at once", func(t *testing.T) {
		const n = 50
		labels := map[string]string{"nsdel": "many"}
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("nsdel-many-%02d", i)
			createNamespace(t, cs, names[i], labels)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: names[0]}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		lq := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2",
			"kind":       "LocalQueue",
			"metadata":   map[string]any{"name": "lq", "namespace": names[1]},
			"spec":       map[string]any{"clusterQueue": "cq"},
		}}
		if _, err := dyn.Resource(localQueues).Namespace(names[1]).Create(ctx, lq, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}

		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for _, name := range names {
			wg.Go(func() {
				if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		left := n
		for left > 0 {
			if time.Since(start) > time.Minute { // a bound for a hang only: how fast is for `make bench`
				t.Fatalf("%d of %d namespaces still there a minute after deleting them", left, n)
			}
			time.Sleep(10 * time.Millisecond)
			list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "nsdel=many"})
			if err != nil {
				t.Fatal(err)
			}
			left = len(list.Items)
		}
		t.Logf("%d namespaces deleted in %v", n, time.Since(start).Round(time.Millisecond))
		// The contents were deleted, not orphaned in storage.
		if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s/%s after its namespace was deleted: %v", cm.Namespace, cm.Name, err)
		}
		if _, err := dyn.Resource(localQueues).Namespace(names[1]).Get(ctx, "lq", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("LocalQueue %s/lq after its namespace was deleted: %v", names[1], err)
		}
	})

	t.Run("object with a finalizer", func(t *testing.T) {
		const name = "nsdel-held"
		createNamespace(t, cs, name, nil)
		cms := cs.CoreV1().ConfigMaps(name)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"hyperpod.test/hold"}}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The ConfigMap is deleted but stays, and so does the namespace.
		waitFor(t, "the ConfigMap with a finalizer to be deleted", func() bool {
			got, err := cms.Get(ctx, cm.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return got.DeletionTimestamp != nil
		})
		// Two more syncs that left the namespace: the second began after the ConfigMap was
		// seen deleted, so it decided on the namespace as it is now.
		held := c.finalizer.heldSyncs(name)
		waitFor(t, "the finalizer to decide on the namespace again", func() bool { return c.finalizer.heldSyncs(name) >= held+2 })
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace with an object being finalized: %v", err)
		}
		if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
			t.Errorf("namespace finalized while not empty: finalizers %v", ns.Spec.Finalizers)
		}

		// Once the object's finalizer is gone the retries finalize the namespace.
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := cms.Patch(ctx, cm.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitNamespaceGone(t, cs, name, ns.ResourceVersion, time.Minute)
	})

}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// deleteAndWait deletes the namespace name and returns how long it took to disappear.
func deleteAndWait(t *testing.T, cs kubernetes.Interface, name string, timeout time.Duration) time.Duration {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := watchNamespace(t, cs, name, ns.ResourceVersion)
	defer w.Stop()
	start := time.Now()
	if err := cs.CoreV1().Namespaces().Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return waitDeleted(t, w, name, start, timeout)
}

// waitNamespaceGone waits for the namespace name, last seen at resourceVersion, to
// disappear and returns how long that took.
func waitNamespaceGone(t *testing.T, cs kubernetes.Interface, name, resourceVersion string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	w := watchNamespace(t, cs, name, resourceVersion)
	defer w.Stop()
	return waitDeleted(t, w, name, start, timeout)
}

func watchNamespace(t *testing.T, cs kubernetes.Interface, name, resourceVersion string) watch.Interface {
	t.Helper()
	w, err := cs.CoreV1().Namespaces().Watch(t.Context(), metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: resourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func waitDeleted(t *testing.T, w watch.Interface, name string, start time.Time, timeout time.Duration) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("namespace %s still there after %v", name, timeout)
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch of namespace %s ended", name)
			}
			switch ev.Type {
			case watch.Deleted:
				return time.Since(start)
			case watch.Error:
				t.Fatalf("watch of namespace %s: %v", name, apierrors.FromObject(ev.Object))
			}
		}
	}
}

var (
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// fakeFinalizer is a namespaceFinalizer on fake clients. Finalizing a namespace deletes it
// once no finalizer is left, as the API server does.
type fakeFinalizer struct {
	*namespaceFinalizer
	cs          *fake.Clientset
	dyn         *dynamicfake.FakeDynamicClient
	discoveries atomic.Int32
}

func newFakeFinalizer(t *testing.T, objs ...runtime.Object) *fakeFinalizer {
	t.Helper()
	var namespaces, contents []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*corev1.Namespace); ok {
			namespaces = append(namespaces, o)
		} else {
			contents = append(contents, o)
		}
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ff := &fakeFinalizer{cs: fake.NewClientset(namespaces...), dyn: dynamicfake.NewSimpleDynamicClient(scheme, contents...)}
	ff.cs.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"create", "delete", "get", "list", "watch"}},
		{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: metav1.Verbs{"create", "delete", "get", "list", "watch"}},
		{Name: "namespaces", Kind: "Namespace", Verbs: metav1.Verbs{"create", "delete", "get", "list", "watch"}},
		{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get"}},
		{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
	}}}
	ff.cs.PrependReactor("get", "group", func(k8stesting.Action) (bool, runtime.Object, error) {
		ff.discoveries.Add(1)
		return false, nil, nil
	})
	ff.cs.PrependReactor("create", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "finalize" {
			return false, nil, nil
		}
		ns := a.(k8stesting.CreateAction).GetObject().(*corev1.Namespace)
		if len(ns.Spec.Finalizers) > 0 {
			return true, ns, ff.cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("namespaces"), ns, "")
		}
		return true, ns, ff.cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("namespaces"), "", ns.Name)
	})
	ff.namespaceFinalizer = newNamespaceFinalizer(ff.cs, ff.dyn)
	ff.retryBase, ff.retryMax = 5*time.Millisecond, 20*time.Millisecond
	return ff
}

// start runs the finalizer until the test ends and checks that it stops promptly.
func (ff *fakeFinalizer) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ff.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("run did not return after its context was cancelled")
		}
	})
}

func terminatingNamespace(name string, finalizers ...corev1.FinalizerName) *corev1.Namespace {
	now := metav1.Now()
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: name, DeletionTimestamp: &now},
		Spec:       corev1.NamespaceSpec{Finalizers: append([]corev1.FinalizerName{corev1.FinalizerKubernetes}, finalizers...)},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
	}
}

func configMap(ns, name string, deleting bool) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if deleting {
		now := metav1.Now()
		cm.DeletionTimestamp, cm.Finalizers = &now, []string{"hyperpod.test/hold"}
	}
	return cm
}

// waitFor polls cond every few milliseconds for up to 30 s, a bound for a hang only.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := WaitUntil(context.Background(), time.Now().Add(30*time.Second), 2*time.Millisecond,
		func(context.Context) (bool, error) { return cond(), nil },
		func() error { return fmt.Errorf("timed out waiting for %s", what) })
	if err != nil {
		t.Fatal(err)
	}
}

func (ff *fakeFinalizer) namespaceGone(name string) func() bool {
	return func() bool {
		_, err := ff.cs.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
}

func (ff *fakeFinalizer) configMaps(ns string) int {
	list, err := ff.dyn.Resource(configMapsGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return -1
	}
	return len(list.Items)
}

func TestNamespaceFinalizerEmptiesAndFinalizes(t *testing.T) {
	var objs []runtime.Object
	const n = 40
	for i := range n {
		name := fmt.Sprintf("team-%02d", i)
		objs = append(objs, terminatingNamespace(name), configMap(name, "a", false), configMap(name, "b", false))
	}
	active := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "active"}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	other := terminatingNamespace("other")
	other.Spec.Finalizers = []corev1.FinalizerName{"hyperpod.test/other"} // not ours to act on
	objs = append(objs, active, configMap("active", "a", false), other, configMap("other", "a", false))
	ff := newFakeFinalizer(t, objs...)
	ff.start(t)

	for i := range n {
		name := fmt.Sprintf("team-%02d", i)
		waitFor(t, "namespace "+name+" to go", ff.namespaceGone(name))
		if got := ff.configMaps(name); got != 0 {
			t.Errorf("%s: %d ConfigMaps left", name, got)
		}
	}
	if got := ff.configMaps("active"); got != 1 {
		t.Errorf("active namespace: %d ConfigMaps, want 1", got)
	}
	if got := ff.configMaps("other"); got != 1 {
		t.Errorf("namespace without the kubernetes finalizer: %d ConfigMaps, want 1", got)
	}
	// Discovery is cached: not read once per namespace.
	if got := ff.discoveries.Load(); got < 1 || got > 2 {
		t.Errorf("discovery read %d times for %d namespaces, want 1 (at most 2)", got, n)
	}
	// Secrets, of which there are none anywhere, are checked cluster-wide (once for all
	// namespaces, since they were all Terminating from the start), not per namespace.
	secretLists := map[string]int{}
	for _, a := range ff.dyn.Actions() {
		switch a.GetResource().Resource {
		case "configmaps":
		case "secrets":
			secretLists[a.GetNamespace()]++
		default:
			t.Errorf("unexpected %s of %s: only listable and deletable namespaced resources are touched", a.GetVerb(), a.GetResource())
		}
	}
	if len(secretLists) != 1 || secretLists[""] < 1 || secretLists[""] > 2 {
		t.Errorf("secrets listed %v (by namespace), want once or twice cluster-wide", secretLists)
	}

	// A namespace deleted later is picked up from the watch.
	ctx := t.Context()
	ns := terminatingNamespace("late")
	if _, err := ff.dyn.Resource(configMapsGVR).Namespace("late").Create(ctx, toUnstructured(t, configMap("late", "a", false)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ff.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "namespace late to go", ff.namespaceGone("late"))
	if got := ff.configMaps("late"); got != 0 {
		t.Errorf("late: %d ConfigMaps left", got)
	}
}

func TestNamespaceFinalizerRetriesUntilEmpty(t *testing.T) {
	ff := newFakeFinalizer(t, terminatingNamespace("held"), configMap("held", "held", true), configMap("held", "plain", false))
	ff.discoveryMinAge = 0 // every failed attempt re-reads discovery
	ff.start(t)

	lists := func() int {
		n := 0
		for _, a := range ff.dyn.Actions() {
			if a.GetVerb() == "list" && a.GetNamespace() == "held" {
				n++
			}
		}
		return n
	}
	waitFor(t, "the ConfigMap without a finalizer to go", func() bool {
		_, err := ff.dyn.Resource(configMapsGVR).Namespace("held").Get(context.Background(), "plain", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	waitFor(t, "retries", func() bool { return lists() >= 4 })
	if ff.namespaceGone("held")() {
		t.Fatal("namespace finalized while an object in it was being deleted")
	}
	if got := ff.discoveries.Load(); got < 2 {
		t.Errorf("discovery read %d times, want it refreshed after a namespace could not be emptied", got)
	}

	// The object's finalizer is removed (its controller is done): the namespace goes.
	if err := ff.dyn.Resource(configMapsGVR).Namespace("held").Delete(t.Context(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "namespace held to go", ff.namespaceGone("held"))
}

func TestNamespaceFinalizerKeepsOtherFinalizers(t *testing.T) {
	ff := newFakeFinalizer(t, terminatingNamespace("two", "hyperpod.test/other"))
	ff.start(t)
	waitFor(t, "the kubernetes finalizer to go", func() bool {
		ns, err := ff.cs.CoreV1().Namespaces().Get(context.Background(), "two", metav1.GetOptions{})
		return err == nil && !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	})
	ns, err := ff.cs.CoreV1().Namespaces().Get(t.Context(), "two", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []corev1.FinalizerName{"hyperpod.test/other"}; !slices.Equal(ns.Spec.Finalizers, want) {
		t.Errorf("finalizers %v, want %v", ns.Spec.Finalizers, want)
	}
}

func TestNamespaceFinalizerDiscoveryCache(t *testing.T) {
	ff := newFakeFinalizer(t)
	ff.discoveryMaxAge, ff.discoveryMinAge = time.Hour, time.Hour
	ctx := t.Context()
	read := func() []schema.GroupVersionResource {
		t.Helper()
		got, err := ff.namespacedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = slices.Clone(got)
		slices.SortFunc(got, func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) })
		return got
	}
	if got, want := read(), []schema.GroupVersionResource{configMapsGVR, secretsGVR}; !slices.Equal(got, want) {
		t.Fatalf("resources %v, want %v", got, want)
	}
	// A CRD appears: not seen while the cache is fresh...
	ff.cs.Resources = append(ff.cs.Resources, &metav1.APIResourceList{GroupVersion: "hyperpod.test/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", Namespaced: true, Kind: "Widget", Verbs: metav1.Verbs{"delete", "list"}},
	}})
	ff.invalidateDiscovery()
	if got := read(); len(got) != 2 || ff.discoveries.Load() != 1 {
		t.Fatalf("resources %v after %d discoveries: cache younger than discoveryMinAge not kept", got, ff.discoveries.Load())
	}
	// ...but after a failure once the cache is discoveryMinAge old...
	ff.discoveryMinAge = 0
	want := []schema.GroupVersionResource{configMapsGVR, secretsGVR, {Group: "hyperpod.test", Version: "v1", Resource: "widgets"}}
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("resources %v after invalidation, want %v", got, want)
	}
	if got := read(); !slices.Equal(got, want) || ff.discoveries.Load() != 2 {
		t.Fatalf("resources %v after %d discoveries: a valid cache was not used", got, ff.discoveries.Load())
	}
	// ...and, without failures, once it is discoveryMaxAge old.
	ff.cs.Resources = ff.cs.Resources[:1]
	ff.discoveryMaxAge = 0
	if got := read(); len(got) != 2 || ff.discoveries.Load() != 3 {
		t.Fatalf("resources %v after %d discoveries: an expired cache was used", got, ff.discoveries.Load())
	}
}

func TestNamespaceFinalizerStopsPromptly(t *testing.T) {
	before := goruntime.NumGoroutine()
	var objs []runtime.Object
	for i := range 200 {
		name := fmt.Sprintf("held-%03d", i)
		objs = append(objs, terminatingNamespace(name), configMap(name, "held", true))
	}
	ff := newFakeFinalizer(t, objs...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ff.run(ctx)
	}()
	// Cancelled while busy: some namespaces are already being retried.
	waitFor(t, "the finalizer to retry a namespace", func() bool { return ff.heldSyncs("held-000")+ff.heldSyncs("held-199") > 0 })
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("run did not return after its context was cancelled")
	}
	// Nothing it started is left (the delaying queue's loop ends just after ShutDown).
	waitFor(t, "goroutines to end", func() bool { return goruntime.NumGoroutine() <= before })
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}
