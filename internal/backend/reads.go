package backend

import (
	"context"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Capacity reads what the capacity data source sums.
type Capacity interface {
	// Nodes are the cluster's Nodes of an instance type.
	Nodes(ctx context.Context, instanceType string) ([]capacity.Node, error)
	// Allocations are what every team's quota gives the instance type, read in one request
	// (paged where the store pages).
	Allocations(ctx context.Context, instanceType string) ([]capacity.Allocation, error)
}

// KueueState reads the cluster's Kueue objects and Workloads.
type KueueState interface {
	// Snapshot lists them, each kind once, every request sent once. A snapshot that cannot be
	// made because the store refused reads it needs fails with a *ReadsRefused.
	Snapshot(ctx context.Context) (KueueSnapshot, error)
	Placement
}

// Placement is where a planned quota goes in the store's Kueue objects. The admission preview
// and a plan's review both place a change through it, so each store renders what it will hold.
type Placement interface {
	// WithQuota is c as the store holds it once the team's quota is written as planned (nil:
	// deleted), with the instance types of cat and whatever else the store writes with it, and
	// the ClusterQueue that holds the quota there. It fails only for a quota that quota.Plan
	// refuses.
	WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (_ admission.Cluster, queue string, err error)
}

// KueueSnapshot is what the admission preview starts from.
type KueueSnapshot struct {
	Cluster admission.Cluster
	// Version names the Kueue version modelled and how it was found, for a person.
	Version string
	// Refused, when set, are reads the store refused that the snapshot was made without.
	Refused *ReadsRefused
}

// ReadsRefused is reads a store refused, in the store's words.
type ReadsRefused struct {
	// Reads are the permissions refused, as the store names them ("list workloads.kueue.x-k8s.io").
	Reads []string
	// Grant says what grants them.
	Grant string
}

func (r *ReadsRefused) Error() string {
	return "the store refused " + strings.Join(r.Reads, ", ") + ". " + r.Grant
}

// TeamUsage reads what a team's workloads hold and wait for.
type TeamUsage interface {
	// Usage reads the team's usage; nil when the team has no quota.
	Usage(ctx context.Context, team string) (*quota.Usage, error)
}
