package kueuebackend

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// resourceOf is the API resource of each kind a create claims.
var resourceOf = map[string]schema.GroupVersionResource{
	kindClusterQueue:   kueue.ClusterQueues,
	kindResourceFlavor: kueue.ResourceFlavors,
	kindPriorityClass:  kueue.WorkloadPriorityClasses,
	kindNamespace:      kube.Namespaces,
	kindLocalQueue:     kueue.LocalQueues,
}

// claims handles any object a create claimed, by its kind.
type claims struct{ kube *kube.Client }

// Abandon deletes o, only the incarnation that records owner.
func (c *claims) Abandon(ctx context.Context, o backend.ObjectRef, owner string) {
	gvr := resourceOf[o.Kind]
	var meta metav1.PartialObjectMetadata
	found, err := c.kube.Get(ctx, gvr, o.Namespace, o.Name, &meta)
	if err != nil || !found || !quota.Owns(meta.ObjectMeta, owner) {
		tflog.Warn(ctx, "Terraform went away during the create; not deleting", map[string]any{
			"object": o.String(), "found": found, "error": fmt.Sprint(err)})
		return
	}
	err = c.kube.DeleteAndWait(ctx, gvr, o.Namespace, o.Name, pollInterval, kube.OnlyUID(string(meta.UID)))
	if err != nil && !errors.Is(err, kube.ErrStillExists) {
		tflog.Warn(ctx, "Terraform went away during the create; deleting what it wrote failed", map[string]any{
			"object": o.String(), "error": err.Error()})
		return
	}
	tflog.Info(ctx, "Terraform went away during the create; deleted what it wrote", map[string]any{"object": o.String()})
}

// MarkUnconfirmed records note as the annotation quota.AnnotationUnconfirmed.
func (c *claims) MarkUnconfirmed(ctx context.Context, o backend.ObjectRef, owner, note string) {
	gvr := resourceOf[o.Kind]
	var meta metav1.PartialObjectMetadata
	found, err := c.kube.Get(ctx, gvr, o.Namespace, o.Name, &meta)
	if err != nil || !found || !quota.Owns(meta.ObjectMeta, owner) || meta.DeletionTimestamp != nil {
		return
	}
	if err := c.kube.Annotate(ctx, gvr, o.Namespace, o.Name, string(meta.UID), quota.FieldManager,
		map[string]*string{quota.AnnotationUnconfirmed: &note}); err != nil {
		tflog.Warn(ctx, "Terraform went away; cannot mark a created object as unconfirmed", map[string]any{
			"object": o.String(), "error": err.Error()})
		return
	}
	tflog.Info(ctx, "Terraform went away; marked a created object as unconfirmed", map[string]any{"object": o.String()})
}
