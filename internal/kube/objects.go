package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Namespaces is the core v1 namespaces resource, for use with the generic helpers below.
var Namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Get fetches one object into out (a typed struct with JSON tags). It is one GET: no
// discovery, no list. found is false when the object does not exist.
func (c *Client) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, out any) (found bool, err error) {
	dc, err := c.Dynamic(ctx)
	if err != nil {
		return false, err
	}
	u, err := dc.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return true, fmt.Errorf("decoding %s %q: %w", gvr.Resource, name, err)
	}
	return true, nil
}

// Apply server-side applies obj (a typed struct with apiVersion, kind and name set) with the
// given field manager, forcing ownership of exactly the fields obj sets. Fields other managers
// own are left alone. The result is decoded into out when out is not nil.
func (c *Client) Apply(ctx context.Context, gvr schema.GroupVersionResource, fieldManager string, obj, out any) error {
	dc, err := c.Dynamic(ctx)
	if err != nil {
		return err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", gvr.Resource, err)
	}
	u := &unstructured.Unstructured{Object: content}
	// A zero creationTimestamp encodes as null; it is not ours to set.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	applied, err := dc.Resource(gvr).Namespace(u.GetNamespace()).Apply(ctx, u.GetName(), u,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return err
	}
	if out != nil {
		return runtime.DefaultUnstructuredConverter.FromUnstructured(applied.Object, out)
	}
	return nil
}

// ErrStillExists is returned by DeleteAndWait when the object outlives the context.
var ErrStillExists = errors.New("object still exists")

// DeleteAndWait deletes an object (background propagation: foreground would add a finalizer
// that only the garbage collector removes, and the objects here own nothing) and polls with GET until it is gone
// or ctx ends. A missing object is not an error. On timeout the error wraps ErrStillExists and
// names the finalizers that hold the object, if any.
func (c *Client) DeleteAndWait(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, poll time.Duration) error {
	dc, err := c.Dynamic(ctx)
	if err != nil {
		return err
	}
	res := dc.Resource(gvr).Namespace(namespace)
	policy := metav1.DeletePropagationBackground
	if err := res.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	var finalizers []string
	for {
		u, err := res.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			finalizers = u.GetFinalizers()
		} else if ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			if len(finalizers) > 0 {
				return fmt.Errorf("%w: %s %q is still terminating, held by finalizers %v", ErrStillExists, gvr.Resource, name, finalizers)
			}
			return fmt.Errorf("%w: %s %q was not gone before the timeout", ErrStillExists, gvr.Resource, name)
		case <-time.After(poll):
		}
	}
}
