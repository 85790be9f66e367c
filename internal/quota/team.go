package quota

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

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
		TypeMeta: kueue.TypeMeta(kueue.KindLocalQueue),
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
	out := NamespaceDrift(team, owner, ns)
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

// NamespaceDrift lists how a team's Namespace differs from what owner writes, apart from the
// user's labels and annotations.
func NamespaceDrift(team, owner string, ns metav1.ObjectMeta) []string {
	var out []string
	for _, d := range MetadataDrift(RenderNamespace(team, nil, nil, owner).ObjectMeta, ns) {
		out = append(out, "Namespace "+d)
	}
	return out
}

// Keys of a team's Namespace that users may not set: the provider's own labels and keys the
// API server sets, each with the reason.
var reservedNamespaceKeys = map[string]string{
	LabelManagedBy:             "the provider sets this label itself to mark the objects it created",
	LabelQuotaAllocationID:     "the provider sets this label itself to the team, so that the team's ClusterQueue admits workloads from the namespace",
	LabelSageMakerManagedQueue: "the provider sets this label itself to \"true\", like on the namespaces HyperPod task governance creates",
	corev1.LabelMetadataName:   "the Kubernetes API server sets this label itself to the namespace's name",
}

// namespaceSystemPrefixes are annotation and label prefixes written by Kubernetes tools; an
// import never takes them over.
var namespaceSystemPrefixes = []string{"kubectl.kubernetes.io/"}

// maxAnnotationBytes is Kubernetes' limit on the total size of an object's annotations.
const maxAnnotationBytes = 256 * 1024

// reservedNamespaceKey says why key is reserved, or returns "".
func reservedNamespaceKey(key string) string {
	if why, ok := reservedNamespaceKeys[key]; ok {
		return why
	}
	if strings.HasPrefix(key, AnnotationPrefix) {
		return fmt.Sprintf("keys under %q are kept for the provider's own bookkeeping", AnnotationPrefix)
	}
	return ""
}

// NamespaceMetadataProblems checks the labels or annotations (attr is "labels" or
// "annotations") a user sets on a team's Namespace: keys the provider or Kubernetes sets
// itself, keys and label values Kubernetes would refuse, and the total size of annotations.
// values holds every key, with a nil value when it is not known yet. Problems carry Entry -1
// and the path {attr, key}, or {attr} for the whole map, in key order.
func NamespaceMetadataProblems(attr string, values map[string]*string) []Problem {
	var l problemList
	kind := strings.TrimSuffix(attr, "s")
	total := 0
	for _, key := range slices.Sorted(maps.Keys(values)) { // a stable order of problems
		at := []string{attr, key}
		if why := reservedNamespaceKey(key); why != "" {
			l.add(-1, at, "Reserved "+kind+" key", "%q is reserved: %s. Remove it from %s; to tag the namespace, use a key of "+
				"your own, e.g. \"example.com/owner\".", key, why, attr)
			continue
		}
		if errs := k8svalidation.IsQualifiedName(key); len(errs) > 0 {
			l.add(-1, at, "Invalid "+kind+" key", "%q is not a valid Kubernetes %s key: %s. Use an optional DNS prefix and a "+
				"name of at most 63 letters, digits, '-', '_' and '.', e.g. \"example.com/cost-center\".", key, kind, strings.Join(errs, "; "))
		}
		v := values[key]
		if v == nil {
			continue
		}
		total += len(key) + len(*v)
		if attr == "labels" {
			if errs := k8svalidation.IsValidLabelValue(*v); len(errs) > 0 {
				l.add(-1, at, "Invalid label value", "The value %q of label %q is not a valid Kubernetes label value: %s. "+
					"Shorten it or replace other characters with '-', or store it in annotations instead.", *v, key, strings.Join(errs, "; "))
			}
		}
	}
	if attr == "annotations" && total > maxAnnotationBytes {
		l.add(-1, []string{attr}, "Annotations too large",
			"The annotations add up to %d bytes; Kubernetes accepts at most %d. Remove or shorten some.", total, maxAnnotationBytes)
	}
	return l.problems
}

// ImportedNamespaceMetadata chooses the labels and annotations an import of a team's Namespace
// puts in state.
//
// When the Namespace was written by this provider (its managedFields hold a server-side apply
// entry of our field manager) they are exactly the keys that manager owns, minus the provider's
// own labels: the state the configuration had when it was last applied, so import reproduces
// it and the next plan is empty. Otherwise (a Namespace created by someone else) they are all
// labels and annotations except the provider's own keys (which Create would set) and system
// keys (kubernetes.io/metadata.name, kubectl.kubernetes.io/*): the plan after import then
// shows what is on the Namespace, and the first apply takes ownership of the keys the
// configuration keeps.
func ImportedNamespaceMetadata(ns metav1.ObjectMeta) (labels, annotations map[string]string) {
	keep := func(key string) bool {
		if reservedNamespaceKey(key) != "" {
			return false
		}
		return !slices.ContainsFunc(namespaceSystemPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
	}
	ownedLabels, ownedAnnotations, written := ownedMetadata(ns.ManagedFields)
	pick := func(all map[string]string, owned map[string]bool) map[string]string {
		out := map[string]string{}
		for k, v := range all {
			if keep(k) && (!written || owned[k]) {
				out[k] = v
			}
		}
		return out
	}
	return pick(ns.Labels, ownedLabels), pick(ns.Annotations, ownedAnnotations)
}

// ownedMetadata returns the label and annotation keys that the provider's field manager owns,
// and whether that manager has written the object at all.
func ownedMetadata(entries []metav1.ManagedFieldsEntry) (labels, annotations map[string]bool, written bool) {
	labels, annotations = map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if e.Manager != FieldManager || e.Operation != metav1.ManagedFieldsOperationApply {
			continue
		}
		written = true
		if e.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Labels      map[string]json.RawMessage `json:"f:labels"`
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		for k := range fields.Metadata.Labels {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				labels[key] = true
			}
		}
		for k := range fields.Metadata.Annotations {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				annotations[key] = true
			}
		}
	}
	return labels, annotations, written
}
