package quota

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func TestRenderNamespace(t *testing.T) {
	ns := RenderNamespace("a", map[string]string{"x": "1", LabelQuotaAllocationID: "b"}, map[string]string{"n": "v"}, "id-1")
	wantLabels := map[string]string{"x": "1", LabelManagedBy: ManagedByValue, LabelQuotaAllocationID: "a", LabelSageMakerManagedQueue: "true"}
	if ns.Name != "hyperpod-ns-a" || !reflect.DeepEqual(ns.Labels, wantLabels) {
		t.Errorf("namespace %s labels %v, want hyperpod-ns-a %v", ns.Name, ns.Labels, wantLabels)
	}
	if !reflect.DeepEqual(ns.Annotations, map[string]string{"n": "v", AnnotationOwner: "id-1"}) {
		t.Errorf("annotations %v", ns.Annotations)
	}
	if got := RenderNamespace("a", nil, nil, "").Annotations; got != nil {
		t.Errorf("no annotations and no owner: got %v, want nil", got)
	}
	lq := RenderLocalQueue("a", "id-1")
	if lq.Name != "hyperpod-ns-a-localqueue" || lq.Namespace != "hyperpod-ns-a" || lq.Spec.ClusterQueue != "hyperpod-ns-a-clusterqueue" ||
		lq.Annotations[AnnotationOwner] != "id-1" || lq.Labels[LabelManagedBy] != ManagedByValue {
		t.Errorf("local queue %+v", lq)
	}
}

func TestTeamNamespaceDrift(t *testing.T) {
	ns := RenderNamespace("a", nil, nil, "id-1").ObjectMeta
	lq := RenderLocalQueue("a", "id-1")
	edited := func(f func(*metav1.ObjectMeta, *kueue.LocalQueue)) (metav1.ObjectMeta, *kueue.LocalQueue) {
		n, q := *ns.DeepCopy(), lq
		q.ObjectMeta = *lq.DeepCopy()
		f(&n, &q)
		return n, &q
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		edit func(*metav1.ObjectMeta, *kueue.LocalQueue)
		want []string
	}{
		{"in sync", func(*metav1.ObjectMeta, *kueue.LocalQueue) {}, nil},
		{"namespace label edited", func(n *metav1.ObjectMeta, _ *kueue.LocalQueue) { n.Labels[LabelQuotaAllocationID] = "b" },
			[]string{"Namespace label sagemaker.amazonaws.com/quota-allocation-id was changed outside Terraform"}},
		{"owner annotation removed", func(n *metav1.ObjectMeta, _ *kueue.LocalQueue) { delete(n.Annotations, AnnotationOwner) },
			[]string{"Namespace annotation hyperpod.quotaworks.io/owner-id is missing"}},
		{"queue label removed", func(_ *metav1.ObjectMeta, q *kueue.LocalQueue) { delete(q.Labels, LabelManagedBy) },
			[]string{"LocalQueue label app.kubernetes.io/managed-by is missing"}},
		{"queue retargeted", func(_ *metav1.ObjectMeta, q *kueue.LocalQueue) { q.Spec.ClusterQueue = "other" },
			[]string{`LocalQueue "hyperpod-ns-a-localqueue" feeds ClusterQueue "other", want "hyperpod-ns-a-clusterqueue"`}},
		{"queue deleting", func(_ *metav1.ObjectMeta, q *kueue.LocalQueue) { q.DeletionTimestamp = &now },
			[]string{`LocalQueue "hyperpod-ns-a-localqueue" is being deleted`}},
	} {
		n, q := edited(tc.edit)
		if got := TeamNamespaceDrift("a", "id-1", n, q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: drift %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := TeamNamespaceDrift("a", "id-1", ns, nil); !reflect.DeepEqual(got, []string{`LocalQueue "hyperpod-ns-a-localqueue" is missing`}) {
		t.Errorf("missing queue: %q", got)
	}
	// A state without an owner identity (written by an earlier version) does not ask for one.
	legacy := RenderNamespace("a", nil, nil, "").ObjectMeta
	legacyQ := RenderLocalQueue("a", "")
	if got := TeamNamespaceDrift("a", "", legacy, &legacyQ); got != nil {
		t.Errorf("legacy: %q", got)
	}
}

// Import takes the keys the provider's field manager owns when it wrote the Namespace, and
// everything but reserved and system keys otherwise.
func TestImportedNamespaceMetadata(t *testing.T) {
	ns := metav1.ObjectMeta{
		Name: "hyperpod-ns-ml",
		Labels: map[string]string{
			corev1.LabelMetadataName: "hyperpod-ns-ml", LabelManagedBy: ManagedByValue,
			LabelQuotaAllocationID: "ml", "mine": "1", "theirs": "2",
		},
		Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "mine", "other": "theirs",
		},
	}
	labels, annotations := ImportedNamespaceMetadata(ns)
	if fmt.Sprint(labels) != "map[mine:1 theirs:2]" || fmt.Sprint(annotations) != "map[note:mine other:theirs]" {
		t.Errorf("foreign namespace: labels %v annotations %v", labels, annotations)
	}

	ns.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/managed-by":{},"f:mine":{}},"f:annotations":{"f:note":{}}}}`),
	}, {
		Manager: "another-tool", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:theirs":{}},"f:annotations":{"f:other":{}}}}`),
	}}
	labels, annotations = ImportedNamespaceMetadata(ns)
	if fmt.Sprint(labels) != "map[mine:1]" || fmt.Sprint(annotations) != "map[note:mine]" {
		t.Errorf("provider-written namespace: labels %v annotations %v", labels, annotations)
	}
}
