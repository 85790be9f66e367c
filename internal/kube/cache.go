package kube

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// readCache remembers each object as this provider process last saw it, so an object is read
// from the API server at most once per process: ResourceFlavors are shared by every quota of an
// instance type, and a refresh of N quotas would otherwise read each flavor N times.
//
// The cache lives as long as the Client, which the provider builds anew in every
// ConfigureProvider, i.e. once per Terraform graph walk (plan, apply, destroy, import): a new
// command always starts cold and sees changes made by others in between. Within a walk, this
// process's own writes replace the entry (an apply stores the server's answer, a delete marks
// the object absent), so a read after a write never sees the state before it.
//
// Concurrent reads of the same object share one request. Errors are never cached.
type readCache struct {
	mu      sync.Mutex
	entries map[objectKey]*cacheEntry
	// running and waiting are the fresh reads in flight and the next ones, by object.
	running, waiting map[objectKey]*cacheEntry
	// joined, when set (by tests), is called each time a caller of fresh has joined a read.
	joined func()
}

type objectKey struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// cacheEntry is one object; ready is closed once raw/found/err are set.
type cacheEntry struct {
	ready chan struct{}
	raw   []byte // the object's JSON, nil when it does not exist
	found bool
	err   error
}

// fetchFunc reads an object from the API server: its JSON, or found = false when it does not
// exist.
type fetchFunc func(ctx context.Context) (raw []byte, found bool, err error)

// get returns the cached object or reads it with fetch, sharing an in-flight read.
func (c *readCache) get(ctx context.Context, key objectKey, fetch fetchFunc) ([]byte, bool, error) {
	for {
		c.mu.Lock()
		e, ok := c.entries[key]
		if !ok {
			e = &cacheEntry{ready: make(chan struct{})}
			c.set(key, e)
			c.mu.Unlock()
			e.raw, e.found, e.err = fetch(ctx)
			if e.err != nil {
				c.mu.Lock()
				if c.entries[key] == e {
					delete(c.entries, key)
				}
				c.mu.Unlock()
			}
			close(e.ready)
			return e.raw, e.found, e.err
		}
		c.mu.Unlock()
		if answer, again := e.await(ctx); !again {
			return answer.raw, answer.found, answer.err
		}
	}
}

// await waits for e's read and returns its answer, or ctx's error if ctx ends first. again
// says that read gave up because its own context ended while ctx has not: the caller reads again.
func (e *cacheEntry) await(ctx context.Context) (answer *cacheEntry, again bool) {
	select {
	case <-e.ready:
	case <-ctx.Done():
		return &cacheEntry{err: ctx.Err()}, false
	}
	if e.err != nil && isContextError(e.err) && ctx.Err() == nil {
		return nil, true
	}
	return e, false
}

// set makes e the entry of key. Callers hold mu.
func (c *readCache) set(key objectKey, e *cacheEntry) {
	if c.entries == nil {
		c.entries = map[objectKey]*cacheEntry{}
	}
	c.entries[key] = e
}

// put records what this process just wrote (raw is the server's answer) or deleted (found =
// false). It replaces an in-flight read's entry too: the write is newer than that read.
func (c *readCache) put(key objectKey, raw []byte, found bool) {
	e := &cacheEntry{ready: make(chan struct{}), raw: raw, found: found}
	close(e.ready)
	c.mu.Lock()
	c.set(key, e)
	c.mu.Unlock()
}

// forget drops an entry, so the next read goes to the server.
func (c *readCache) forget(key objectKey) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// offer adds an object read by a LIST unless the entry is already there.
func (c *readCache) offer(key objectKey, raw []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		e := &cacheEntry{ready: make(chan struct{}), raw: raw, found: true}
		close(e.ready)
		c.set(key, e)
	}
}

// objectsOf is the JSON of every object of gvr the cache holds as existing (reads in flight and
// objects known to be absent left out).
func (c *readCache) objectsOf(gvr schema.GroupVersionResource) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for key, e := range c.entries {
		if key.gvr != gvr {
			continue
		}
		select {
		case <-e.ready:
			if e.found && e.err == nil {
				out = append(out, e.raw)
			}
		default:
		}
	}
	return out
}

func (c *readCache) has(key objectKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[key]
	return ok
}

// fresh reads an object with a request that starts after the call, for a caller that must know
// the object as it is now, not as this process last saw it. Callers that arrive while such a
// read is in flight form the next one together: however many ask at once, at most one read per
// object is in flight and one more waits, and each caller's answer comes from a read that
// started after it asked. The answer replaces the cached entry.
func (c *readCache) fresh(ctx context.Context, key objectKey, fetch fetchFunc) ([]byte, bool, error) {
	for {
		c.mu.Lock()
		if c.waiting == nil {
			c.waiting, c.running = map[objectKey]*cacheEntry{}, map[objectKey]*cacheEntry{}
		}
		group, leader := c.waiting[key], false
		if group == nil {
			group, leader = &cacheEntry{ready: make(chan struct{})}, true
			c.waiting[key] = group
		}
		previous := c.running[key]
		joined := c.joined
		c.mu.Unlock()
		if joined != nil {
			joined()
		}
		if leader {
			c.lead(ctx, key, group, previous, fetch)
			return group.raw, group.found, group.err
		}
		if answer, again := group.await(ctx); !again {
			return answer.raw, answer.found, answer.err
		}
	}
}

// lead waits for the read in flight, if any, then reads for its group.
func (c *readCache) lead(ctx context.Context, key objectKey, group, previous *cacheEntry, fetch fetchFunc) {
	if previous != nil {
		select {
		case <-previous.ready:
		case <-ctx.Done():
			group.err = ctx.Err()
		}
	}
	c.mu.Lock()
	delete(c.waiting, key)
	if group.err == nil {
		c.running[key] = group
	}
	c.mu.Unlock()
	if group.err == nil {
		group.raw, group.found, group.err = fetch(ctx)
	}
	c.mu.Lock()
	if c.running[key] == group {
		delete(c.running, key)
	}
	if group.err == nil {
		c.set(key, group)
	}
	c.mu.Unlock()
	close(group.ready)
}
