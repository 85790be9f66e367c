package localcluster

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// namespaceFinalizer stands in for kube-controller-manager's namespace controller, which
// does not run here: without it a deleted Namespace stays Terminating forever. For every
// Namespace that is being deleted and still carries the "kubernetes" finalizer, it deletes
// everything in it (grace period 0, there is no kubelet) and, once the namespace is empty,
// removes the finalizer so the API server deletes the Namespace.
type namespaceFinalizer struct {
	cs       kubernetes.Interface
	dyn      dynamic.Interface
	interval time.Duration
}

func (f *namespaceFinalizer) run(ctx context.Context) {
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		f.sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (f *namespaceFinalizer) sweep(ctx context.Context) {
	list, err := f.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	var resources []schema.GroupVersionResource
	for i := range list.Items {
		ns := &list.Items[i]
		if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
			continue
		}
		if resources == nil {
			if resources = f.namespacedResources(); resources == nil {
				return
			}
		}
		empty := f.emptyNamespace(ctx, ns.Name, resources)
		if !empty {
			// A second pass right away: objects without finalizers are gone at once (grace 0).
			empty = f.emptyNamespace(ctx, ns.Name, resources)
		}
		if empty {
			ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(s corev1.FinalizerName) bool {
				return s == corev1.FinalizerKubernetes
			})
			_, _ = f.cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
		}
	}
}

// namespacedResources lists the namespaced resources (preferred versions) that can be
// listed and deleted. Discovery is read on every sweep that needs it, so CRDs installed
// later are covered.
func (f *namespaceFinalizer) namespacedResources() []schema.GroupVersionResource {
	lists, err := f.cs.Discovery().ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil
	}
	var out []schema.GroupVersionResource
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
	return out
}

// emptyNamespace deletes what is left in ns and reports whether nothing was left.
func (f *namespaceFinalizer) emptyNamespace(ctx context.Context, ns string, resources []schema.GroupVersionResource) bool {
	zero := int64(0)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background}
	empty := true
	for _, gvr := range resources {
		ri := f.dyn.Resource(gvr).Namespace(ns)
		items, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
				empty = false
			}
			continue
		}
		for _, it := range items.Items {
			empty = false
			if it.GetDeletionTimestamp() == nil {
				_ = ri.Delete(ctx, it.GetName(), opts)
			}
		}
	}
	return empty
}
