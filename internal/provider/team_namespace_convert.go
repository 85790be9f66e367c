package provider

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// teamNamespaceState fills the computed attributes and the label and annotation maps of m from
// what the cluster holds; what no attribute shows is drift, which Read adds (quota.TeamNamespaceDrift).
// Every value is true: the names are those of the objects found (null for a missing
// LocalQueue), and a difference from the plan, which derives them from team, is the drift.
//
// For labels and annotations only the keys already in state are compared: their current values
// are recorded and keys that disappeared are dropped, so a changed or removed entry shows in the
// plan while keys other managers add are ignored. With importing set there is no prior state;
// the maps are then taken from the Namespace (see teamNamespaceImportedMetadata).
func teamNamespaceState(ctx context.Context, m *teamNamespaceModel, team string, objs teamNamespaceObjects, importing bool) diag.Diagnostics {
	var diags diag.Diagnostics
	ns, lq := objs.namespace, objs.localQueue

	m.ID = types.StringValue(team)
	m.Team = types.StringValue(team)
	m.Namespace = types.StringValue(ns.Name)
	m.LocalQueueName = types.StringNull()
	m.ClusterQueueName = types.StringNull()
	if lq != nil && lq.DeletionTimestamp == nil {
		m.LocalQueueName = types.StringValue(lq.Name)
		m.ClusterQueueName = types.StringValue(lq.Spec.ClusterQueue)
	}

	if importing {
		labels, annotations := teamNamespaceImportedMetadata(ns)
		m.Labels, diags = teamNamespaceMapValue(ctx, labels)
		var d diag.Diagnostics
		m.Annotations, d = teamNamespaceMapValue(ctx, annotations)
		diags.Append(d...)
		m.ForceDestroy = types.BoolValue(false)
		return diags
	}
	var d diag.Diagnostics
	m.Labels, d = teamNamespaceObserved(ctx, m.Labels, ns.Labels)
	diags.Append(d...)
	m.Annotations, d = teamNamespaceObserved(ctx, m.Annotations, ns.Annotations)
	diags.Append(d...)
	return diags
}

// teamNamespaceObserved keeps the keys of prior and takes their values from the cluster;
// keys that are gone from the cluster are dropped.
func teamNamespaceObserved(ctx context.Context, prior types.Map, cluster map[string]string) (types.Map, diag.Diagnostics) {
	if prior.IsNull() || prior.IsUnknown() {
		return prior, nil
	}
	out := map[string]string{}
	for k := range prior.Elements() {
		if v, ok := cluster[k]; ok {
			out[k] = v
		}
	}
	return types.MapValueFrom(ctx, types.StringType, out)
}

func teamNamespaceMapValue(ctx context.Context, m map[string]string) (types.Map, diag.Diagnostics) {
	if len(m) == 0 {
		return types.MapNull(types.StringType), nil
	}
	return types.MapValueFrom(ctx, types.StringType, m)
}

// teamNamespaceImportedMetadata chooses the labels and annotations an import puts in state.
//
// When the Namespace was written by this provider (its managedFields hold a server-side apply
// entry of our field manager) they are exactly the keys that manager owns, minus the provider's
// own labels: the state the configuration had when it was last applied, so import reproduces
// it and the next plan is empty. Otherwise (a Namespace created by someone else) they are all
// labels and annotations except the provider's own keys (which Create would set) and system
// keys (kubernetes.io/metadata.name, kubectl.kubernetes.io/*): the plan after import then
// shows what is on the Namespace, and the first apply takes ownership of the keys the
// configuration keeps.
func teamNamespaceImportedMetadata(ns *corev1.Namespace) (labels, annotations map[string]string) {
	keep := func(key string) bool {
		if teamNamespaceReservedKey(key) != "" {
			return false
		}
		return !slices.ContainsFunc(teamNamespaceSystemPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
	}
	ownedLabels, ownedAnnotations, written := teamNamespaceOwnedMetadata(ns.ManagedFields)
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

// teamNamespaceOwnedMetadata returns the label and annotation keys that the provider's field
// manager owns, and whether that manager has written the object at all.
func teamNamespaceOwnedMetadata(entries []metav1.ManagedFieldsEntry) (labels, annotations map[string]bool, written bool) {
	labels, annotations = map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if e.Manager != quota.FieldManager || e.Operation != metav1.ManagedFieldsOperationApply {
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
