package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
)

// teamNamespaceState fills the computed attributes and the label and annotation maps of m from
// what the cluster holds; what no attribute shows is drift, which Read adds (NamespaceDetails.Drift).
// Every value is true: the queue names are those the store records (null for a missing
// LocalQueue), and a difference from the plan, which derives them from team, is the drift.
// Where the add-on owns the LocalQueue they are the names it gives the queue once the team's
// quota exists (the backend says so): the provider cannot create it, so its absence is no drift.
//
// For labels and annotations only the keys already in state are compared: their current values
// are recorded and keys that disappeared are dropped, so a changed or removed entry shows in the
// plan while keys other managers add are ignored. An import, which has no prior state, then
// takes the maps from teamNamespaceImported.
func teamNamespaceState(ctx context.Context, m *teamNamespaceModel, team string, ns *backend.TeamNamespace) diag.Diagnostics {
	var diags diag.Diagnostics
	m.ID = types.StringValue(team)
	m.Team = types.StringValue(team)
	m.Namespace = types.StringValue(ns.Name)
	m.LocalQueueName, m.ClusterQueueName = types.StringNull(), types.StringNull()
	if ns.LocalQueueName != "" {
		m.LocalQueueName, m.ClusterQueueName = types.StringValue(ns.LocalQueueName), types.StringValue(ns.ClusterQueueName)
	}

	var d diag.Diagnostics
	m.Labels, d = teamNamespaceObserved(ctx, m.Labels, ns.Labels)
	diags.Append(d...)
	m.Annotations, d = teamNamespaceObserved(ctx, m.Annotations, ns.Annotations)
	diags.Append(d...)
	return diags
}

// teamNamespaceImported sets the label and annotation maps of an imported m to those the
// import takes (see quota.ImportedNamespaceMetadata), and force_destroy to its default.
func teamNamespaceImported(ctx context.Context, m *teamNamespaceModel, labels, annotations map[string]string) diag.Diagnostics {
	var diags, d diag.Diagnostics
	m.Labels, diags = teamNamespaceMapValue(ctx, labels)
	m.Annotations, d = teamNamespaceMapValue(ctx, annotations)
	diags.Append(d...)
	m.ForceDestroy = types.BoolValue(false)
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

func (m *teamNamespaceModel) recordOwner(owner string, drift types.List) {
	m.OwnerID, m.Drift = types.StringValue(owner), drift
}

func (m *teamNamespaceModel) plannedTeam() string          { return m.Team.ValueString() }
func (m *teamNamespaceModel) createTimeout() timeoutGetter { return m.Timeouts.Create }
