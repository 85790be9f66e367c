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

// PlacementBesideAddon places a quota as the task-governance add-on writes it, for a plan's
// review: the project's model of the add-on, the ClusterQueue this backend's renderer writes
// (the mapping the add-on's stand-in in the test harness writes too) and the team's LocalQueue
// feeding it, so a new quota starts the jobs already waiting in the team's namespace. AWS's
// add-on is not read: the preview of that path is as good as this model.
func PlacementBesideAddon() backend.Placement {
	return queuePlacement{addonQueues: true}
}

// queuePlacement: a quota is its ClusterQueue, rendered by the renderer Put writes with; the
// team's LocalQueue is its namespace's, or, with addonQueues, the add-on's, written with the
// quota.
type queuePlacement struct{ addonQueues bool }

func (p queuePlacement) WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	name := quota.ClusterQueueName(team)
	if planned == nil {
		return c.WithQueue(name, nil), name, nil
	}
	q, err := quota.RenderClusterQueue(cat, *planned)
	if err != nil {
		return c, name, err
	}
	c = c.WithQueue(name, &q)
	if p.addonQueues {
		c = c.WithLocalQueue(quota.RenderLocalQueue(team, "")) // only its queue matters to admission
	}
	return c, name, nil
}
