// Package reviewinput assembles a plan review's input: the cluster as a Kubernetes client reads
// it (its Kueue state and its Nodes), a saved plan's changes (review.ReadPlan), and the plan's
// store, which places each change as it writes it (the backends' placements). The review itself
// stays pure.
package reviewinput

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/kueuebackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/sagemakerbackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
)

// Read lists what a review of plan needs of the cluster: its Kueue state (kueuebackend.ReadSnapshot) and
// its Nodes by instance type, with the plan's changes placed as the plan's store writes them.
func Read(ctx context.Context, c *kube.Client, plan review.Plan) (review.Input, error) {
	s, err := kueuebackend.ReadSnapshot(ctx, c, "Bind the identity of the kubeconfig to the ClusterRole of "+review.Role+".")
	if err != nil {
		return review.Input{}, err
	}
	cs, err := c.Clientset(ctx)
	if err != nil {
		return review.Input{}, err
	}
	nodes, err := cs.CoreV1().Nodes().List(kube.WithoutRetries(ctx), metav1.ListOptions{})
	if err != nil {
		return review.Input{}, fmt.Errorf("listing Nodes: %w", err)
	}
	byType := map[string][]capacity.Node{}
	for _, n := range nodes.Items {
		if t := n.Labels[capacity.InstanceTypeLabel]; t != "" {
			byType[t] = append(byType[t], capacity.NodeOf(n))
		}
	}
	var refused []string
	if s.Refused != nil {
		refused = s.Refused.Reads
	}
	return review.Input{Changes: plan.Changes, Now: s.Cluster, Version: s.Version, Nodes: byType,
		Catalog: plan.Catalog, InstanceTypesUnknown: plan.InstanceTypesUnknown, Refused: refused, Store: Store(plan)}, nil
}

// Store places the plan's quotas as its store writes them: the SageMaker API, whose
// task-governance add-on writes the Kueue objects, when the provider block has task_governance;
// else the Kubernetes path's ClusterQueue alone.
func Store(plan review.Plan) review.Placement {
	if plan.TaskGovernance {
		return sagemakerbackend.AddonPlacement()
	}
	return kueuebackend.QueuePlacement()
}
