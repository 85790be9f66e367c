package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Namespaces is the core v1 namespaces resource, for use with the generic helpers below.
var Namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// objectPath is the URL path of a resource collection (name "") or of one object.
func objectPath(gvr schema.GroupVersionResource, namespace, name string) []string {
	p := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		p = []string{"/api", gvr.Version}
	}
	if namespace != "" {
		p = append(p, "namespaces", namespace)
	}
	p = append(p, gvr.Resource)
	if name != "" {
		p = append(p, name)
	}
	return p
}

// Get fetches one object into out (a typed struct with JSON tags). found is false when the
// object does not exist. It costs at most one GET per object per provider process (see
// readCache): no discovery, no list.
func (c *Client) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, out any) (found bool, err error) {
	return c.read(ctx, gvr, namespace, name, out, func(ctx context.Context, key objectKey, fetch fetchFunc) ([]byte, bool, error) {
		if !c.cache.has(key) {
			c.primeBefore(ctx, gvr)
		}
		return c.cache.get(ctx, key, fetch)
	})
}

// GetNow is Get answered by a GET that starts after the call, for a caller that must know the
// object as it is now rather than as this process last saw it (another process may have deleted
// it since). Concurrent callers of one object share reads (readCache.fresh); the answer is what
// later Gets return.
func (c *Client) GetNow(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, out any) (found bool, err error) {
	return c.read(ctx, gvr, namespace, name, out, c.cache.fresh)
}

// read is what Get and GetNow share; they differ in where the object comes from: cachedRead
// answers from the cache, calling fetch (one GET) when the cache must read the server.
func (c *Client) read(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, out any,
	cachedRead func(ctx context.Context, key objectKey, fetch fetchFunc) ([]byte, bool, error)) (found bool, err error) {
	if err := c.init(ctx); err != nil {
		return false, err
	}
	ctx, tl := withTally(ctx, c.retryClock())
	defer func() { err = tl.explain(err) }()
	raw, found, err := cachedRead(ctx, objectKey{gvr, namespace, name}, func(ctx context.Context) ([]byte, bool, error) {
		return c.fetch(ctx, gvr, namespace, name)
	})
	if err != nil || !found {
		return false, err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return true, fmt.Errorf("decoding %s %q: %w", gvr.Resource, name, err)
	}
	return true, nil
}

// fetch is one GET, bypassing the cache.
func (c *Client) fetch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) ([]byte, bool, error) {
	raw, err := rawOf(c.json.Get().AbsPath(objectPath(gvr, namespace, name)...).Do(ctx))
	if apierrors.IsNotFound(err) {
		if err := c.notFound(ctx, gvr, err, raw); IsAPINotServed(err) {
			return nil, false, err
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return raw, true, nil
}

// Apply server-side applies obj (a typed struct with apiVersion, kind and name set) with the
// given field manager, forcing ownership of exactly the fields obj sets. Fields other managers
// own are left alone. The result is decoded into out when out is not nil, and it is what later
// Gets of the object in this process return.
func (c *Client) Apply(ctx context.Context, gvr schema.GroupVersionResource, fieldManager string, obj, out any) (err error) {
	ctx, tl, u, body, err := c.startWrite(ctx, gvr, obj)
	if err != nil {
		return err
	}
	defer func() { err = tl.explain(err) }()
	key := objectKey{gvr, u.GetNamespace(), u.GetName()}
	var raw []byte
	for conflicts := 0; ; conflicts++ {
		raw, err = rawOf(c.json.Patch(types.ApplyPatchType).AbsPath(objectPath(gvr, key.namespace, key.name)...).
			Param("fieldManager", fieldManager).Param("force", "true").
			Body(body).Do(ctx))
		// A forced apply without a resourceVersion does not conflict with other managers, but
		// a 409 can still come from the storage layer racing another writer or from a webhook;
		// the apply is declarative, so sending it again is safe.
		if !apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || conflicts >= maxApplyConflicts {
			break
		}
		if werr := tl.clock.Sleep(ctx, time.Duration(conflicts+1)*100*time.Millisecond); werr != nil {
			break
		}
	}
	if apierrors.IsConflict(err) {
		c.cache.forget(key)
		return fmt.Errorf("another writer kept changing %s %q: %w (the server-side apply was sent %d times). "+
			"Running apply again is safe", gvr.Resource, key.name, err, maxApplyConflicts+1)
	}
	if err != nil {
		// The write may or may not have happened: read again next time.
		c.cache.forget(key)
		if apierrors.IsNotFound(err) {
			return c.notFound(ctx, gvr, err, raw)
		}
		return err
	}
	c.cache.put(key, raw, true)
	c.flavors.observeWrite(gvr, key.name, raw)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("decoding %s %q: %w", gvr.Resource, key.name, err)
		}
	}
	return nil
}

// maxApplyConflicts is how often Apply resends a server-side apply answered 409 Conflict.
const maxApplyConflicts = 3

// startWrite prepares Apply and Create: it initialises the client, encodes obj and counts the
// write's requests in the tally of the returned context, whose explain the caller defers.
func (c *Client) startWrite(ctx context.Context, gvr schema.GroupVersionResource, obj any) (context.Context, *tally, *unstructured.Unstructured, []byte, error) {
	if err := c.init(ctx); err != nil {
		return ctx, nil, nil, nil, err
	}
	u, body, err := encodeObject(gvr, obj)
	if err != nil {
		return ctx, nil, nil, nil, err
	}
	ctx, tl := withTally(ctx, c.retryClock())
	return ctx, tl, u, body, nil
}

// encodeObject turns a typed object into the JSON body of a write.
func encodeObject(gvr schema.GroupVersionResource, obj any) (*unstructured.Unstructured, []byte, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding %s: %w", gvr.Resource, err)
	}
	u := &unstructured.Unstructured{Object: content}
	// A zero creationTimestamp encodes as null; it is not ours to set.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	body, err := u.MarshalJSON()
	if err != nil {
		return nil, nil, fmt.Errorf("encoding %s: %w", gvr.Resource, err)
	}
	return u, body, nil
}

// ErrStillExists is returned by DeleteAndWait and WaitGone when the object outlives the context.
var ErrStillExists = errors.New("object still exists")

// ErrCreateOutcomeUnknown is returned by Create when the server may or may not have created
// the object: the POST's response was lost and reading the object back failed too.
var ErrCreateOutcomeUnknown = errors.New("the create's outcome is unknown")

// ErrAlreadyExists is returned by Create when an object of that name exists.
var ErrAlreadyExists = errors.New("object already exists")

// Create creates obj (a typed struct with apiVersion, kind and name set) with a POST, which
// fails with ErrAlreadyExists when the object exists: unlike Apply, two processes creating the
// same object cannot both succeed, so a create claims the name.
//
// A POST is not retried by the transport (a retry could create twice), so Create recovers
// itself when it cannot tell whether the server created the object: a lost response, a reset
// connection or a 5xx. It then reads the object: one carrying every label and annotation it
// sent (the provider's owner annotation is a fresh identity) is its own, and the create
// succeeded; no object means the POST is sent again, within the retry settings' attempts;
// anyone else's object is ErrAlreadyExists. So a create whose response was lost ends in success,
// never in a duplicate or an AlreadyExists of its own making.
func (c *Client) Create(ctx context.Context, gvr schema.GroupVersionResource, fieldManager string, obj any) (err error) {
	ctx, tl, u, body, err := c.startWrite(ctx, gvr, obj)
	if err != nil {
		return err
	}
	defer func() { err = tl.explain(err) }()
	key := objectKey{gvr, u.GetNamespace(), u.GetName()}
	settings := c.retry.WithDefaults()
	for attempt := 1; ; attempt++ {
		raw, err := rawOf(c.json.Post().AbsPath(objectPath(gvr, key.namespace, "")...).
			Param("fieldManager", fieldManager).Body(body).Do(ctx))
		if err == nil {
			c.cache.put(key, raw, true)
			c.flavors.observeWrite(gvr, key.name, raw)
			return nil
		}
		c.cache.forget(key)
		if apierrors.IsNotFound(err) {
			return c.notFound(ctx, gvr, err, raw)
		}
		exists := apierrors.IsAlreadyExists(err)
		// A transient failure (lost response, 429, 5xx) may or may not have created the object.
		if !exists && !transientKind(err) {
			return err
		}
		var current []byte
		found, gerr := false, error(nil)
		if !neverSent(err) {
			current, found, gerr = c.fetch(ctx, gvr, key.namespace, key.name)
		}
		switch {
		case gerr == nil && found && createdBy(current, u):
			c.cache.put(key, current, true)
			c.flavors.observeWrite(gvr, key.name, current)
			return nil
		case exists || (gerr == nil && found):
			return fmt.Errorf("%w: %s %q", ErrAlreadyExists, gvr.Resource, key.name)
		case gerr != nil:
			return fmt.Errorf("%w: creating %s %q failed (%w), and reading it back to see whether the server created it "+
				"failed too: %v", ErrCreateOutcomeUnknown, gvr.Resource, key.name, err, gerr)
		case attempt >= settings.MaxAttempts || tl.elapsed() >= settings.MaxElapsed:
			return fmt.Errorf("creating %s %q failed, the last time with: %w. The object was not created; "+
				"running apply again is safe", gvr.Resource, key.name, err)
		}
		wait, _ := backoff(settings.MinBackoff, settings.MaxBackoff, attempt-1, nil)
		wait = max(min(wait, settings.MaxElapsed-tl.elapsed()), 0)
		if tl.clock.Sleep(ctx, wait) != nil {
			return err
		}
	}
}

// neverSent reports whether a request failed before any byte reached the server: no connection
// could be made, so nothing was created and the POST can simply be sent again.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// createdBy reports whether raw, an existing object, is the one obj's create wrote: it carries
// every label and annotation obj sets, at least one annotation among them (an identity only
// that create knows; without one it cannot tell).
func createdBy(raw []byte, obj *unstructured.Unstructured) bool {
	if len(obj.GetAnnotations()) == 0 {
		return false
	}
	var got metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &got); err != nil {
		return false
	}
	for k, v := range obj.GetAnnotations() {
		if got.Annotations[k] != v {
			return false
		}
	}
	for k, v := range obj.GetLabels() {
		if got.Labels[k] != v {
			return false
		}
	}
	return true
}

// Annotate sets (or, for a nil value, removes) annotations of the object with this UID with a
// JSON merge patch: a plain update, which server-side apply of the same field manager does not
// take back. It fails when the object is gone or another object now has the name.
func (c *Client) Annotate(ctx context.Context, gvr schema.GroupVersionResource, namespace, name, uid, fieldManager string, annotations map[string]*string) (err error) {
	dc, err := c.Dynamic(ctx)
	if err != nil {
		return err
	}
	ctx, tl := withTally(ctx, c.retryClock())
	defer func() { err = tl.explain(err) }()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid, "annotations": annotations}})
	if err != nil {
		return err
	}
	key := objectKey{gvr, namespace, name}
	c.cache.forget(key)
	_, err = dc.Resource(gvr).Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	return err
}

// DeleteOption refines DeleteAndWait.
type DeleteOption func(*metav1.DeleteOptions)

// OnlyUID makes the DELETE apply only to the object with this UID: one deleted and created
// again since it was read is left alone.
func OnlyUID(uid string) DeleteOption {
	return func(o *metav1.DeleteOptions) {
		if uid != "" {
			u := types.UID(uid)
			o.Preconditions = &metav1.Preconditions{UID: &u}
		}
	}
}

// DeleteAndWait deletes an object (background propagation: foreground would add a finalizer
// that only the garbage collector removes, and the objects here own nothing) and waits until
// it is gone or ctx ends (WaitGone). A missing object is not an error, and neither is one whose
// UID no longer matches an OnlyUID precondition: it is not the object that was meant.
func (c *Client) DeleteAndWait(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, maxPoll time.Duration, opts ...DeleteOption) (err error) {
	ctx, tl, res, err := c.startObjectCall(ctx, gvr, namespace, name)
	if err != nil {
		return err
	}
	defer func() { err = tl.explain(err) }()
	policy := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &policy}
	for _, o := range opts {
		o(&del)
	}
	err = res.Delete(ctx, name, del)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.notFound(ctx, gvr, err, nil); IsAPINotServed(err) {
			return err
		}
	case apierrors.IsConflict(err) && del.Preconditions != nil:
		return nil // another object of that name now: not ours to delete or wait for
	case err != nil:
		return err
	}
	c.flavors.observeDelete(gvr, name)
	return c.WaitGone(ctx, gvr, namespace, name, maxPoll)
}

// startObjectCall prepares DeleteAndWait and WaitGone: the object's cached copy is forgotten,
// and the returned ctx counts their requests in a tally whose explain the caller defers.
func (c *Client) startObjectCall(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (context.Context, *tally, dynamic.ResourceInterface, error) {
	dc, err := c.Dynamic(ctx)
	if err != nil {
		return ctx, nil, nil, err
	}
	ctx, tl := withTally(ctx, c.retryClock())
	c.cache.forget(objectKey{gvr, namespace, name})
	return ctx, tl, dc.Resource(gvr).Namespace(namespace), nil
}

// WaitGone waits until an object does not exist or ctx ends. On timeout the error wraps
// ErrStillExists and names the finalizers that hold the object, if any.
//
// The wait tracks the server rather than sleeping: an object without finalizers is gone when
// its DELETE returns, which one GET confirms; one that is still terminating is watched, and
// its deletion event ends the wait at once. GETs at growing intervals, up to maxPoll, back the
// watch up where it is not allowed or a proxy holds its events back.
func (c *Client) WaitGone(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, maxPoll time.Duration) (err error) {
	ctx, tl, res, err := c.startObjectCall(ctx, gvr, namespace, name)
	if err != nil {
		return err
	}
	defer func() { err = tl.explain(err) }()
	key := objectKey{gvr, namespace, name}

	var (
		finalizers []string
		w          watch.Interface
		events     <-chan watch.Event
		watchable  = true
		poll       = min(50*time.Millisecond, maxPoll)
	)
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for {
		u, err := res.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if err := c.notFound(ctx, gvr, err, nil); IsAPINotServed(err) {
				return err
			}
			c.cache.put(key, nil, false)
			return nil
		case err == nil:
			finalizers = u.GetFinalizers()
			if events == nil && watchable {
				w, err = res.Watch(ctx, metav1.ListOptions{
					FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
					ResourceVersion: u.GetResourceVersion(),
				})
				switch {
				case err == nil:
					events = w.ResultChan()
				case apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err):
					watchable = false
				}
			}
		case ctx.Err() == nil:
			return err
		}
		timer := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			if len(finalizers) > 0 {
				return fmt.Errorf("%w: %s %q is still terminating, held by finalizers %v", ErrStillExists, gvr.Resource, name, finalizers)
			}
			return fmt.Errorf("%w: %s %q was not gone before the timeout", ErrStillExists, gvr.Resource, name)
		case ev, ok := <-events:
			timer.Stop()
			switch {
			case ok && ev.Type == watch.Deleted:
				c.cache.put(key, nil, false)
				return nil
			case !ok || ev.Type == watch.Error:
				// Expired or closed: look again, and watch again from a fresh resourceVersion.
				w.Stop()
				w, events = nil, nil
			}
		case <-timer.C:
			poll = min(2*poll, maxPoll)
		}
	}
}
