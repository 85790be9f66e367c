package kueuebackend

import (
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// QueuePlacement places a quota as this backend writes it, for a plan's review.
func QueuePlacement() interface {
	WithQuota(c admission.Cluster, team string, next *kueue.ClusterQueue) admission.Cluster
} {
	return kueueState{}
}
