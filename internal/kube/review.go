package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
)

// ReviewInput lists what a plan review needs of the cluster: its Kueue state (ListKueue) and its
// Nodes by instance type. The caller adds the plan's changes and the catalog.
func ReviewInput(ctx context.Context, c *Client) (review.Input, error) {
	s, err := ListKueue(ctx, c)
	if err != nil {
		return review.Input{}, err
	}
	cs, err := c.Clientset(ctx)
	if err != nil {
		return review.Input{}, err
	}
	nodes, err := cs.CoreV1().Nodes().List(WithoutRetries(ctx), metav1.ListOptions{})
	if err != nil {
		return review.Input{}, fmt.Errorf("listing Nodes: %w", err)
	}
	byType := map[string][]capacity.Node{}
	for _, n := range nodes.Items {
		if t := n.Labels[capacity.InstanceTypeLabel]; t != "" {
			byType[t] = append(byType[t], capacity.NodeOf(n))
		}
	}
	return review.Input{Now: s.Cluster, Version: s.VersionText(), Nodes: byType}, nil
}
