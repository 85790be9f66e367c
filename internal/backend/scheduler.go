package backend

import (
	"context"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// PriorityClassList lists the store's priority classes (a backend with PriorityClasses).
type PriorityClassList interface {
	// List returns every priority class the store holds, as Get reads it, in the store's order.
	List(ctx context.Context) ([]*StoredPriorityClass, error)
}

// PriorityClasses reads and writes the cluster's priority classes, one object each.
type PriorityClasses interface {
	// Get reads a class; nil when it does not exist.
	Get(ctx context.Context, class string) (*StoredPriorityClass, error)
	// Create creates a class with the tags and the owner identity: one that exists fails with
	// ErrExists.
	Create(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error
	// Put writes a class with the tags and the owner identity, whether or not it exists.
	Put(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error
	// Adopt removes the mark an interrupted run left on a class.
	Adopt(ctx context.Context, c *StoredPriorityClass) error
	// Delete deletes a class and waits until it is gone.
	Delete(ctx context.Context, c *StoredPriorityClass) error
	// Drift lists the recorded metadata of the stored class that differs from what owner writes.
	Drift(c *StoredPriorityClass, class, owner string) []string
	// Ref names the object that holds a class, in messages and claims.
	Ref(class string) ObjectRef
	// OwnedElsewhere words why a create of class stops at existing, which another manager
	// owns; importCommand is the command that takes it over.
	OwnedElsewhere(existing *StoredPriorityClass, class, importCommand string) Problem
}

// SchedulerConfigs stores the cluster's scheduling policy as one object, where the store holds
// it so (the SageMaker API's cluster scheduler config, one per cluster). A backend offers
// either this or PriorityClasses (one object per class).
type SchedulerConfigs interface {
	// Get reads the cluster's config; nil when it has none.
	Get(ctx context.Context) (*SchedulerConfig, error)
	// Put creates the config (over == nil) or updates it over the version last seen
	// (ErrChanged when someone changed it since), and waits until the store has applied it;
	// p.Tags replace over.Tags. written is returned once the config exists, even when Put fails.
	Put(ctx context.Context, p quota.SchedulerPolicy, over *Record) (written Record, err error)
	// Delete deletes the config and waits until it is gone.
	Delete(ctx context.Context, c *SchedulerConfig) error
	// Tags reads the tags c carries (Get leaves c.Policy.Tags nil): a request of its own, so
	// callers ask only for a config whose state holds tags, or on import.
	Tags(ctx context.Context, c *SchedulerConfig) (map[string]string, error)
}

// SchedulerConfig is a cluster's scheduler config as stored.
type SchedulerConfig struct {
	Record
	Policy quota.SchedulerPolicy
}

// StoredPriorityClass is a priority class as stored.
type StoredPriorityClass struct {
	Record
	Weight int64
	// Tags are the tags the class carries; nil when none.
	Tags   map[string]string
	Native any
}
