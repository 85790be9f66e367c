package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
)

// EnvKubeconfig is kubectl's list of kubeconfig files, which a plan review falls back to.
const EnvKubeconfig = "KUBECONFIG"

// ReviewSettings finds the cluster of a plan review as the provider finds its own: the given
// kubeconfig and context (flags; "" for none), then the KUBE_* variables the provider reads
// (KUBE_CONFIG_PATH, KUBE_CONFIG_PATHS, KUBE_CTX, KUBE_HOST, ...), then, where they name no
// cluster, kubectl's: the files of $KUBECONFIG, else ~/.kube/config. lookup is usually os.LookupEnv.
func ReviewSettings(kubeconfig, kubeContext string, lookup func(string) (string, bool)) (Settings, error) {
	s := Settings{ConfigPath: kubeconfig, ConfigContext: kubeContext}
	if err := s.ApplyEnv(lookup); err != nil {
		return Settings{}, err
	}
	if s.ConfigPath != "" || len(s.ConfigPaths) > 0 || s.Host != "" {
		return s, nil
	}
	if v, ok := lookup(EnvKubeconfig); ok && v != "" {
		// As kubectl does, files of the list that do not exist are skipped.
		for _, p := range filepath.SplitList(v) {
			if _, err := os.Stat(p); p != "" && err == nil {
				s.ConfigPaths = append(s.ConfigPaths, p)
			}
		}
		if len(s.ConfigPaths) > 0 {
			return s, nil
		}
	}
	s.ConfigPath = filepath.Join("~", ".kube", "config")
	return s, nil
}

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
	refused := make([]string, len(s.Refused))
	for i, r := range s.Refused {
		refused[i] = r.String()
	}
	return review.Input{Now: s.Cluster, Version: s.VersionText(), Nodes: byType, Refused: refused}, nil
}
