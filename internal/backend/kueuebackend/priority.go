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

// priorityClasses stores each priority class as the WorkloadPriorityClass <name>-priority.
type priorityClasses struct {
	kube  *kube.Client
	guard addonGuard
}

// Get reads one class's WorkloadPriorityClass: one GET.
func (s *priorityClasses) Get(ctx context.Context, class string) (*backend.StoredPriorityClass, error) {
	name := quota.PriorityClassObjectName(class)
	wpc, found, err := read[kueue.WorkloadPriorityClass](ctx, s.kube, kueue.WorkloadPriorityClasses, kindPriorityClass, "", name)
	if err != nil || !found {
		return nil, err
	}
	return storedClassOf(wpc)
}

// storedClassOf is the priority class wpc holds; its tags annotation must decode.
func storedClassOf(wpc kueue.WorkloadPriorityClass) (*backend.StoredPriorityClass, error) {
	tags, err := quota.TagsOf(wpc.ObjectMeta)
	if err != nil {
		return nil, &backend.RequestError{Op: backend.OpRead, Kind: kindPriorityClass, Name: wpc.Name, Err: err}
	}
	return &backend.StoredPriorityClass{Record: RecordOf(kindPriorityClass, wpc.ObjectMeta), Weight: int64(wpc.Value), Tags: tags, Native: wpc}, nil
}

// Create claims a class's WorkloadPriorityClass with a POST, so that of two resources declaring
// the same class only one succeeds.
func (s *priorityClasses) Create(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error {
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

// Put server-side applies a class's WorkloadPriorityClass.
func (s *priorityClasses) Put(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error {
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

func (s *priorityClasses) Adopt(ctx context.Context, c *backend.StoredPriorityClass) error {
	return unmark(ctx, s.kube, kindPriorityClass, kueue.WorkloadPriorityClasses, c.Record)
}

// Delete deletes the incarnation of the class that c read and waits until it is gone.
func (s *priorityClasses) Delete(ctx context.Context, c *backend.StoredPriorityClass) error {
	if err := s.guard.refuse(ctx); err != nil {
		return err
	}
	tflog.Debug(ctx, "deleting WorkloadPriorityClass", map[string]any{"name": c.Name})
	if err := s.kube.DeleteAndWait(ctx, kueue.WorkloadPriorityClasses, "", c.Name, pollInterval, kube.OnlyUID(c.Version)); err != nil {
		return requestError(backend.OpDelete, kindPriorityClass, "", c.Name, err)
	}
	return nil
}

// Ref is a class's WorkloadPriorityClass.
func (s *priorityClasses) Ref(class string) backend.ObjectRef {
	return backend.ObjectRef{Kind: kindPriorityClass, Name: quota.PriorityClassObjectName(class)}
}

func (s *priorityClasses) Drift(c *backend.StoredPriorityClass, class, owner string) []string {
	return quota.PriorityClassDrift(class, owner, c.Native.(kueue.WorkloadPriorityClass).ObjectMeta)
}
