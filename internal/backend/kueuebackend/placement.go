package kueuebackend

import (
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// QueuePlacement places a quota as this backend writes it, for a plan's review.
func QueuePlacement() backend.Placement {
	return queuePlacement{}
}

// queuePlacement: a quota is its ClusterQueue alone, rendered by the renderer Put writes with;
// the team's LocalQueue is its namespace's.
type queuePlacement struct{}

func (queuePlacement) WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	name := quota.ClusterQueueName(team)
	if planned == nil {
		return c.WithQueue(name, nil), name, nil
	}
	q, err := quota.RenderClusterQueue(cat, *planned)
	if err != nil {
		return c, name, err
	}
	return c.WithQueue(name, &q), name, nil
}

// WithQuota places the quota as this backend writes it.
func (kueueState) WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	return queuePlacement{}.WithQuota(c, cat, team, planned)
}
