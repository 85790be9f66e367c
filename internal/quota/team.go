package quota

import (
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// A team's namespace: the Namespace hyperpod-ns-<team>, labelled like the
// ones HyperPod task governance creates, and the LocalQueue in it that feeds the team's
// ClusterQueue. These are the pure parts of hyperpod_team_namespace: what it writes and how
// what it reads differs from that.

// NamespaceLabels are the labels the provider sets on a team's Namespace.
func NamespaceLabels(team string) map[string]string {
	return map[string]string{
		LabelManagedBy:             ManagedByValue,
		LabelQuotaAllocationID:     team,
		LabelSageMakerManagedQueue: "true",
	}
}

// RenderNamespace is the team's Namespace as the provider applies it: its own labels over the
// user's (the user's may not use the provider's keys), the user's annotations and, when owner
// is not empty, the owner annotation.
func RenderNamespace(team string, labels, annotations map[string]string, owner string) metav1.PartialObjectMetadata {
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, NamespaceLabels(team))
	a := maps.Clone(annotations)
	if owner != "" {
		if a == nil {
			a = map[string]string{}
		}
		a[AnnotationOwner] = owner
	}
	return metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: NamespaceName(team), Labels: l, Annotations: a},
	}
}

// RenderLocalQueue is the team's LocalQueue, feeding the team's ClusterQueue.
func RenderLocalQueue(team, owner string) kueue.LocalQueue {
	lq := kueue.LocalQueue{
		TypeMeta: metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindLocalQueue},
		ObjectMeta: metav1.ObjectMeta{Name: LocalQueueName(team), Namespace: NamespaceName(team),
			Labels: map[string]string{LabelManagedBy: ManagedByValue}},
		Spec: kueue.LocalQueueSpec{ClusterQueue: ClusterQueueName(team)},
	}
	if owner != "" {
		lq.Annotations = map[string]string{AnnotationOwner: owner}
	}
	return lq
}

// TeamNamespaceDrift lists how the team's objects differ from what the provider writes, apart
// from the user's labels and annotations (attributes show those): the provider's labels and
// owner annotation on both objects, and the LocalQueue's presence and target. lq is nil when
// the LocalQueue does not exist.
func TeamNamespaceDrift(team, owner string, ns metav1.ObjectMeta, lq *kueue.LocalQueue) []string {
	wantNS := RenderNamespace(team, nil, nil, owner)
	var out []string
	for _, d := range MetadataDrift(wantNS.ObjectMeta, ns) {
		out = append(out, "Namespace "+d)
	}
	want := RenderLocalQueue(team, owner)
	switch {
	case lq == nil:
		out = append(out, fmt.Sprintf("LocalQueue %q is missing", want.Name))
	case lq.DeletionTimestamp != nil:
		out = append(out, fmt.Sprintf("LocalQueue %q is being deleted", want.Name))
	default:
		for _, d := range MetadataDrift(want.ObjectMeta, lq.ObjectMeta) {
			out = append(out, "LocalQueue "+d)
		}
		if lq.Spec.ClusterQueue != want.Spec.ClusterQueue {
			out = append(out, fmt.Sprintf("LocalQueue %q feeds ClusterQueue %q, want %q", want.Name, lq.Spec.ClusterQueue, want.Spec.ClusterQueue))
		}
	}
	return out
}
