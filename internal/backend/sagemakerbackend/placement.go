package sagemakerbackend

import (
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// AddonPlacement places a quota as the task-governance add-on writes it, for a plan's review.
func AddonPlacement() interface {
	WithQuota(c admission.Cluster, team string, next *kueue.ClusterQueue) admission.Cluster
} {
	return addonKueue{}
}
