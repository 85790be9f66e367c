package sagemakerbackend

import (
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// AddonPlacement places a quota as the task-governance add-on writes it, for a plan's review.
func AddonPlacement() backend.Placement {
	return addonModel{}
}

// addonModel is the project's model of what the task-governance add-on writes in Kueue for a
// team's compute quota: the ClusterQueue the quota renders to (quota.RenderClusterQueue, the
// mapping the add-on's stand-in in the test harness writes too) and the team's LocalQueue
// feeding it, so a new quota starts the jobs already waiting in the team's namespace. AWS's
// add-on is not read: the preview of this path is as good as this model.
type addonModel struct{}

func (addonModel) WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	name := quota.ClusterQueueName(team)
	if planned == nil {
		return c.WithQueue(name, nil), name, nil
	}
	q, err := quota.RenderClusterQueue(cat, *planned)
	if err != nil {
		return c, name, err
	}
	c = c.WithQueue(name, &q)
	return c.WithLocalQueue(quota.RenderLocalQueue(team, "")), name, nil // only its queue matters to admission
}

// addonKueue is the Kueue reads of a cluster with the task-governance add-on, with quotas
// placed as the add-on writes them.
type addonKueue struct{ backend.KueueState }

func (addonKueue) WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	return addonModel{}.WithQuota(c, cat, team, planned)
}

// WithQuota needs no connection: it only places the quota in a snapshot.
func (needsKubernetes) WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	return addonModel{}.WithQuota(c, cat, team, planned)
}
