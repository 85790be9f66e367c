// Package sagemakerbackend stores quotas through the SageMaker API, for HyperPod clusters whose
// Kueue belongs to AWS's task-governance add-on: a team's quota is the cluster's compute quota
// that targets the team, and the add-on turns it into Kueue objects. Reading Kueue's status
// (team usage) and Nodes (capacity) stays a Kubernetes read, safe on such clusters, when the
// provider also has a Kubernetes connection.
package sagemakerbackend

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

var (
	_ backend.TeamQuotas = (*teamQuotas)(nil)
	_ backend.Capacity   = (*clusterCapacity)(nil)
	_ backend.TeamUsage  = needsKubernetes{}
)

// New returns the SageMaker backend of the cluster clusterARN. kubernetes is the Kueue
// backend over the provider's Kubernetes connection, or nil when it has none; only its reads
// are used.
func New(api sagemakerclient.API, clusterARN string, cat *catalog.Catalog, poll sagemakerclient.Poll, kubernetes *backend.Backend) backend.Backend {
	quotas := &teamQuotas{api: api, cluster: clusterARN, catalog: cat, poll: poll}
	b := backend.Backend{
		Quotas:          quotas,
		SchedulerConfig: &schedulerConfigs{api: api, cluster: clusterARN, poll: poll},
		Capacity:        &clusterCapacity{api: api, cluster: clusterARN, catalog: cat, quotas: quotas},
		Usage:           needsKubernetes{},
		Claims:          noClaims{},
		Traits: backend.Traits{Versioned: true, StoreLimits: quota.StoreLimits{Float32Amounts: true, Unsupported: map[string]string{
			"cohort": "the SageMaker API has no cohort field: the task-governance add-on decides how teams share idle " +
				"capacity from resource_sharing and fair_share_weight",
			"resources.efa": "the SageMaker API has no EFA field: the task-governance add-on decides the EFA quota of " +
				"each instance type",
		}}},
	}
	if kubernetes != nil {
		b.Capacity.(*clusterCapacity).nodes = kubernetes.Capacity
		b.Usage = kubernetes.Usage
	}
	return b
}

// needsKubernetes answers reads that only Kueue's objects can answer when there is no
// Kubernetes connection.
type needsKubernetes struct{}

func (needsKubernetes) Usage(context.Context, string) (*quota.Usage, error) {
	return nil, backend.Problem{Summary: "Kubernetes connection needed", Detail: "A team's usage is the status of its " +
		"ClusterQueue, which only Kubernetes has; the SageMaker API does not report it. Configure a Kubernetes connection " +
		"in the provider block as well (config_path, host and token, an exec block, or KUBE_CONFIG_PATH): reading Kueue's " +
		"status is safe on a cluster with the task-governance add-on."}
}

// noClaims: a create on this path claims nothing before its single request.
type noClaims struct{}

func (noClaims) Abandon(context.Context, backend.ObjectRef, string)                 {}
func (noClaims) MarkUnconfirmed(context.Context, backend.ObjectRef, string, string) {}

// clusterCapacity counts the instances DescribeCluster reports in the type's instance groups,
// with what their Nodes show when there is a Kubernetes connection, and sums the amounts of
// the cluster's compute quotas.
type clusterCapacity struct {
	api     sagemakerclient.API
	cluster string
	catalog *catalog.Catalog
	quotas  *teamQuotas
	nodes   backend.Capacity // nil without a Kubernetes connection
}

func (c *clusterCapacity) Nodes(ctx context.Context, instanceType string) ([]capacity.Node, error) {
	out, err := c.api.DescribeCluster(ctx, &sagemaker.DescribeClusterInput{ClusterName: aws.String(c.cluster)})
	if err != nil {
		return nil, &backend.RequestError{Op: backend.OpRead, Kind: "SageMaker HyperPod cluster", Name: c.cluster, Err: err}
	}
	var instances, inService int
	for _, g := range out.InstanceGroups {
		if string(g.InstanceType) != instanceType {
			continue
		}
		n := int(aws.ToInt32(g.CurrentCount))
		instances += n
		if g.Status == types.InstanceGroupStatusInservice {
			inService += n
		}
	}
	if c.nodes != nil {
		nodes, err := c.nodes.Nodes(ctx, instanceType)
		if err != nil {
			return nil, err
		}
		// Instances that have not joined the cluster as Nodes count, unschedulable and empty.
		for len(nodes) < instances {
			nodes = append(nodes, capacity.Node{})
		}
		return nodes, nil
	}
	it, ok := c.catalog.Lookup(instanceType)
	if !ok {
		return nil, fmt.Errorf("instance type %q is not in the catalog", instanceType)
	}
	nodes := make([]capacity.Node, instances)
	for i := range nodes {
		nodes[i] = capacity.NodeFromFigures(it, i < inService)
	}
	return nodes, nil
}

// Allocations sums the cluster's compute quotas from the list every read of the run shares.
func (c *clusterCapacity) Allocations(ctx context.Context, instanceType string) ([]capacity.Allocation, error) {
	it, _ := c.catalog.Lookup(instanceType)
	all, err := c.quotas.all(ctx)
	if err != nil {
		return nil, err
	}
	var out []capacity.Allocation
	for _, q := range all {
		if !live(q.Status) || q.ComputeQuotaConfig == nil {
			continue
		}
		doc := documentOf(aws.ToString(q.Name), "", q.ActivationState, q.ComputeQuotaTarget, q.ComputeQuotaConfig)
		for _, r := range doc.Resources {
			if r.InstanceType == instanceType {
				out = append(out, capacity.AllocationOf(it.AcceleratorResource, r.Accelerators, r.VCPU, r.MemoryGiB))
			}
		}
	}
	return out, nil
}
