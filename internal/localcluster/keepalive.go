package localcluster

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// NodeLeaseNamespace holds the heartbeat Leases kubelets renew.
const NodeLeaseNamespace = "kube-node-lease"

// nodeLeaseSeconds is the kubelet's default lease duration.
const nodeLeaseSeconds = 40

// KeepFleetAlive stands in for the kubelets of the fake nodes on a cluster that runs a node
// lifecycle controller (kind): without heartbeats it marks kubelet-less nodes NotReady and
// taints them after about 40 s. Every interval it renews each node's Lease and reconciles the
// nodes to the fleet (status, taints; a health SetNodeHealth set stays), until ctx ends. The local control plane does not need it.
func KeepFleetAlive(ctx context.Context, cs kubernetes.Interface, fleet []NodeSpec, cat *catalog.Catalog, interval time.Duration) error {
	nodes, err := Nodes(fleet, cat)
	if err != nil {
		return err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		for _, n := range nodes {
			if err := renewLease(ctx, cs, n.Name); err != nil && ctx.Err() == nil {
				return fmt.Errorf("renewing the lease of node %s: %w", n.Name, err)
			}
		}
		if err := reconcileFleet(ctx, cs, fleet, cat, true); err != nil && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func renewLease(ctx context.Context, cs kubernetes.Interface, node string) error {
	leases := cs.CoordinationV1().Leases(NodeLeaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: NodeLeaseNamespace},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(node),
				LeaseDurationSeconds: ptr.To(int32(nodeLeaseSeconds)),
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}
