package kueuebackend

import (
	"context"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const kindPriorityClass = "WorkloadPriorityClass"

// PriorityClasses stores each priority class as the WorkloadPriorityClass <name>-priority.
type PriorityClasses struct {
	kube  *kube.Client
	guard addonGuard
}

// StoredClass is a priority class as stored.
type StoredClass struct {
	backend.Record
	Weight int64
	// Tags are the tags the class carries; nil when none.
	Tags map[string]string
	wpc  kueue.WorkloadPriorityClass
}

// Get reads one class's WorkloadPriorityClass: one GET; nil when it does not exist.
func (s *PriorityClasses) Get(ctx context.Context, class string) (*StoredClass, error) {
	name := quota.PriorityClassObjectName(class)
	wpc, found, err := read[kueue.WorkloadPriorityClass](ctx, s.kube, kueue.WorkloadPriorityClasses, kindPriorityClass, "", name)
	if err != nil || !found {
		return nil, err
	}
	return storedClassOf(wpc)
}

// storedClassOf is the priority class wpc holds; its tags annotation must decode.
func storedClassOf(wpc kueue.WorkloadPriorityClass) (*StoredClass, error) {
	tags, err := quota.TagsOf(wpc.ObjectMeta)
	if err != nil {
		return nil, &backend.RequestError{Op: backend.OpRead, Kind: kindPriorityClass, Name: wpc.Name, Err: err}
	}
	return &StoredClass{Record: RecordOf(kindPriorityClass, wpc.ObjectMeta), Weight: int64(wpc.Value), Tags: tags, wpc: wpc}, nil
}

// create claims a class's WorkloadPriorityClass with a POST, so that of two resources declaring
// the same class only one succeeds: one that exists fails with ErrExists.
func (s *PriorityClasses) create(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	wpc := quota.RenderPriorityClass(c, owner)
	quota.SetTagsAnnotation(&wpc.ObjectMeta, tags)
	tflog.Debug(ctx, "creating WorkloadPriorityClass", map[string]any{"name": wpc.Name, "value": wpc.Value})
	if err := s.kube.Create(ctx, kueue.WorkloadPriorityClasses, quota.FieldManager, &wpc); err != nil {
		return requestError(backend.OpCreate, kindPriorityClass, "", wpc.Name, err)
	}
	return nil
}

// Put server-side applies a class's WorkloadPriorityClass with the tags and the owner identity,
// whether or not it exists.
func (s *PriorityClasses) Put(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	wpc := quota.RenderPriorityClass(c, owner)
	quota.SetTagsAnnotation(&wpc.ObjectMeta, tags)
	if err := s.kube.Apply(ctx, kueue.WorkloadPriorityClasses, quota.FieldManager, &wpc, nil); err != nil {
		return requestError(backend.OpApply, kindPriorityClass, "", wpc.Name, err)
	}
	return nil
}

// adopt removes the mark an interrupted run left on c.
func (s *PriorityClasses) adopt(ctx context.Context, c *StoredClass) error {
	return unmark(ctx, s.kube, kindPriorityClass, kueue.WorkloadPriorityClasses, c.Record)
}

// Delete deletes the incarnation of the class that c read and waits until it is gone.
func (s *PriorityClasses) Delete(ctx context.Context, c *StoredClass) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	tflog.Debug(ctx, "deleting WorkloadPriorityClass", map[string]any{"name": c.Name})
	if err := s.kube.DeleteAndWait(ctx, kueue.WorkloadPriorityClasses, "", c.Name, pollInterval, kube.OnlyUID(c.Version)); err != nil {
		return requestError(backend.OpDelete, kindPriorityClass, "", c.Name, err)
	}
	return nil
}

// classRef is a class's WorkloadPriorityClass.
func classRef(class string) backend.ObjectRef {
	return backend.ObjectRef{Kind: kindPriorityClass, Name: quota.PriorityClassObjectName(class)}
}

// drift lists the recorded metadata of the stored class that differs from what owner writes.
func (c *StoredClass) drift(class, owner string) []string {
	return quota.PriorityClassDrift(class, owner, c.wpc.ObjectMeta)
}
